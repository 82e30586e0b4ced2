#!/bin/sh
# bench/gate.py on this machine's OpenCL device (PoCL in CI), small cases:
# a reference made here passes against its own run, and a second run
# against a copy allowing ten times its times; a copy of it doctored
# to claim faster times fails and lists the rows; a reference of another
# device model is refused unless forced; a device without a reference is
# refused with a message naming the missing file.
set -u

srcdir=${srcdir:-$(dirname "$0")/..}
PYTHON=${PYTHON:-python3}
gate="$srcdir/bench/gate.py"
out=tests/tmp/bench-gate
rm -rf "$out" && mkdir -p "$out" || exit 99

fail() {
    echo "FAIL: $*"
    exit 1
}

command -v "$PYTHON" >/dev/null 2>&1 || { echo "SKIP: no $PYTHON"; exit 77; }

"$PYTHON" "$gate" make --bench ./parvis-bench --case =tsukuba --case =sgm-tsukuba \
    --bench-args="--data $srcdir/tests/data --runs 5" --out "$out/ref.json" 2> "$out/make.txt" || {
    rc=$?
    cat "$out/make.txt"
    grep -q 'no OpenCL device' "$out/make.txt" && { echo "SKIP: no OpenCL device"; exit 77; }
    fail "gate make exited $rc"
}

# A second, real run compared with a copy of the reference that allows ten
# times its times: the run-and-compare path passes.  (A test on this shared
# machine must not depend on a run being as fast as the last one: the gate's
# own verdict on real noise belongs to the GPU machine, docs/benchmarks.md.)
"$PYTHON" - "$out/ref.json" "$out/slack.json" <<'PY' || fail "slack copy"
import json, sys
ref = json.load(open(sys.argv[1]))
for row in ref["rows"]:
    for m in ("kernel_ms", "total_ms"):
        row[m] = row[m] * 10
json.dump(ref, open(sys.argv[2], "w"))
PY
"$PYTHON" "$gate" compare --bench ./parvis-bench --reference "$out/slack.json" \
    > "$out/pass.txt" 2>&1 || { cat "$out/pass.txt"; fail "gate against its own reference"; }
grep -q '0 slower beyond their noise, 0 not run' "$out/pass.txt" || fail "pass summary"
# The reference's own run, compared with the reference: nothing is slower.
"$PYTHON" "$gate" compare --current "$out/ref.json" --reference "$out/ref.json" \
    > "$out/same.txt" 2>&1 || { cat "$out/same.txt"; fail "a run against itself"; }

# The doctored copy: every time halved beyond its noise; the run that made the
# reference, compared with it, must fail and list every row, kernels and end
# to end both.
"$PYTHON" - "$out/ref.json" "$out/fast.json" "$out/other.json" <<'PY' || fail "doctoring"
import json, sys
ref = json.load(open(sys.argv[1]))
assert ref["rows"], "no rows in the reference"
for row in ref["rows"]:
    for m in ("kernel_ms", "total_ms"):
        row[m] = row[m] / (1 + row[m.replace("_ms", "_noise")]) / 2
json.dump(ref, open(sys.argv[2], "w"))
ref = json.load(open(sys.argv[1]))
ref["device"] = "Some Other GPU"
json.dump(ref, open(sys.argv[3], "w"))
PY
rows=$("$PYTHON" -c "import json,sys; print(len(json.load(open(sys.argv[1]))['rows']))" "$out/ref.json")
"$PYTHON" "$gate" compare --current "$out/ref.json" --reference "$out/fast.json" \
    > "$out/fail.txt" 2>&1
rc=$?
cat "$out/fail.txt"
[ "$rc" -eq 1 ] || fail "doctored reference: exit $rc, not 1"
[ "$(grep -c 'SLOWER .* kernel_ms' "$out/fail.txt")" -eq "$rows" ] || fail "kernel rows not all listed"
[ "$(grep -c 'SLOWER .* total_ms' "$out/fail.txt")" -eq "$rows" ] || fail "end-to-end rows not all listed"
grep -q 'SLOWER sad tsukuba' "$out/fail.txt" || fail "the SAD row is not named"

# A reference claiming a hundredth of the times, against a real run with
# one retry: the rows found slower are run again in a new process, and
# still listed.
"$PYTHON" - "$out/ref.json" "$out/fast100.json" <<'PY' || fail "doctoring by 100"
import json, sys
ref = json.load(open(sys.argv[1]))
for row in ref["rows"]:
    for m in ("kernel_ms", "total_ms"):
        row[m] = row[m] / 100
json.dump(ref, open(sys.argv[2], "w"))
PY
"$PYTHON" "$gate" compare --bench ./parvis-bench --reference "$out/fast100.json" --retries 1 \
    > "$out/retry.txt" 2>&1
rc=$?
cat "$out/retry.txt"
[ "$rc" -eq 1 ] || fail "doctored reference with a retry: exit $rc, not 1"
grep -q "retry 1 of 1: $rows rows slower; rerunning =sgm-tsukuba =tsukuba" "$out/retry.txt" ||
    fail "the retry did not rerun both selectors"
