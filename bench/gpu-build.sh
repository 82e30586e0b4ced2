#!/usr/bin/env bash
# Builds parvis on the GPU machine (Ubuntu, NVIDIA OpenCL, no network) from
# Debian 12 packages unpacked with dpkg -x, as README's "The GPU machine"
# describes:
#   bash bench/gpu-build.sh DEBS_DIR [BUILD_DIR]
# DEBS_DIR holds the .debs of: libtool libltdl-dev libltdl7 libclfft2
# libclfft-dev ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-c-headers
# opencl-clhpp-headers clinfo libcmocka0 libcmocka-dev libvkfft-dev
# (apt-get download NAME... on a Debian 12 machine).  The packages go to
# $PV_DEPS (default /opt/pvdeps); the build links and runs against the
# system's libOpenCL.so.1, which lists the NVIDIA platform.  Prints the
# environment to source for running the built programs.
set -euo pipefail
debs=${1:?directory of .deb files}
top=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-$top/_build}
deps=${PV_DEPS:-/opt/pvdeps}
mkdir -p "$deps"
for f in "$debs"/*.deb; do dpkg -x "$f" "$deps"; done
multiarch=$deps/usr/lib/x86_64-linux-gnu
ln -sfn ../aclocal "$deps/usr/share/libtool/m4" 2>/dev/null || true
# The system's loader, under the development name the linker looks for.
sysocl=$(ldconfig -p | awk '/libOpenCL.so.1 / {print $NF; exit}')
if [ -n "$sysocl" ]; then
    mkdir -p "$deps/ocl"
    ln -sfn "$sysocl" "$deps/ocl/libOpenCL.so"
    ln -sfn "$sysocl" "$deps/ocl/libOpenCL.so.1"
fi
cat > "$deps/env.sh" <<ENV
export PATH="$deps/usr/bin:\$PATH"
export ACLOCAL_PATH="$deps/usr/share/aclocal\${ACLOCAL_PATH:+:\$ACLOCAL_PATH}"
export _lt_pkgdatadir="$deps/usr/share/libtool"
export CPATH="$deps/usr/include\${CPATH:+:\$CPATH}"
export LIBRARY_PATH="$deps/ocl:$multiarch\${LIBRARY_PATH:+:\$LIBRARY_PATH}"
export LD_LIBRARY_PATH="$deps/ocl:$multiarch\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export PKG_CONFIG_PATH="$multiarch/pkgconfig:$deps/usr/share/pkgconfig\${PKG_CONFIG_PATH:+:\$PKG_CONFIG_PATH}"
export OPENCL_LIBS="-L$deps/ocl -lOpenCL" OPENCL_CFLAGS="-I$deps/usr/include"
ENV
# ocl-icd's own libOpenCL.so.1 must not shadow the system's.
rm -f "$multiarch"/libOpenCL.so*
# shellcheck disable=SC1091
. "$deps/env.sh"
cd "$top"
[ -x configure ] || autoreconf -fi >/dev/null
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$top/configure" -q
make -j"$(nproc)" -s >/dev/null
echo "$deps/env.sh"
