#!/bin/sh
# 16-bit volumes from the command line: parvis octreg, phasecorr and flow
# read raw uint16 files with --raw-type u16 (and NIfTI uint16 by name)
# keeping 16 bits, and print exactly what they print for the same values
# given as float32 (u16 -> float is exact).  The OCT pair comes from
# 'parvis synth-oct', quantised to u16 by Python's struct (skipped without
# a python3); a file of the wrong length for --raw-type u16, and an unknown
# --raw-type, are refused.  On the CPU and, where a device exists, OpenCL.
# Run from the build directory, as the other CLI tests.
set -u

out=tests/tmp/cli-u16
mkdir -p "$out" || exit 99
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

PYTHON=${PYTHON:-python3}
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "no python3: skipped"
    exit 77
fi

./parvis synth-oct "$out/ref.raw" "$out/tgt.raw" "$out/trace.csv" --size 64x48x40 --integer \
    >/dev/null 2>&1 || fail "synth-oct"

# quantise.py: each float32 volume linearly onto 0..65535 (the reference's
# range), written as uint16 (NAME16.raw) and as the float32 of those values
# (NAMEq.raw); and a 16^3 phase-correlation pair shifted by (3, -2, 1).
"$PYTHON" - "$out" <<'PY' || fail "could not write the u16 volumes"
import random, struct, sys
out = sys.argv[1]
def load(name):
    with open("%s/%s.raw" % (out, name), "rb") as f:
        data = f.read()
    return list(struct.unpack("<%df" % (len(data) // 4), data))
def save(name, values, kind):
    with open("%s/%s.raw" % (out, name), "wb") as f:
        f.write(struct.pack("<%d%s" % (len(values), kind), *values))
ref, tgt = load("ref"), load("tgt")
lo, hi = min(ref), max(ref)
for name, values in (("ref", ref), ("tgt", tgt)):
    q = [max(0, min(65535, int(round((v - lo) / (hi - lo) * 65535)))) for v in values]
    save(name + "16", q, "H")
    save(name + "q", [float(v) for v in q], "f")
n = 16
rng = random.Random(3)
a = [rng.randrange(65536) for _ in range(n ** 3)]
b = [a[(((z - 1) % n) * n + (y + 2) % n) * n + (x - 3) % n]
     for z in range(n) for y in range(n) for x in range(n)]
save("pc_ref16", a, "H")
save("pc_mov16", b, "H")
save("pc_refq", [float(v) for v in a], "f")
save("pc_movq", [float(v) for v in b], "f")
PY

backends=cpu
./parvis devices 2>/dev/null | grep -q "^OpenCL devices: [1-9]" && backends="cpu opencl"
for backend in $backends; do
    ./parvis octreg "$out/ref16.raw" "$out/tgt16.raw" --size 64x48x40 --raw-type u16 \
        --backend "$backend" -o "$out/u16-$backend.csv" 2>"$out/err" ||
        fail "$backend: octreg --raw-type u16: $(cat "$out/err")"
    ./parvis octreg "$out/refq.raw" "$out/tgtq.raw" --size 64x48x40 \
        --backend "$backend" -o "$out/f32-$backend.csv" 2>"$out/err" ||
        fail "$backend: octreg float32: $(cat "$out/err")"
    cmp -s "$out/u16-$backend.csv" "$out/f32-$backend.csv" ||
        fail "$backend: octreg u16 and float32 shifts differ"
    [ "$(wc -l <"$out/u16-$backend.csv")" -eq 41 ] || fail "$backend: octreg wrote no 40 rows"
    u16=$(./parvis phasecorr "$out/pc_ref16.raw" "$out/pc_mov16.raw" --size 16x16x16 \
        --raw-type u16 --backend "$backend" 2>&1)
    f32=$(./parvis phasecorr "$out/pc_refq.raw" "$out/pc_movq.raw" --size 16x16x16 \
        --backend "$backend" 2>&1)
    case "$u16" in "3 -2 1 "*) ;; *) fail "$backend: phasecorr u16 gave '$u16', not 3 -2 1" ;; esac
    [ "$u16" = "$f32" ] || fail "$backend: phasecorr u16 '$u16' but float32 '$f32'"
    ./parvis flow "$out/pc_ref16.raw" "$out/pc_mov16.raw" --size 16x16x16 --raw-type u16 \
        --warps 1 --iterations 5 --backend "$backend" -o "$out/flow16" \
        --warped "$out/warped16.raw" 2>"$out/err" || fail "$backend: flow u16: $(cat "$out/err")"
    ./parvis flow "$out/pc_refq.raw" "$out/pc_movq.raw" --size 16x16x16 \
        --warps 1 --iterations 5 --backend "$backend" -o "$out/flowq" 2>"$out/err" ||
        fail "$backend: flow float32: $(cat "$out/err")"
    for c in u v w; do
        cmp -s "$out/flow16_$c.raw" "$out/flowq_$c.raw" || fail "$backend: flow $c differs"
    done
done

# expect_error TEXT ARGS...: parvis ARGS fails, saying TEXT
expect_error() {
    text=$1
    shift
    if ./parvis "$@" --backend cpu >"$out/stdout" 2>"$out/stderr"; then
        fail "$* succeeded"
    elif ! grep -qF -- "$text" "$out/stderr"; then
        fail "$*: stderr lacks '$text': $(cat "$out/stderr")"
    fi
}
expect_error "uint16 volume needs" phasecorr "$out/pc_refq.raw" "$out/pc_movq.raw" \
    --size 16x16x16 --raw-type u16
expect_error "expected one of f32|u16" octreg "$out/ref16.raw" "$out/tgt16.raw" \
    --size 64x48x40 --raw-type u8
./parvis octreg --help | grep -q -- "--raw-type f32|u16" || fail "octreg --help lacks --raw-type"

[ "$fails" -eq 0 ] && echo "cli u16 volumes: ok"
[ "$fails" -eq 0 ]
