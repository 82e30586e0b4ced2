#!/usr/bin/env bash
# Build parvis (installing what is missing) and run parvis-bench with the
# bundled data: CPU backend vs the best OpenCL device, with the agreement
# between the two.  Without arguments it runs the quick suite (every
# operation's small case); arguments go to parvis-bench (--full, --case
# NAME, --paper NAME, --json FILE, --csv FILE, --plot DIR, ...).
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
"$top/build-aux/ensure-built.sh"
exec "$top/_build/parvis-bench" --data "$top/tests/data" "$@"
