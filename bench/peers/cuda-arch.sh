# Sourced by the peers' build scripts: sets $arch to the nvcc -arch value,
# from the script's ARCH argument when given, else the first GPU's compute
# capability (nvidia-smi), else sm_90.
arch=${arch:-}
if [ -z "$arch" ]; then
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.') || cap=
    arch=sm_${cap:-90}
fi
