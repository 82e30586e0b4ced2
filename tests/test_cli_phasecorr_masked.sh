#!/bin/sh
# parvis phasecorr --mask / --moving-mask: masked phase correlation from
# the command line.  Two 48x40 PGM images cut from one noise texture (the
# moving one displaced by (5, -3)) carry the same bright fixed checkerboard;
# with an all-valid mask it pulls the NCC's shift to 0, masked out the
# shift is found exactly, on the CPU and (where a device exists) on
# OpenCL.  A 3D case of raw volumes with --size.  Also the refusals:
# --moving-mask or --overlap-ratio without --mask, --subpixel with it, a
# mask of the wrong size, an empty mask.  Run from the build directory, as
# the other CLI tests.
set -u

out=tests/tmp/cli-phasecorr-masked
mkdir -p "$out" || exit 99
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# pgm W H DX DY KIND FILE: KIND image (texture displaced by DX, DY plus the
# fixed pattern), mask (0 over the pattern), empty (all 0), full (all 255).
pgm() {
    LC_ALL=C awk -v w="$1" -v h="$2" -v dx="$3" -v dy="$4" -v kind="$5" 'BEGIN {
        m = 8; bw = w + 2 * m; bh = h + 2 * m; s = 12345
        for (i = 0; i < bw * bh; i++) { s = (s * 1103515245 + 12345) % 2147483648; t[i] = s % 97 }
        printf "P5\n%d %d\n255\n", w, h
        for (y = 0; y < h; y++) for (x = 0; x < w; x++) {
            inside = x >= 20 && x < 32 && y >= 14 && y < 26
            if (kind == "mask") v = inside ? 0 : 255
            else if (kind == "empty") v = 0
            else if (kind == "full") v = 255
            else {
                v = 80 + t[(y + m - dy) * bw + (x + m - dx)]
                if (inside) v = ((x + y) % 2) ? 255 : 0
            }
            printf "%c", v
        }
    }' >"$6"
}

pgm 48 40 0 0 image "$out/ref.pgm"
pgm 48 40 5 -3 image "$out/mov.pgm"
pgm 48 40 0 0 mask "$out/mask.pgm"
pgm 48 40 0 0 empty "$out/empty.pgm"
pgm 48 40 0 0 full "$out/full.pgm"
pgm 40 40 0 0 mask "$out/small.pgm"
R="$out/ref.pgm"
M="$out/mov.pgm"

backends=cpu
./parvis devices 2>/dev/null | grep -q "^OpenCL devices: [1-9]" && backends="cpu opencl"
for backend in $backends; do
    got=$(./parvis phasecorr "$R" "$M" --mask "$out/full.pgm" --backend "$backend" 2>&1)
    case "$got" in "0 0 "*) ;; *) fail "$backend: an all-valid mask gave '$got', not 0 0" ;; esac
    got=$(./parvis phasecorr "$R" "$M" --mask "$out/mask.pgm" --backend "$backend" 2>&1)
    case "$got" in "5 -3 "*) ;; *) fail "$backend: --mask gave '$got', not 5 -3" ;; esac
    got=$(./parvis phasecorr "$R" "$M" --mask "$out/mask.pgm" --moving-mask "$out/mask.pgm" \
        --overlap-ratio 0.5 --json --backend "$backend" 2>&1)
    case "$got" in '{"dx": 5.000000, "dy": -3.000000, "dz": 0.000000, "peak": '*) ;;
        *) fail "$backend: --moving-mask --json gave '$got'" ;; esac
done

# 3D: raw float32 volumes of 12x10x8 (--size), the moving one displaced by
# (2, -1, 1), a raw mask hiding a corner block; written with Python's
# struct when a python3 is at hand (the 3D check is skipped otherwise).
PYTHON=${PYTHON:-python3}
if command -v "$PYTHON" >/dev/null 2>&1; then
    "$PYTHON" - "$out" <<'PY' || fail "could not write the raw volumes"
import random, struct, sys
out = sys.argv[1]
nx, ny, nz, m = 12, 10, 8, 3
bx, by, bz = nx + 2 * m, ny + 2 * m, nz + 2 * m
rng = random.Random(5)
big = [rng.random() for _ in range(bx * by * bz)]
def at(x, y, z):
    return big[(z * by + y) * bx + x]
d = (2, -1, 1)
ref, mov, mask = [], [], []
for z in range(nz):
    for y in range(ny):
        for x in range(nx):
            hidden = x < 4 and y < 4 and z < 3
            ref.append(at(x + m, y + m, z + m) + (9.0 if hidden else 0.0))
            mov.append(at(x + m - d[0], y + m - d[1], z + m - d[2]) + (9.0 if hidden else 0.0))
            mask.append(0.0 if hidden else 1.0)
for name, values in (("ref", ref), ("mov", mov), ("mask", mask)):
    with open("%s/%s.raw" % (out, name), "wb") as f:
        f.write(struct.pack("<%df" % len(values), *values))
PY
    for backend in $backends; do
        got=$(./parvis phasecorr "$out/ref.raw" "$out/mov.raw" --size 12x10x8 \
            --mask "$out/mask.raw" --backend "$backend" 2>&1)
        case "$got" in "2 -1 1 "*) ;; *) fail "$backend: 3D --mask gave '$got', not 2 -1 1" ;; esac
    done
fi

# expect_error TEXT ARGS...: parvis phasecorr ARGS fails, saying TEXT
expect_error() {
    text=$1
    shift
    if ./parvis phasecorr "$@" --backend cpu >"$out/stdout" 2>"$out/stderr"; then
        fail "phasecorr $* succeeded"
    elif ! grep -qF -- "$text" "$out/stderr"; then
        fail "phasecorr $*: stderr lacks '$text': $(cat "$out/stderr")"
    fi
}
expect_error "--moving-mask needs --mask" "$R" "$M" --moving-mask "$out/mask.pgm"
expect_error "--overlap-ratio needs --mask" "$R" "$M" --overlap-ratio 0.5
expect_error "--subpixel does not apply with --mask" "$R" "$M" --mask "$out/mask.pgm" \
    --subpixel parabolic
expect_error "overlap_ratio" "$R" "$M" --mask "$out/mask.pgm" --overlap-ratio 0
expect_error "reference_mask is 40x40 but the reference is 48x40" "$R" "$M" \
    --mask "$out/small.pgm"
expect_error "mask has no valid (non-zero) pixel" "$R" "$M" --mask "$out/empty.pgm"
./parvis phasecorr --help | grep -q -- "--moving-mask FILE" || fail "--help lacks --moving-mask"

[ "$fails" -eq 0 ] && echo "cli phasecorr --mask: ok"
[ "$fails" -eq 0 ]
