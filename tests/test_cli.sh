#!/bin/sh
# The parvis command line: --help of every command, range and method
# errors with their messages, stereo scoring options, BP's memory refusal,
# 2D flow from image files to .flo and a colour PNG with its error against
# a known answer, and the same 2D flow on the OpenCL backend.
set -u

srcdir=${srcdir:-$(dirname "$0")/..}
data="$srcdir/tests/data/stereo"
out=tests/tmp/cli
mkdir -p "$out" || exit 99
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# expect_error "message part" command...: exit 1 and the message on stderr
expect_error() {
    want=$1
    shift
    if ./parvis "$@" >"$out/stdout" 2>"$out/stderr"; then
        fail "parvis $* succeeded"
    elif ! grep -qF -- "$want" "$out/stderr"; then
        fail "parvis $*: stderr lacks '$want': $(cat "$out/stderr")"
    fi
}

# --help and -h: exit 0, usage on stdout, nothing on stderr
for command in stereo flow flow3d synth-flow phasecorr ncc octreg synth-oct sift match tune; do
    for flag in --help -h; do
        if ! ./parvis $command $flag >"$out/help" 2>"$out/stderr"; then
            fail "parvis $command $flag exited non-zero"
        fi
        grep -q "^usage: parvis" "$out/help" || fail "parvis $command $flag: no usage on stdout"
        [ -s "$out/stderr" ] && fail "parvis $command $flag wrote to stderr"
    done
done
./parvis stereo --help | grep -q "INFINITY" || fail "stereo --help lacks the invalid-pixel value"
./parvis stereo --help | grep -q "1..1048576" || fail "stereo --help lacks --ndisp's range"
./parvis flow --help | grep -q "202021.25" || fail "flow --help lacks the .flo layout"

L="$data/tsukuba/left.pgm"
R="$data/tsukuba/right.pgm"
G="$data/tsukuba/gt.pgm"
expect_error "expected an integer in 1..1048576" stereo "$L" "$R" --ndisp 0 -o "$out/d.pfm"
expect_error "--ndisp N is required" stereo "$L" "$R" -o "$out/d.pfm"
expect_error "--window applies to --method sad, not bp" stereo "$L" "$R" --ndisp 16 \
    --method bp --window 5 -o "$out/d.pfm"
expect_error "--levels applies to --method bp, not sad" stereo "$L" "$R" --ndisp 16 \
    --levels 3 -o "$out/d.pfm"
expect_error "must be odd" stereo "$L" "$R" --ndisp 16 --window 4 -o "$out/d.pfm"
expect_error "expected one of sad|bp" stereo "$L" "$R" --ndisp 16 --method census
expect_error "expected a number, > 0" stereo "$L" "$R" --ndisp 16 --gt "$G" --bad-thresh 0
expect_error "--bad-thresh applies with --gt" stereo "$L" "$R" --ndisp 16 --bad-thresh 2 \
    -o "$out/d.pfm"
expect_error "unknown option '--bogus'" stereo "$L" "$R" --ndisp 16 --bogus
expect_error "expected an integer in 1..12" flow "$L" "$R" --levels 13 --time
expect_error "must be odd (or 0)" flow "$L" "$R" --kernel-size 4 --time

# --bad-thresh: a looser threshold never counts more bad pixels
score() {
    ./parvis stereo "$L" "$R" --ndisp 16 --window 7 --gt "$G" --gt-scale 16 --gt-border 18 \
        --backend cpu --lr-check "$@" | sed -n 's/^bad > [0-9.]* px: \([0-9.]*\)%.*/\1/p'
}
b1=$(score --bad-thresh 1)
b4=$(score --bad-thresh 4)
skip=$(score --bad-thresh 1 --gt-invalid skip)
[ -n "$b1" ] && [ -n "$b4" ] && [ -n "$skip" ] || fail "no scores: '$b1' '$b4' '$skip'"
awk -v a="$b1" -v b="$b4" -v s="$skip" 'BEGIN { exit !(b < a && s < a) }' ||
    fail "bad>4 ($b4) and skip ($skip) should be below bad>1 ($b1)"

# BP memory: refused before anything is written, with the figures
rm -f "$out/bp.pfm"
PARVIS_MEMORY_LIMIT=100K expect_error "not enough memory: needs" stereo "$L" "$R" --ndisp 16 \
    --method bp -o "$out/bp.pfm" --backend cpu
grep -q "102400 bytes are available" "$out/stderr" || fail "refusal lacks the available bytes"
[ -e "$out/bp.pfm" ] && fail "a refused run wrote its output"
PARVIS_MEMORY_LIMIT=8M ./parvis stereo "$L" "$R" --ndisp 16 --method bp --backend cpu \
    --verbose -o "$out/bp.pfm" 2>"$out/stderr" || fail "BP within 8M (tiled) failed"
grep -q "tiles of at most" "$out/stderr" || fail "BP --verbose lacks the memory plan"

# 2D flow: a known-answer pair, .flo, colour PNG, EPE
./parvis synth-flow "$L" "$out/fixed.pfm" "$out/moving.pfm" "$out/truth.flo" --magnitude 3 ||
    fail "synth-flow failed"
flow_epe() {
    ./parvis flow "$out/fixed.pfm" "$out/moving.pfm" --gt "$out/truth.flo" --gt-border 8 \
        --warps 3 --iterations 30 "$@" | sed -n 's/.*EPE \([0-9.]*\) px.*/\1/p'
}
epe=$(flow_epe --backend cpu -o "$out/flow.flo" --color "$out/flow.png")
[ -n "$epe" ] || fail "flow printed no EPE"
# the truth's largest magnitude is ~3 px; a working estimate is far closer
awk -v e="$epe" 'BEGIN { exit !(e < 0.5) }' || fail "2D flow EPE $epe px is not below 0.5"
[ "$(head -c 4 "$out/flow.flo")" = "PIEH" ] || fail "flow.flo lacks the .flo magic"
size=$(wc -c <"$out/flow.flo")
[ "$size" -eq $((12 + 384 * 288 * 8)) ] || fail "flow.flo has $size bytes"
[ "$(head -c 4 "$out/flow.png" | tail -c 3)" = "PNG" ] || fail "flow.png is not a PNG"
head -c 2048 /dev/zero >"$out/zero.raw"
expect_error "for 2D flow" flow "$out/zero.raw" "$out/zero.raw" --size 8x8x8 --color "$out/x.png"

# OpenCL: the same EPE within 1e-3 px (the flow agrees within PV_FLOW_TOLERANCE)
if ./parvis devices 2>/dev/null | grep -q "OpenCL devices: [1-9]"; then
    epe_cl=$(flow_epe --backend opencl)
    awk -v a="$epe" -v b="$epe_cl" 'BEGIN { d = a - b; exit !(d < 1e-3 && d > -1e-3) }' ||
        fail "2D flow EPE cpu $epe vs opencl '$epe_cl' differ by more than 1e-3 px"
else
    echo "no OpenCL device: CPU only"
fi

[ "$fails" -eq 0 ] || exit 1
echo "all CLI checks passed"
