#!/bin/sh
# parvis-bench --ab-param on the OpenCL device (PoCL in CI): one small row
# (ransac fundamental-10k, the geometry family's GEOM_WG) compared in one
# process over two rounds, three ways:
#   1. side B with a work-group size no device takes (2^20 work items):
#      side A is timed every round, every side-B pass fails at its kernel
#      launch (which shows that B's value, and only B's, reaches the
#      launches), the run exits 1, and the JSON says so;
#   2. side A pinned by --param to 128, side B 64: both sides timed in both
#      rounds (order AB then BA), the row marked as differing, the ratios
#      those of the per-round values;
#   3. side B from a tuning-database entry file whose one param line holds
#      side A's own value (read from run 1's JSON): marked "same params".
# The tuning cache is an empty directory, so side A is the tuning
# database's entry for the device or the defaults, whatever the machine's
# own cache holds.  bench/ab_verdict.py, which reads such a run, is checked
# first on rounds of known ratios (that part needs no device), then on
# run 3's two rounds (too few for an interval).
set -u

srcdir=${srcdir:-$(dirname "$0")/..}
. "$srcdir/tests/skip_unless.sh"
PYTHON=${PYTHON:-python3}
out=tests/tmp/bench-ab
rm -rf "$out" && mkdir -p "$out/tune" || exit 99

fail() {
    echo "FAIL: $*"
    exit 1
}

# 0. bench/ab_verdict.py on rounds of known ratios (no device needed): a
# row within 5 % at 12 rounds (interval: the 3rd and 10th of the sorted
# ratios), one slower, one whose rounds straddle 1.05, one within at the
# fewest rounds that give an interval (6: the extremes), one with too few
# (5) and one whose side B never ran.
verdict_known_answers() {
    "$PYTHON" - "$out/known.json" <<'PYEOF' || return 1
import json
import sys
from typing import Any, Dict, List, Optional


def row(case: str, ratios: List[Optional[float]], same: Optional[bool]) -> Dict[str, Any]:
    """A row whose side B takes 2 ms end to end and 1 ms of kernels each
    round and side A `ratio` times that (None: side B failed that round)."""
    rounds = [{"order": "AB" if i % 2 == 0 else "BA",
               "a_total_ms": 2.0 * (r or 1.0), "a_kernel_ms": 1.0 * (r or 1.0),
               "b_total_ms": None if r is None else 2.0,
               "b_kernel_ms": None if r is None else 1.0} for i, r in enumerate(ratios)]
    return {"case": case, "ab": {"same_params": same, "rounds": rounds}}


within = [1.00, 0.99, 1.01, 1.02, 0.98, 1.00, 1.03, 0.97, 1.01, 1.00, 1.04, 0.96]
doc = {"ab": {"side_a": "db:test", "side_b": "db:test+B"},
       "results": [row("within-12", within, True),
                   row("slower-12", [1.2 + 0.01 * i for i in range(12)], False),
                   row("straddles-12", [0.8 + 0.04 * i for i in range(12)], True),
                   row("within-6", [1.0, 1.01, 0.99, 1.02, 0.98, 1.0], None),
                   row("too-few-5", [1.0] * 5, False),
                   row("untimed", [None, None], False)]}
with open(sys.argv[1], "w", encoding="utf-8") as handle:
    json.dump(doc, handle)
PYEOF
    "$PYTHON" "$srcdir/bench/ab_verdict.py" "$out/known.json" > "$out/known.txt" || return 1
    cat "$out/known.txt"
    # sorted within-12: 0.96 0.97 0.98 0.99 1.00 1.00 1.00 1.01 1.01 1.02 1.03 1.04
    grep -Eq '^within-12 +same +12  1\.000 \[0\.980, 1\.020\] +within' "$out/known.txt" || return 1
    grep -Eq '^slower-12 +differ +12  1\.255 \[1\.220, 1\.290\] +slower' "$out/known.txt" || return 1
    grep -Eq '^straddles-12 +same +12  1\.020 \[0\.880, 1\.160\] +unresolved' "$out/known.txt" ||
        return 1
    grep -Eq '^within-6 +n/a +6  1\.000 \[0\.980, 1\.020\] +within' "$out/known.txt" || return 1
    grep -Eq '^too-few-5 +differ +5  1\.000 \[-\] +too few' "$out/known.txt" || return 1
    grep -Eq '^untimed +differ +0  \(no round timed both sides\)' "$out/known.txt" || return 1
    grep -q '^end to end: 2 within, 1 slower, 1 unresolved, 1 too few, 1 untimed (of 6 rows)$' \
        "$out/known.txt" || return 1
    # the same-values rows' half-widths: 0.020 and 0.140
    grep -Fq 'noise floor: the rows with the same values on both sides have intervals of +-0.080 (median half-width; largest +-0.140)' \
        "$out/known.txt" || return 1
    # a file it cannot read: exit status 2 and a message
    "$PYTHON" "$srcdir/bench/ab_verdict.py" "$out/missing.json" 2> "$out/missing.err"
    [ $? = 2 ] && grep -q "ab_verdict: .*missing.json" "$out/missing.err"
}
if command -v "$PYTHON" >/dev/null 2>&1; then
    verdict_known_answers || fail "ab_verdict.py on known ratios ($out/known.txt)"
