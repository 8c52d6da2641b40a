#!/usr/bin/env bash
# Install what is missing, build Release, run every test.
set -euo pipefail
cd "$(dirname "$0")"
./build.sh
BUILD_DIR=${TILESCOPE_BUILD_DIR:-build/release}
cd "$BUILD_DIR"
ctest --output-on-failure -j "$(nproc)" "$@"
# Sanitizer and fuzzing runs (scripts/ci-extra.sh) in CI, or when asked for locally.
if [[ "${CI:-}" == "true" || "${TILESCOPE_CI_EXTRA:-}" == "1" ]]; then
  cd - >/dev/null
  ./scripts/ci-extra.sh
fi
