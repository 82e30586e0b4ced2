#!/bin/sh
# TIFF input of the parvis command line: the Tsukuba pair written as 8-bit,
# 16-bit big-endian and float TIFF (tests/tiff_write.py) gives the same
# disparities and SIFT keypoints as the PGMs; a multi-page TIFF is a volume
# for phasecorr, octreg and flow (the same results as the raw volume); a
# damaged TIFF is refused with its name.
# Skipped (77) when the library has no TIFF support or there is no python3.
set -u

srcdir=${srcdir:-$(dirname "$0")/..}
. "$srcdir/tests/skip_unless.sh"
skip_unless_command python3 "(writes the TIFF files)"
if ! ./parvis version | grep -q "TIFF"; then
    echo "SKIP: built without TIFF support"
    exit 77
fi
data="$srcdir/tests/data/stereo/tsukuba"
out=tests/tmp/cli_tiff
mkdir -p "$out" || exit 99
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

write() { # write OUT.tif [options] IN.pgm...
    python3 "$srcdir/tests/tiff_write.py" "$@" || { echo "tiff_write.py $* failed"; exit 99; }
}

write "$out/left.tif" "$data/left.pgm"
write "$out/right.tif" "$data/right.pgm"
write "$out/left16.tif" --bits 16 --big-endian "$data/left.pgm"
write "$out/right16.tif" --bits 16 --big-endian "$data/right.pgm"

# stereo: the TIFF pair gives the PGM pair's disparity map, to the byte
stereo() { # stereo LEFT RIGHT OUT.pfm
    ./parvis stereo "$1" "$2" --ndisp 16 --window 7 --backend cpu -o "$3" 2>"$out/stderr" ||
        fail "parvis stereo $1 $2: $(cat "$out/stderr")"
}
stereo "$data/left.pgm" "$data/right.pgm" "$out/pgm.pfm"
stereo "$out/left.tif" "$out/right.tif" "$out/tif.pfm"
stereo "$out/left16.tif" "$out/right16.tif" "$out/tif16.pfm"
cmp -s "$out/pgm.pfm" "$out/tif.pfm" || fail "stereo on 8-bit TIFF differs from PGM"
cmp -s "$out/pgm.pfm" "$out/tif16.pfm" || fail "stereo on 16-bit big-endian TIFF differs from PGM"

# --verbose names the format
./parvis stereo "$out/left16.tif" "$out/right16.tif" --ndisp 16 --backend cpu --verbose \
    -o "$out/v.pfm" 2>"$out/stderr" >/dev/null || fail "stereo --verbose on TIFF failed"
grep -qF "TIFF, 384x288, 16 bits a sample" "$out/stderr" ||
    fail "stereo --verbose does not describe the TIFF: $(cat "$out/stderr")"

# sift: as many keypoints as on the PGM
keypoints() {
    ./parvis sift "$1" --json --backend cpu 2>"$out/stderr" |
        sed -n 's/.*"keypoints": \([0-9]*\).*/\1/p' | head -n 1
}
k_pgm=$(keypoints "$data/left.pgm")
k_tif=$(keypoints "$out/left.tif")
[ -n "$k_pgm" ] && [ "$k_pgm" = "$k_tif" ] || fail "sift: $k_pgm keypoints on PGM, '$k_tif' on TIFF"

# a multi-page float TIFF is a volume: phasecorr of a volume with itself
write "$out/vol.tif" --bits 32 "$data/left.pgm" "$data/right.pgm" "$data/left.pgm" "$data/right.pgm"
shift=$(./parvis phasecorr "$out/vol.tif" "$out/vol.tif" --backend cpu 2>"$out/stderr") ||
    fail "phasecorr of a TIFF volume: $(cat "$out/stderr")"
[ "$shift" = "0 0 0 1.000000" ] || fail "phasecorr of a TIFF volume with itself: '$shift'"

# octreg: a TIFF volume (pages as B-scans) gives the raw volume's trace
./parvis synth-oct "$out/ref.raw" "$out/tgt.raw" "$out/trace.csv" --size 64x48x40 ||
    fail "synth-oct failed"
write "$out/ref.tif" --raw 64x48x40 "$out/ref.raw"
write "$out/tgt.tif" --raw 64x48x40 "$out/tgt.raw"
./parvis octreg "$out/ref.raw" "$out/tgt.raw" --size 64x48x40 --backend cpu -o "$out/raw.csv" ||
    fail "octreg on raw volumes failed"
./parvis octreg "$out/ref.tif" "$out/tgt.tif" --backend cpu -o "$out/tif.csv" 2>"$out/stderr" ||
    fail "octreg on TIFF volumes: $(cat "$out/stderr")"
cmp -s "$out/raw.csv" "$out/tif.csv" || fail "octreg on TIFF volumes differs from raw"

# flow (3D): a TIFF volume gives the raw volume's flow field, to the byte
python3 -c "
import math, struct, sys
v = [math.sin(x * 0.4) + math.cos(y * 0.3) + 0.1 * z
     for z in range(16) for y in range(32) for x in range(32)]
open(sys.argv[1], 'wb').write(struct.pack('<%df' % len(v), *v))" "$out/v.raw" || exit 99
write "$out/v.tif" --raw 32x32x16 "$out/v.raw"
./parvis flow "$out/v.raw" "$out/v.raw" --size 32x32x16 --levels 1 --backend cpu \
    -o "$out/raw.nii" || fail "flow on raw volumes failed"
./parvis flow "$out/v.tif" "$out/v.tif" --levels 1 --backend cpu -o "$out/tif.nii" \
    2>"$out/stderr" || fail "flow on TIFF volumes: $(cat "$out/stderr")"
cmp -s "$out/raw.nii" "$out/tif.nii" || fail "flow on TIFF volumes differs from raw"

# a damaged TIFF: refused, named, exit 1, and nothing from libtiff
head -c 200 "$out/left.tif" >"$out/cut.tif"
if ./parvis stereo "$out/cut.tif" "$out/right.tif" --ndisp 16 --backend cpu -o "$out/x.pfm" \
    >"$out/stdout" 2>"$out/stderr"; then
    fail "stereo on a truncated TIFF succeeded"
fi
grep -qF "cut.tif" "$out/stderr" || fail "truncated TIFF: stderr lacks its name: $(cat "$out/stderr")"
[ "$(wc -l <"$out/stderr")" -le 2 ] || fail "truncated TIFF: more than the error: $(cat "$out/stderr")"
if ./parvis phasecorr "$out/cut.tif" "$out/cut.tif" --backend cpu >/dev/null 2>"$out/stderr"; then
    fail "phasecorr on a truncated TIFF volume succeeded"
fi

[ "$fails" -eq 0 ] || exit 1
echo "all TIFF CLI checks passed"
