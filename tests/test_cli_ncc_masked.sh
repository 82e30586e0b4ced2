#!/bin/sh
# parvis ncc --mask / --image-mask (masked NCC) and several IMAGEs (the
# batch) from the command line.  A 48x40 PGM noise texture carries a bright
# checkerboard blob at (10, 8); the 12x10 template is cut from the texture
# at (30, 22) and carries the same blob at (4, 3).  Unmasked, the blobs
# pull the match to (6, 5); with the blob masked out of the template the
# match is (30, 22) with coefficient 1, on the CPU and (where a device
# exists) on OpenCL.  An all-valid image mask changes nothing; three
# IMAGEs give three lines, each the single call's.  Also the refusals: a
# mask of the wrong size, an empty mask, -o or --mask with several IMAGEs.
# Run from the build directory, as the other CLI tests.
set -u

out=tests/tmp/cli-ncc-masked
mkdir -p "$out" || exit 99
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# pgm W H X0 Y0 BX BY KIND FILE: the texture's window at (X0, Y0) with a
# 5x5 blob at (BX, BY) (BX < 0: none) for KIND image; KIND mask: 0 over the
# blob, 255 elsewhere; empty: all 0; full: all 255.
pgm() {
    LC_ALL=C awk -v w="$1" -v h="$2" -v x0="$3" -v y0="$4" -v bx="$5" -v by="$6" \
        -v kind="$7" 'BEGIN {
        tw = 48; th = 40; s = 4321
        for (i = 0; i < tw * th; i++) { s = (s * 1103515245 + 12345) % 2147483648; t[i] = s % 97 }
        printf "P5\n%d %d\n255\n", w, h
        for (y = 0; y < h; y++) for (x = 0; x < w; x++) {
            blob = bx >= 0 && x >= bx && x < bx + 5 && y >= by && y < by + 5
            if (kind == "mask") v = blob ? 0 : 255
            else if (kind == "empty") v = 0
            else if (kind == "full") v = 255
            else {
                v = 80 + t[(y + y0) * tw + (x + x0)]
                if (blob) v = ((x - bx + y - by) % 2) ? 255 : 0
            }
            printf "%c", v
        }
    }' >"$8"
}

pgm 48 40 0 0 10 8 image "$out/image.pgm"
pgm 48 40 0 0 -1 0 image "$out/clean.pgm"
pgm 12 10 30 22 4 3 image "$out/templ.pgm"
pgm 12 10 0 0 4 3 mask "$out/mask.pgm"
pgm 12 10 0 0 0 0 empty "$out/empty.pgm"
pgm 11 10 0 0 4 3 mask "$out/small.pgm"
pgm 48 40 0 0 0 0 full "$out/full.pgm"
T="$out/templ.pgm"
I="$out/image.pgm"

backends=cpu
./parvis devices 2>/dev/null | grep -q "^OpenCL devices: [1-9]" && backends="cpu opencl"
for backend in $backends; do
    got=$(./parvis ncc "$T" "$I" --min-overlap 40 --backend "$backend" 2>&1)
    case "$got" in "6 5 "*) ;; *) fail "$backend: unmasked gave '$got', not 6 5" ;; esac
    got=$(./parvis ncc "$T" "$I" --mask "$out/mask.pgm" --min-overlap 40 --backend "$backend" 2>&1)
    case "$got" in "30 22 1.000000" | "30 22 0.99999"*) ;;
        *) fail "$backend: --mask gave '$got', not 30 22 1" ;; esac
    full=$(./parvis ncc "$T" "$I" --mask "$out/mask.pgm" --image-mask "$out/full.pgm" \
        --min-overlap 40 --backend "$backend" 2>&1)
    masked=$(./parvis ncc "$T" "$I" --mask "$out/mask.pgm" --min-overlap 40 \
        --backend "$backend" 2>&1)
    [ "$full" = "$masked" ] || fail "$backend: an all-valid --image-mask gave '$full'"
    ./parvis ncc "$T" "$I" --mask "$out/mask.pgm" -o "$out/map.pfm" --backend "$backend" \
        >/dev/null 2>&1 || fail "$backend: --mask -o failed"
    [ -s "$out/map.pfm" ] || fail "$backend: --mask -o wrote no map"
    rm -f "$out/map.pfm"
    # the batch: one line per image, each the single call's
    ./parvis ncc "$T" "$I" "$out/clean.pgm" "$I" --min-overlap 40 --backend "$backend" \
        >"$out/batch.txt" 2>&1 || fail "$backend: the batch failed: $(cat "$out/batch.txt")"
    single=$(./parvis ncc "$T" "$out/clean.pgm" --min-overlap 40 --backend "$backend" 2>&1)
    [ "$(sed -n 2p "$out/batch.txt")" = "$single" ] ||
        fail "$backend: batch line 2 '$(sed -n 2p "$out/batch.txt")' is not '$single'"
    [ "$(wc -l <"$out/batch.txt")" -eq 3 ] || fail "$backend: the batch printed $(cat "$out/batch.txt")"
    ./parvis ncc "$T" "$I" "$out/clean.pgm" --json --backend "$backend" >"$out/batch.json" 2>&1
    grep -c '"image": ' "$out/batch.json" | grep -qx 2 ||
        fail "$backend: batch --json: $(cat "$out/batch.json")"
done

# refused(NEEDLE, ARGS...): parvis ncc ARGS fails and says NEEDLE.
refused() {
    needle=$1
    shift
    if ./parvis ncc "$@" --backend cpu >"$out/stdout" 2>"$out/stderr"; then
        fail "ncc $* succeeded"
    elif ! grep -qF -- "$needle" "$out/stderr"; then
        fail "ncc $*: '$(cat "$out/stderr")' lacks '$needle'"
    fi
}
refused "templ_mask is 11x10 but templ is 12x10" "$T" "$I" --mask "$out/small.pgm"
refused "templ_mask has no valid (non-zero) pixel" "$T" "$I" --mask "$out/empty.pgm"
refused "image_mask is 12x10 but image is 48x40" "$T" "$I" --image-mask "$out/mask.pgm"
refused "-o takes one IMAGE" "$T" "$I" "$I" -o "$out/x.pfm"
refused "--mask takes one IMAGE" "$T" "$I" "$I" --mask "$out/mask.pgm"
refused "images[1] is 12x10 but images[0] is 48x40" "$T" "$I" "$T"

[ "$fails" -eq 0 ] || exit 1
echo "ok: parvis ncc --mask / --image-mask and batches"
