#!/usr/bin/env bash
# Install what fpsim needs (Debian/Ubuntu packages) and build it into build/.
# Usage: scripts/setup.sh [extra cmake options, e.g. -DFPSIM_CUDA=OFF]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config libgsl-dev libhdf5-dev hdf5-tools libopenblas-dev gnuplot-nox)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j"$(nproc)"
echo "setup: built build/fpsim" >&2
