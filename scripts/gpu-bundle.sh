#!/usr/bin/env bash
# Packs loom-run, the runtime, its plugins and the shared libraries they need
# that a GPU machine may lack (OpenBLAS and its Fortran runtime; not libc, not
# CUDA, cuBLAS or NCCL, which the GPU machine has) into one directory, so a
# GPU machine without LLVM, MPI or a package registry can run artifacts
# compiled here:
#
#   bash scripts/gpu-bundle.sh [BUILD_DIR] [OUT_DIR]     # default: build out/gpu-bundle
#   OUT_DIR/loom-run ARTIFACT --device cuda ...          # on the GPU machine
#
# loom-run finds the libraries through its RUNPATH ($ORIGIN/../runtime in
# the build tree), so the bundle keeps that layout: bin/ and runtime/.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-out/gpu-bundle}
for f in "$build/bin/loom-run" "$build/runtime/libLoomRuntime.so" "$build/runtime/libLoomCuda.so"; do
  [[ -e $f ]] || { echo "gpu-bundle: error: $f is missing (build with the CUDA toolkit installed)" >&2; exit 1; }
done
rm -rf "$out" && mkdir -p "$out/bin" "$out/runtime"
cp "$build/bin/loom-run" "$build/bin/loom-gradcheck" "$out/bin/"
cp "$build"/runtime/libLoom*.so "$out/runtime/"
# Libraries outside the usual base system, as the loader resolves them here.
# (Abseil: Debian's libabsl-dev, which a GPU image rarely has.)
ldd "$build/runtime/libLoomRuntime.so" "$build/bin/loom-run" | awk '/=> \// {print $3}' \
  | grep -E 'libopenblas|libgfortran|libquadmath|libcrypto|libabsl' | sort -u \
  | while read -r lib; do cp -L "$lib" "$out/runtime/"; done
cat > "$out/libpath.sh" <<'LIBPATH'
#!/bin/sh
# Prints the library path the bundle's programs need: the bundled libraries,
# the caller's LD_LIBRARY_PATH, then the lib directories of the pip wheels
# that carry cuBLAS and NCCL for CUDA 13 (nvidia/cu13, nvidia/cublas,
# nvidia/nccl), which PyTorch installs and the loader does not search.
here=$(cd "$(dirname "$0")" && pwd)
path="$here/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for dir in $(${PYTHON:-python3} -c '
import os, nvidia
for root in nvidia.__path__:
    for name in ("cu13", "cublas", "nccl"):
        lib = os.path.join(root, name, "lib")
        if os.path.isdir(lib):
            print(lib)' 2>/dev/null); do
  path="$path:$dir"
done
echo "$path"
LIBPATH
cat > "$out/loom-run" <<'WRAP'
#!/bin/sh
here=$(dirname "$0")
LD_LIBRARY_PATH=$("$here/libpath.sh") exec "$here/bin/loom-run" "$@"
WRAP
chmod +x "$out/loom-run" "$out/libpath.sh"
du -sh "$out" | awk '{print "gpu-bundle: " $2 " (" $1 ")"}'
