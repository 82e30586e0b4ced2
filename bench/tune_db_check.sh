#!/usr/bin/env bash
# Does the tuning database give a device its tuned speed?  On the device:
#   bench/tune_db_check.sh PREFIX OUTDIR
# PREFIX is an installed parvis (PREFIX/bin/parvis and parvis-bench, e.g.
# /tmp/pvprefix); OUTDIR receives everything.  Steps:
#   1. a full `parvis tune` (every family) into a fresh cache, timed
#      -> OUTDIR/tune.log (the per-family times and the total)
#   2. the benches, in one of two ways:
#      AB=1 (the default): ONE parvis-bench process with an empty tuning
#      cache, so that its contexts take the tuning database's entry for the
#      device (or the defaults), run with --ab-param @<the local tune's
#      cache file>: every row is timed ROUNDS times (default 12) with the
#      database's values (side A) and with the local tune's on top (side
#      B), interleaved in that process, the order alternating
#      -> OUTDIR/ab.json, OUTDIR/ab.log.  One process, because on some GPUs
#      a whole process runs either fast or slow (kernel times differ by up
#      to a third between two processes with the same parameters), which
#      decides a comparison of separate processes more than the
#      parameters do (docs/tuning.md).
#      AB=0 (the first way): ROUNDS rounds (default 3) of two bench
#      processes: one with an empty tuning cache (the database's entry)
#      -> OUTDIR/db<round>.json, one with the local tune's cache
#      -> OUTDIR/tuned<round>.json, the order alternating from round to
#      round (database first, then tuned first).
#   3. per row: the median over the rounds of the OpenCL end-to-end ms (and
#      of the kernel ms) with the database and after the local tune, their
#      ratio, and whether it is within 5%; with AB=1 also whether the row's
#      family has the same values on both sides (then any difference is
#      noise) -> OUTDIR/ratios.txt; and with AB=1 the verdict of
#      bench/ab_verdict.py: the rounds paired, a 95% interval on the
#      median of the per-round ratios, and per row "within", "slower" or
#      "unresolved" (the rounds' noise is wider than the 5% to be told
#      apart), with the noise floor of the rows that run the same values
#      on both sides -> OUTDIR/verdict.txt
#   4. the local tune as a database entry -> OUTDIR/<vendor>-<device>.txt,
#      to be committed as lib/tune/tune_db/<that name> (docs/tuning.md)
# BENCH_ARGS (default: --full --runs 5 --warmup 2 --min-time 20) selects the
# bench rows (--min-time: rows of a fraction of a millisecond take more runs,
# whose medians are then as steady as the long rows'),
# TUNE_ARGS (default: none) adds options to `parvis tune` (its default
# --budget of 120 s is the target; TUNE_ARGS="--budget 0" searches every
# candidate, for an entry measured without a clock), ROUNDS the number of
# rounds, PYTHON (default python3, standard library only) reads the JSON,
# BENCH_WRAP (default: none) is a command the benches run under, e.g.
# BENCH_WRAP="taskset -c 4-7" to keep both sides on the same cores, and
# TUNE_CACHE=DIR skips step 1 and takes the local tune from the tuning
# cache in DIR (an earlier run's OUTDIR/cache-tuned, or any PARVIS_TUNE_DIR
# holding one cache file): a run of many rounds can then follow the tune in
# a second command, when the two together would outlast one.
# Exits 1 when a step fails, 0 otherwise (the ratios are a report, not a
# verdict).
set -uo pipefail
prefix=${1:?usage: bench/tune_db_check.sh PREFIX OUTDIR}
out=${2:?usage: bench/tune_db_check.sh PREFIX OUTDIR}
parvis="$prefix/bin/parvis"
bench="$prefix/bin/parvis-bench"
python=${PYTHON:-python3}
ab=${AB:-1}
case "$ab" in 0|1) ;; *) echo "tune_db_check: AB must be 0 or 1" >&2; exit 1 ;; esac
# AB=1: 12 rounds, the fewest that give the verdict's 95% interval an
# order statistic inside the extremes (6 give one at all).
if [ "$ab" = 1 ]; then rounds=${ROUNDS:-12}; else rounds=${ROUNDS:-3}; fi
here="$(cd "$(dirname "$0")" && pwd)"
read -r -a bench_args <<< "${BENCH_ARGS:---full --runs 5 --warmup 2 --min-time 20}"
read -r -a tune_args <<< "${TUNE_ARGS:-}"
read -r -a bench_wrap <<< "${BENCH_WRAP:-}"
for tool in "$parvis" "$bench"; do
    [ -x "$tool" ] || { echo "tune_db_check: $tool is missing (is $prefix an installed parvis?)" >&2; exit 1; }
done
case "$rounds" in ''|*[!0-9]*|0) echo "tune_db_check: ROUNDS must be a positive integer" >&2; exit 1 ;; esac
mkdir -p "$out"
empty_cache="$out/cache-empty"
tuned_cache="$out/cache-tuned"
if [ -n "${TUNE_CACHE:-}" ]; then
    [ -d "$TUNE_CACHE" ] || { echo "tune_db_check: TUNE_CACHE=$TUNE_CACHE is no directory" >&2; exit 1; }
    tuned_cache=$(cd "$TUNE_CACHE" && pwd)
