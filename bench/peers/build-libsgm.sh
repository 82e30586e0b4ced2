#!/usr/bin/env bash
# Builds bench/peers/libsgm_peer against a libSGM source tree with nvcc.
# libSGM is a peer to time against, never part of parvis.
#   bash bench/peers/build-libsgm.sh LIBSGM_SRC OUT_DIR [ARCH]
# ARCH defaults to the first GPU's compute capability (nvidia-smi), else sm_90.
set -euo pipefail
src=${1:?libSGM source directory}
out=${2:?output directory}
here=$(cd "$(dirname "$0")" && pwd)
arch=${3:-}
. "$here/cuda-arch.sh"
mkdir -p "$out/include"
# The header CMake would generate from libsgm_config.h.in: a static build,
# no OpenCV wrapper.
cat > "$out/include/libsgm_config.h" <<'H'
#ifndef __LIBSGM_CONFIG_H__
#define __LIBSGM_CONFIG_H__
#define LIBSGM_VERSION 3.1.0
#endif
H
sources=()
for f in "$src"/src/*.cu "$src"/src/*.cpp; do
    case "$(basename "$f")" in libsgm_wrapper.cpp) continue ;; esac
    sources+=("$f")
done
nvcc -O3 -std=c++17 -arch="$arch" -I"$out/include" -I"$src/include" -I"$src/src" \
    -o "$out/libsgm_peer" "$here/libsgm_peer.cu" "${sources[@]}"
echo "$out/libsgm_peer"
