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
for command in stereo flow flow3d synth-flow phasecorr ncc octreg synth-oct sift match tune \
    devices version; do
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
# each command's help states its output's conventions
help_has() {
    ./parvis "$1" --help | grep -qF -- "$2" || fail "$1 --help lacks '$2'"
}
help_has phasecorr "MOV(p) ~ REF(p - shift)"
help_has phasecorr "[2..10000; default 100]"
help_has ncc "(u - TEMPLATE.width + 1, v - TEMPLATE.height + 1)"
help_has sift "x y sigma angle d0 ... d127"
help_has sift "[-1..0; default -1]"
help_has match "x1 y1 x2 y2 distance"
help_has match "--ratio X"
help_has octreg "bscan,dx,dy,dz,peak,valid"
help_has octreg "TARGET(x, k, z) ~ REF(x - dx, k - dy, z - dz)"
help_has synth-oct "[0..1e+06; default 0.4]"
help_has tune "[1..1000; default 3]"
./parvis devices --help | grep -q "OpenCL devices:" && fail "devices --help listed the devices"

# parvis-bench reads its options through the same table parser: help from
# the table, ranges and names checked before anything runs
./parvis-bench --help >"$out/help" 2>"$out/stderr" || fail "parvis-bench --help exited non-zero"
grep -q "^usage: parvis-bench" "$out/help" || fail "parvis-bench --help: no usage on stdout"
grep -qF "[1..100; default 11]" "$out/help" || fail "parvis-bench --help lacks --runs' range"
[ -s "$out/stderr" ] && fail "parvis-bench --help wrote to stderr"
bench_error() {
    want=$1
    shift
    if ./parvis-bench "$@" >"$out/stdout" 2>"$out/stderr"; then
        fail "parvis-bench $* succeeded"
    elif ! grep -qF -- "$want" "$out/stderr"; then
        fail "parvis-bench $*: stderr lacks '$want': $(cat "$out/stderr")"
    fi
}
bench_error "--runs '0': expected an integer in 1..100" --runs 0
bench_error "--paper 'nope': expected one of sad, bp, sift, oct, flow" --paper nope
bench_error "unknown option '--bogus' (see 'parvis-bench --help')" --bogus
bench_error "--devices 'x': expected 'all' or device indices" --devices x
# --device takes an index or part of a device's name, as PARVIS_DEVICE does
bench_error "--device 'no such device': expected a device index or part of a device's name" \
    --device "no such device"

L="$data/tsukuba/left.pgm"
R="$data/tsukuba/right.pgm"
G="$data/tsukuba/gt.pgm"
expect_error "expected an integer in 1..1048576" stereo "$L" "$R" --ndisp 0 -o "$out/d.pfm"
expect_error "--device 'no such device': expected a device index" stereo "$L" "$R" --ndisp 16 \
    --device "no such device" -o "$out/d.pfm"
# --ndisp not given: the chosen method's declared default (sad 64, bp 16, sgm 64)
for pair in sad:64 bp:16 sgm:64; do
    ./parvis stereo "$L" "$R" --method "${pair%%:*}" --backend cpu --json \
        $([ "${pair%%:*}" = bp ] && echo --levels 2 --iterations 1) >"$out/stdout" 2>"$out/stderr" ||
        fail "stereo --method ${pair%%:*} without --ndisp: $(cat "$out/stderr")"
    grep -qF "\"ndisp\": ${pair#*:}," "$out/stdout" ||
        fail "stereo --method ${pair%%:*} without --ndisp: not ndisp ${pair#*:}: $(cat "$out/stdout")"
done
expect_error "--window applies to --method sad, not bp" stereo "$L" "$R" --ndisp 16 \
    --method bp --window 5 -o "$out/d.pfm"
expect_error "--levels applies to --method bp, not sad" stereo "$L" "$R" --ndisp 16 \
    --levels 3 -o "$out/d.pfm"
expect_error "must be odd" stereo "$L" "$R" --ndisp 16 --window 4 -o "$out/d.pfm"
expect_error "expected one of sad|bp" stereo "$L" "$R" --ndisp 16 --method census
expect_error "one of f32|f16" stereo "$L" "$R" --ndisp 16 --method bp \
    --message-precision f8 -o "$out/d.pfm"
