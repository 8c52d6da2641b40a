#!/usr/bin/env bash
# Scale check: a BERT-base-sized 12-layer encoder (samples/models/transformer12.onnx,
# from scripts/make_samples.py --scale) on the cloud 12x12 mesh at batch 64 -- import,
# anneal --beta 20, instruction export and replay -- printing wall time and peak RSS of
# each step (GNU time). The target: every step completes, peak RSS under 2 GiB.
#   tests/bench/bench_scale.sh [CLI] [extra anneal options...]
# CLI defaults to build/release/app/tilescope-cli. Not run by ctest (figures, not a gate).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CLI=${1:-$ROOT/build/release/app/tilescope-cli}
shift || true
MODEL=$ROOT/samples/models/transformer12.onnx
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
[[ -x /usr/bin/time ]] || { echo "bench_scale: needs GNU time (apt-get install time)" >&2; exit 1; }

# step NAME COMMAND...: runs it, prints "NAME  wall s  peak RSS MiB", fails on a failure.
step() {
  local name=$1
  shift
  if ! /usr/bin/time -f "%e %M" -o "$OUT/$name.time" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"; then
    echo "bench_scale: $name failed:" >&2
    tail -n 20 "$OUT/$name.err" >&2
    exit 1
  fi
  read -r wall kib <"$OUT/$name.time"
  printf "%-20s %9.2f s %9.1f MiB\n" "$name" "$wall" "$(echo "$kib / 1024" | bc -l)"
}

echo "model $(basename "$MODEL"), hw cloud (12x12), batch 64, $(nproc) cores"
step import "$CLI" inspect "$MODEL" --json
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(f'  {j[\"layers\"]} scheduled layers, {j[\"macs\"]/1e9:.2f} GMACs per sample')" "$OUT/import.out"
step anneal "$CLI" anneal "$MODEL" --hw cloud --batch 64 --beta 20 --seed 1 --json "$OUT/result.json" "$@"
python3 - "$OUT/result.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = j["stats"]
print(f"  valid {j['valid']}, cost {j['cost']:.4g} (start {j['initial']['cost']:.4g}), "
      f"{j['iterations']} iterations/chain x {len(j['chains'])} chains, "
      f"{s['evaluations_per_s']:.0f} evaluations/s, mapper hits {100 * s['mapper_hit_rate']:.1f}%")
PY
step export-instructions "$CLI" export-instructions "$OUT/result.json" --out "$OUT/program"
sed 's/^/  /' "$OUT/export-instructions.out"
step simulate "$CLI" simulate "$OUT/program" --quiet
echo "  program.bin $(stat -c %s "$OUT/program/program.bin") bytes"
