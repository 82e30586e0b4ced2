#!/bin/sh
# Only the public API leaves libparvis.so: the functions that the installed
# headers declare (each marked PV_API) must be exactly the functions the
# shared library exports, both ways.
set -eu
top_srcdir="${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}"
lib=".libs/libparvis.so"
[ -f "$lib" ] || { echo "no $lib (static-only build?)"; exit 77; }
command -v nm >/dev/null || { echo "nm not found"; exit 77; }
tmp="${TMPDIR:-/tmp}/parvis-symbols.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

# The installed headers: parvis/interop.h only with the OpenCL backend
# (config.h of this build says which).
headers=""
for h in "$top_srcdir"/include/parvis/*.h; do
    case "$h" in
    */interop.h) grep -qs '^#define PV_HAVE_OPENCL 1' config.h || continue ;;
    esac
    headers="$headers $h"
done
# Function names declared in the public headers (the name before the
# first parenthesis of each PV_API line).
# shellcheck disable=SC2086  # the header paths have no spaces
sed -n 's/^PV_API [^(]*[^a-zA-Z0-9_]\(pv_[a-zA-Z0-9_]*\)(.*/\1/p' \
    $headers | sort -u > "$tmp/declared"
# A declaration without PV_API would be silently hidden: none may exist.
# shellcheck disable=SC2086
if grep -nE '^[a-z][a-zA-Z0-9_ *]*[ *]pv_[a-zA-Z0-9_]+\(' $headers \
        | grep -v ':typedef' > "$tmp/unmarked"; then
    echo "public declarations without PV_API:"; cat "$tmp/unmarked"; exit 1
fi
nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "W" { print $3 }' | sort -u > "$tmp/exported"

status=0
if ! comm -23 "$tmp/exported" "$tmp/declared" > "$tmp/leaked" || [ -s "$tmp/leaked" ]; then
    echo "exported but not in the public headers:"; cat "$tmp/leaked"; status=1
fi
if ! comm -13 "$tmp/exported" "$tmp/declared" > "$tmp/missing" || [ -s "$tmp/missing" ]; then
    echo "declared in the public headers but not exported:"; cat "$tmp/missing"; status=1
fi
echo "$(wc -l < "$tmp/declared") public functions, $(wc -l < "$tmp/exported") exported"
exit $status
