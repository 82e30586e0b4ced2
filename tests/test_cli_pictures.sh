#!/bin/sh
# The pictures the parvis command line draws, read back from the PNG files
# (python3 and zlib: parvis has no reader command):
#   - stereo --png (sad, bp, sgm): an RGB picture of the right size whose
#     invalid pixels (+INFINITY in the -o PFM) are black and no other pixel
#     is; known answers: with --ndisp 17, every even disparity lands on
#     one of the map's nine anchor colours; each disparity has one colour;
#   - --png-map gray: an 8-bit grey picture, round(255 t), invalid black;
#   - match --draw: both images side by side in grey, match lines in
#     colour; with --homography fewer coloured pixels (inliers only); on a
#     pair whose second image holds the first as a crop, the first image's
#     outline lands, in white, where the crop was cut;
#   - a bad --png-map, or a --draw or --png into a missing folder, fails
#     and leaves no file (the -o output beside it neither);
#   - where an OpenCL device exists, the SAD picture agrees with the CPU's
#     within PV_TOL_SAD_DIFFERING_SHARE (0.001 of the pixels), and --draw
#     works there too.
# Small inputs, CPU backend first; a few seconds on two cores.
set -u

srcdir=${srcdir:-$(dirname "$0")/..}
parvis=${PARVIS:-./parvis}
data="$srcdir/tests/data/stereo"
out=tests/tmp/cli_pictures
rm -rf "$out"
mkdir -p "$out" || exit 99
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

L="$data/tsukuba/left.pgm"
R="$data/tsukuba/right.pgm"
VL="$data/venus/left.pgm"
VR="$data/venus/right.pgm"

# The checker: python3 "$out/pictures.py" CHECK ARGS...; exit 0 when the
# check holds, else prints why and exits 1.
cat >"$out/pictures.py" <<'EOF'
import math
import struct
import sys
import zlib

