#!/bin/sh
# parvis stereo --method sgm --batch LIST: --help documents it; a list of
# three pairs writes three maps, each the same bytes as the single pair's
# command writes, with a progress line on stderr and, with --json, one
# valid JSON object; the OpenCL backend's integer maps are the CPU's;
# every bad list or option is refused with its message and no map written.
set -u

srcdir=${srcdir:-$(dirname "$0")/..}
data="$srcdir/tests/data/stereo"
out=tests/tmp/cli_sgm_batch
mkdir -p "$out" || exit 99
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

T="$data/tsukuba/left.pgm"
TR="$data/tsukuba/right.pgm"
V="$data/venus/left.pgm"
VR="$data/venus/right.pgm"

# expect_error "message part" args...: exit 1, the message on stderr, no map written
expect_error() {
    want=$1
    shift
    rm -f "$out"/b*.pfm
    if ./parvis stereo "$@" >"$out/stdout" 2>"$out/stderr"; then
        fail "parvis stereo $* succeeded"
    elif ! grep -qF -- "$want" "$out/stderr"; then
        fail "parvis stereo $*: stderr lacks '$want': $(cat "$out/stderr")"
    fi
    for f in "$out"/b*.pfm; do
        [ -e "$f" ] && fail "parvis stereo $*: refused but wrote $f"
    done
    return 0
}

./parvis stereo --help >"$out/help" || fail "stereo --help exited non-zero"
grep -qF -- "--batch LIST" "$out/help" || fail "stereo --help lacks --batch"

# Three pairs of one size (the second with the images swapped, the third a
# copy of the first), with a comment and a blank line
{
    echo "# left right output"
    echo "$T $TR $out/b0.pfm"
    echo ""
    echo "$TR $T $out/b1.pfm"
    echo "$T $TR $out/b2.pfm"
} >"$out/list"

run_batch() {
    backend=$1
    shift
    rm -f "$out"/b*.pfm
    ./parvis stereo --method sgm --batch "$out/list" --ndisp 16 --no-subpixel \
        --backend "$backend" "$@" >"$out/stdout" 2>"$out/stderr" ||
        fail "--batch on $backend: $(cat "$out/stderr")"
    grep -q "^parvis: stereo --batch: 3 of 3 pairs" "$out/stderr" ||
        fail "--batch on $backend: no progress line: $(cat "$out/stderr")"
}

run_batch cpu --json
python3 - "$out/stdout" <<'PY' || fail "--batch --json: $(cat "$out/stdout")"
import json, sys
with open(sys.argv[1]) as f:
    lines = f.read().splitlines()
assert len(lines) == 1, lines
row = json.loads(lines[0])
assert row["method"] == "sgm" and row["batch"] == 3 and row["ndisp"] == 16, row
assert row["width"] == 384 and row["height"] == 288, row
assert row["total_ms"] > 0 and row["pairs_per_s"] > 0, row
PY
for i in 0 1 2; do
    [ -s "$out/b$i.pfm" ] || fail "--batch did not write b$i.pfm"
done
# each map is the single command's
./parvis stereo "$TR" "$T" --method sgm --ndisp 16 --no-subpixel --backend cpu \
    -o "$out/single1.pfm" 2>"$out/stderr" || fail "single pair: $(cat "$out/stderr")"
./parvis stereo "$T" "$TR" --method sgm --ndisp 16 --no-subpixel --backend cpu \
    -o "$out/single0.pfm" 2>"$out/stderr" || fail "single pair: $(cat "$out/stderr")"
cmp -s "$out/b0.pfm" "$out/single0.pfm" || fail "--batch pair 0 differs from the single run"
cmp -s "$out/b1.pfm" "$out/single1.pfm" || fail "--batch pair 1 differs from the single run"
cmp -s "$out/b2.pfm" "$out/single0.pfm" || fail "--batch pair 2 differs from the single run"

# OpenCL: the same integer maps (stereo.h), and --time's line
if ./parvis devices 2>/dev/null | grep -q "OpenCL devices: [1-9]"; then
    run_batch opencl --time
    grep -q "^stereo sgm --batch: 3 pairs 384x288, [0-9.]* ms (kernel [0-9.]* ms), [0-9.]* pairs/s" \
        "$out/stdout" || fail "--batch --time: $(cat "$out/stdout")"
    cmp -s "$out/b1.pfm" "$out/single1.pfm" || fail "--batch on OpenCL: pair 1 differs"
    cmp -s "$out/b2.pfm" "$out/single0.pfm" || fail "--batch on OpenCL: pair 2 differs"
else
    echo "no OpenCL device: CPU only"
fi

# Refusals
B="--method sgm --ndisp 16 --backend cpu --batch"
echo "$T $TR $out/b0.pfm" >"$out/mixed"
echo "$V $VR $out/b1.pfm" >>"$out/mixed"
echo "$T $TR" >"$out/short"
: >"$out/empty"
# shellcheck disable=SC2086
{
    expect_error "a batch holds pairs of one size" $B "$out/mixed"
    expect_error "line 1: expected LEFT RIGHT OUT.pfm, found 2 names" $B "$out/short"
    expect_error "no pairs in the list" $B "$out/empty"
    expect_error "cannot read '$out/missing'" $B "$out/missing"
    expect_error "give no LEFT RIGHT" $T $TR $B "$out/list"
    expect_error "--png applies to one pair" $B "$out/list" --png "$out/b.png"
    expect_error "-o applies to one pair" $B "$out/list" -o "$out/b9.pfm"
    expect_error "--batch applies to --method sad|sgm, not bp" --method bp --ndisp 16 \
        --batch "$out/list"
    expect_error "give LEFT RIGHT" --method sgm --ndisp 16 -o "$out/b9.pfm"
}

# SAD: the same list through pv_stereo_sad_batch, each map the single command's
for backend in cpu opencl; do
    if [ "$backend" = opencl ] && ! ./parvis devices 2>/dev/null | grep -q "OpenCL devices: [1-9]"; then
        continue
    fi
    rm -f "$out"/b*.pfm
    ./parvis stereo --method sad --batch "$out/list" --ndisp 16 --window 7 --backend "$backend" \
        --json >"$out/stdout" 2>"$out/stderr" || fail "sad --batch on $backend: $(cat "$out/stderr")"
    grep -q '"method": "sad", "batch": 3' "$out/stdout" || fail "sad --batch --json: $(cat "$out/stdout")"
    ./parvis stereo "$T" "$TR" --ndisp 16 --window 7 --backend "$backend" -o "$out/sad0.pfm" \
        2>"$out/stderr" || fail "single SAD pair: $(cat "$out/stderr")"
    ./parvis stereo "$TR" "$T" --ndisp 16 --window 7 --backend "$backend" -o "$out/sad1.pfm" \
        2>"$out/stderr" || fail "single SAD pair: $(cat "$out/stderr")"
    cmp -s "$out/b0.pfm" "$out/sad0.pfm" || fail "sad --batch on $backend: pair 0 differs"
    cmp -s "$out/b1.pfm" "$out/sad1.pfm" || fail "sad --batch on $backend: pair 1 differs"
    cmp -s "$out/b2.pfm" "$out/sad0.pfm" || fail "sad --batch on $backend: pair 2 differs"
done

[ "$fails" -eq 0 ] || exit 1
echo "all SAD and SGM --batch CLI checks passed"
