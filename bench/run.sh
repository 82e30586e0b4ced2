#!/usr/bin/env bash
# Build parvis (installing what is missing) and run parvis-bench with the
# bundled data: CPU backend vs the best OpenCL device, with the agreement
# between the two.  Without arguments it runs the quick suite (every
# operation's small case); arguments go to parvis-bench (--full, --case
# NAME, --paper NAME, --json FILE, --csv FILE, --plot DIR, ...).  It also
# installs the Python package (python/install.sh); the quick suite ends with
# the Python call overhead (python/bench/overhead.py --quick).
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
"$top/build-aux/ensure-built.sh"
# The Python package is optional here: without it the C benchmark still runs.
python="$("$top/python/install.sh")" ||
    { echo "bench: the Python package could not be installed; no overhead figures" >&2; python=""; }
status=0
"$top/_build/parvis-bench" --data "$top/tests/data" "$@" || status=$?
# The quick suite also measures what a Python call adds to the C call.
if [ "$#" -eq 0 ] && [ -n "$python" ]; then
    "$python" "$top/python/bench/overhead.py" --quick || status=$?
fi
exit "$status"
