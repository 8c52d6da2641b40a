#!/usr/bin/env python3
"""Checks the includes between source folders against the layer order of docs/architecture.md.

The order is the fenced block tagged `layers` in docs/architecture.md: one line a layer, lowest
first; folders named on one line are peers. A file may include headers of its own folder and of
folders on lower lines, nothing else: no include from a lower layer to a higher one, none between
peers, hence no cycle between folders. The engine includes no Qt header. Sources under tests/ are
not checked (tests may use any layer).

Usage: scripts/check-layering.py [--graph]   (--graph prints the folder-level include edges)
Exit status 1 on any violation, naming the file, the line and the rule.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
INCLUDE_ROOTS = ["engine", "ui", "app"]  # the include directories of the CMake targets
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def read_layers():
    text = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    m = re.search(r"```layers\n(.*?)```", text, re.S)
    if not m:
        sys.exit("check-layering: docs/architecture.md has no ```layers block")
    rank = {}
    for i, line in enumerate(l for l in m.group(1).splitlines() if l.strip()):
        for folder in line.split("#")[0].split():
            rank[folder.rstrip("/")] = i
    return rank


def folder_of(path, rank):
    """The layer folder a repository-relative path belongs to (the longest listed prefix)."""
    parts = path.parts
    for n in range(len(parts) - 1, 0, -1):
        key = "/".join(parts[:n])
        if key in rank:
            return key
    return None


def resolve(src, name):
    """The repository-relative path a quoted include names, or None (a system header)."""
    candidates = [src.parent / name] + [ROOT / r / name for r in INCLUDE_ROOTS]
    for c in candidates:
        if c.is_file():
            return c.resolve().relative_to(ROOT)
    return None


def main():
    rank = read_layers()
    sources = sorted(p for r in INCLUDE_ROOTS for p in (ROOT / r).rglob("*")
                     if p.suffix in (".cpp", ".h") and "build" not in p.parts)
    errors, edges = [], {}
    for src in sources:
        rel = src.relative_to(ROOT)
        here = folder_of(rel, rank)
        if here is None:
            errors.append(f"{rel}: its folder is not in the layers of docs/architecture.md")
            continue
        for lineno, line in enumerate(src.read_text(encoding="utf-8").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, name = m.groups()
            if kind == "<":
                if here.startswith("engine") and re.match(r"Q[A-Za-z]*(/|$)", name):
                    errors.append(f"{rel}:{lineno}: the engine includes no Qt header (<{name}>)")
                continue
            target = resolve(src, name)
            if target is None:
                continue  # generated (moc, ui) or external
            there = folder_of(target, rank)
            if there is None or there == here:
                continue
            edges.setdefault((here, there), []).append(f"{rel}:{lineno}")
            if rank[there] > rank[here]:
                errors.append(f"{rel}:{lineno}: {here} includes {target}, a higher layer ({there})")
            elif rank[there] == rank[here]:
                errors.append(f"{rel}:{lineno}: {here} includes {target} of its peer {there}")
    if "--graph" in sys.argv:
        for (a, b), where in sorted(edges.items(), key=lambda e: (rank[e[0][0]], e[0])):
            print(f"{a} -> {b}  ({len(where)})")
    for e in errors:
        print(e)
    if errors:
        print(f"check-layering: {len(errors)} include(s) break the order of docs/architecture.md")
        return 1
    print(f"check-layering: {len(sources)} files, {len(edges)} folder edges, all downward")
    return 0


if __name__ == "__main__":
    sys.exit(main())
