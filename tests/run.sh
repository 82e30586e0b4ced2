#!/usr/bin/env bash
# Build parvis (installing what is missing) and run the whole test suite:
# the CMocka suites on the CPU backend and on every OpenCL device found
# (PoCL on a machine without a GPU), then the same suites in a
# CPU-only build, then 'make distcheck'.
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
"$top/build-aux/ensure-built.sh"
cd "$top/_build"
make -j"$(nproc)" check || { cat tests/*.log; exit 1; }

# A CPU-only library must build and pass its tests too.
mkdir -p "$top/_build-cpu"
cd "$top/_build-cpu"
[ -f Makefile ] || ../configure -q --disable-opencl
make -j"$(nproc)" -s check || { cat tests/*.log; exit 1; }

cd "$top/_build"
make -j"$(nproc)" -s distcheck
echo "all tests passed"
