#!/usr/bin/env bash
# Shared by run.sh and test.sh: install what is missing, configure and build Release.
set -euo pipefail
cd "$(dirname "$0")"
./packaging/debian-deps.sh
BUILD_DIR=${TILESCOPE_BUILD_DIR:-build/release}
GEN=()
if command -v ninja >/dev/null; then GEN=(-G Ninja); fi
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  cmake -S . -B "$BUILD_DIR" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$BUILD_DIR" -j "$(nproc)"
