#!/usr/bin/env python3
"""Runs every command of a Markdown page's ```sh blocks, so that the page
cannot drift from the tools it describes (test/lint/doc-commands.test runs
docs/pipeline.md's).

Usage: check-doc-commands.py PAGE.md [BUILD_DIR]

The commands run in order, each with bash, in one scratch directory that
looks like a source checkout: every top-level entry of the source tree is
linked into it, `build` is BUILD_DIR (default: $LOOM_BUILD_DIR, else
<source>/build), and BUILD_DIR/bin comes first on PATH (the LLVM tools,
mlir-translate and lit, are found on PATH or in /usr/lib/llvm-22/bin). A
command must exit 0, or non-zero where its line ends with `# fails`. Lines
ending with a backslash continue on the next line. Exits 1 at the first
command that does otherwise, with its output."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
FAILS = re.compile(r"\s+#\s*fails\s*$")


def commands(page):
    """(line number, command, whether it must fail) of each ```sh block."""
    found, inside, pending, start = [], False, "", 0
    with open(page, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            stripped = line.strip()
            if stripped.startswith("```"):
                inside = not inside and stripped == "```sh"
                continue
            if not inside or (not pending and (not stripped or
                                               stripped.startswith("#"))):
                continue
            if not pending:
                start = number
            if stripped.endswith("\\"):
                pending += stripped[:-1] + " "
                continue
            command = pending + stripped
            pending = ""
            fails = bool(FAILS.search(command))
            found.append((start, FAILS.sub("", command), fails))
    return found


def scratch_checkout(build):
    """A directory with the source tree's entries linked in, `build` too."""
    root = tempfile.mkdtemp(prefix="loom-doc-commands-")
    for entry in os.listdir(SOURCE):
        if entry not in ("build", ".git"):
            os.symlink(os.path.join(SOURCE, entry), os.path.join(root, entry))
    os.symlink(build, os.path.join(root, "build"))
    return root


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    page = os.path.abspath(sys.argv[1])
    build = os.path.abspath(sys.argv[2] if len(sys.argv) == 3 else
                            os.environ.get("LOOM_BUILD_DIR") or
                            os.path.join(SOURCE, "build"))
    if not os.path.isdir(os.path.join(build, "bin")):
        sys.exit(f"{build}: not a Loom build (no bin/)")
    found = commands(page)
    if not found:
        sys.exit(f"{page}: no ```sh commands")
    env = dict(os.environ, LOOM_BUILD_DIR=build)
    env["PATH"] = os.pathsep.join(
        [os.path.join(build, "bin"), env.get("PATH", ""),
         "/usr/lib/llvm-22/bin"])
    cwd = scratch_checkout(build)
    for number, command, fails in found:
        result = subprocess.run(["bash", "-c", command], cwd=cwd, env=env,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True,
                                timeout=600)
        if (result.returncode != 0) != fails:
            expected = "to fail" if fails else "to succeed"
            print(f"{page}:{number}: expected {expected}, exit "
                  f"{result.returncode}: {command}\n"
                  f"{result.stdout[-4000:]}(its directory: {cwd})")
            sys.exit(1)
        print(f"{os.path.basename(page)}:{number}: ok"
              f"{' (fails, as it should)' if fails else ''}: {command}")
    shutil.rmtree(cwd)


if __name__ == "__main__":
    main()
