#!/usr/bin/env bash
# Install what is missing, build Release, then run the main job: the desktop explorer on
# the ResNet-50 sample (edge preset, batch 8, search running). With no display it falls
# back to a headless `tilescope-cli compare` on the same sample.
set -euo pipefail
cd "$(dirname "$0")"
./build.sh
BUILD_DIR=${TILESCOPE_BUILD_DIR:-build/release}
MODEL=samples/models/resnet50.onnx
if [[ -x "$BUILD_DIR/app/tilescope" && ( -n "${DISPLAY:-}" || -n "${WAYLAND_DISPLAY:-}" ) ]]; then
  exec "$BUILD_DIR/app/tilescope" "$MODEL" --hw edge --batch 8 --run
fi
echo "run.sh: no display; running the headless comparison instead" >&2
if "$BUILD_DIR/app/tilescope-cli" --help 2>/dev/null | grep -q "compare"; then
  exec "$BUILD_DIR/app/tilescope-cli" compare "$MODEL" --hw edge --batch 8 --seed 1 --beta 20
fi
for m in samples/models/*.onnx; do
  "$BUILD_DIR/app/tilescope-cli" inspect "$m" | head -1
done
