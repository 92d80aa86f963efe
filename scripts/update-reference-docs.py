#!/usr/bin/env python3
"""Publishes the dialect and pass references under docs/reference, or with
--check reports where docs/reference differs from what the build generates.

Each add_mlir_doc in the CMakeLists generates one Markdown reference from
the TableGen definitions (ops, attributes, types, passes and their options)
into BUILD_DIR/docs/{Dialects,Passes} (target mlir-doc, part of `all`).
docs/reference holds byte copies of them, so that they can be read without
a build and so that a change to an op or a pass shows in review as a change
of its reference; test/lint/reference-docs.test runs --check. The list of
references is the build's (the outputs below BUILD_DIR/docs), so a file
left in BUILD_DIR/docs by a removed add_mlir_doc is ignored. README.md is
the one file in docs/reference written by hand.

Usage: update-reference-docs.py [--check] [--no-build] [--reference DIR]
                                [BUILD_DIR]
BUILD_DIR defaults to $LOOM_BUILD_DIR, else ./build; DIR to docs/reference.
Without --check, builds mlir-doc (unless --no-build) and then makes DIR
match the build's references. --check builds nothing and exits 1 when DIR
differs.
"""
import argparse
import difflib
import os
import shutil
import subprocess
import sys

import ninja_outputs

HAND_WRITTEN = {"README.md"}
REFRESH = "scripts/update-reference-docs.py"


def generated(build):
    """{path relative to BUILD_DIR/docs: absolute path} of the references."""
    docs = os.path.join(build, "docs")
    return {os.path.relpath(path, docs): path
            for path, _ in ninja_outputs.outputs(build)
            if ninja_outputs.inside(path, docs)}


def published(reference):
    """The references in `reference` (relative paths), hand-written ones
    left out."""
    found = set()
    for parent, _, files in os.walk(reference):
        for name in files:
            rel = os.path.relpath(os.path.join(parent, name), reference)
            if name.endswith(".md") and rel not in HAND_WRITTEN:
                found.add(rel)
    return found


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def differences(refs, reference):
    """One message (with a diff where a file changed) for each reference in
    `reference` that is missing, differs, or is no longer generated."""
    messages = []
    for rel, built in sorted(refs.items()):
        copy = os.path.join(reference, rel)
        if not os.path.exists(built):
            sys.exit(f"{built} is not built: build mlir-doc (or all) first")
        if not os.path.exists(copy):
            messages.append(f"{copy}: missing")
        elif read(copy) != read(built):
            diff = difflib.unified_diff(read(copy).splitlines(),
                                        read(built).splitlines(),
                                        copy, built, lineterm="", n=1)
            messages.append(f"{copy}: differs from the build's\n" +
                            "\n".join(list(diff)[:40]))
    for rel in sorted(published(reference) - set(refs)):
        messages.append(f"{os.path.join(reference, rel)}: no longer generated")
    return messages


def update(refs, reference):
    for rel in published(reference) - set(refs):
        os.remove(os.path.join(reference, rel))
        print(f"removed {rel}")
    for rel, built in sorted(refs.items()):
        copy = os.path.join(reference, rel)
        if not os.path.exists(copy) or read(copy) != read(built):
            os.makedirs(os.path.dirname(copy), exist_ok=True)
            shutil.copyfile(built, copy)
            print(f"updated {rel}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", nargs="?")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--reference",
                    default=os.path.join(ninja_outputs.root, "docs", "reference"))
    args = ap.parse_args()
    build = ninja_outputs.build_dir(args.build)
    if not args.check and not args.no_build:
        subprocess.run(["cmake", "--build", build, "--target", "mlir-doc"],
                       check=True)
    refs = generated(build)
    if not refs:
        sys.exit(f"{build}/build.ninja generates no references under docs/")
    if not args.check:
        update(refs, args.reference)
        return 0
    messages = differences(refs, args.reference)
    for message in messages:
        print(message)
    if messages:
        print(f"{args.reference} is out of date with the dialects' and "
              f"passes' TableGen definitions: refresh it with "
              f"`{REFRESH} {build}`")
    return 1 if messages else 0


if __name__ == "__main__":
    sys.exit(main())