expect_error "--message-precision applies to --method bp, not sad" stereo "$L" "$R" --ndisp 16 \
    --message-precision f16 -o "$out/d.pfm"
expect_error "expected a number, > 0" stereo "$L" "$R" --ndisp 16 --gt "$G" --bad-thresh 0
expect_error "--bad-thresh applies with --gt" stereo "$L" "$R" --ndisp 16 --bad-thresh 2 \
    -o "$out/d.pfm"
expect_error "unknown option '--bogus'" stereo "$L" "$R" --ndisp 16 --bogus
expect_error "upsample 1 is out of range (in 2..10000)" phasecorr "$L" "$R" --upsample 1
expect_error "give --upsample or --parabolic, not both" phasecorr "$L" "$R" --upsample 10 --parabolic
expect_error "(one of none|fft|linear)" phasecorr "$L" "$R" --pad zero
expect_error "--fft applies to the opencl backend, not cpu" phasecorr "$L" "$R" --fft vkfft \
    --backend cpu
expect_error "expected an integer in 0..1073741824" ncc "$L" "$R" --min-overlap -1
expect_error "needs TEMPLATE IMAGE" ncc "$L"
expect_error "levels 0 is out of range (in 1..8)" sift "$L" --levels 0 --json
expect_error "edge_thresh 0 is out of range (finite and > 0)" sift "$L" --edge-thresh 0 --json
expect_error "unknown option '--ratio'" sift "$L" --ratio 0.5 --json
expect_error "nothing to do" sift "$L"
expect_error "-o must contain {}" sift "$L" "$R" -o "$out/keys.txt"
expect_error "would write the same output" sift "$L" "$data/venus/left.pgm" -o "$out/{}.txt"
expect_error "ratio 1.5 is out of range (> 0 and <= 1)" match "$L" "$R" --ratio 1.5 --json
PARVIS_KERNEL_TIMING=sometimes expect_error "PARVIS_KERNEL_TIMING='sometimes': expected runs or each" \
    sift "$L" --json --backend cpu
# with either kernel timing, the JSON carries a kernel time
for timing in runs each; do
    PARVIS_KERNEL_TIMING=$timing ./parvis sift "$L" --json --backend cpu >"$out/timing.json" \
        2>"$out/stderr" || fail "sift with PARVIS_KERNEL_TIMING=$timing failed"
    grep -q '"kernel_ms": [0-9]' "$out/timing.json" || fail "sift --json ($timing) lacks kernel_ms"
done
expect_error "stripes 1 is out of range (in 2..100000)" octreg a b --stripes 1
expect_error "expected NZxNXxNY (depth fastest), each 1..65536" octreg a b --size 4x4
expect_error "take one TARGET" octreg a b c --enface "$out/e.png"
expect_error "expected a number, 0..1e+06" synth-oct a b c --noise -1
expect_error "expected an integer in 1..1000" tune --runs 0
expect_error "--runs does not apply with --show" tune --show --runs 3
expect_error "needs the opencl backend, not cpu" tune --backend cpu
expect_error "takes no arguments" devices extra
expect_error "expected an integer in 1..12" flow "$L" "$R" --levels 13 --time
expect_error "must be odd (or 0)" flow "$L" "$R" --kernel-size 4 --time

# sift with several images: one output per image ({} = its name), the same
# keypoints as a run on that image alone (left and right, of one size, go
# through one batch; venus through another plan)
cp "$data/venus/left.pgm" "$out/venus.pgm"
if ./parvis sift "$L" "$R" "$out/venus.pgm" -o "$out/many-{}.txt" --preset fast --backend cpu \
    >"$out/stdout" 2>"$out/stderr"; then
    for name in left venus right; do
        [ -s "$out/many-$name.txt" ] || fail "sift with several images wrote no many-$name.txt"
    done
    ./parvis sift "$R" -o "$out/alone.txt" --preset fast --backend cpu ||
        fail "sift of one image"
    # the first comment line names the input; the keypoints must be identical
    [ "$(tail -n +2 "$out/alone.txt")" = "$(tail -n +2 "$out/many-right.txt")" ] ||
        fail "sift in a batch differs from sift alone"
