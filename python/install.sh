#!/usr/bin/env bash
# Install the Python package parvis for the quick-start commands: the C
# library goes into a prefix inside the build tree (_build/_prefix), the
# package is built against it (found through pkg-config) into a virtual
# environment, _build/venv, that sees the system's numpy, cffi and pytest
# (Debian's python3-numpy, python3-cffi, python3-pytest; pip fetches what is
# missing).  PARVIS_PYTHON_LIBRARY=system makes the package link this
# installed library rather than build its own copy (docs/install.md).  Run
# after build-aux/ensure-built.sh.  Prints the venv's python.
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
build="$top/_build"
prefix="$build/_prefix"

make -C "$build" -s install prefix="$prefix" >/dev/null 2>&1 ||
    make -C "$build" install prefix="$prefix" >&2
# configure wrote the default prefix into parvis.pc: point it at this one.
sed -i "s|^prefix=.*|prefix=$prefix|" "$prefix/lib/pkgconfig/parvis.pc"

python=/usr/bin/python3
[ -x "$python" ] || python="$(command -v python3)"
venv="$build/venv"
[ -x "$venv/bin/python" ] || "$python" -m venv --system-site-packages "$venv"
# A rebuilt library may change the declarations: always rebuild the package.
"$venv/bin/python" -m pip uninstall -q -y parvis >/dev/null 2>&1 || true
PARVIS_PYTHON_LIBRARY=system \
    PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
    "$venv/bin/python" -m pip install -q --disable-pip-version-check \
    --no-build-isolation "$top/python[test]" >&2
# pyopencl, for the device-buffer methods' tests (python/tests/test_interop.py
# skips without it): optional, so a machine without it still gets the package.
"$venv/bin/python" -c "import pyopencl" >/dev/null 2>&1 ||
    "$venv/bin/python" -m pip install -q --disable-pip-version-check pyopencl >&2 ||
    echo "parvis: pyopencl not installed; the device-buffer tests will be skipped" >&2
echo "$venv/bin/python"
