#!/bin/sh
# bench/tune_db_check.sh end to end on the OpenCL device (PoCL in CI),
# small: a restricted parvis tune (the geometry family, two candidates)
# made beforehand and handed over with TUNE_CACHE, then the script's
# one-process comparison over 6 rounds of one row (ransac
# fundamental-10k).  Checks: the tune step is skipped and says so, the
# A/B JSON, the ratio table and the verdict name the row with 6 rounds and
# one of the verdicts an interval allows, the entry is written under the
# device's name; a TUNE_CACHE that is no directory and a bad ROUNDS are
# refused before any bench runs.  (A full tune takes two minutes on a GPU
# and longer on PoCL, so the default path's step 1 is not run here.)
set -u

srcdir=${srcdir:-$(dirname "$0")/..}
. "$srcdir/tests/skip_unless.sh"
PYTHON=${PYTHON:-python3}
out=tests/tmp/tune-db-check
rm -rf "$out" && mkdir -p "$out/prefix/bin" "$out/tuned" || exit 99

fail() {
    echo "FAIL: $*"
    exit 1
}

skip_unless_opencl
skip_unless_command "$PYTHON" "to read the JSON"

# The script wants an installed parvis: a prefix whose bin/ points at this build.
for tool in parvis parvis-bench; do
    ln -s "$(pwd)/$tool" "$out/prefix/bin/$tool" || exit 99
done

if ! PARVIS_TUNE_DIR="$out/tuned" ./parvis tune --op geometry --candidates 2 --runs 1 \
    --budget 30 > "$out/tune.log" 2>&1; then
    if grep -q "no OpenCL device" "$out/tune.log"; then
        echo "SKIP: no OpenCL device"
        exit 77
    fi
    fail "the restricted tune failed ($out/tune.log)"
fi

run_check() {
    PYTHON="$PYTHON" BENCH_ARGS="--data $srcdir/tests/data --case fundamental-10k --runs 2 --warmup 1" \
        bash "$srcdir/bench/tune_db_check.sh" "$out/prefix" "$out/check" > "$out/check.log" 2>&1
}

# 1. Refused before any bench: TUNE_CACHE no directory, ROUNDS not a count.
TUNE_CACHE="$out/none" ROUNDS=6 run_check && fail "a TUNE_CACHE that is no directory was taken"
grep -q "TUNE_CACHE=.*none is no directory" "$out/check.log" || fail "no word of the bad TUNE_CACHE"
TUNE_CACHE="$out/tuned" ROUNDS=six run_check && fail "ROUNDS=six was taken"
grep -q "ROUNDS must be a positive integer" "$out/check.log" || fail "no word of the bad ROUNDS"
[ -e "$out/check/ab.json" ] && fail "a refused run benched"

# 2. The comparison on the handed-over cache.
TUNE_CACHE="$out/tuned" ROUNDS=6 run_check || fail "tune_db_check failed ($out/check.log)"
cat "$out/check.log"
grep -q "1/4 parvis tune skipped: the local tune is the cache in /" "$out/check.log" ||
    fail "step 1 not skipped"
[ -e "$out/check/tune.log" ] && fail "a tune ran despite TUNE_CACHE"
grep -Eq '^fundamental-10k +[0-9.]+ +[0-9.]+ +[0-9.]+  (yes|NO) ' "$out/check/ratios.txt" ||
    fail "no ratio row ($out/check/ratios.txt)"
grep -Eq '^fundamental-10k +(same|differ) +6  [0-9.]+ \[[0-9.]+, [0-9.]+\] +(within|slower|unresolved)' \
    "$out/check/verdict.txt" || fail "no verdict row ($out/check/verdict.txt)"
grep -q '^end to end: .* (of 1 rows)$' "$out/check/verdict.txt" || fail "no verdict summary"
"$PYTHON" - "$out/check/ab.json" <<'PYEOF' || fail "the A/B JSON ($out/check/ab.json)"
import json
import sys

with open(sys.argv[1], encoding="utf-8") as handle:
    doc = json.load(handle)
assert doc["ab"]["rounds"] == 6, doc["ab"]
(row,) = doc["results"]
assert row["case"] == "fundamental-10k" and row["ab"]["family"] == "geometry", row["ab"]
assert len(row["ab"]["rounds"]) == 6, row["ab"]["rounds"]
PYEOF
entries=$(ls "$out/check"/*.txt | grep -v -e '/ratios.txt$' -e '/verdict.txt$')
[ "$(echo "$entries" | wc -l)" = 1 ] || fail "not one entry file: $entries"
grep -q '^param geometry GEOM_WG ' "$entries" || fail "the entry lacks the tuned family ($entries)"
echo "PASS"
