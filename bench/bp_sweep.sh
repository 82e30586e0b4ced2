#!/usr/bin/env bash
# Times the belief-propagation message schedules and precisions on the
# bundled BP cases (bp-tsukuba/16, bp-venus/21, bp-cones-quarter/64 and
# bp-cones-900x750/256; docs/bp-at-scale.md explains the variants) and
# prints one table: median OpenCL kernel and end-to-end times after
# warm-up, and the agreement with the CPU oracle run with the same
# precision, for every variant and case.
#
# usage: bench/bp_sweep.sh PREFIX
#   PREFIX: where the results go: PREFIX-VARIANT.json (parvis-bench's
#   records, one per variant), PREFIX.log (everything parvis-bench printed)
#   and PREFIX.txt (the table, also printed).
# Environment: PARVIS_BENCH (default: the build tree's parvis-bench, built
# when missing), RUNS (default 5), WARMUP (default 2), VARIANTS (names
# from the list below, space-separated; default all), CASE (parvis-bench's
# --case, default bp: all four), PARVIS_DATA.  Every case also runs on the
# CPU backend for the agreement column: the whole sweep takes several
# minutes on a GPU machine (VARIANTS splits it).
#
# Each variant starts from the default launch parameters (the "-tuned" rows
# of parvis-bench are ignored here) and sets its own with --param; the
# "coop" variants run the cooperative message update (--bp-update
# cooperative), whose CPU oracle runs the same update.  (--case bp leaves
# out parvis-bench's fixed bp-cones-900x750-coop rows: the coop variants
# time that update on every case.)
set -euo pipefail
if [ "$#" -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 PREFIX   (writes PREFIX-*.json, PREFIX.log, PREFIX.txt)" >&2
    exit 2
fi
prefix=$1
top="$(cd "$(dirname "$0")/.." && pwd)"
runs=${RUNS:-5}
warmup=${WARMUP:-2}
bench=${PARVIS_BENCH:-"$top/_build/parvis-bench"}
if [ ! -x "$bench" ]; then
    "$top/build-aux/ensure-built.sh"
fi
mkdir -p "$(dirname "$prefix")"

# name | message precision | message update | launch parameters (bp family) over the defaults
all_variants="
default|f32|serial|
fused|f32|serial|bp.BP_FUSED_PASSES=1
dir4|f32|serial|bp.BP_DIR_ITEMS=4
fused-dir4|f32|serial|bp.BP_FUSED_PASSES=1,bp.BP_DIR_ITEMS=4
fused-dir4-reg64|f32|serial|bp.BP_FUSED_PASSES=1,bp.BP_DIR_ITEMS=4,bp.BP_REG_VALUES=64
fused-dir4-wg64x1|f32|serial|bp.BP_FUSED_PASSES=1,bp.BP_DIR_ITEMS=4,bp.BP_WG_X=64,bp.BP_WG_Y=1
half|f16|serial|
half-fused|f16|serial|bp.BP_FUSED_PASSES=1
half-dir4|f16|serial|bp.BP_DIR_ITEMS=4
half-fused-dir4|f16|serial|bp.BP_FUSED_PASSES=1,bp.BP_DIR_ITEMS=4
half-fused-dir4-reg64|f16|serial|bp.BP_FUSED_PASSES=1,bp.BP_DIR_ITEMS=4,bp.BP_REG_VALUES=64
coop|f32|cooperative|
coop-lanes16|f32|cooperative|bp.BP_COOP_LANES=16
coop-lanes64|f32|cooperative|bp.BP_COOP_LANES=64
coop-px16|f32|cooperative|bp.BP_COOP_PIXELS=16
coop-px4|f32|cooperative|bp.BP_COOP_PIXELS=4
half-coop|f16|cooperative|
half-coop-px16|f16|cooperative|bp.BP_COOP_PIXELS=16
half-coop-lanes16-px16|f16|cooperative|bp.BP_COOP_LANES=16,bp.BP_COOP_PIXELS=16
"
wanted=${VARIANTS:-$(printf '%s\n' "$all_variants" | cut -d'|' -f1 | xargs)}

: > "$prefix.log"
status=0
for name in $wanted; do
    line=$(printf '%s\n' "$all_variants" | grep "^$name|" || true)
    if [ -z "$line" ]; then
        echo "bp_sweep: no variant '$name'" >&2
        exit 2
    fi
    messages=$(echo "$line" | cut -d'|' -f2)
    update=$(echo "$line" | cut -d'|' -f3)
    params=$(echo "$line" | cut -d'|' -f4)
    args=(--case "${CASE:-bp}" --runs "$runs" --warmup "$warmup" --bp-messages "$messages"
          --bp-update "$update" --json "$prefix-$name.json")
    [ -n "$params" ] && args+=(--param "$params")
    [ -n "${PARVIS_DATA:-}" ] || args+=(--data "$top/tests/data")
    echo "== $name: ${args[*]}" | tee -a "$prefix.log" >&2
    # a variant that fails or disagrees is reported in the table, not fatal
    "$bench" "${args[@]}" >> "$prefix.log" 2>&1 || status=1
done

python3 - "$prefix" $wanted <<'PYTHON' | tee "$prefix.txt"
"""The sweep's table: one row per case and variant from PREFIX-VARIANT.json."""
import json
import sys
from typing import Dict, List

prefix: str = sys.argv[1]
variants: List[str] = sys.argv[2:]
cases = ["bp-tsukuba", "bp-venus", "bp-cones-quarter", "bp-cones-900x750"]
rows: Dict[str, Dict[str, dict]] = {}
for variant in variants:
    try:
        with open(f"{prefix}-{variant}.json") as f:
            record = json.load(f)
    except (OSError, ValueError):
        continue
    for result in record.get("results", []):
        rows.setdefault(result["case"], {})[variant] = result
print(f"{'case':18} {'variant':24} {'kernel ms':>10} {'e2e ms':>10} {'vs default':>10} "
      f"{'agree':>9}")
for case in [c for c in cases if c in rows]:
    base = rows.get(case, {}).get("default", {}).get("opencl_kernel_ms")
    for variant in variants:
        r = rows.get(case, {}).get(variant)
        if r is None or "opencl_kernel_ms" not in r:
            print(f"{case:18} {variant:24} {'(no result)':>10}")
            continue
        kernel = r["opencl_kernel_ms"]
        ratio = f"{base / kernel:9.2f}x" if base else f"{'':>10}"
        agree = 100.0 * r.get("agreement", float("nan"))
        flag = "" if r.get("pass", True) else " FAIL"
        print(f"{case:18} {variant:24} {kernel:10.3f} {r['opencl_total_ms']:10.3f} {ratio} "
              f"{agree:8.3f}%{flag}")
PYTHON
exit "$status"
