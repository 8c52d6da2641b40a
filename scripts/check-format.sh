#!/usr/bin/env bash
# Fails when a C++ source under engine/, ui/, app/ or tests/ differs from what clang-format-14
# makes of it with the repository's .clang-format. CI runs it (.ci/run) before the tests.
# Fix a failure with: clang-format-14 -i FILE... (or scripts/check-format.sh --fix).
# Skips with a message (exit 0) when clang-format-14 is not installed.
set -euo pipefail
cd "$(dirname "$0")/.."

CF=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$CF" >/dev/null; then
  echo "check-format: $CF not installed, skipped (packaging/debian-deps.sh installs it)"
  exit 0
fi

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- 'engine/*.cpp' 'engine/*.h' 'ui/*.cpp' 'ui/*.h' \
    'app/*.cpp' 'app/*.h' 'tests/*.cpp' 'tests/*.h')
else
  mapfile -t files < <(find engine ui app tests -name '*.cpp' -o -name '*.h' | sort)
fi

if [[ "${1:-}" == "--fix" ]]; then
  "$CF" -i "${files[@]}"
  echo "check-format: formatted ${#files[@]} files"
  exit 0
fi

# One clang-format call for all files; its warnings name each file that would change.
if ! out=$("$CF" --dry-run --Werror "${files[@]}" 2>&1); then
  mapfile -t bad < <(grep -oE '^[^:]+\.(cpp|h):[0-9]+:[0-9]+: (warning|error)' <<<"$out" |
    cut -d: -f1 | sort -u)
  echo "check-format: ${#bad[@]} of ${#files[@]} files are not clang-format-14 clean:"
  for f in "${bad[@]}"; do
    echo "  $f"
    "$CF" "$f" | diff -u "$f" - | head -20 || true
  done
  [[ ${#bad[@]} -gt 0 ]] || echo "$out" | head -20
  echo "check-format: run scripts/check-format.sh --fix (or $CF -i on the files above)"
  exit 1
fi
echo "check-format: ${#files[@]} files clean ($("$CF" --version | head -1))"
