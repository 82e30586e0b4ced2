#!/usr/bin/env bash
# Does the tuning database give a device its tuned speed?  On the device:
#   bench/tune_db_check.sh PREFIX OUTDIR
# PREFIX is an installed parvis (PREFIX/bin/parvis and parvis-bench, e.g.
# /tmp/pvprefix); OUTDIR receives everything.  Steps:
#   1. the bench with an empty tuning cache: every row runs with the tuning
#      database's entry for the device (or the defaults) -> OUTDIR/db.json
#   2. a full `parvis tune` (every family) into a fresh cache, timed
#      -> OUTDIR/tune.log (the per-family times and the total)
#   3. the bench again with that cache -> OUTDIR/tuned.json
#   4. per row: OpenCL end-to-end ms with the database and after the local
#      tune, their ratio, and whether it is within 5% -> OUTDIR/ratios.txt
#   5. the local tune as a database entry -> OUTDIR/<vendor>-<device>.txt,
#      to be committed as lib/tune_db/<that name> (docs/tuning.md)
# BENCH_ARGS (default: --full --runs 5 --warmup 2) selects the bench rows,
# TUNE_ARGS (default: none) adds options to `parvis tune` (its default
# --budget of 120 s is the target; TUNE_ARGS="--budget 0" searches every
# candidate, for an entry measured without a clock), PYTHON (default
# python3, standard library only) reads the JSON.  Exits 1 when a step
# fails, 0 otherwise (the ratios are a report, not a verdict).
set -uo pipefail
prefix=${1:?usage: bench/tune_db_check.sh PREFIX OUTDIR}
out=${2:?usage: bench/tune_db_check.sh PREFIX OUTDIR}
parvis="$prefix/bin/parvis"
bench="$prefix/bin/parvis-bench"
python=${PYTHON:-python3}
read -r -a bench_args <<< "${BENCH_ARGS:---full --runs 5 --warmup 2}"
read -r -a tune_args <<< "${TUNE_ARGS:-}"
for tool in "$parvis" "$bench"; do
    [ -x "$tool" ] || { echo "tune_db_check: $tool is missing (is $prefix an installed parvis?)" >&2; exit 1; }
done
mkdir -p "$out"
empty_cache="$out/cache-empty"
tuned_cache="$out/cache-tuned"
rm -rf "$empty_cache" "$tuned_cache"
mkdir -p "$empty_cache" "$tuned_cache"

echo "1/5 bench with the tuning database only (empty cache)"
PARVIS_TUNE_DIR="$empty_cache" "$bench" "${bench_args[@]}" --json "$out/db.json" \
    > "$out/db.log" 2>&1 || echo "  (some rows failed their cross-check: see $out/db.log)"
[ -s "$out/db.json" ] || { echo "tune_db_check: the first bench wrote no JSON ($out/db.log)" >&2; exit 1; }

echo "2/5 full parvis tune, timed"
start=$(date +%s.%N)
if ! PARVIS_TUNE_DIR="$tuned_cache" "$parvis" tune "${tune_args[@]}" > "$out/tune.log" 2>&1; then
    echo "tune_db_check: parvis tune failed ($out/tune.log)" >&2
    exit 1
fi
end=$(date +%s.%N)
elapsed=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
echo "parvis tune wall time: $elapsed s" | tee -a "$out/tune.log"
grep -E '^[a-z]+: [0-9]+ candidates' "$out/tune.log" | sed 's/^/  /'

echo "3/5 bench with the local tuning cache"
PARVIS_TUNE_DIR="$tuned_cache" "$bench" "${bench_args[@]}" --json "$out/tuned.json" \
    > "$out/tuned.log" 2>&1 || echo "  (some rows failed their cross-check: see $out/tuned.log)"
[ -s "$out/tuned.json" ] || { echo "tune_db_check: the second bench wrote no JSON ($out/tuned.log)" >&2; exit 1; }

echo "4/5 database against local tune, per row"
"$python" - "$out/db.json" "$out/tuned.json" > "$out/ratios.txt" <<'EOF'
"""Per bench row: OpenCL end-to-end ms with the database and with the
local tune, and their ratio (database over tuned; > 1.05 misses the 5%
target)."""
import json
import sys
from typing import Dict, Tuple

TARGET = 1.05


def rows(path: str) -> Dict[str, Tuple[float, str]]:
    """Case name -> (OpenCL end-to-end ms, launch-parameter source)."""
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    found = {}
    for row in document.get("results", []):
        ms = row.get("opencl_total_ms")
        if isinstance(ms, (int, float)) and ms > 0:
            found[row["case"]] = (float(ms), str(row.get("launch_params", "?")))
    return found


def main() -> int:
    database, tuned = rows(sys.argv[1]), rows(sys.argv[2])
    print(f"{'case':<34} {'db ms':>10} {'tuned ms':>10} {'db/tuned':>8}  {'within 5%':<9} sources")
    missed = 0
    for case in sorted(set(database) & set(tuned)):
        (db_ms, db_source), (tuned_ms, tuned_source) = database[case], tuned[case]
        ratio = db_ms / tuned_ms
        within = ratio <= TARGET
        missed += not within
        print(f"{case:<34} {db_ms:10.3f} {tuned_ms:10.3f} {ratio:8.3f}  {'yes' if within else 'NO':<9} "
              f"{db_source} / {tuned_source}")
    print(f"{missed} of {len(set(database) & set(tuned))} rows more than 5% slower with the database")
    return 0


sys.exit(main())
EOF
cat "$out/ratios.txt"

echo "5/5 the local tune as a database entry"
entry="$out/entry.txt"
if ! PARVIS_TUNE_DIR="$tuned_cache" "$parvis" tune --show --export > "$entry" 2> "$out/export.log"; then
    echo "tune_db_check: export failed ($out/export.log)" >&2
    exit 1
fi
vendor=$(sed -n 's/^vendor //p' "$entry" | awk '{ print tolower($1) }')
device=$(sed -n 's/^device //p' "$entry" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9._]\{1,\}/-/g; s/^-//; s/-$//')
case "$device" in "$vendor"*) name="$device" ;; *) name="$vendor-$device" ;; esac
mv "$entry" "$out/$name.txt"
echo "entry: $out/$name.txt (commit it as lib/tune_db/$name.txt and list it in TUNE_DB_FILES)"
