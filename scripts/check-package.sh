#!/usr/bin/env bash
# The .deb as a user installs it: builds it with CPack in a configured build folder, runs
# lintian on it (no errors allowed), unpacks it into a temporary root (dpkg -x) and checks
# the installed tree: the samples (models, hardware templates, a sweep spec), the docs,
# the copyright and changelog, the man pages of both programs (every CLI command in
# tilescope-cli's), the installed tilescope-cli comparing an installed sample, and the
# GUI's "Open sample" finding the installed samples (tst_newuser, offscreen).
#   usage: scripts/check-package.sh [BUILD_DIR]    (default build/release)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build/release}
fail() { echo "check-package: $*" >&2; exit 1; }

(cd "$BUILD" && cpack -G DEB >/dev/null) || fail "cpack failed"
DEB=$(ls -t "$BUILD"/tilescope_*.deb | head -1)
echo "package: $DEB"

if command -v lintian >/dev/null; then
    LINT=$(lintian --tag-display-limit 0 "$DEB" 2>&1 || true)
    [[ -n "$LINT" ]] && echo "$LINT"
    grep -q '^E: ' <<<"$LINT" && fail "lintian reports errors"
else
    echo "check-package: lintian not installed, skipped" >&2
fi

ROOT=$(mktemp -d)
trap 'rm -rf "$ROOT"' EXIT
dpkg -x "$DEB" "$ROOT"
need() { [[ -e "$ROOT/$1" ]] || fail "missing in the package: /$1"; }
S=usr/share/tilescope/samples
need usr/bin/tilescope
need usr/bin/tilescope-cli
need $S/models/resnet50.onnx
need $S/hw/edge-4x4.json
ls "$ROOT"/$S/sweeps/*.json >/dev/null 2>&1 || fail "no sweep spec under /$S/sweeps"
for f in README.md user-guide.md cli.md copyright changelog.gz; do need usr/share/doc/tilescope/$f; done
for p in tilescope tilescope-cli; do need usr/share/man/man1/$p.1.gz; done

# Every command tilescope-cli --help lists is in its man page.
PAGE=$(zcat "$ROOT/usr/share/man/man1/tilescope-cli.1.gz")
CMDS=$("$ROOT/usr/bin/tilescope-cli" --help | awk '$1 == "tilescope-cli" {print $2}')
[[ -n "$CMDS" ]] || fail "no commands found in tilescope-cli --help"
for c in $CMDS; do grep -q -- "$c" <<<"$PAGE" || fail "man tilescope-cli does not name '$c'"; done

"$ROOT/usr/bin/tilescope-cli" compare "$ROOT/$S/models/resnet50.onnx" --hw edge --batch 2 \
    --iterations 50 --quiet >/dev/null || fail "installed tilescope-cli compare failed"

TILESCOPE_INSTALLED_ROOT="$ROOT" QT_QPA_PLATFORM=offscreen \
    "$BUILD/tests/tst_newuser" openSampleFromTheInstalledTree >/dev/null ||
    fail "Open sample does not find the installed samples"
echo "check-package: OK"
