#!/usr/bin/env bash
# The Python API reference: pdoc over the parvis package installed in
# _build/venv (python/install.sh installs it first when it is missing;
# pdoc comes from PyPI into that venv).  The docstrings are the text; the
# pages say where the guides in docs/ are.  Run by 'make doc-python'.
#
#   docs/python-api.sh [OUTDIR]    (default: _build/docs/python-api)
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$top/_build/docs/python-api}"
python="$top/_build/venv/bin/python"

if ! [ -x "$python" ] || ! (cd / && "$python" -c 'import parvis') 2>/dev/null; then
    python="$("$top/python/install.sh")"
fi
if ! "$python" -c 'import pdoc' 2>/dev/null; then
    "$python" -m pip install -q --disable-pip-version-check pdoc
fi

guides="The guides are in the source tree's docs/ directory: docs/dask.md (the Dask layer), \
docs/install.md (packages, manuals, tests), docs/sift.md, docs/flow2d.md, docs/geometry.md, \
docs/tuning.md, docs/timing.md; the C API reference is built by 'make doc'."
rm -rf "$out"
# From / so that the source tree's python/parvis (without its compiled
# extension) cannot shadow the installed package.
(cd / && "$python" -m pdoc --footer-text "$guides" -o "$out" parvis parvis.dask)
echo "Python API reference: $out/index.html"
