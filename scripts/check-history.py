#!/usr/bin/env python3
"""Fail when the tree names its own history instead of explaining itself.

The repository speaks of the product only: a comment, doc, test name or script says why the
code is as it is, not which work session or ticket changed it (git keeps that). This check
reads every tracked file under the folders below and fails on a reference of the form
"<word> N", "<word>N" or "<word> #N" for the words session, issue, item and ticket (any
case), printing each one as path:line: text. Exit 0 when there is none.
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ["engine", "ui", "app", "tests", "scripts", "docs", "README.md", "DEVELOPERS.md"]
WORDS = ("session", "issue", "item", "ticket")
# A word of WORDS, an optional space or '#', then a number.
PATTERN = re.compile(r"\b(?:" + "|".join(WORDS) + r")[ #]?\d+", re.IGNORECASE)
# Binary data (models, programs, fuzz corpora) is not prose.
SKIP_SUFFIXES = {".onnx", ".bin", ".png", ".svg", ".sqlite", ".ico"}


def tracked_files():
    out = subprocess.run(["git", "ls-files", "-z", "--", *FOLDERS], cwd=ROOT,
                         capture_output=True, check=True).stdout
    return [ROOT / p for p in out.decode().split("\0") if p]


def main():
    found = 0
    for path in tracked_files():
        if path.suffix in SKIP_SUFFIXES or "corpus" in path.parts or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if PATTERN.search(line):
                print(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
                found += 1
    if found:
        print(f"check-history: {found} line(s) name a session, issue, item or ticket; "
              "say why the code is as it is instead (git keeps the history)")
        return 1
    print("check-history: no session, issue, item or ticket references")
    return 0


if __name__ == "__main__":
    sys.exit(main())