# The map's anchors as docs/cli.md describes them (examples/common/colormap.c)
ANCHORS = [(48, 18, 59), (70, 107, 227), (41, 187, 236), (42, 239, 161), (164, 252, 60),
           (237, 208, 58), (251, 128, 34), (210, 48, 5), (122, 4, 3)]


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def read_png(path):
    """(width, height, channels, rows of bytes) of an 8-bit grey or RGB PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour = header[:4]
    if depth != 8 or colour not in (0, 2):
        sys.exit(f"{path}: depth {depth}, colour type {colour}: expected 8-bit grey or RGB")
    channels = 3 if colour == 2 else 1
    raw, stride = zlib.decompress(idat), width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            line[i] = (line[i] + (0, a, b, (a + b) // 2, paeth(a, b, c))[kind]) & 255
        rows.append(line)
        previous = line
    return width, height, channels, rows


def read_pfm(path):
    """(width, height, values top row first) of a grey PFM."""
    data = open(path, "rb").read()
    parts = data.split(maxsplit=4)
    width, height, scale = int(parts[1]), int(parts[2]), float(parts[3])
    values = struct.unpack(("<" if scale < 0 else ">") + f"{width * height}f",
                           parts[4][:4 * width * height])
    rows = [values[y * width:(y + 1) * width] for y in range(height)]
    return width, height, rows[::-1]


def read_pgm(path):
    """(width, height, rows of bytes) of an 8-bit binary PGM."""
    data = open(path, "rb").read()
    fields, pos = [], 2
    while len(fields) < 3:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos)
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(int(data[pos:end]))
        pos = end
    width, height = fields[0], fields[1]
    pixels = data[pos + 1:pos + 1 + width * height]
    return width, height, [pixels[y * width:(y + 1) * width] for y in range(height)]


def pixel(rows, channels, x, y):
    return tuple(rows[y][channels * x:channels * x + channels])


def disparity(png, pfm, width, height, lo, ndisp):
    """stereo --png against its -o PFM: RGB, the size, black exactly where
    invalid, one colour per disparity, the anchors at even disparities
    (ndisp 17: d - lo = 2k is t = k/8, the anchor k)."""
    w, h, channels, rows = read_png(png)
    pw, ph, values = read_pfm(pfm)
    if (w, h, channels) != (width, height, 3) or (pw, ph) != (width, height):
        sys.exit(f"{png}: {w}x{h}x{channels}, PFM {pw}x{ph}: expected {width}x{height} RGB")
    colours, invalid, bad = {}, 0, 0
    for y in range(height):
        for x in range(width):
            d, rgb = values[y][x], pixel(rows, 3, x, y)
            if not math.isfinite(d):
                invalid += 1
                bad += rgb != (0, 0, 0)
                continue
            bad += rgb == (0, 0, 0)
            colours.setdefault(d, set()).add(rgb)
            step = d - lo
            if ndisp == 17 and step == int(step) and int(step) % 2 == 0:
                bad += rgb != ANCHORS[int(step) // 2]
    bad += sum(len(c) > 1 for c in colours.values())
    if bad:
        sys.exit(f"{png}: {bad} pixels break the map ({invalid} invalid)")
    if len({c for s in colours.values() for c in s if len(set(c)) > 1}) < 8:
        sys.exit(f"{png}: fewer than 8 distinct colours")
    print(f"{png}: {len(colours)} disparities, {invalid} invalid pixels, map holds")


def gray(png, pfm, lo, ndisp):
    """--png-map gray: grey, round(255 (d - lo) / (ndisp - 1)), invalid 0."""
    w, h, channels, rows = read_png(png)
    _, _, values = read_pfm(pfm)
    if channels != 1:
        sys.exit(f"{png}: {channels} channels, expected grey")
    bad = 0
    for y in range(h):
        for x in range(w):
            d = values[y][x]
            want = 0 if not math.isfinite(d) else \
                int(min(max((d - lo) / (ndisp - 1), 0.0), 1.0) * 255 + 0.5)
            bad += abs(rows[y][x] - want) > 1  # float rounding at .5
    if bad:
        sys.exit(f"{png}: {bad} grey pixels off")


def coloured(png, img1, img2):
    """--draw: size w1 + w2 by the larger height, RGB; prints the number of
    coloured pixels (R, G, B not all equal: the match lines)."""
    w, h, channels, rows = read_png(png)
    w1, h1, _ = read_pgm(img1)
    w2, h2, _ = read_pgm(img2)
    if (w, h, channels) != (w1 + w2, max(h1, h2), 3):
        sys.exit(f"{png}: {w}x{h}x{channels}, expected {w1 + w2}x{max(h1, h2)} RGB")
    print(sum(len(set(pixel(rows, 3, x, y))) > 1 for y in range(h) for x in range(w)))


def outline(png, img1, x0, y0):
    """The crop's border (img1 is the second image's pixels from x0, y0)
    drawn white in the right half: most of the pixels one edge's length
    along each side, within a pixel of it, are (255, 255, 255)."""
    w, h, _, rows = read_png(png)
    w1, h1, _ = read_pgm(img1)
    offset = w1
    def white_near(x, y):
        return any(pixel(rows, 3, min(max(x + dx, 0), w - 1), min(max(y + dy, 0), h - 1))
                   == (255, 255, 255) for dx in (-1, 0, 1) for dy in (-1, 0, 1))
    edges = [[(offset + x0 + x, y0) for x in range(w1)],
             [(offset + x0 + x, y0 + h1 - 1) for x in range(w1)],
             [(offset + x0, y0 + y) for y in range(h1)],
             [(offset + x0 + w1 - 1, y0 + y) for y in range(h1)]]
    for edge in edges:
        share = sum(white_near(x, y) for x, y in edge) / len(edge)
        if share < 0.9:
            sys.exit(f"{png}: the outline covers {share:.2f} of an edge near {edge[0]}")


def crop(src, dst, x0, y0, width, height):
    """An 8-bit PGM of src's pixels from (x0, y0)."""
    _, _, rows = read_pgm(src)
    with open(dst, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (width, height))
        for y in range(y0, y0 + height):
            f.write(rows[y][x0:x0 + width])


