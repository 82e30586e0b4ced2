#!/usr/bin/env bash
# Build parvis (installing what is missing) and run the whole test suite:
# the CMocka suites on the CPU backend and on every OpenCL device found
# (PoCL on a machine without a GPU), then 'make distcheck', which builds
# the release tarball CPU-only (--disable-opencl) and runs its suites.
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
"$top/build-aux/ensure-built.sh"
cd "$top/_build"
make -j"$(nproc)" check || { cat tests/*.log; exit 1; }

# Sanitizers: the CMocka suite under ASan+UBSan (CPU backend and PoCL) and
# the thread test under TSan, in _build-asan / _build-tsan
# (PARVIS_SKIP_SANITIZERS=1 leaves them out).
if [ "${PARVIS_SKIP_SANITIZERS:-0}" != 1 ]; then
    bash "$top/tests/sanitize.sh"
fi

make -j"$(nproc)" -s distcheck
echo "all tests passed"
