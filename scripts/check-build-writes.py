#!/usr/bin/env python3
"""Reports files that the build would write outside its build directory.

A build writes only below its build directory: the source tree stays
clean, several build directories can live side by side, and nothing
outside needs permissions or gets overwritten. A rule that breaks this
usually comes from a CMake variable that an out-of-tree project leaves
unset (add_mlir_doc's ${MLIR_BINARY_DIR}/docs became /docs). The check is
static: it reads every output of every rule in BUILD_DIR/build.ninja
(`ninja -t targets all`), built or not, so targets nobody builds by
default are covered too; what a command writes without declaring it as
an output is not seen. Exits 1 when some output is outside.
Usage: check-build-writes.py [BUILD_DIR]
BUILD_DIR defaults to $LOOM_BUILD_DIR, else ./build.
"""
import sys

import ninja_outputs


def main():
    build = ninja_outputs.build_dir(sys.argv[1] if len(sys.argv) > 1 else None)
    outside = [(path, rule) for path, rule in ninja_outputs.outputs(build)
               if not ninja_outputs.inside(path, build)]
    for path, rule in outside:
        print(f"{path}: written by rule {rule}, outside {build}")
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())
