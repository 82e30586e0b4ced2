#!/usr/bin/env bash
# Builds bench/peers/cudasift_peer against a CudaSift source tree with nvcc.
# CudaSift is a peer to time against, never part of parvis.
#   bash bench/peers/build-cudasift.sh CUDASIFT_SRC OUT_DIR [ARCH]
# ARCH defaults to the first GPU's compute capability (nvidia-smi), else sm_90.
set -euo pipefail
src=${1:?CudaSift source directory}
out=${2:?output directory}
here=$(cd "$(dirname "$0")" && pwd)
arch=${3:-}
. "$here/cuda-arch.sh"
mkdir -p "$out/src"
# A copy of the sources, less InitCuda's printout of the memory clock:
# cudaDeviceProp::memoryClockRate is gone from recent CUDA releases.
cp "$src"/*.cu "$src"/*.h "$out/src/"
sed -i '/memoryClockRate/d; /Peak Memory Bandwidth/d' "$out/src/cudaSiftH.cu"
nvcc -O3 -std=c++17 -arch="$arch" -I"$out/src" -o "$out/cudasift_peer" \
    "$here/cudasift_peer.cu" "$out/src/cudaImage.cu" "$out/src/cudaSiftH.cu" "$out/src/matching.cu"
echo "$out/cudasift_peer"
