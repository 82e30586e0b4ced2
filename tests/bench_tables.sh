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
    "$srcdir/docs/headline-results.md" "$srcdir/docs/sgm.md" "$srcdir/docs/stereo.md" "$srcdir/docs/dask.md" \
    "$srcdir/docs/async.md" "$srcdir/docs/sift.md" "$srcdir/docs/volumes.md" "$srcdir/docs/interop.md" ||
    fail "committed tables differ from the JSON's (run bench/tables.py --update FILE)"
grep -q "<!-- table:headline -->" "$srcdir/docs/headline-results.md" || fail "docs/headline-results.md has no headline block"

# A hand edit: the first figure of the headline block's first row, changed.
"$PYTHON" - "$srcdir/docs/headline-results.md" "$out/headline-results.md" <<'PY' || fail "making the edited copy"
import re, sys
text = open(sys.argv[1]).read()
start = text.index("<!-- table:headline -->")
row = re.compile(r"^\| SAD stereo \|[^|]*\| ([0-9.]+)", re.M).search(text, start)
assert row, "no SAD row in the headline block"
edited = text[:row.start(1)] + "0.001" + text[row.end(1):]
assert edited != text
open(sys.argv[2], "w").write(edited)
PY
"$PYTHON" "$srcdir/bench/tables.py" --check "$out/headline-results.md" > "$out/check.txt" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q 'differs' "$out/check.txt" || fail "a hand-edited table passed (exit $rc)"
# bench/report.py's CPU baseline on the committed SGM run and its OpenCV
# peers: each joined row names the fastest CPU peer, marks a CPU backend
# more than 1.5x slower than it, and gives the GPU's gain over the peer.
res="$srcdir/bench/results/h200-2026-11-28"
"$PYTHON" "$srcdir/bench/report.py" "$res/parvis-sgm-h200.json" "$res/opencv-sgm-h200.json" \
    > "$out/report.md" || fail "report.py exited $?"
"$PYTHON" - "$res/parvis-sgm-h200.json" "$res/opencv-sgm-h200.json" "$out/report.md" <<'PY' ||
import json, sys
parvis = {r["case"]: r for r in json.load(open(sys.argv[1]))["results"]}
peers = [p for p in json.load(open(sys.argv[2]))["peers"] if p["path"] == "cpu"]
report = open(sys.argv[3]).read()
assert "## CPU baseline" in report, "no baseline table"
checked = 0
for case in sorted({p["case"] for p in peers} & set(parvis)):
    best = min((p for p in peers if p["case"] == case), key=lambda p: p["ms"])
    row = next(l for l in report.splitlines() if l.startswith("| sgm | %s |" % case))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3] == best["peer"], (case, cells)
    slow = parvis[case]["cpu_ms"] / best["ms"] > 1.5
    assert cells[5].endswith(" slow") == slow, (case, cells)
    gain = best["ms"] / parvis[case]["opencl_total_ms"]
    assert abs(float(cells[8].rstrip("x")) - gain) <= 0.05 * gain, (case, cells, gain)
    checked += 1
assert checked >= 1, "no case joined"
PY
    fail "CPU baseline table"
echo "PASS: bench tables"