else
    fail "sift with several images: $(cat "$out/stderr")"
fi

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
PARVIS_MEMORY_LIMIT=100K expect_error "not enough memory: the call needs" stereo "$L" "$R" --ndisp 16 \
    --method bp -o "$out/bp.pfm" --backend cpu
grep -q "102400 bytes available under PARVIS_MEMORY_LIMIT" "$out/stderr" || fail "refusal lacks the available bytes"
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

# the other commands on their inputs: a known answer each
shift=$(./parvis phasecorr "$L" "$L" --backend cpu)
[ "$shift" = "0 0 1.000000" ] || fail "phasecorr of an image with itself: '$shift'"
./parvis synth-oct "$out/ref.raw" "$out/tgt.raw" "$out/trace.csv" --size 64x48x40 ||
    fail "synth-oct failed"
./parvis octreg "$out/ref.raw" "$out/ref.raw" --size 64x48x40 --backend cpu -o "$out/s.csv" ||
    fail "octreg failed"
rows=$(awk -F, 'NR > 1 && $2 == 0 && $3 == 0 && $4 == 0 && $6 == 1' "$out/s.csv" | wc -l)
[ "$rows" -eq 40 ] || fail "octreg of a volume with itself: $rows of 40 B-scans at 0,0,0"

# JPEG input (colour): accepted wherever images are read, noted by --verbose
J1="$srcdir/tests/data/cli/tsukuba-left.jpg"
J2="$srcdir/tests/data/cli/tsukuba-right.jpg"
if ./parvis version | grep -q "JPEG"; then
    colour="JPEG, 384x288, 8 bits a sample, colour, converted to grey"
    jpeg_ok() { # jpeg_ok command args...: succeeds and notes the conversion
        ./parvis "$@" --verbose >"$out/stdout" 2>"$out/stderr" || fail "parvis $* failed"
        grep -qF "$colour" "$out/stderr" || fail "parvis $* --verbose lacks '$colour'"
    }
    jpeg_ok stereo "$J1" "$J2" --ndisp 16 --window 7 --backend cpu --gt "$G" --gt-scale 16 \
        --gt-border 18
    # B = g / 2 and JPEG's loss change the grey values a little; SAD still finds the scene
    grep -qF "converted to grey (0.299 R + 0.587 G + 0.114 B) on reading" "$out/stderr" ||
        fail "parvis stereo --verbose does not say the colour was folded on reading"
    jbad=$(sed -n 's/^bad > 1 px: \([0-9.]*\)%.*/\1/p' "$out/stdout")
    awk -v b="$jbad" 'BEGIN { exit !(b != "" && b < 20) }' || fail "stereo on JPEG: bad $jbad%"
    jpeg_ok phasecorr "$J1" "$J1" --backend cpu
    [ "$(cat "$out/stdout")" = "0 0 1.000000" ] || fail "phasecorr JPEG: $(cat "$out/stdout")"
    jpeg_ok ncc "$J1" "$J1" --backend cpu
    [ "$(cut -d' ' -f1-2 "$out/stdout")" = "0 0" ] || fail "ncc JPEG: $(cat "$out/stdout")"
    jpeg_ok sift "$J1" --json --backend cpu
    # sift reads colour as RGB and leaves the conversion to the backend
    grep -qF "converted to grey (0.299 R + 0.587 G + 0.114 B) by the backend" "$out/stderr" ||
        fail "parvis sift --verbose does not say the backend converts the colour"
    grep -q '"keypoints": [1-9]' "$out/stdout" || fail "sift JPEG found no keypoints"
    jpeg_ok match "$J1" "$J2" --json --backend cpu
    grep -q '"matches": [1-9]' "$out/stdout" || fail "match JPEG found no matches"
    jpeg_ok flow "$J1" "$J2" --backend cpu --levels 2 --warps 1 --iterations 5 --time
else
    expect_error "$J1" phasecorr "$J1" "$J1" --backend cpu
    echo "built without JPEG: JPEG input checked to be refused"
fi

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
