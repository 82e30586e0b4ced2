#!/usr/bin/env bash
# Produce the measurements behind docs/RESULTS.md into one directory:
#   bench/results.sh OUTDIR [STAGE...]
# Stages (default: all, in this order):
#   tune    parvis tune --op bp (tuned BP rows use it)
#   quick   the quick suite (parvis-bench with no selection)
#   papers  --paper sad|bp|sift|oct|flow, each beside its published figures
#   cases   the regular cases the peers are joined with, and plots
#   peers   OpenCV / scikit-image / VLFeat on the same inputs, and the join
#   multi   the device-scaling cases (--devices all)
# Run from the build directory that holds parvis and parvis-bench (e.g.
# _build).  Each step's output goes to OUTDIR/<step>.log beside its JSON;
# a step that fails or runs past STEP_TIMEOUT seconds (default 900) is
# reported and the next one runs.  RUNS / WARMUP (default 5 / 2) set the
# repetitions of the parvis steps, PEER_BUDGET (default 20) the seconds
# peers.py may spend timing one case.
set -uo pipefail
out=${1:?usage: bench/results.sh OUTDIR [STAGE...]}
shift
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(tune quick papers cases peers multi)
src="$(cd "$(dirname "$0")/.." && pwd)"
limit=${STEP_TIMEOUT:-900}
python=${PYTHON:-python3}
runs=${RUNS:-5}
warmup=${WARMUP:-2}
budget=${PEER_BUDGET:-20}
mkdir -p "$out"

step() {
    local name=$1
    shift
    local start=$SECONDS
    timeout "$limit" "$@" >"$out/$name.log" 2>&1
    local rc=$?
    printf '%-18s rc=%-3s %4ss  %s\n' "$name" "$rc" "$((SECONDS - start))" "$*" | tee -a "$out/steps.txt"
}

for stage in "${stages[@]}"; do
    case "$stage" in
    tune)
        step devices ./parvis devices
        step tune-bp ./parvis tune --op bp ;;
    quick)
        step quick ./parvis-bench --json "$out/quick.json" --csv "$out/quick.csv" ;;
    papers)
        for paper in sad bp sift oct flow; do
            step "paper-$paper" ./parvis-bench --paper "$paper" --runs "$runs" --warmup "$warmup" \
                --json "$out/paper-$paper.json"
        done ;;
    cases)
        for op in sad bp pc2d pc3d ncc sift match; do
            step "bench-$op" ./parvis-bench --case "$op" --runs "$runs" --warmup "$warmup" \
                --json "$out/bench-$op.json" --plot "$out/plots"
        done ;;
    peers)
        step peers-2d "$python" "$src/bench/peers/peers.py" --case sad --case ncc --case pc2d \
            --runs 5 --warmup 1 --budget "$budget" --json "$out/peers-2d.json"
        step peers-sift "$python" "$src/bench/peers/peers.py" --case sift \
            --runs 5 --warmup 1 --budget "$budget" --json "$out/peers-sift.json"
        step peers-pc3d "$python" "$src/bench/peers/peers.py" --case pc3d \
            --runs 5 --warmup 1 --budget "$budget" --json "$out/peers-pc3d.json"
        step report-sad "$python" "$src/bench/report.py" "$out/bench-sad.json" \
            "$out/peers-2d.json" --op sad --markdown "$out/peers-sad.md"
        step report-pc2d "$python" "$src/bench/report.py" "$out/bench-pc2d.json" \
            "$out/peers-2d.json" --op pc2d --markdown "$out/peers-pc2d.md"
        step report-ncc "$python" "$src/bench/report.py" "$out/bench-ncc.json" \
            "$out/peers-2d.json" --op ncc --markdown "$out/peers-ncc.md"
        step report-sift "$python" "$src/bench/report.py" "$out/bench-sift.json" \
            "$out/peers-sift.json" --markdown "$out/peers-sift.md"
        step report-pc3d "$python" "$src/bench/report.py" "$out/bench-pc3d.json" \
            "$out/peers-pc3d.json" --markdown "$out/peers-pc3d.md" ;;
    multi)
        step multi ./parvis-bench --case multi --devices all --runs "$runs" --warmup "$warmup" \
            --json "$out/multi.json" ;;
    *)
        echo "unknown stage '$stage'" >&2
        exit 2 ;;
    esac
done
