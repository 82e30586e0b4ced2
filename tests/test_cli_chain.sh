#!/bin/sh
# parvis match --chain (pv_sift_match_images) on the Venus pair:
#   - the homography file equals the plain mode's (--homography without
#     --chain: pv_sift_detect twice, pv_sift_match, pv_find_geometry_sift),
#     digit for digit, on the CPU backend and, where a device exists, on
#     OpenCL; the JSON line's counts equal the plain mode's;
#   - -o lists the inlier matches only: as many lines as inliers_H;
#   - --draw writes the picture;
#   - refusals: images of two sizes, --fundamental with --chain; --help
#     names --chain.
# Small inputs, fast preset: a few seconds on two cores.
set -u

srcdir=${srcdir:-$(dirname "$0")/..}
parvis=${PARVIS:-./parvis}
data="$srcdir/tests/data/stereo"
out=tests/tmp/cli_chain
rm -rf "$out"
mkdir -p "$out" || exit 99
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

VL="$data/venus/left.pgm"
VR="$data/venus/right.pgm"

# JSON field $2 of file $1.
field() { sed -n "s/.*\"$2\": \([0-9]*\).*/\1/p" "$1"; }

same_as_plain() {
    backend=$1
    "$parvis" match "$VL" "$VR" --preset fast --backend "$backend" --chain \
        --homography "$out/chain_$backend.txt" -o "$out/m_$backend.txt" \
        --draw "$out/chain_$backend.png" --json >"$out/chain_$backend.json" 2>"$out/stderr" ||
        fail "match --chain on $backend: $(cat "$out/stderr")"
    "$parvis" match "$VL" "$VR" --preset fast --backend "$backend" \
        --homography "$out/plain_$backend.txt" --json >"$out/plain_$backend.json" \
        2>"$out/stderr" || fail "match --homography on $backend: $(cat "$out/stderr")"
    cmp -s "$out/chain_$backend.txt" "$out/plain_$backend.txt" ||
        fail "$backend: the chain's H differs from the plain mode's:
$(cat "$out/chain_$backend.txt")
$(cat "$out/plain_$backend.txt")"
    for f in keypoints1 keypoints2 matches inliers_H; do
        [ "$(field "$out/chain_$backend.json" $f)" = "$(field "$out/plain_$backend.json" $f)" ] ||
            fail "$backend: $f differs: $(cat "$out/chain_$backend.json") vs $(cat "$out/plain_$backend.json")"
    done
    lines=$(grep -vc '^#' "$out/m_$backend.txt")
    [ "$lines" = "$(field "$out/chain_$backend.json" inliers_H)" ] ||
        fail "$backend: -o has $lines matches, not the inliers' count"
    [ -s "$out/chain_$backend.png" ] || fail "$backend: --draw wrote no picture"
    echo "match --chain on $backend: $(cat "$out/chain_$backend.json")"
}

same_as_plain cpu
if "$parvis" devices 2>/dev/null | grep -q "OpenCL devices: [1-9]"; then
    same_as_plain opencl
else
    echo "no OpenCL device: CPU only"
fi

"$parvis" match "$VL" "$data/tsukuba/left.pgm" --chain --backend cpu --json \
    >/dev/null 2>"$out/stderr" && fail "match --chain on two sizes succeeded"
grep -q "one plan takes one size" "$out/stderr" || fail "two sizes: $(cat "$out/stderr")"
"$parvis" match "$VL" "$VR" --chain --fundamental "$out/f.txt" --backend cpu --json \
    >/dev/null 2>"$out/stderr" && fail "match --chain --fundamental succeeded"
[ -e "$out/f.txt" ] && fail "a refused --chain --fundamental left its file"
"$parvis" match --help | grep -q -- "--chain" || fail "match --help lacks --chain"

[ "$fails" -eq 0 ] || exit 1
echo "all match --chain checks passed"
