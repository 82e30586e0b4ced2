#!/usr/bin/env bash
# Shared set-up of the quick-start commands: install missing Debian/Ubuntu
# packages (as root, or through sudo), then configure and build parvis in
# _build/ (an out-of-tree build).  Extra arguments go to configure.
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"

packages=(build-essential autoconf automake libtool pkg-config
          ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo
          libclfft-dev libfftw3-dev libpng-dev libcmocka-dev
          libvlfeat-dev libnifti2-dev libvkfft-dev
          python3 python3-dev python3-venv python3-pip python3-setuptools python3-wheel
          python3-cffi python3-numpy python3-pytest python3-dask python3-distributed)
missing=()
if command -v dpkg-query >/dev/null; then
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
    done
fi
if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing: ${missing[*]}"
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

cd "$top"
[ -x configure ] || autoreconf -fi
mkdir -p _build
cd _build
[ -f Makefile ] || ../configure -q "$@"
make -j"$(nproc)" -s
