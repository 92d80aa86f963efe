#!/usr/bin/env python3
"""Reports folders of the runtime's sources that include each other.

runtime/src is split into folders by concern (support/, artifact/, comm/,
launch/, train/, ...) so that each folder can be read, tested and changed
with only the folders below it in mind. That holds only while the folders
form layers: once A includes B and B (directly or through C) includes A,
neither can be understood without the other. This script builds the graph
of folders from the `#include "..."` lines under the given directory
(default: runtime/src), finds its cycles, and names for each cycle the
include lines that make it. Exits 1 when there is a cycle.

An include is resolved as the compiler does for quoted includes: beside the
including file first, then against the source root. A public header
(SRC_DIR/../include/loom/runtime/X.h, which tools and tests include too)
belongs to the folder of the one source file X.c or X.cpp that implements
it, since including it means depending on that folder; headers with no such
file (declarations only, as abi.h) and system headers are ignored.
Usage: check-runtime-layers.py [SRC_DIR]
"""
import pathlib
import re
import sys

SUFFIXES = {".c", ".cpp", ".h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder(root, path):
    """The folder of `path` under `root`, "." for a file at the top."""
    parts = path.relative_to(root).parts
    return parts[0] if len(parts) > 1 else "."


def sources(root):
    return [path for path in sorted(root.rglob("*"))
            if path.suffix in SUFFIXES and path.is_file()]


def implementations(root):
    """{stem: the .c/.cpp files of that name}, for public headers."""
    found = {}
    for path in sources(root):
        if path.suffix != ".h":
            found.setdefault(path.stem, []).append(path)
    return found


def resolve(root, source, name, implemented):
    """The file under `root` that stands for include `name`, or None."""
    for base in (source.parent, root):
        candidate = (base / name).resolve()
        if candidate.is_file() and root in candidate.parents:
            return candidate
    public = root.parent / "include" / name
    files = implemented.get(public.stem, [])
    return files[0] if public.is_file() and len(files) == 1 else None


def folder_edges(root):
    """{(from folder, to folder): [(including file, include, its folder's
    file)]}."""
    edges, implemented = {}, implementations(root)
    for source in sources(root):
        for name in INCLUDE.findall(source.read_text(errors="replace")):
            target = resolve(root, source, name, implemented)
            if target is None:
                continue
            a, b = folder(root, source), folder(root, target)
            if a != b:
                edges.setdefault((a, b), []).append((source, name, target))
    return edges


def cycles(nodes, edges):
    """The strongly connected components of more than one folder (Tarjan)."""
    succ = {n: sorted(b for a, b in edges if a == n) for n in nodes}
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(n):
        index[n] = low[n] = len(index)
        stack.append(n)
        on_stack.add(n)
        for m in succ[n]:
            if m not in index:
                visit(m)
                low[n] = min(low[n], low[m])
            elif m in on_stack:
                low[n] = min(low[n], index[m])
        if low[n] == index[n]:
            component = []
            while True:
                m = stack.pop()
                on_stack.discard(m)
                component.append(m)
                if m == n:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for n in sorted(nodes):
        if n not in index:
            visit(n)
    return sorted(found)


def main(src):
    root = pathlib.Path(src).resolve()
    edges = folder_edges(root)
    nodes = {n for edge in edges for n in edge}
    found = cycles(nodes, edges)
    for component in found:
        print(f"{src}: folders include each other: {', '.join(component)}")
        for (a, b), lines in sorted(edges.items()):
            if a in component and b in component:
                for source, name, target in lines:
                    via = target.relative_to(root)
                    print(f"  {source.relative_to(root)} includes {name}" +
                          (f" ({via})" if pathlib.Path(name) != via else ""))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "runtime/src"))
