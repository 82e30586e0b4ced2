#!/usr/bin/env bash
# Build parvis (installing what is missing) and run the whole test suite:
# the CMocka suites on the CPU backend and on every OpenCL device found
# (PoCL on a machine without a GPU), then the Python package's pytest suite
# (installed into _build/venv against the library installed in
# _build/_prefix), the fuzz targets for a bounded time (tests/fuzz/run.sh,
# PARVIS_FUZZ_SECONDS), then 'make distcheck', which builds the release
# tarball CPU-only (--disable-opencl) and runs its suites.
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
"$top/build-aux/ensure-built.sh"
cd "$top/_build"
make -j"$(nproc)" check || { cat tests/*.log; exit 1; }

python="$("$top/python/install.sh")"
# From the build tree, so that the source tree's parvis/ (without its
# compiled extension) does not shadow the installed package.
"$python" -m pytest -q -p no:cacheprovider --rootdir "$top/python" "$top/python/tests"

# Fuzz targets (tests/fuzz/): every file reader under libFuzzer with ASan and
# UBSan for PARVIS_FUZZ_SECONDS seconds each (default 30; 0 skips them).
fuzz_seconds=${PARVIS_FUZZ_SECONDS:-30}
if [ "$fuzz_seconds" -gt 0 ]; then
    make -s fuzz
    bash "$top/tests/fuzz/run.sh" "$fuzz_seconds"
fi

# Sanitizers: the CMocka suite under ASan+UBSan (CPU backend and PoCL) and
# the thread test under TSan, in _build-asan / _build-tsan
# (PARVIS_SKIP_SANITIZERS=1 leaves them out).
if [ "${PARVIS_SKIP_SANITIZERS:-0}" != 1 ]; then
    bash "$top/tests/sanitize.sh"
fi

make -j"$(nproc)" -s distcheck
echo "all tests passed"