def differing(png1, png2, share):
    """Two pictures of one size differ in at most `share` of the pixels."""
    w, h, c, a = read_png(png1)
    w2, h2, c2, b = read_png(png2)
    if (w, h, c) != (w2, h2, c2):
        sys.exit(f"{png1} and {png2} differ in size")
    n = sum(pixel(a, c, x, y) != pixel(b, c, x, y) for y in range(h) for x in range(w))
    if n > float(share) * w * h:
        sys.exit(f"{png1} and {png2}: {n} of {w * h} pixels differ")


check, args = sys.argv[1], sys.argv[2:]
if check == "disparity":
    disparity(args[0], args[1], int(args[2]), int(args[3]), float(args[4]), int(args[5]))
elif check == "gray":
    gray(args[0], args[1], float(args[2]), int(args[3]))
elif check == "coloured":
    coloured(*args)
elif check == "outline":
    outline(args[0], args[1], int(args[2]), int(args[3]))
elif check == "crop":
    crop(args[0], args[1], *map(int, args[2:]))
elif check == "differing":
    differing(*args)
EOF
check() { python3 "$out/pictures.py" "$@"; }

# ----------------------------------------------------- stereo --png
# ndisp 17 puts the even disparities on the anchors; SAD integer
# disparities with the left-right check (invalid pixels), SGM (sub-pixel,
# invalid pixels), BP (every pixel valid)
for method in "sad --lr-check" "sgm" "bp --iterations 2 --levels 2"; do
    name=${method%% *}
    # shellcheck disable=SC2086 # the method's options are words
    "$parvis" stereo "$L" "$R" --ndisp 17 --method $method --backend cpu -o "$out/$name.pfm" \
        --png "$out/$name.png" 2>"$out/stderr" || fail "stereo --method $name: $(cat "$out/stderr")"
    check disparity "$out/$name.png" "$out/$name.pfm" 384 288 0 17 ||
        fail "stereo --method $name --png"
done
# another range: its ends are the map's ends
"$parvis" stereo "$L" "$R" --min-disp -4 --ndisp 17 --lr-check --backend cpu \
    -o "$out/shift.pfm" --png "$out/shift.png" || fail "stereo --min-disp -4"
check disparity "$out/shift.png" "$out/shift.pfm" 384 288 -4 17 || fail "stereo --min-disp -4 --png"
"$parvis" stereo "$L" "$R" --ndisp 16 --lr-check --backend cpu -o "$out/g.pfm" \
    --png "$out/g.png" --png-map gray || fail "stereo --png-map gray"
check gray "$out/g.png" "$out/g.pfm" 0 16 || fail "stereo --png-map gray"
"$parvis" stereo --help | grep -q -- "--png-map turbo|gray" || fail "stereo --help lacks --png-map"

# refusals leave nothing
rm -f "$out/x.pfm" "$out/x.png"
"$parvis" stereo "$L" "$R" --ndisp 16 --backend cpu -o "$out/x.pfm" --png "$out/x.png" \
    --png-map jet 2>"$out/stderr" && fail "stereo --png-map jet succeeded"
grep -q "png-map" "$out/stderr" || fail "stereo --png-map jet: $(cat "$out/stderr")"
"$parvis" stereo "$L" "$R" --ndisp 16 --backend cpu -o "$out/x.pfm" \
    --png "$out/missing/x.png" 2>"$out/stderr" && fail "stereo --png into a missing folder succeeded"
[ -e "$out/x.pfm" ] || [ -e "$out/x.png" ] && fail "a refused stereo left a file"

# ----------------------------------------------------- match --draw
count() { check coloured "$1" "$2" "$3" || fail "match --draw $1: $(cat "$out/stderr")"; }
"$parvis" match "$VL" "$VR" --preset fast --backend cpu --draw "$out/all.png" --json \
    >"$out/all.json" 2>"$out/stderr" || fail "match --draw: $(cat "$out/stderr")"