fi

skip_unless_opencl
skip_unless_command "$PYTHON" "to read the JSON"

# One A/B run: $1 = its name, then parvis-bench's extra options.  Sets rc.
ab_run() {
    name=$1
    shift
    PARVIS_TUNE_DIR="$out/tune" ./parvis-bench --data "$srcdir/tests/data" \
        --case fundamental-10k --runs 2 --warmup 1 --ab-rounds 2 \
        --json "$out/$name.json" "$@" > "$out/$name.log" 2>&1
    rc=$?
    if grep -q "no OpenCL device found" "$out/$name.log"; then
        echo "SKIP: no OpenCL device"
        exit 77
    fi
    echo "$name: parvis-bench exited $rc"
}

# Checks of one run's JSON: $1 = the file, $2 = the expectation
# (failing-b, differ or same), $3 = side A's GEOM_WG (or "any"), $4 =
# side B's.  Prints side A's GEOM_WG.
check() {
    "$PYTHON" - "$@" <<'EOF'
import json
import math
import sys
from typing import Any, Dict, List

path, expect, a_value, b_value = sys.argv[1:5]
with open(path, encoding="utf-8") as handle:
    doc: Dict[str, Any] = json.load(handle)

# The plain bench's schema stays: the rows as first measured.
assert doc["schema"] == "parvis-bench/1", doc["schema"]
rows: List[Dict[str, Any]] = doc["results"]
assert len(rows) == 1, [row["case"] for row in rows]
row = rows[0]
assert (row["op"], row["case"]) == ("ransac", "fundamental-10k"), row
assert row["opencl_total_ms"] > 0 and row["opencl"]["median"]["total_ms"] > 0, row
assert doc["cpu_runs"] == 1 and doc["cpu_warmup"] == 0, "A/B default CPU runs"

top = doc["ab"]
assert top["rounds"] == 2 and top["target"] == 0.05, top
ab = row["ab"]
assert ab["family"] == "geometry", ab
params_a, params_b = ab["params_a"], ab["params_b"]
assert set(params_a) == set(params_b) and "geometry.GEOM_WG" in params_a, ab
if a_value != "any":
    assert params_a["geometry.GEOM_WG"] == int(a_value), params_a
assert params_b["geometry.GEOM_WG"] == int(b_value), params_b
assert ab["same_params"] == (params_a == params_b), ab

orders = [entry["order"] for entry in ab["rounds"]]
assert orders == ["AB", "BA"], orders


def positive(value: Any) -> bool:
    """A measured time: a finite number above zero."""
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


a_totals = [entry["a_total_ms"] for entry in ab["rounds"]]
b_totals = [entry["b_total_ms"] for entry in ab["rounds"]]
assert all(positive(v) for v in a_totals), a_totals
assert all(positive(entry["a_kernel_ms"]) for entry in ab["rounds"]), ab["rounds"]
assert ab["a"]["rounds"] == 2, ab["a"]
# The median of two rounds is their mean (to the 9 digits written).
assert abs(ab["a"]["total_ms"] - sum(a_totals) / 2) <= 1e-6 * ab["a"]["total_ms"], ab["a"]

if expect == "failing-b":
    assert all(v is None for v in b_totals), b_totals
    assert ab["b"]["rounds"] == 0 and ab["b"]["total_ms"] is None, ab["b"]
    assert ab["ratio_total"] is None and ab["within_total"] is None, ab
    assert top["failed_passes"] == 2, top
    assert ab["same_params"] is False, ab
else:
    assert all(positive(v) for v in b_totals), b_totals
    assert all(positive(entry["b_kernel_ms"]) for entry in ab["rounds"]), ab["rounds"]
    assert ab["b"]["rounds"] == 2 and top["failed_passes"] == 0, (ab["b"], top)
    ratio = (sum(b_totals) / 2) / (sum(a_totals) / 2)
    assert abs(ab["ratio_total"] - ratio) <= 1e-6 * ratio, (ab["ratio_total"], ratio)
    assert ab["within_total"] == (abs(ab["ratio_total"] - 1) <= 0.05), ab
    assert ab["same_params"] is (expect == "same"), ab
print(params_a["geometry.GEOM_WG"])
EOF
}