fi
rm -rf "$empty_cache"
mkdir -p "$empty_cache"

# Step 1: a full parvis tune into a fresh cache, timed.
full_tune() {
    rm -rf "$tuned_cache"
    mkdir -p "$tuned_cache"
    echo "1/4 full parvis tune, timed"
    local start end elapsed
    start=$(date +%s.%N)
    if ! PARVIS_TUNE_DIR="$tuned_cache" "$parvis" tune "${tune_args[@]}" > "$out/tune.log" 2>&1; then
        echo "tune_db_check: parvis tune failed ($out/tune.log)" >&2
        exit 1
    fi
    end=$(date +%s.%N)
    elapsed=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    echo "parvis tune wall time: $elapsed s" | tee -a "$out/tune.log"
    grep -E '^[a-z]+: [0-9]+ candidates' "$out/tune.log" | sed 's/^/  /'
}

if [ -n "${TUNE_CACHE:-}" ]; then
    echo "1/4 parvis tune skipped: the local tune is the cache in $tuned_cache"
else
    full_tune
fi

# AB=0: one bench process: $1 = db or tuned, $2 = the round.
run_bench() {
    local cache="$empty_cache"
    [ "$1" = tuned ] && cache="$tuned_cache"
    PARVIS_TUNE_DIR="$cache" ${bench_wrap[@]+"${bench_wrap[@]}"} "$bench" "${bench_args[@]}" --json "$out/$1$2.json" \
        > "$out/$1$2.log" 2>&1 || echo "  (some rows failed their cross-check: see $out/$1$2.log)"
    [ -s "$out/$1$2.json" ] || { echo "tune_db_check: bench $1 $2 wrote no JSON ($out/$1$2.log)" >&2; return 1; }
}

# AB=0: steps 2 and 3 with separate processes.
separate_processes() {
    echo "2/4 $rounds rounds of benches, database and local tune in alternating order"
    for ((round = 1; round <= rounds; round++)); do
        if ((round % 2)); then order="db tuned"; else order="tuned db"; fi
        for side in $order; do
            run_bench "$side" "$round" || exit 1
        done
        echo "  round $round ($order) done"
    done

    echo "3/4 database against local tune, per row"
    local db_files="" tuned_files=""
    for ((round = 1; round <= rounds; round++)); do
        db_files+="${db_files:+,}$out/db$round.json"
        tuned_files+="${tuned_files:+,}$out/tuned$round.json"
    done
    "$python" - "$db_files" "$tuned_files" > "$out/ratios.txt" <<'EOF'
"""Per bench row: the medians over the rounds of the OpenCL end-to-end ms
with the database and with the local tune, and their ratio (database over
tuned; > 1.05 misses the 5% target); the same ratio of the kernel ms."""
import json
import statistics
import sys
from typing import Dict, List, Tuple

TARGET = 1.05


def rows(path: str) -> Dict[str, Tuple[float, float, str]]:
    """Case name -> (OpenCL end-to-end ms, kernel ms, launch-parameter source)."""
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    found = {}
    for row in document.get("results", []):
        ms = row.get("opencl_total_ms")
        kernel = row.get("opencl_kernel_ms")
        if isinstance(ms, (int, float)) and ms > 0:
            kernel_ms = float(kernel) if isinstance(kernel, (int, float)) else float("nan")
            found[row["case"]] = (float(ms), kernel_ms, str(row.get("launch_params", "?")))
    return found


def medians(paths: List[str]) -> Dict[str, Tuple[float, float, str]]:
    """Case name -> the medians over the files of its end-to-end and kernel
    ms, for the cases that every file has."""
    per_file = [rows(path) for path in paths]
    common = set.intersection(*(set(found) for found in per_file))
    return {case: (statistics.median(found[case][0] for found in per_file),
                   statistics.median(found[case][1] for found in per_file),
                   per_file[0][case][2])
            for case in common}


def main() -> int:
    db_paths, tuned_paths = sys.argv[1].split(","), sys.argv[2].split(",")
    database, tuned = medians(db_paths), medians(tuned_paths)
    cases = sorted(set(database) & set(tuned))
    print(f"{'case':<34} {'db ms':>10} {'tuned ms':>10} {'db/tuned':>8}  {'within 5%':<9} "
          f"{'kernels db/tuned':>16}  sources")
    missed = 0
    for case in cases:
        db_ms, db_kernel, db_source = database[case]
        tuned_ms, tuned_kernel, tuned_source = tuned[case]
        ratio = db_ms / tuned_ms
        kernel_ratio = db_kernel / tuned_kernel if tuned_kernel > 0 else float("nan")
        within = ratio <= TARGET
        missed += not within
        print(f"{case:<34} {db_ms:10.3f} {tuned_ms:10.3f} {ratio:8.3f}  {'yes' if within else 'NO':<9} "
              f"{kernel_ratio:16.3f}  {db_source} / {tuned_source}")
    print(f"{missed} of {len(cases)} rows more than 5% slower end to end with the database "
          f"(medians of {len(db_paths)} rounds)")
    return 0


sys.exit(main())
EOF
}

