#!/usr/bin/env bash
# Configures and builds Loom in ./build (defaults for Debian's LLVM/MLIR 22
# live in CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja >/dev/null
cmake --build build