# 1. Side B cannot launch: A alone has numbers; exit status 1.
ab_run failing-b --ab-param geometry.GEOM_WG=1048576
[ "$rc" = 1 ] || fail "a side B that cannot launch: exit status $rc, not 1 ($out/failing-b.log)"
grep -q "A/B round 2 side B stopped" "$out/failing-b.log" || fail "no word of side B's failure"
a_value=$(check "$out/failing-b.json" failing-b any 1048576) || fail "failing-b: $a_value"
echo "side A's GEOM_WG: $a_value"

# 2. Different values on the two sides.
ab_run differ --param geometry.GEOM_WG=128 --ab-param geometry.GEOM_WG=64
[ "$rc" = 0 ] || fail "differ: exit status $rc ($out/differ.log)"
result=$(check "$out/differ.json" differ 128 64) || fail "differ: $result"
grep -q "differs: geometry.GEOM_WG 128->64" "$out/differ.log" || fail "differ: no differs line"
grep -q "^ransac fundamental-10k  *differ " "$out/differ.log" || fail "differ: table row"
# the progress on stderr names the round and the side
grep -q "A/B round 2/2, side A" "$out/differ.log" || fail "differ: no progress line"

# 3. Side B from an entry file equal to side A's values.
entry="$out/entry.txt"
printf 'parvis-tune-db 1\nvendor Any\ntype gpu\nparam geometry GEOM_WG %s\nend 0000000000000000\n' \
    "$a_value" > "$entry"
ab_run same --ab-param "@$entry"
[ "$rc" = 0 ] || fail "same: exit status $rc ($out/same.log)"
result=$(check "$out/same.json" same "$a_value" "$a_value") || fail "same: $result"
grep -q "^ransac fundamental-10k  *same " "$out/same.log" || fail "same: table row"
# Two rounds give no 95 % interval: the verdict says so.
"$PYTHON" "$srcdir/bench/ab_verdict.py" "$out/same.json" > "$out/same-verdict.txt" ||
    fail "same: ab_verdict.py failed"
grep -Eq '^fundamental-10k +same +2  [0-9.]+ \[-\] +too few' "$out/same-verdict.txt" ||
    fail "same: verdict ($out/same-verdict.txt)"

# 4. Refused before any round: a malformed file names its line.
printf 'param geometry GEOM_WG\n' > "$out/bad.txt"
PARVIS_TUNE_DIR="$out/tune" ./parvis-bench --case fundamental-10k --ab-param "@$out/bad.txt" \
    > "$out/bad.log" 2>&1 && fail "a malformed entry file was accepted"
grep -q "bad.txt line 1: not 'param FAMILY NAME VALUE'" "$out/bad.log" || fail "bad: message"
grep -q "A/B round" "$out/bad.log" && fail "bad: rounds ran"
echo "PASS"
