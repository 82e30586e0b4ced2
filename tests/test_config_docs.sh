#!/bin/sh
# docs/configuration.md's table and the library's table of PARVIS_*
# variables (lib/core/configuration.h, PV_CONFIG_VARIABLES) list the same
# names, and no file of the library reads a PARVIS_* variable with getenv
# outside lib/core/configuration.c.
set -u
top_srcdir="${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}"
cd "$top_srcdir" || exit 99
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fails=0

# X(NAME, ...) entries of the table, as PARVIS_NAME
sed -n '/#define PV_CONFIG_VARIABLES/,/^$/p' lib/core/configuration.h |
    sed -n 's/^ *X(\([A-Z_0-9]*\),.*/PARVIS_\1/p' | sort >"$tmp/library"
# the first column of the docs' table rows
sed -n 's/^| `\(PARVIS_[A-Z_0-9]*\)` |.*/\1/p' docs/configuration.md | sort >"$tmp/docs"

[ -s "$tmp/library" ] || { echo "FAIL: no variables found in lib/core/configuration.h"; exit 1; }
if ! cmp -s "$tmp/library" "$tmp/docs"; then
    echo "FAIL: the library's table (<) and docs/configuration.md (>) differ:"
    diff "$tmp/library" "$tmp/docs"
    fails=$((fails + 1))
fi
if grep -rn 'getenv *( *"PARVIS_' lib backends | grep -v '^lib/core/configuration.c:'; then
    echo "FAIL: a PARVIS_* variable read outside lib/core/configuration.c (above)"
    fails=$((fails + 1))
fi
[ "$fails" -eq 0 ] && echo "configuration docs: $(wc -l <"$tmp/library") variables, same names"
[ "$fails" -eq 0 ]
