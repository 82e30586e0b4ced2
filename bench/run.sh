#!/usr/bin/env bash
# Build parvis (installing what is missing) and run parvis-bench on the
# bundled stereo sets: CPU backend vs the best OpenCL device, with the
# agreement between the two.  Arguments replace the default selection and
# go to parvis-bench as they are (e.g. --case sift, or --quick for every
# operation's small cases).
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
"$top/build-aux/ensure-built.sh"
if [ "$#" -eq 0 ]; then
    set -- --case sad
fi
exec "$top/_build/parvis-bench" --data "$top/tests/data" "$@"