# AB=1: steps 2 and 3 in one process: side A the database's entry (the
# empty cache), side B the local tune's cache file on top of it.  The cache
# of a full tune names every parameter of every family, so side B holds
# the values a process reading that cache would have.
one_process() {
    local caches=("$tuned_cache"/tune-*.txt)
    if [ "${#caches[@]}" != 1 ] || [ ! -s "${caches[0]}" ]; then
        echo "tune_db_check: expected one cache file in $tuned_cache" >&2
        exit 1
    fi
    echo "2/4 one bench process, database (A) and local tune (B) interleaved over $rounds rounds"
    PARVIS_TUNE_DIR="$empty_cache" ${bench_wrap[@]+"${bench_wrap[@]}"} "$bench" "${bench_args[@]}" \
        --ab-param "@${caches[0]}" --ab-rounds "$rounds" --json "$out/ab.json" > "$out/ab.log" 2>&1 ||
        echo "  (a pass failed or rows failed their cross-check: see $out/ab.log)"
    [ -s "$out/ab.json" ] || { echo "tune_db_check: the A/B bench wrote no JSON ($out/ab.log)" >&2; exit 1; }

    echo "3/4 database against local tune, per row"
    "$python" - "$out/ab.json" > "$out/ratios.txt" <<'EOF'
"""Per bench row of an A/B run (parvis-bench --ab-param): the medians over
the rounds of the OpenCL end-to-end ms with the database (side A) and with
the local tune (side B), their ratio (database over tuned; > 1.05 misses
the 5% target), the same ratio of the kernel ms, and whether the row's
family had the same values on both sides (then the ratio is noise)."""
import json
import math
import sys
from typing import Any, Dict

TARGET = 1.05


def ratio(db: Any, tuned: Any) -> float:
    """db / tuned, NaN where either side has no time."""
    if isinstance(db, (int, float)) and isinstance(tuned, (int, float)) and tuned > 0:
        return float(db) / float(tuned)
    return float("nan")


def params_word(same: Any) -> str:
    """The JSON's same_params as the table shows it."""
    return "n/a" if same is None else "same" if same else "differ"


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as handle:
        document: Dict[str, Any] = json.load(handle)
    top = document["ab"]
    print(f"{'case':<34} {'db ms':>10} {'tuned ms':>10} {'db/tuned':>8}  {'within 5%':<9} "
          f"{'kernels db/tuned':>16}  {'params':<6}  sources")
    missed = compared = 0
    for row in document["results"]:
        ab = row["ab"]
        db_ms, tuned_ms = ab["a"]["total_ms"], ab["b"]["total_ms"]
        end_to_end = ratio(db_ms, tuned_ms)
        if math.isnan(end_to_end):
            print(f"{row['case']:<34} (no time on a side: see the log)")
            continue
        kernels = ratio(ab["a"]["kernel_ms"], ab["b"]["kernel_ms"])
        within = end_to_end <= TARGET
        compared += 1
        missed += not within
        print(f"{row['case']:<34} {db_ms:10.3f} {tuned_ms:10.3f} {end_to_end:8.3f}  "
              f"{'yes' if within else 'NO':<9} {kernels:16.3f}  "
              f"{params_word(ab['same_params']):<6}  {top['side_a']} / {top['side_b']}")
    print(f"{missed} of {compared} rows more than 5% slower end to end with the database "
          f"(medians of {top['rounds']} interleaved rounds in one process)")
    return 0


sys.exit(main())
EOF
}

if [ "$ab" = 1 ]; then one_process; else separate_processes; fi
cat "$out/ratios.txt"
if [ "$ab" = 1 ]; then
    "$python" "$here/ab_verdict.py" "$out/ab.json" > "$out/verdict.txt" ||
        { echo "tune_db_check: ab_verdict.py failed" >&2; exit 1; }
    cat "$out/verdict.txt"
fi

echo "4/4 the local tune as a database entry"
entry="$out/entry.txt"
if ! PARVIS_TUNE_DIR="$tuned_cache" "$parvis" tune --show --export > "$entry" 2> "$out/export.log"; then
    echo "tune_db_check: export failed ($out/export.log)" >&2
    exit 1
fi
vendor=$(sed -n 's/^vendor //p' "$entry" | awk '{ print tolower($1) }')
device=$(sed -n 's/^device //p' "$entry" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9._]\{1,\}/-/g; s/^-//; s/-$//')
case "$device" in "$vendor"*) name="$device" ;; *) name="$vendor-$device" ;; esac
mv "$entry" "$out/$name.txt"
echo "entry: $out/$name.txt (commit it as lib/tune/tune_db/$name.txt and list it in TUNE_DB_FILES)"
