"""What scripts/check-build-writes.py and scripts/update-reference-docs.py
share: the build directory they look at and the files its build.ninja
says the build writes."""
import os
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build_dir(arg=None):
    """`arg`, else $LOOM_BUILD_DIR, else <source>/build (as test/lit.cfg.py)."""
    path = (arg or os.environ.get("LOOM_BUILD_DIR")
            or os.path.join(root, "build"))
    return os.path.abspath(path)


def outputs(build):
    """(normalized absolute path, rule) of every file that a rule of the
    build's build.ninja writes. Phony rules write nothing (CMake lists its
    own input files, /usr/... included, as phony outputs), so they are left
    out."""
    if not os.path.isfile(os.path.join(build, "build.ninja")):
        sys.exit(f"{build} has no build.ninja: configure it with "
                 f"`cmake -S . -B {build} -G Ninja` (scripts/build.sh)")
    listing = subprocess.run(["ninja", "-C", build, "-t", "targets", "all"],
                             check=True, stdout=subprocess.PIPE, text=True)
    result = []
    for line in listing.stdout.splitlines():
        path, rule = line.rsplit(": ", 1)
        if rule != "phony":
            result.append((os.path.normpath(os.path.join(build, path)), rule))
    return result


def inside(path, directory):
    """Whether `path` is `directory` or below it, with or without symbolic
    links resolved (either spelling may be the one build.ninja uses)."""
    return any(os.path.commonpath([f(path), f(directory)]) == f(directory)
               for f in (os.path.normpath, os.path.realpath))
