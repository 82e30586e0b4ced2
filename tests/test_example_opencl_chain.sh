#!/usr/bin/env bash
# examples/opencl_chain: a caller's OpenCL context, queue, buffers and kernel
# with two parvis device-buffer operations (pv_gaussian_blur_cl, then
# pv_stereo_sgm_cl) on the Tsukuba pair.  The program must succeed and write
# a 384x288 PFM of disparities in 0..15 over most of the image; a missing
# input must fail with a message.  Skipped (77) without an OpenCL device.
# tests/test_interop.c checks the same calls' results against the host calls.
set -u
data="${PARVIS_TEST_DATA:-$(dirname "$0")/data}/stereo/tsukuba"
out="${TMPDIR:-/tmp}/parvis-opencl-chain-$$"
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
[ -x examples/opencl_chain ] || { echo "examples/opencl_chain not built"; exit 77; }
./parvis devices 2>/dev/null | grep -q "OpenCL devices: [1-9]" || { echo "no OpenCL device"; exit 77; }
examples/opencl_chain "$data/left.pgm" "$data/right.pgm" "$out/d.pfm" 16 >"$out/stdout" 2>"$out/stderr" ||
    { echo "FAIL: opencl_chain: $(cat "$out/stderr")"; exit 1; }
grep -q "384x288 disparities on .* written to" "$out/stdout" || { echo "FAIL: $(cat "$out/stdout")"; exit 1; }
python3 - "$out/d.pfm" <<'PY' || exit 1
import struct, sys
data = open(sys.argv[1], "rb").read()
lines = data.split(b"\n", 3)
assert lines[0] == b"Pf" and lines[1].split() == [b"384", b"288"], lines[:3]
scale = float(lines[2])
values = struct.unpack(("<" if scale < 0 else ">") + "%df" % (384 * 288), lines[3][:384 * 288 * 4])
valid = [v for v in values if v == v and abs(v) != float("inf")]
assert len(valid) > 0.5 * len(values), "only %d valid pixels" % len(valid)
assert all(0 <= v <= 15 for v in valid), (min(valid), max(valid))
print("opencl_chain: %d of %d pixels valid, disparities %.2f..%.2f" % (len(valid), len(values), min(valid), max(valid)))
PY
if examples/opencl_chain "$out/none.pgm" "$data/right.pgm" "$out/x.pfm" 2>"$out/stderr"; then
    echo "FAIL: a missing input was accepted"; exit 1
fi
grep -q "opencl_chain: .*none.pgm" "$out/stderr" || { echo "FAIL: no message: $(cat "$out/stderr")"; exit 1; }
[ -e "$out/x.pfm" ] && { echo "FAIL: wrote an output after a failure"; exit 1; }
echo "opencl_chain checks passed"
