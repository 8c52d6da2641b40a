#!/usr/bin/env bash
# Installs every build, test and sample-generation dependency of Tilescope from Debian 12's
# apt. Idempotent: packages already present are not touched, and apt is not called at all
# when nothing is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev libgl1-mesa-dev
  libqcustomplot-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  nlohmann-json3-dev
  libsqlite3-dev
  libopenmpi-dev openmpi-bin
  xvfb xauth imagemagick
  clang-format-14
)
# Only needed to regenerate samples/models (scripts/make_samples.py); not for building.
SAMPLE_PACKAGES=(python3-onnx python3-torch python3-torchvision)
# Only for scripts/ci-extra.sh (sanitizer builds with clang, libFuzzer targets): installed
# with --fuzz.
FUZZ_PACKAGES=(clang libclang-rt-14-dev)

want=("${PACKAGES[@]}")
if [[ "${1:-}" == "--samples" ]]; then want+=("${SAMPLE_PACKAGES[@]}"); fi
if [[ "${1:-}" == "--fuzz" ]]; then want+=("${FUZZ_PACKAGES[@]}"); fi

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "debian-deps: all ${#want[@]} packages present"
  exit 0
fi

echo "debian-deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
