#!/usr/bin/env python3
"""Record a fixed set of tilescope-cli outputs, or compare two recordings value for value.

A refactoring must not change a figure (docs/validation.md, "Refactoring without changing a
figure"). Record the set with the build before the change and with the build after it, then
compare:

    scripts/same_outputs.py record --cli OLD/tilescope-cli --out /tmp/before
    scripts/same_outputs.py record --cli NEW/tilescope-cli --out /tmp/after
    scripts/same_outputs.py compare /tmp/before /tmp/after

The set: `anneal --iterations N --seed 1` of four samples on edge, cloud, cim and chiplet
(every estimate the search costs on its way), `export-instructions` of four of those
results in every format and `simulate --json` of each program (the generator and the
replay), and `compare --iterations N` of two samples (the baselines and the portfolio).
Iteration budgets make every run reproducible. JSON files are compared as values with the
wall-clock fields left out (elapsed seconds, rates, the program's path); programs byte for
byte. Exit 1 when anything differs, naming each file.
"""
import argparse
import filecmp
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ["resnet50", "googlenet", "mobilenet_v2", "transformer"]
PRESETS = ["edge", "cloud", "cim", "chiplet"]
EXPORTED = {"resnet50": "edge", "googlenet": "cloud", "mobilenet_v2": "chiplet",
            "transformer": "cim"}
COMPARED = ["resnet50", "transformer"]
# Keys whose values are wall-clock time or a path, not a figure of the schedule.
CLOCK = re.compile(r"^program$|elapsed|seconds|wall|_s$|per_s")
CLOCK_LINE = re.compile(r"\bs\b|seconds|wall|elapsed")


def run(args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)


def record(cli, out, iterations):
    out.mkdir(parents=True, exist_ok=False)
    model = lambda m: str(ROOT / "samples" / "models" / f"{m}.onnx")
    common = ["--batch", "8", "--seed", "1", "--iterations", str(iterations), "--quiet"]
    for m in MODELS:
        for hw in PRESETS:
            run([cli, "anneal", model(m), "--hw", hw, *common,
                 "--json", str(out / f"anneal_{m}_{hw}.json")])
    for m, hw in EXPORTED.items():
        prog = out / f"prog_{m}_{hw}"
        run([cli, "export-instructions", str(out / f"anneal_{m}_{hw}.json"), "--out", str(prog),
             "--formats", "bin,txt,json,ir"])
        run([cli, "simulate", str(prog), "--quiet", "--json", str(out / f"sim_{m}_{hw}.json")])
    for m in COMPARED:
        run([cli, "compare", model(m), "--hw", "edge", *common,
             "--json", str(out / f"compare_{m}_edge.json")])


def without_clock(value):
    if isinstance(value, dict):
        return {k: without_clock(v) for k, v in value.items() if not CLOCK.search(k)}
    if isinstance(value, list):
        return [without_clock(v) for v in value]
    return value


def same(a, b):
    if a.suffix == ".json":
        return without_clock(json.loads(a.read_text())) == without_clock(json.loads(b.read_text()))
    return filecmp.cmp(a, b, shallow=False)


def compare(before, after):
    files = sorted(p for p in before.rglob("*") if p.is_file())
    differ = 0
    for a in files:
        b = after / a.relative_to(before)
        if not b.is_file():
            print(f"missing: {b}")
            differ += 1
        elif not same(a, b):
            print(f"differs: {a.relative_to(before)}")
            differ += 1
    print(f"{len(files)} files, {differ} differ")
    return 1 if differ else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run the fixed set with one build")
    rec.add_argument("--cli", default=str(ROOT / "build/release/app/tilescope-cli"))
    rec.add_argument("--out", required=True, type=Path, help="a folder that does not exist yet")
    rec.add_argument("--iterations", type=int, default=1500, help="per chain (default 1500)")
    cmp = sub.add_parser("compare", help="compare two recordings")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = ap.parse_args()
    if args.command == "record":
        record(args.cli, args.out, args.iterations)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
