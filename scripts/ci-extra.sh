#!/usr/bin/env bash
# The CI checks beyond the Release build and ctest (docs/hardening.md), run by test.sh when
# CI=true or TILESCOPE_CI_EXTRA=1:
#   (a) the engine tests under AddressSanitizer + UndefinedBehaviorSanitizer,
#   (b) the search-worker tests under ThreadSanitizer (engine tst_search, GUI tst_searchworker),
#   (c) every libFuzzer target for a short run on its committed corpus.
# Any sanitizer report or fuzzer finding fails the run. Build folders live under
# $TILESCOPE_EXTRA_BUILD_ROOT (default build/); each step prints its wall time.
#
# Knobs: TILESCOPE_FUZZ_SECONDS (default 15 per target) and TILESCOPE_FUZZ_SEED (default 1):
# every run starts from the committed corpus with the same mutations, so it re-checks the
# same neighbourhood each time. It is not bit-for-bit reproducible (coverage feedback
# differs slightly between runs, so the paths drift apart, even at a fixed run count): a
# finding is reproduced from the input libFuzzer writes, not by re-running the seed, and
# then kept in tests/data/fuzz-regressions/. TILESCOPE_FUZZ_RUNS pins the run count instead
# of the time. TILESCOPE_FUZZ_SEED=0 lets libFuzzer pick a random seed, for open-ended
# fuzzing (with TILESCOPE_FUZZ_SECONDS=600). TILESCOPE_EXTRA_STEPS (default "asan tsan fuzz").
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
ROOT=${TILESCOPE_EXTRA_BUILD_ROOT:-$SRC/build}
FUZZ_SECONDS=${TILESCOPE_FUZZ_SECONDS:-15}
FUZZ_SEED=${TILESCOPE_FUZZ_SEED:-1}
FUZZ_RUNS=${TILESCOPE_FUZZ_RUNS:-}
if [[ -n "$FUZZ_RUNS" ]]; then FUZZ_LIMIT=(-seed="$FUZZ_SEED" -runs="$FUZZ_RUNS"); FUZZ_WHAT="${FUZZ_RUNS} runs each, seed ${FUZZ_SEED}"
else FUZZ_LIMIT=(-seed="$FUZZ_SEED" -max_total_time="$FUZZ_SECONDS"); FUZZ_WHAT="${FUZZ_SECONDS} s each, seed ${FUZZ_SEED}"; fi
STEPS=${TILESCOPE_EXTRA_STEPS:-asan tsan fuzz}
JOBS=$(nproc)

./packaging/debian-deps.sh --fuzz # clang and its sanitizer / libFuzzer runtimes

t_all=$(date +%s)
step_start() { echo "=== ci-extra: $1"; t_step=$(date +%s); }
step_end() { echo "=== ci-extra: $1 done in $(($(date +%s) - t_step)) s"; }
wants() { [[ " $STEPS " == *" $1 "* ]]; }
# The sanitizer presets are RelWithDebInfo; -O1 with line tables only compiles about 2.5x
# faster than -O2 -g under the sanitizers (what keeps .ci/run within its time budget on two
# cores), keeps assertions on, and still gives symbolised stack traces.
SAN_FLAGS=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1")

# The TSan runtimes of gcc 12 / clang 14 cannot map their shadow memory on kernels that
# randomise mmap with more than 28 bits (vm.mmap_rnd_bits 32 on some distributions); running
# without ASLR avoids that where setarch is allowed.
NOASLR=()
if setarch "$(uname -m)" -R true 2>/dev/null; then NOASLR=(setarch "$(uname -m)" -R); fi

if wants asan; then
  step_start "engine tests under ASan+UBSan"
  B=$ROOT/asan-ubsan
  cmake --preset asan-ubsan -B "$B" -DTILESCOPE_BUILD_GUI=OFF "${SAN_FLAGS[@]}" >/dev/null
  # Only what the engine tests run (they call tilescope-cli); benchmarks are left out.
  engine_tests=(tilescope-cli)
  for t in tests/engine/tst_*.cpp; do engine_tests+=("$(basename "$t" .cpp)"); done
  cmake --build "$B" -j "$JOBS" --target "${engine_tests[@]}"
  # detect_leaks=1: LeakSanitizer works with the guiless Qt Test runners (QCoreApplication
  # frees what it allocates; Qt's few process-lifetime singletons are still reachable at
  # exit and so not reported).
  # The replay matrix (tst_fidelity) takes every fifth row of each function here: its code
  # paths are the same in every row, and the Release build replays them all.
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 TILESCOPE_FIDELITY_STRIDE=5 \
    ctest --test-dir "$B" -L engine --output-on-failure -j "$JOBS" --timeout 1200
  step_end "ASan+UBSan"
fi

if wants tsan; then
  step_start "search workers under TSan"
  B=$ROOT/tsan
  cmake --preset tsan -B "$B" "${SAN_FLAGS[@]}" >/dev/null
  # The GUI worker test runs against Debian's Qt, which is not built with TSan: the hand-off
  # inside Qt's event queue is invisible to it. The worker therefore never uses queued
  # signals or QMetaObject::invokeMethod; both directions go through postCall()
  # (ui/core/crossthread.h), which annotates the posted event (__tsan_release before
  # postEvent, __tsan_acquire on delivery), so TSan checks everything our code does.
  targets=(tst_search tst_searchworker)
  cmake --build "$B" -j "$JOBS" --target "${targets[@]}"
  for t in "${targets[@]}"; do
    exe=$(find "$B/tests" -type f -name "$t" -perm -u+x | head -1)
    echo "--- $t"
    QT_QPA_PLATFORM=offscreen QT_NO_GLIB=1 \
      TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$SRC/tests/tsan.supp" \
      "${NOASLR[@]}" "$exe"
  done
  step_end "TSan"
fi

if wants fuzz; then
  step_start "fuzz targets, ${FUZZ_WHAT}"
  B=$ROOT/fuzz
  CC=clang CXX=clang++ cmake -S "$SRC" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTILESCOPE_BUILD_GUI=OFF -DTILESCOPE_FUZZ=ON -DTILESCOPE_SANITIZE=address,undefined \
    "${SAN_FLAGS[@]}" >/dev/null
  cmake --build "$B" -j "$JOBS" --target fuzzers
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  for corpus in "$SRC"/tests/fuzz/corpus/*/; do
    name=$(basename "$corpus")
    mkdir -p "$scratch/$name"
    echo "--- fuzz_$name"
    # New inputs go to the scratch folder, never into the committed corpus; a crash is
    # written there too and its path printed by libFuzzer.
    status=0
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      "$B/tests/fuzz/fuzz_$name" "${FUZZ_LIMIT[@]}" -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$scratch/$name-" "$scratch/$name" "$corpus" \
      >"$scratch/$name.log" 2>&1 || status=$?
    grep -E "^#[0-9]+ +DONE|^stat::number_of_executed_units" "$scratch/$name.log" || true
    if [[ $status -ne 0 ]]; then
      tail -n 60 "$scratch/$name.log"
      echo "ci-extra: fuzz_$name found a problem (exit $status); add the input to" \
           "tests/data/fuzz-regressions/$name/ and fix it" >&2
      exit 1
    fi
  done
  step_end "fuzzing"
fi

echo "=== ci-extra: all steps done in $(($(date +%s) - t_all)) s"
