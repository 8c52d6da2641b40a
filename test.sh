#!/usr/bin/env bash
# Install what is missing, build Release, run every test.
set -euo pipefail
cd "$(dirname "$0")"
./build.sh
BUILD_DIR=${TILESCOPE_BUILD_DIR:-build/release}
cd "$BUILD_DIR"
ctest --output-on-failure -j "$(nproc)" "$@"
