#!/bin/sh
# The measured tables of README.md and docs/ equal what bench/tables.py
# renders from the committed JSON under bench/results/, and a figure edited
# by hand in a copy is caught.
set -u

srcdir=${srcdir:-$(dirname "$0")/..}
PYTHON=${PYTHON:-python3}
out=tests/tmp/bench-tables
mkdir -p "$out" || exit 99
command -v "$PYTHON" >/dev/null 2>&1 || { echo "SKIP: no $PYTHON"; exit 77; }

fail() {
    echo "FAIL: $*"
    exit 1
}

"$PYTHON" "$srcdir/bench/tables.py" --check "$srcdir/README.md" \
    "$srcdir/docs/headline-results.md" "$srcdir/docs/sgm.md" "$srcdir/docs/stereo.md" ||
    fail "committed tables differ from the JSON's (run bench/tables.py --update FILE)"
grep -q '<!-- table:headline -->' "$srcdir/README.md" || fail "README has no headline block"

# A hand edit: the first figure of the headline block's first row, changed.
"$PYTHON" - "$srcdir/README.md" "$out/README.md" <<'PY' || fail "making the edited copy"
import re, sys
text = open(sys.argv[1]).read()
start = text.index("<!-- table:headline -->")
row = re.compile(r"^\| SAD stereo \|[^|]*\| ([0-9.]+)", re.M).search(text, start)
assert row, "no SAD row in the headline block"
edited = text[:row.start(1)] + "0.001" + text[row.end(1):]
assert edited != text
open(sys.argv[2], "w").write(edited)
PY
"$PYTHON" "$srcdir/bench/tables.py" --check "$out/README.md" > "$out/check.txt" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q 'differs' "$out/check.txt" || fail "a hand-edited table passed (exit $rc)"
echo "PASS: bench tables"
