#!/usr/bin/env python3
"""Fail when a function defined in engine/, ui/ or app/ is longer than the limit
(docs/architecture.md).

Reads each source with comments and literals blanked, follows the braces, and takes as a
function every body opened at namespace scope (not a namespace, class, struct, enum or
brace initialiser); its length counts the lines from the first line of its signature to
its closing brace. Prints the longest few so a reviewer sees how close the code is.
"""
import re
import sys
from pathlib import Path

LIMIT = 150
ROOT = Path(__file__).resolve().parent.parent
SCOPE = re.compile(r"^\s*(template\s*<.*>\s*)?(namespace|struct|class|enum|union|extern)\b", re.S)
LITERAL = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def blank(text):
    return LITERAL.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def functions(text):
    code = blank(text)
    stack = []        # one entry per open brace: "scope", "function" or "other"
    stmt_start = 0    # offset where the current statement began
    opened = []       # offsets of function bodies' statement starts
    for i, ch in enumerate(code):
        if ch == "{":
            head = code[stmt_start:i]
            if all(k == "scope" for k in stack):
                if SCOPE.match(head):
                    stack.append("scope")
                elif "(" in head and not head.rstrip().endswith("=") and ")" in head:
                    stack.append("function")
                    opened.append(stmt_start)
                else:
                    stack.append("other")
            else:
                stack.append("other")
            stmt_start = i + 1
        elif ch == "}":
            kind = stack.pop() if stack else "other"
            if kind == "function":
                start = opened.pop()
                head = code[start:].lstrip()
                first = start + (len(code[start:]) - len(head))
                line = code.count("\n", 0, first) + 1
                end = code.count("\n", 0, i) + 1
                name = re.sub(r"\s+", " ", code[first:code.index("(", first)]).split(" ")[-1]
                yield name, line, end - line + 1
            stmt_start = i + 1
        elif ch == ";":
            stmt_start = i + 1
        elif ch == "#" and (i == 0 or code[i - 1] == "\n"):
            pass
    return


# The product's own code: the engine, the Qt side and the mains (tests and third-party
# code are not held to the limit).
FOLDERS = ("engine", "ui", "app")


def sources():
    for folder in FOLDERS:
        yield from sorted((ROOT / folder).rglob("*.cpp"))
        yield from sorted((ROOT / folder).rglob("*.h"))


def main():
    found = []
    for path in sources():
        text = path.read_text(encoding="utf-8", errors="replace")
        # preprocessor lines end statements too
        text = re.sub(r"(?m)^\s*#.*$", lambda m: ";" + " " * (len(m.group(0)) - 1), text)
        for name, line, length in functions(text):
            found.append((length, f"{path.relative_to(ROOT)}:{line}", name))
    found.sort(key=lambda f: -f[0])
    for length, where, name in found[:5]:
        print(f"{length:4d} lines  {name}  ({where})")
    over = [f for f in found if f[0] > LIMIT]
    for length, where, name in over:
        print(f"error: {where}: {name} is {length} lines (limit {LIMIT})", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
