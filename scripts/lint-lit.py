#!/usr/bin/env python3
"""Reports lit tests whose CHECK lines can never run.

A .mlir/.test file under the given directories (default: test) is listed when
it has a FileCheck directive (CHECK:, CHECK-NEXT:, ...) but no RUN line that
runs FileCheck, or when it has a RUN line without its colon (`// RUN foo`).
Exits 1 when any file is listed. Usage: lint-lit.py [DIR...]
"""
import pathlib
import re
import sys

SUFFIXES = {".mlir", ".test"}
SKIP_DIRS = {"Inputs", "lib", "unit"}  # as in test/lit.cfg.py
RUN = re.compile(r"^\s*(?://|#|;)?\s*RUN:(.*)$", re.M)
RUN_WITHOUT_COLON = re.compile(r"^\s*(?://|#|;)?\s*RUN(?![:\w-])", re.M)
CHECK = re.compile(r"\bCHECK(?:-[A-Z0-9-]+)?:")


def problems(text):
    if RUN_WITHOUT_COLON.search(text):
        yield "RUN line without a colon"
    if CHECK.search(text) and not any("FileCheck" in r for r in RUN.findall(text)):
        yield "CHECK lines but no FileCheck in its RUN lines"


def main(roots):
    bad = 0
    for root in map(pathlib.Path, roots):
        for path in sorted(root.rglob("*")):
            if (path.suffix not in SUFFIXES or not path.is_file()
                    or SKIP_DIRS & set(path.relative_to(root).parts)):
                continue
            for problem in problems(path.read_text(errors="replace")):
                print(f"{path}: {problem}")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["test"]))
