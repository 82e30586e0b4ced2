#!/usr/bin/env bash
# Build parvis (installing what is missing) and run parvis-bench on the
# bundled stereo sets: CPU backend vs the best OpenCL device, with the
# agreement between the two.  Extra arguments go to parvis-bench.
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
"$top/build-aux/ensure-built.sh"
exec "$top/_build/parvis-bench" --data "$top/tests/data" "$@"