"$parvis" match "$VL" "$VR" --preset fast --backend cpu --draw "$out/h.png" \
    --homography "$out/h.txt" -o "$out/m.txt" --json >"$out/h.json" 2>"$out/stderr" ||
    fail "match --draw --homography: $(cat "$out/stderr")"
# the homography file: three rows of three, H[2][2] = 1 (OpenCV's and the
# Oxford sets' convention, so that files compare entry by entry)
[ "$(awk 'NR == 3 { print $3 }' "$out/h.txt")" = "1" ] ||
    fail "--homography: H[2][2] is not 1: $(cat "$out/h.txt")"
all=$(count "$out/all.png" "$VL" "$VR")
inliers=$(count "$out/h.png" "$VL" "$VR")
matches=$(sed -n 's/.*"matches": \([0-9]*\).*/\1/p' "$out/h.json")
kept=$(sed -n 's/.*"inliers_H": \([0-9]*\).*/\1/p' "$out/h.json")
echo "match --draw: $matches matches, $all coloured pixels; $kept inliers, $inliers coloured pixels"
[ "${kept:-0}" -lt "${matches:-0}" ] || fail "the venus pair has no outliers to leave out"
[ "${all:-0}" -gt 1000 ] || fail "match --draw drew only ${all:-no} coloured pixels"
if [ "${inliers:-0}" -le 100 ] || [ "$inliers" -ge "$all" ]; then
    fail "match --draw --homography: $inliers coloured pixels, not fewer than $all"
fi
# the outline: IMG1 a crop of IMG2 from (60, 50): H is that translation
check crop "$VL" "$out/crop.pgm" 60 50 240 200 || exit 99
"$parvis" match "$out/crop.pgm" "$VL" --preset fast --backend cpu --homography "$out/c.txt" \
    --draw "$out/crop.png" 2>"$out/stderr" || fail "match a crop: $(cat "$out/stderr")"
check outline "$out/crop.png" "$out/crop.pgm" 60 50 || fail "match --draw: the outline"
# a missing folder: nothing left, the other outputs neither
rm -f "$out/x.txt"
"$parvis" match "$VL" "$VR" --preset fast --backend cpu -o "$out/x.txt" \
    --draw "$out/missing/x.png" 2>"$out/stderr" && fail "match --draw into a missing folder succeeded"
grep -qF "cannot write '$out/missing/x.png'" "$out/stderr" ||
    fail "match --draw into a missing folder: $(cat "$out/stderr")"
[ -e "$out/x.txt" ] && fail "match --draw into a missing folder left -o's file"
"$parvis" match "$VL" "$VR" --draw "$out/x.png" --backend cpu --preset fast --ratio 2 \
    2>/dev/null && fail "match --ratio 2 succeeded"
[ -e "$out/x.png" ] && fail "a refused match left its picture"

# ----------------------------------------------------- the OpenCL backend
if "$parvis" devices 2>/dev/null | grep -q "OpenCL devices: [1-9]"; then
    "$parvis" stereo "$L" "$R" --ndisp 17 --lr-check --backend opencl -o "$out/cl.pfm" \
        --png "$out/cl.png" 2>"$out/stderr" || fail "stereo on OpenCL: $(cat "$out/stderr")"
    check disparity "$out/cl.png" "$out/cl.pfm" 384 288 0 17 || fail "stereo --png on OpenCL"
    check differing "$out/cl.png" "$out/sad.png" 0.001 || fail "stereo --png: CPU and OpenCL"
    "$parvis" match "$VL" "$VR" --preset fast --backend opencl --draw "$out/clh.png" \
        --homography "$out/clh.txt" 2>"$out/stderr" || fail "match on OpenCL: $(cat "$out/stderr")"
    cl=$(count "$out/clh.png" "$VL" "$VR")
    if [ "${cl:-0}" -le 100 ] || [ "$cl" -ge "$all" ]; then
        fail "match --draw --homography on OpenCL: $cl coloured pixels (CPU: $inliers of $all)"
    fi
else
    echo "no OpenCL device: CPU only"
fi

[ "$fails" -eq 0 ] || exit 1
echo "all CLI picture checks passed"
