#!/usr/bin/env bash
# Run every fuzz target for a bounded time and fail on any crash, leak,
# timeout, sanitizer report or over-limit allocation.
#   tests/fuzz/run.sh [seconds-per-target]     (default 60)
# The targets are built by 'make fuzz' into $FUZZ_BUILD (default
# _build/fuzz, built here if absent).  Each target starts from its seed
# corpus (tests/fuzz/corpus/<target>) copied to a scratch directory, so
# the tree is left as it was.  Limits, the same for every target:
#   -rss_limit_mb=2048    resident memory of the process (ASan included)
#   -malloc_limit_mb=512  any single allocation larger than this fails
#   -timeout=10           seconds for one input
#   -max_len=16384        bytes of input
# Set FUZZ_TARGETS="fuzz_png fuzz_jpeg" to run some only.
set -euo pipefail
seconds=${1:-60}
top="$(cd "$(dirname "$0")/../.." && pwd)"
build=${FUZZ_BUILD:-$top/_build/fuzz}
if [ ! -d "$build" ] || [ -z "$(ls "$build"/fuzz_* 2>/dev/null)" ]; then
    make -C "$top/_build" fuzz
fi
targets=${FUZZ_TARGETS:-$(cd "$build" && ls fuzz_* | sort)}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
passed=0
failed=0
printf '%-16s %8s %12s %10s %s\n' target seconds execs corpus result
for t in $targets; do
    work="$scratch/$t"
    mkdir -p "$work/corpus" "$work/artifacts"
    cp -r "$top/tests/fuzz/corpus/$t/." "$work/corpus/" 2>/dev/null || true
    log="$work/log"
    if "$build/$t" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=512 \
        -timeout=10 -max_len=16384 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/" "$work/corpus" >"$log" 2>&1; then
        result=ok
        passed=$((passed + 1))
    else
        result=FAILED
        failed=$((failed + 1))
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    units=$(ls "$work/corpus" | wc -l)
    printf '%-16s %8s %12s %10s %s\n' "$t" "$seconds" "${execs:-?}" "$units" "$result"
    if [ "$result" = FAILED ]; then
        tail -n 60 "$log"
        for a in "$work"/artifacts/*; do
            [ -f "$a" ] && { echo "artifact $(basename "$a") (base64):"; base64 "$a" | head -c 4000; echo; }
        done
    fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