[ "$(grep -c 'SLOWER .* kernel_ms' "$out/retry.txt")" -eq "$rows" ] || fail "rows not listed after the retry"
"$PYTHON" "$gate" compare --current "$out/ref.json" --reference "$out/ref.json" --retries -1 \
    > /dev/null 2>&1
[ $? -eq 2 ] || fail "--retries -1 not refused"

# Another device model: refused (2), compared with --force.
"$PYTHON" "$gate" compare --current "$out/ref.json" --reference "$out/other.json" \
    > "$out/other.txt" 2>&1
[ $? -eq 2 ] && grep -q "measured on 'Some Other GPU'" "$out/other.txt" || fail "other model not refused"
"$PYTHON" "$gate" compare --current "$out/ref.json" --reference "$out/other.json" --force \
    > /dev/null 2>&1 || fail "--force against another model"

# No reference for this device (an empty reference directory): refused (2).
"$PYTHON" "$gate" compare --current "$out/ref.json" --reference-dir "$out/none" \
    > "$out/none.txt" 2>&1
[ $? -eq 2 ] && grep -q 'no reference for the device' "$out/none.txt" || fail "missing reference not refused"
# ... and refused before running the bench when the directory holds none at all.
"$PYTHON" "$gate" compare --bench ./parvis-bench --reference-dir "$out/none" \
    > "$out/none2.txt" 2>&1
[ $? -eq 2 ] && grep -q 'no reference for any device' "$out/none2.txt" || fail "empty reference directory"

# join: the reference split in two parts by row and joined again holds the
# same rows; a part from another device, or a row in two parts, is refused.
"$PYTHON" - "$out/ref.json" "$out" <<'PY' || fail "splitting the reference"
import json, sys
ref = json.load(open(sys.argv[1]))
assert len(ref["rows"]) >= 2, "the join test needs two rows"
for name, rows in (("part1", ref["rows"][:1]), ("part2", ref["rows"][1:])):
    json.dump(dict(ref, rows=rows), open(f"{sys.argv[2]}/{name}.json", "w"))
json.dump(dict(ref, rows=ref["rows"][1:], device="Some Other GPU"),
          open(f"{sys.argv[2]}/part2-other.json", "w"))
PY
"$PYTHON" "$gate" join "$out/part1.json" "$out/part2.json" --out "$out/joined.json" \
    > /dev/null 2>&1 || fail "join of two parts"
"$PYTHON" - "$out/ref.json" "$out/joined.json" <<'PY' || fail "joined rows differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["rows"] == b["rows"], "rows differ"
PY
"$PYTHON" "$gate" join "$out/part1.json" "$out/part2-other.json" --out "$out/bad.json" \
    > "$out/join-other.txt" 2>&1
[ $? -eq 2 ] && grep -q 'differs from part 1 in device' "$out/join-other.txt" || fail "join across devices"
"$PYTHON" "$gate" join "$out/part1.json" "$out/part1.json" --out "$out/bad.json" \
    > "$out/join-twice.txt" 2>&1
[ $? -eq 2 ] && grep -q 'is in parts 1 and 2' "$out/join-twice.txt" || fail "join of a row twice"
# widen: a later run 30 % beyond every row's noise raises the reference's noise
# so that this run passes against the widened copy, not against the original.
"$PYTHON" - "$out/ref.json" "$out/slower-run.json" <<'PY' || fail "making a slower run"
import json, sys
ref = json.load(open(sys.argv[1]))
# 30 % beyond each row's own noise: the reference made on a loaded machine
# may carry more than 30 % of noise.
def slower(r, m):
    return r[m] * (1 + max(0.10, r[m.replace("_ms", "_noise")])) * 1.3
rows = [{"op": r["op"], "case": r["case"], "params": r.get("params", ""),
         "opencl": {"median": {"kernel_ms": slower(r, "kernel_ms"),
                               "total_ms": slower(r, "total_ms")},
                    "samples": []}} for r in ref["rows"]]
json.dump({"opencl": {"device": ref["device"]}, "results": rows}, open(sys.argv[2], "w"))
PY
"$PYTHON" "$gate" compare --current "$out/slower-run.json" --reference "$out/ref.json" \
    > "$out/unwidened.txt" 2>&1 && fail "a run 30 % slower passed the unwidened reference"
# Several runs given to --current: each row judged by its best median, so the
# slower run beside the reference's own passes; the slower run alone does not.
"$PYTHON" "$gate" compare --current "$out/slower-run.json" "$out/ref.json" --reference "$out/ref.json" \
    > "$out/best-of.txt" 2>&1 || { cat "$out/best-of.txt"; fail "best of two runs"; }
"$PYTHON" "$gate" widen "$out/ref.json" "$out/slower-run.json" --out "$out/widened.json" \
    > /dev/null 2>&1 || fail "widen"
"$PYTHON" "$gate" compare --current "$out/slower-run.json" --reference "$out/widened.json" \
    > "$out/widened.txt" 2>&1 || { cat "$out/widened.txt"; fail "the widening run against the widened reference"; }
echo "PASS: bench gate"
