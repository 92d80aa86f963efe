#!/usr/bin/env bash
# Installs what Loom needs from Debian 12 packages (run as root). Packages
# already present are skipped, so a second run is quick.
set -euo pipefail

PACKAGES=(
  cmake ninja-build ccache lld g++ python3
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools   # compiler
  libopenblas-dev nlohmann-json3-dev libssl-dev            # runtime
  openmpi-bin libopenmpi-dev libabsl-dev                   # distributed runtime
  libgtest-dev                                             # unit tests
)
# The PyTorch peer for reference tests and benchmarks: scripts/test.sh asks
# for it with --with-torch. --bench adds it and matplotlib for the plots of
# the benchmarks in bench/.
case "${1:-}" in
  --with-torch) PACKAGES+=(python3-torch) ;;
  --bench) PACKAGES+=(python3-torch python3-matplotlib iproute2) ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "loom: installing ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    echo "loom: error: run as root (apt-get install needs it)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "loom: all packages present"
