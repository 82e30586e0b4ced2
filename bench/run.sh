#!/usr/bin/env bash
# Build parvis (installing what is missing) and run parvis-bench on the
# bundled stereo sets: CPU backend vs the best OpenCL device, with the
# agreement between the two.  Arguments go to parvis-bench; --case NAME or
# --quick replaces the default selection (the stereo cases).
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
"$top/build-aux/ensure-built.sh"
selection=(--case sad)
for arg in "$@"; do
    case "$arg" in --case|--quick) selection=() ;; esac
done
exec "$top/_build/parvis-bench" --data "$top/tests/data" "${selection[@]}" "$@"
