#!/usr/bin/env python3
"""Time what a parvis user would pick instead, on parvis-bench's inputs.

Peers, each skipped with a note when its module is absent:
  - OpenCV (cv2): StereoBM, SIFT, phaseCorrelate, matchTemplate
    (TM_CCOEFF_NORMED), on the CPU (numpy arrays) and through the T-API
    (cv2.UMat with OpenCL on; timed end to end: upload, call, download);
    StereoSGBM (MODE_SGBM_3WAY and MODE_SGBM, CPU only: it has no OpenCL
    path) beside parvis-bench's sgm cases;
  - scikit-image: phase_cross_correlation (integer and upsampled), SIFT,
    match_template;
  - VLFeat SIFT in C (bench/peers/vlfeat_sift_peer, built by make when
    VLFeat is installed), with --vlfeat BIN or found in the build tree;
  - CudaSift (bench/peers/cudasift_peer, built by
    bench/peers/build-cudasift.sh where nvcc is), with --cudasift BIN or
    found in the build tree: detection on the sift cases, and its demo's
    chain (upload, ExtractSift twice, MatchSiftData, FindHomography with
    10000 loops) on the sift-chain cases.

The cases carry parvis-bench's operation and case names, so that
bench/report.py can join the two outputs; the inputs are rebuilt here the
way bench/bench_*.c build them (the same files, the same xorshift32 noise,
the same shifts and offsets, the same mirror tiling).

Timing: --warmup untimed calls, then up to --runs timed calls (median
reported), stopping early once a case has used --budget seconds.

Output (--json OUT):
  {"peers": [{"op", "case", "peer", "path": "cpu"|"opencl", "ms", "runs",
              "samples": [...], "note", ...}],
   "skipped": [{"op", "case", "peer", "path", "why"}],
   "machine": {...}}
Always exits 0 unless the arguments or the output file are bad.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

try:
    import numpy as np
except ImportError:  # nothing can run without numpy
    np = None

# ----------------------------------------------------------------- the cases
# Keep in step with bench/bench_stereo.c, bench_features.c, bench_register.c.

# SAD stereo: (case, set or None for the synthetic pair, width, height,
# ndisp, window, gt_scale, border, quick)
SAD_CASES = [
    ("tsukuba", "tsukuba", 0, 0, 16, 9, 16.0, 18, True),
    ("venus", "venus", 0, 0, 21, 9, 8.0, 10, True),
    ("cones-quarter", "cones-quarter", 0, 0, 64, 9, 4.0, 10, True),
    ("venus-paper", "venus", 0, 0, 64, 5, 8.0, 10, True),
    ("synthetic-1080p", None, 1920, 1080, 128, 7, 1.0, 10, False),
]

# SGM stereo (bench/bench_sgm.c), the cases OpenCV's StereoSGBM is timed on:
# the same tuple as SAD_CASES (window: StereoSGBM's blockSize).
SGM_CASES = [
    ("sgm-motorcycle", "motorcycle", 0, 0, 64, 5, 1.0, 10, False),
    ("sgm-1920x1080", None, 1920, 1080, 128, 5, 1.0, 10, False),
]
# StereoSGBM's modes, as peer names.
SGBM_MODES = [("opencv-sgbm-3way", "MODE_SGBM_3WAY"), ("opencv-sgbm", "MODE_SGBM")]

# SIFT detect + describe on Venus mirror-tiled to the size: (case, w, h, quick)
SIFT_CASES = [
    ("sift-720p", 1280, 720, True),
    ("sift-1080p", 1920, 1080, True),
    ("sift-4k", 3840, 2160, False),
    ("sift-8k", 7680, 4320, False),
]

# The SIFT chain, two frames to a homography (bench/bench_sift_chain.c):
# (case, w, h, quick).  The frames are built by the peer program itself.
SIFT_CHAIN_CASES = [
    ("sift-chain-720p", 1280, 720, False),
    ("sift-chain-1080p", 1920, 1080, False),
]

# SIFT parameters: parvis's defaults (lib/features/features.c).
SIFT_FIRST_OCTAVE = 0
SIFT_LEVELS = 3
SIFT_SIGMA0 = 1.6
SIFT_SIGMA_INPUT = 0.5
SIFT_PEAK_THRESH = 0.01   # |D(x^)| for values in [0, 1]
SIFT_EDGE_THRESH = 10.0

# 3D phase correlation: (nx, ny, nz, quick); the moving volume is the
# reference circularly shifted by PC_SHIFT (x, y, z).
PC3D_CASES = [
    (64, 64, 64, True), (128, 128, 128, True), (256, 256, 256, False),
    (512, 256, 256, False), (256, 512, 256, False), (256, 256, 512, False),
    (512, 512, 512, False),
]
PC_SHIFT = (7, -5, 3)
PC_SEED = 2024

# 2D phase correlation: (nx, ny, quick), same construction in 2D.
PC2D_CASES = [
    (512, 512, True), (1024, 1024, False), (2048, 2048, False),
]

# NCC (normxcorr2): (case, image side, template side, quick)
NCC_CASES = [
    ("512^2 t64", 512, 64, True),
    ("512^2 equal", 512, 512, True),
]
NCC_SEED = 77
NCC_MARGIN = 64
# Masked NCC (bench_register_ncc.c's ncc-masked rows): the NCC inputs with
# the template's central square (a quarter of its pixels) masked out.
NCC_MASKED_CASES = [
    ("256^2 t32", 256, 32, True),
    ("512^2 t64", 512, 64, False),
]

UPSAMPLE = 20   # skimage phase_cross_correlation's sub-pixel factor

# -------------------------------------------------------------- input makers


def xorshift32(seed, count):
    """The first `count` outputs of bench's next_random (x ^= x << 13;
    x ^= x >> 17; x ^= x << 5; return x) from state `seed`, as uint32.

    The step is linear over GF(2), so the stream is built by doubling:
    out[m + i] = A^m out[i], with A^m applied bit-wise to whole arrays."""
    mask = 0xFFFFFFFF

    def step(x):
        x ^= (x << 13) & mask
        x ^= x >> 17
        x ^= (x << 5) & mask
        return x

    first = min(count, 4096)
    out = np.empty(count, dtype=np.uint32)
    x = seed & mask
    for i in range(first):
        x = step(x)
        out[i] = x
    if count <= first:
        return out

    def apply(columns, values):
        # columns[j] = M e_j; M v = XOR of columns[j] over the set bits j of
        # v, looked up a byte at a time (four 256-entry tables).
        result = np.zeros_like(values)
        for byte in range(4):
            table = np.zeros(256, dtype=np.uint32)
            for k in range(256):
                v = 0
                for j in range(8):
                    if (k >> j) & 1:
                        v ^= columns[8 * byte + j]
                table[k] = v
            result ^= table[(values >> np.uint32(8 * byte)) & np.uint32(255)]
        return result

    def power_columns(n):
        columns = []
        for j in range(32):
            v = 1 << j
            for _ in range(n):
                v = step(v)
            columns.append(v)
        return columns

    def square(columns):
        # (M M) e_j = M (M e_j)
        squared = []
        for c in columns:
            v = 0
            for j in range(32):
                if (c >> j) & 1:
                    v ^= columns[j]
            squared.append(v)
        return squared

    filled = first
    columns = power_columns(filled)  # A^filled
    while filled < count:
        n = min(filled, count - filled)
        out[filled:filled + n] = apply(columns, out[:n])
        filled += n
        columns = square(columns)
    return out


def random01(seed, count):
    """bench's random01: (next >> 8) / 2^24 as float32."""
    return ((xorshift32(seed, count) >> np.uint32(8)).astype(np.float32)
            / np.float32(16777216.0))


def read_pgm(path):
    """8-bit or 16-bit binary PGM (P5) as a 2D numpy array (uint8 scaled
    like pv_image_read's PV_PIXEL_U8 for 16-bit files)."""
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while pos < len(data) and data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            while pos < len(data) and data[pos:pos + 1] not in (b"\n", b"\r"):
                pos += 1
            continue
        start = pos
        while pos < len(data) and not data[pos:pos + 1].isspace():
            pos += 1
        fields.append(data[start:pos])
    if fields[0] != b"P5":
        raise ValueError("%s: not a binary PGM" % path)
    width, height, maxval = int(fields[1]), int(fields[2]), int(fields[3])
    pos += 1  # the single whitespace after maxval
    if maxval < 256:
        image = np.frombuffer(data, dtype=np.uint8, count=width * height, offset=pos)
        return image.reshape(height, width).copy()
    image = np.frombuffer(data, dtype=">u2", count=width * height, offset=pos)
    image = image.reshape(height, width).astype(np.float64) * (255.0 / maxval)
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


def read_pfm(path):
    """A greyscale PFM (Pf) as a top-to-bottom float32 array, as
    pv_image_read gives it (PFM stores the last row first)."""
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        start = pos
        while not data[pos:pos + 1].isspace():
            pos += 1
        fields.append(data[start:pos])
    if fields[0] != b"Pf":
        raise ValueError("%s: not a greyscale PFM" % path)
    width, height, scale = int(fields[1]), int(fields[2]), float(fields[3])
    pos += 1
    dtype = "<f4" if scale < 0 else ">f4"
    image = np.frombuffer(data, dtype=dtype, count=width * height, offset=pos)
    return np.ascontiguousarray(image.reshape(height, width)[::-1]).astype(np.float32)


def mirror_index(n_out, n):
    """bench_features.c's mirror(i, n) for i = 0 .. n_out - 1."""
    i = np.arange(n_out) % (2 * n)
    return np.where(i < n, i, 2 * n - 1 - i)


def sift_image(data_dir, width, height):
    venus = read_pgm(os.path.join(data_dir, "stereo", "venus", "left.pgm"))
    rows = mirror_index(height, venus.shape[0])
    cols = mirror_index(width, venus.shape[1])
    return np.ascontiguousarray(venus[np.ix_(rows, cols)])


def stereo_inputs(data_dir, case):
    name, stereo_set, width, height, ndisp, _window, _scale, _border, _quick = case
    if stereo_set:
        base = os.path.join(data_dir, "stereo", stereo_set)
        left = read_pgm(os.path.join(base, "left.pgm"))
        right = read_pgm(os.path.join(base, "right.pgm"))
        if os.path.exists(os.path.join(base, "gt.pgm")):
            truth = read_pgm(os.path.join(base, "gt.pgm")).astype(np.float32)
        else:  # Middlebury 2014 (motorcycle): float disparities, inf unknown
            truth = read_pfm(os.path.join(base, "gt.pfm"))
        return left, right, truth
    # bench_stereo.c's make_synthetic: noise left image; band b of the right
    # image is the left image shifted by (ndisp - 1)(b + 1)/4 + 1.
    left = (xorshift32(12345, width * height) >> np.uint32(24)).astype(np.uint8)
    left = left.reshape(height, width)
    xr = np.arange(width)
    d = (ndisp - 1) * (3 * xr // width + 1) // 4 + 1
    xl = np.minimum(xr + d, width - 1)
    right = np.ascontiguousarray(left[:, xl])
    truth = np.zeros((height, width), dtype=np.float32)
    for x in range(width):  # later columns overwrite, as in the C loop
        if x + d[x] < width:
            truth[:, x + d[x]] = d[x]
    return left, right, truth


def bad_share(disparity, truth, gt_scale, border, invalid, threshold=1.0):
    """pv_disparity_error: share of pixels with known ground truth whose
    disparity is off by more than threshold (invalid = bad)."""
    h, w = truth.shape
    t = truth[border:h - border, border:w - border] / gt_scale
    d = disparity[border:h - border, border:w - border]
    known = np.isfinite(t) & (t > 0)
    bad = invalid[border:h - border, border:w - border] | ~(np.abs(d - t) <= threshold)
    count = int(known.sum())
    return float((bad & known).sum()) / count if count else 0.0


def pc3d_volumes(nx, ny, nz):
    """Reference: xorshift noise (x fastest); moving(p) = reference(p - shift)."""
    ref = random01(PC_SEED, nx * ny * nz).reshape(nz, ny, nx)
    mov = np.roll(ref, (PC_SHIFT[2], PC_SHIFT[1], PC_SHIFT[0]), axis=(0, 1, 2))
    return ref, np.ascontiguousarray(mov)


def pc2d_images(nx, ny):
    ref = random01(PC_SEED, nx * ny).reshape(ny, nx)
    mov = np.roll(ref, (PC_SHIFT[1], PC_SHIFT[0]), axis=(0, 1))
    return ref, np.ascontiguousarray(mov)


def ncc_inputs(side, templ):
    """bench_register.c's make_ncc_inputs: image and template cut from one
    noise canvas; the template's top-left corner at (x, y) in the image."""
    x, y = (17, -9) if templ == side else (200, 150)
    canvas_side = side + 2 * NCC_MARGIN
    canvas = random01(NCC_SEED, canvas_side * canvas_side).reshape(canvas_side, canvas_side)
    image = np.ascontiguousarray(canvas[NCC_MARGIN:NCC_MARGIN + side, NCC_MARGIN:NCC_MARGIN + side])
    ty, tx = NCC_MARGIN + y, NCC_MARGIN + x
    template = np.ascontiguousarray(canvas[ty:ty + templ, tx:tx + templ])
    return image, template, x, y


def ncc_template_mask(templ):
    """bench_register_ncc.c's make_masked_inputs: 0 over the template's
    central square (rows and columns templ/4 .. templ - templ/4), 1 elsewhere."""
    mask = np.ones((templ, templ), np.uint8)
    lo, hi = templ // 4, templ - templ // 4
    mask[lo:hi, lo:hi] = 0
    return mask


def sift_octaves(width, height):
    """parvis's default octave count: floor(log2(min side)) - first - 3, >= 1."""
    side = min(width, height)
    return max(side.bit_length() - 1 - SIFT_FIRST_OCTAVE - 3, 1)


def next_multiple_of_16(n):
    return (n + 15) // 16 * 16

# ----------------------------------------------------------------- 2D flow
# Keep in step with bench/bench_flow.c (flow2d-venus) and
# cli_synth_flow_truth in examples/common/tool.c.

FLOW2D_CASE = "flow2d-venus"
FLOW2D_MAGNITUDE = 4.0
FLOW2D_BORDER = 8


def flow2d_pair(data_dir):
    """(fixed, moving, truth): moving is Venus' left image in [0, 1],
    truth the known smooth field (h x w x 2: u right, v down, pixels) and
    fixed(x) = moving(x + truth(x)), bilinear with coordinates clamped."""
    moving = read_pgm(os.path.join(data_dir, "stereo", "venus", "left.pgm")).astype(np.float32)
    moving /= np.float32(255.0)
    ny, nx = moving.shape
    f32 = np.float32
    y, x = np.mgrid[0:ny, 0:nx].astype(np.float32)
    side = f32(max(nx, ny))
    rx = (x - f32(0.5) * f32(nx - 1)) / side
    ry = (y - f32(0.5) * f32(ny - 1)) / side
    two_pi = f32(6.28318531)
    u = f32(0.6) * np.sin(two_pi * y / f32(ny) + f32(0.5)) + f32(0.8) * (f32(0.5) * rx - ry)
    v = f32(0.6) * np.cos(two_pi * x / f32(nx) + f32(1.0)) + f32(0.8) * (rx + f32(0.5) * ry)
    truth = np.stack([f32(FLOW2D_MAGNITUDE) * u, f32(FLOW2D_MAGNITUDE) * v], axis=-1)
    sx = np.clip(x + truth[..., 0], 0, nx - 1)
    sy = np.clip(y + truth[..., 1], 0, ny - 1)
    x0 = np.minimum(np.floor(sx).astype(np.int64), nx - 2)
    y0 = np.minimum(np.floor(sy).astype(np.int64), ny - 2)
    tx, ty = sx - x0, sy - y0
    top = moving[y0, x0] * (1 - tx) + moving[y0, x0 + 1] * tx
    bottom = moving[y0 + 1, x0] * (1 - tx) + moving[y0 + 1, x0 + 1] * tx
    fixed = (top * (1 - ty) + bottom * ty).astype(np.float32)
    return fixed, moving, truth


def opencv_flow2d_cases(runner, cv2, data_dir):
    """Farneback and DIS (medium preset) on the flow2d-venus pair, 8-bit
    inputs, CPU; flow from fixed to moving, which is parvis's convention
    (moving(x + flow(x)) ~ fixed(x)).  Quality: mean EPE in px."""
    if not runner.wants("flow", FLOW2D_CASE, True):
        return
    fixed, moving, truth = flow2d_pair(data_dir)
    to_u8 = lambda a: np.clip(np.rint(a * 255.0), 0, 255).astype(np.uint8)
    fixed8, moving8 = to_u8(fixed), to_u8(moving)
    b = FLOW2D_BORDER

    def check(flow):
        d = np.asarray(flow, dtype=np.float64)[b:-b, b:-b] - truth[b:-b, b:-b]
        epe = float(np.mean(np.hypot(d[..., 0], d[..., 1])))
        return "EPE %.4f px" % epe, {"quality_metric": "EPE px", "quality": epe}

    inputs = "8-bit inputs, EPE over the pixels %d px inside the border" % b
    runner.time("flow", FLOW2D_CASE, "opencv-farneback", "cpu",
                lambda: cv2.calcOpticalFlowFarneback(fixed8, moving8, None, 0.5, 4, 15, 3, 5,
                                                     1.2, 0),
                "calcOpticalFlowFarneback pyr 0.5, 4 levels, win 15, 3 its, poly 5/1.2; "
                + inputs, check)
    dis = cv2.DISOpticalFlow_create(cv2.DISOPTICAL_FLOW_PRESET_MEDIUM)
    runner.time("flow", FLOW2D_CASE, "opencv-dis", "cpu",
                lambda: dis.calc(fixed8, moving8, None),
                "DISOpticalFlow preset MEDIUM; " + inputs, check)

# --------------------------------------------------------------------- timing


class Runner:
    """Times peers and collects their rows."""

    def __init__(self, args):
        self.args = args
        self.rows = []
        self.skipped = []

    def wants(self, op, case, quick_case):
        if self.args.quick and not quick_case:
            return False
        if not self.args.case:
            return True
        return any(c == op or c in case for c in self.args.case)

    def wants_peer(self, peer):
        return not self.args.peer or any(p in peer for p in self.args.peer)

    def skip(self, op, case, peer, path, why):
        self.skipped.append({"op": op, "case": case, "peer": peer, "path": path, "why": why})
        print("  skip %-6s %-18s %-22s %-6s %s" % (op, case, peer, path, why), flush=True)

    def time(self, op, case, peer, path, call, note="", check=None):
        """Warm up, then time call() up to --runs times (--budget seconds).
        check(result) returns (note text, extra fields) from the last result."""
        if not self.wants_peer(peer):
            return
        args = self.args
        try:
            started = time.perf_counter()
            result = None
            for _ in range(args.warmup):
                result = call()
                if time.perf_counter() - started > args.budget:
                    break
            samples = []
            budget_start = time.perf_counter()
            for _ in range(max(args.runs, 1)):
                t0 = time.perf_counter()
                result = call()
                samples.append((time.perf_counter() - t0) * 1e3)
                if time.perf_counter() - budget_start > args.budget:
                    break
            extra = {}
            if check is not None:
                more, extra = check(result)
                if more:
                    note = "%s; %s" % (note, more) if note else more
        except Exception as error:  # a peer failing is a result, not a crash
            self.skip(op, case, peer, path, "failed: %s: %s" % (type(error).__name__, error))
            return
        row = {"op": op, "case": case, "peer": peer, "path": path,
               "ms": statistics.median(samples), "runs": len(samples),
               "samples": [round(s, 4) for s in samples], "note": note}
        row.update(extra)
        self.rows.append(row)
        print("  %-6s %-18s %-22s %-6s %10.3f ms  (%d runs)  %s"
              % (op, case, peer, path, row["ms"], len(samples), note), flush=True)

# ----------------------------------------------------------------- OpenCV


def opencv_info(cv2):
    info = {"cv2": cv2.__version__, "cv2_threads": cv2.getNumThreads(),
            "cv2_have_opencl": bool(cv2.ocl.haveOpenCL())}
    cv2.ocl.setUseOpenCL(True)
    info["cv2_use_opencl"] = bool(cv2.ocl.useOpenCL())
    if info["cv2_use_opencl"]:
        try:
            get_default = (cv2.ocl.Device.getDefault if hasattr(cv2.ocl, "Device")
                           and hasattr(cv2.ocl.Device, "getDefault") else cv2.ocl.Device_getDefault)
            device = get_default()
            info["cv2_opencl_device"] = device.name()
            info["cv2_opencl_vendor"] = device.vendorName()
            info["cv2_opencl_driver"] = device.driverVersion()
            info["cv2_opencl_version"] = device.version()
            info["cv2_opencl_is_gpu"] = bool(device.type() & 4)   # CL_DEVICE_TYPE_GPU
        except Exception as error:
            info["cv2_opencl_device"] = "unknown (%s)" % error
    return info


def opencv_paths(cv2, info):
    paths = ["cpu"]
    if info.get("cv2_use_opencl"):
        paths.append("opencl")
    return paths


def with_opencl(cv2, path, call):
    """Run call() with OpenCV's OpenCL switched on for the T-API path only."""
    def run():
        cv2.ocl.setUseOpenCL(path == "opencl")
        return call()
    return run


def opencv_sgbm_cases(runner, cv2, data_dir):
    """StereoSGBM on the sgm cases, in both of its full-image modes: the
    settings the motorcycle figure of tests/data/stereo/README.md used
    (blockSize 5, P1 8 x 5^2 = 200, P2 32 x 5^2 = 800), numDisparities as
    parvis's ndisp (multiples of 16 here), uniqueness 5 %, a left-right
    difference of 1 (parvis: uniqueness 0.95, LR difference 1); no speckle
    filter (parvis has none), no pre-filter cap beyond OpenCV's 63."""
    for case in SGM_CASES:
        name, _set, _w, _h, ndisp, block, gt_scale, border, quick = case
        if not runner.wants("sgm", name, quick):
            continue
        left, right, truth = stereo_inputs(data_dir, case)

        def check(disp16, truth=truth, gt_scale=gt_scale, border=border):
            d = np.asarray(disp16, dtype=np.float32) / 16.0
            bad = bad_share(d, truth, gt_scale, border, invalid=d < 0, threshold=2.0)
            return "bad>2px %.2f%%" % (100 * bad), {"quality_metric": "bad>2px", "quality": bad}

        for peer, mode in SGBM_MODES:
            sgbm = cv2.StereoSGBM_create(minDisparity=0, numDisparities=ndisp, blockSize=block,
                                         P1=8 * block * block, P2=32 * block * block,
                                         disp12MaxDiff=1, preFilterCap=63, uniquenessRatio=5,
                                         speckleWindowSize=0, speckleRange=0,
                                         mode=getattr(cv2, "STEREO_SGBM_" + mode))
            note = ("StereoSGBM %s, numDisparities %d, blockSize %d, P1 %d, P2 %d, "
                    "uniquenessRatio 5, disp12MaxDiff 1, no speckle filter; CPU only"
                    % (mode, ndisp, block, 8 * block * block, 32 * block * block))
            call = lambda m=sgbm, l=left, r=right: m.compute(l, r)
            runner.time("sgm", name, peer, "cpu", with_opencl(cv2, "cpu", call), note, check)


def opencv_cases(runner, cv2, info, data_dir):
    paths = opencv_paths(cv2, info)
    tapi_note = "T-API (UMat) end to end: upload, call, download"
    if not info.get("cv2_use_opencl") and runner.wants_peer("opencv"):
        runner.skip("*", "*", "opencv", "opencl",
                    "no OpenCL device usable by OpenCV (cv2.ocl.useOpenCL() is off)"
                    if not runner.args.no_opencl else "--no-opencl")

    # SAD stereo -> StereoBM
    for case in SAD_CASES:
        name, _set, _w, _h, ndisp, window, gt_scale, border, quick = case
        if not runner.wants("sad", name, quick):
            continue
        left, right, truth = stereo_inputs(data_dir, case)
        nd = next_multiple_of_16(ndisp)
        deviation = ("numDisparities %d (parvis %d: StereoBM needs a multiple of 16); " % (nd, ndisp)
                     if nd != ndisp else "")
        base = ("StereoBM numDisparities %d, blockSize %d; %snormalized-response "
                "pre-filter and sub-pixel always on; texture, uniqueness, speckle, LR check off"
                % (nd, window, deviation))
        bm = cv2.StereoBM_create(numDisparities=nd, blockSize=window)
        bm.setTextureThreshold(0)
        bm.setUniquenessRatio(0)
        bm.setSpeckleWindowSize(0)
        bm.setSpeckleRange(0)
        bm.setDisp12MaxDiff(-1)

        def check(disp16, truth=truth, gt_scale=gt_scale, border=border):
            d = np.asarray(disp16, dtype=np.float32) / 16.0
            bad = bad_share(d, truth, gt_scale, border, invalid=d < 0)
            return "bad>1px %.2f%%" % (100 * bad), {"quality_metric": "bad>1px", "quality": bad}

        for path in paths:
            if path == "cpu":
                call = lambda bm=bm, l=left, r=right: bm.compute(l, r)
            else:
                call = lambda bm=bm, l=left, r=right: bm.compute(cv2.UMat(l), cv2.UMat(r)).get()
            runner.time("sad", name, "opencv", path, with_opencl(cv2, path, call),
                        base if path == "cpu" else base + "; " + tapi_note, check)

    opencv_sgbm_cases(runner, cv2, data_dir)

    # SIFT
    for name, width, height, quick in SIFT_CASES:
        if not runner.wants("sift", name, quick):
            continue
        image = sift_image(data_dir, width, height)
        # OpenCV's threshold is contrastThreshold / nOctaveLayers on [0, 1]
        # values: parvis's 0.01 is contrastThreshold 0.03 with 3 layers.
        sift = cv2.SIFT_create(nfeatures=0, nOctaveLayers=SIFT_LEVELS,
                               contrastThreshold=SIFT_PEAK_THRESH * SIFT_LEVELS,
                               edgeThreshold=SIFT_EDGE_THRESH, sigma=SIFT_SIGMA0)
        note = ("detectAndCompute, contrastThreshold %.2f (= parvis peak 0.01 x 3 layers), "
                "edge 10; OpenCV always starts at octave -1 (2x upsampled, parvis: 0)"
                % (SIFT_PEAK_THRESH * SIFT_LEVELS))

        def check(result):
            return "%d keypoints" % len(result[0]), {"keypoints": len(result[0])}

        for path in paths:
            if path == "cpu":
                call = lambda s=sift, im=image: s.detectAndCompute(im, None)
            else:
                def call(s=sift, im=image):
                    kp, desc = s.detectAndCompute(cv2.UMat(im), None)
                    return kp, (desc.get() if isinstance(desc, cv2.UMat) else desc)
            runner.time("sift", name, "opencv", path, with_opencl(cv2, path, call),
                        note if path == "cpu" else
                        note + "; " + tapi_note + " (SIFT has no OpenCL kernels in OpenCV)", check)

    # 2D phase correlation -> phaseCorrelate
    for nx, ny, quick in PC2D_CASES:
        name = "%d^2 one-shot" % nx if nx == ny else "%dx%d one-shot" % (nx, ny)
        if not runner.wants("pc2d", name, quick):
            continue
        ref, mov = pc2d_images(nx, ny)

        def check(result):
            (dx, dy), response = result
            exact = round(dx) == PC_SHIFT[0] and round(dy) == PC_SHIFT[1]
            return ("shift (%.2f, %.2f)" % (dx, dy),
                    {"quality_metric": "exact", "quality": 1.0 if exact else 0.0})

        note = "phaseCorrelate, no window, 5x5 weighted-centroid sub-pixel, float32 inputs"
        for path in paths:
            if path == "cpu":
                call = lambda a=ref, b=mov: cv2.phaseCorrelate(a, b)
            else:
                call = lambda a=ref, b=mov: cv2.phaseCorrelate(cv2.UMat(a), cv2.UMat(b))
            runner.time("pc2d", name, "opencv", path, with_opencl(cv2, path, call),
                        note if path == "cpu" else note + "; " + tapi_note, check)

    # NCC -> matchTemplate TM_CCOEFF_NORMED on the zero-padded image (the full
    # normxcorr2-sized map)
    for name, side, templ, quick in NCC_CASES:
        if not runner.wants("ncc", name, quick):
            continue
        image, template, x, y = ncc_inputs(side, templ)
        pad = templ - 1
        padded = cv2.copyMakeBorder(image, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)

        def check(result, x=x, y=y, pad=pad):
            result = np.asarray(result)
            v, u = np.unravel_index(int(np.argmax(result)), result.shape)
            found = (u - pad, v - pad)
            return ("peak at (%d, %d), map %dx%d" % (found[0], found[1], result.shape[1], result.shape[0]),
                    {"quality_metric": "exact", "quality": 1.0 if found == (x, y) else 0.0})

        note = ("matchTemplate TM_CCOEFF_NORMED on the image zero-padded by template-1: "
                "the full normxcorr2-sized map (normalized over the padding, not the overlap only)")
        for path in paths:
            if path == "cpu":
                def call(p=padded, t=template):
                    return cv2.matchTemplate(p, t, cv2.TM_CCOEFF_NORMED)
            else:
                def call(im=image, t=template, pad=pad):
                    u = cv2.copyMakeBorder(cv2.UMat(im), pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
                    return cv2.matchTemplate(u, cv2.UMat(t), cv2.TM_CCOEFF_NORMED).get()
            runner.time("ncc", name, "opencv", path, with_opencl(cv2, path, call),
                        note if path == "cpu" else note + "; " + tapi_note + " (padding on the device)",
                        check)

    # Masked NCC -> matchTemplate TM_CCOEFF_NORMED with the template's mask:
    # OpenCV's map holds the positions with the template wholly inside the
    # image (there the overlap is the template's valid pixels, parvis's
    # value), so the peak is compared, not the full map
    for name, side, templ, quick in NCC_MASKED_CASES:
        if not runner.wants("ncc-masked", name, quick):
            continue
        image, template, x, y = ncc_inputs(side, templ)
        mask = ncc_template_mask(templ)

        def check(result, x=x, y=y):
            result = np.asarray(result)
            v, u = np.unravel_index(int(np.argmax(result)), result.shape)
            return ("peak at (%d, %d), map %dx%d" % (u, v, result.shape[1], result.shape[0]),
                    {"quality_metric": "exact", "quality": 1.0 if (u, v) == (x, y) else 0.0})

        note = ("matchTemplate TM_CCOEFF_NORMED with the template's mask: the map of the "
                "template wholly inside the image only (parvis: the full normxcorr2-sized map)")
        for path in paths:
            if path == "cpu":
                def call(im=image, t=template, m=mask):
                    return cv2.matchTemplate(im, t, cv2.TM_CCOEFF_NORMED, mask=m)
            else:
                def call(im=image, t=template, m=mask):
                    return cv2.matchTemplate(cv2.UMat(im), cv2.UMat(t), cv2.TM_CCOEFF_NORMED,
                                             mask=cv2.UMat(m)).get()
            runner.time("ncc-masked", name, "opencv", path, with_opencl(cv2, path, call),
                        note if path == "cpu" else note + "; " + tapi_note, check)
    cv2.ocl.setUseOpenCL(True)

# ------------------------------------------------------------ scikit-image


def skimage_cases(runner, skimage, data_dir):
    from skimage.registration import phase_cross_correlation
    from skimage.feature import match_template
    try:
        from skimage.feature import SIFT
    except ImportError:
        SIFT = None

    def pcc(reference, moving, upsample):
        result = phase_cross_correlation(reference, moving, upsample_factor=upsample)
        return result[0] if isinstance(result, tuple) else result

    def pc_check(ndim):
        def check(shift):
            # skimage returns the shift that registers moving onto reference:
            # parvis's convention has the opposite sign; axes are (z,) y, x.
            s = [-float(v) for v in shift][::-1]
            exact = all(round(a) == b for a, b in zip(s, PC_SHIFT[:ndim]))
            return ("shift (%s)" % ", ".join("%.2f" % v for v in s),
                    {"quality_metric": "exact", "quality": 1.0 if exact else 0.0})
        return check

    for nx, ny, quick in PC2D_CASES:
        name = "%d^2 one-shot" % nx if nx == ny else "%dx%d one-shot" % (nx, ny)
        if not runner.wants("pc2d", name, quick):
            continue
        ref, mov = pc2d_images(nx, ny)
        for up in (1, UPSAMPLE):
            peer = "skimage" if up == 1 else "skimage-up%d" % up
            note = ("phase_cross_correlation, upsample_factor %d (%s)"
                    % (up, "integer peak" if up == 1 else "matrix-multiply DFT sub-pixel"))
            runner.time("pc2d", name, peer, "cpu", lambda a=ref, b=mov, u=up: pcc(a, b, u),
                        note, pc_check(2))

    for nx, ny, nz, quick in PC3D_CASES:
        size = "%d^3" % nx if nx == ny == nz else "%dx%dx%d" % (nx, ny, nz)
        name = size + " one-shot"
        if not runner.wants("pc3d", name, quick):
            continue
        ref, mov = pc3d_volumes(nx, ny, nz)
        for up in (1, UPSAMPLE):
            peer = "skimage" if up == 1 else "skimage-up%d" % up
            note = ("phase_cross_correlation, upsample_factor %d (%s)"
                    % (up, "integer peak, as parvis-bench's pc3d rows" if up == 1
                       else "matrix-multiply DFT sub-pixel"))
            runner.time("pc3d", name, peer, "cpu", lambda a=ref, b=mov, u=up: pcc(a, b, u),
                        note, pc_check(3))
        del ref, mov

    for name, side, templ, quick in NCC_CASES:
        if not runner.wants("ncc", name, quick):
            continue
        image, template, x, y = ncc_inputs(side, templ)
        pad = templ - 1
        padded = np.pad(image, pad, mode="constant")

        def check(result, x=x, y=y, pad=pad):
            v, u = np.unravel_index(int(np.argmax(result)), result.shape)
            found = (u - pad, v - pad)
            return ("peak at (%d, %d), map %dx%d" % (found[0], found[1], result.shape[1], result.shape[0]),
                    {"quality_metric": "exact", "quality": 1.0 if found == (x, y) else 0.0})

        runner.time("ncc", name, "skimage", "cpu",
                    lambda p=padded, t=template: match_template(p, t),
                    "match_template on the image zero-padded by template-1: the full "
                    "normxcorr2-sized map (normalized over the padding, not the overlap only)", check)

    for name, width, height, quick in SIFT_CASES:
        if not runner.wants("sift", name, quick):
            continue
        if SIFT is None:
            runner.skip("sift", name, "skimage", "cpu",
                        "skimage %s has no feature.SIFT (>= 0.19 needed)" % skimage.__version__)
            continue
        image = sift_image(data_dir, width, height)
        octaves = sift_octaves(width, height)

        def call(im=image, octaves=octaves):
            sift = SIFT(upsampling=1, n_octaves=octaves, n_scales=SIFT_LEVELS,
                        sigma_min=SIFT_SIGMA0, sigma_in=SIFT_SIGMA_INPUT,
                        c_dog=SIFT_PEAK_THRESH, c_edge=SIFT_EDGE_THRESH)
            sift.detect_and_extract(im)
            return sift

        def check(sift):
            n = len(sift.keypoints)
            return "%d keypoints" % n, {"keypoints": n}

        runner.time("sift", name, "skimage", "cpu", call,
                    "SIFT.detect_and_extract, upsampling 1 (first octave 0), %d octaves, 3 scales, "
                    "c_dog 0.01, c_edge 10 on [0, 1] values" % octaves, check)

# ------------------------------------------------------------------ VLFeat


def find_vlfeat(explicit):
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(os.path.dirname(here))
    names = [os.path.join(os.getcwd(), "bench", "peers", "vlfeat_sift_peer")]
    names += [os.path.join(top, d, "bench", "peers", "vlfeat_sift_peer")
              for d in ("_build", "build", ".")]
    names.append(os.path.join(here, "vlfeat_sift_peer"))
    for name in names:
        if os.access(name, os.X_OK):
            return name
    return shutil.which("vlfeat_sift_peer")


def run_peer_program(runner, command, name, peer, path):
    """Run a peer program that prints JSON rows; keep its rows, or a skip."""
    program = os.path.basename(command[0])
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, check=False)
    except OSError as error:
        runner.skip("sift", name, peer, path, "cannot run %s: %s" % (command[0], error))
        return
    rows = []
    for line in done.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
    if done.returncode != 0 or not rows:
        runner.skip("sift", name, peer, path, "%s failed (rc %d): %s"
                    % (program, done.returncode, done.stderr.strip()[-300:]))
        return
    for row in rows:
        runner.rows.append(row)
        print("  %-6s %-18s %-22s %-6s %10.3f ms  (%d runs)  %s"
              % (row["op"], row["case"], row["peer"], row["path"], row["ms"], row["runs"],
                 row.get("note", "")), flush=True)


def vlfeat_cases(runner, binary, data_dir):
    venus = os.path.join(data_dir, "stereo", "venus", "left.pgm")
    args = runner.args
    for name, width, height, quick in SIFT_CASES:
        if not runner.wants("sift", name, quick) or not runner.wants_peer("vlfeat"):
            continue
        command = [binary, "--image", venus, "--tile", "%dx%d" % (width, height),
                   "--case", name, "--runs", str(max(args.runs, 1)), "--warmup", str(args.warmup),
                   "--budget", str(args.budget)]
        run_peer_program(runner, command, name, "vlfeat", "cpu")


def find_cudasift(explicit):
    """The cudasift_peer program: --cudasift BIN, else the build trees, else PATH."""
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(os.path.dirname(here))
    names = [os.path.join(os.getcwd(), "bench", "peers", "cudasift_peer")]
    names += [os.path.join(top, d, "bench", "peers", "cudasift_peer")
              for d in ("_build", "build", ".")]
    names.append(os.path.join(here, "cudasift_peer"))
    for name in names:
        if os.access(name, os.X_OK):
            return name
    return shutil.which("cudasift_peer")


def cudasift_cases(runner, binary, data_dir):
    """CudaSift's detection on the sift cases and its demo chain on the sift-chain cases."""
    venus = os.path.join(data_dir, "stereo", "venus", "left.pgm")
    args = runner.args
    if not runner.wants_peer("cudasift"):
        return
    timing = ["--runs", str(max(args.runs, 1)), "--warmup", str(args.warmup)]
    for name, width, height, quick in SIFT_CASES:
        if runner.wants("sift", name, quick):
            command = [binary, "--image", venus, "--tile", "%dx%d" % (width, height),
                       "--case", name] + timing
            run_peer_program(runner, command, name, "cudasift", "cuda")
    for name, width, height, quick in SIFT_CHAIN_CASES:
        if runner.wants("sift", name, quick):
            command = [binary, "--chain", "--image", venus, "--tile", "%dx%d" % (width, height),
                       "--case", name] + timing
            run_peer_program(runner, command, name, "cudasift", "cuda")

# ---------------------------------------------------------------------- main


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def default_data_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("PARVIS_DATA") or os.path.join(os.path.dirname(os.path.dirname(here)),
                                                         "tests", "data")


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Time OpenCV, scikit-image and VLFeat on parvis-bench's cases.")
    p.add_argument("--runs", type=int, default=11, help="timed runs per case (median; default 11)")
    p.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    p.add_argument("--budget", type=float, default=60.0,
                   help="stop timing a case after this many seconds (at least one run; default 60)")
    p.add_argument("--quick", action="store_true", help="small cases only (as parvis-bench --quick)")
    p.add_argument("--case", action="append",
                   help="an operation (sad, sift, pc2d, pc3d, ncc, ncc-masked) or a substring of case names; "
                        "repeatable")
    p.add_argument("--peer", action="append", help="only peers whose name contains this; repeatable")
    p.add_argument("--json", metavar="OUT", help="write the rows as JSON here")
    p.add_argument("--data", metavar="DIR", default=None,
                   help="directory holding stereo/<set>/ (default tests/data, or $PARVIS_DATA)")
    p.add_argument("--vlfeat", metavar="BIN",
                   help="the vlfeat_sift_peer program (default: looked up in the build trees)")
    p.add_argument("--cudasift", metavar="BIN",
                   help="the cudasift_peer program (default: looked up in the build trees)")
    p.add_argument("--no-opencl", action="store_true", help="skip OpenCV's T-API path")
    args = p.parse_args(argv)
    if args.runs < 1 or args.warmup < 0 or args.budget <= 0:
        p.error("--runs must be >= 1, --warmup >= 0, --budget > 0")
    return args


def main(argv):
    args = parse_args(argv)
    data_dir = args.data or default_data_dir()
    machine = {"python": platform.python_version(), "cpu_model": cpu_model(),
               "cpu_count": os.cpu_count(), "platform": platform.platform(),
               "numpy": np.__version__ if np is not None else None,
               "runs": args.runs, "warmup": args.warmup, "budget_s": args.budget,
               "data": data_dir}
    runner = Runner(args)
    print("parvis peers: median ms after warm-up, on %s (%s CPUs)" % (machine["cpu_model"],
                                                                     machine["cpu_count"]))
    if np is None:
        print("note: numpy is absent: no Python peer can run")
    elif not os.path.isfile(os.path.join(data_dir, "stereo", "venus", "left.pgm")):
        print("note: %s has no stereo/venus/left.pgm: use --data DIR" % data_dir)
    else:
        try:
            import cv2
        except ImportError as error:
            cv2 = None
            print("note: OpenCV (cv2) is absent (%s): its peers are skipped" % error)
        if cv2 is not None:
            info = opencv_info(cv2)
            if args.no_opencl:
                info["cv2_use_opencl"] = False
            machine.update(info)
            print("OpenCV %s, %d threads, OpenCL %s%s" % (
                info["cv2"], info["cv2_threads"],
                "available" if info["cv2_have_opencl"] else "absent",
                (": " + info.get("cv2_opencl_device", "")) if info.get("cv2_use_opencl") else
                " (no usable device)"))
            if info.get("cv2_use_opencl") and not info.get("cv2_opencl_is_gpu", True):
                print("note: OpenCV's OpenCL device is not a GPU; "
                      "OPENCV_OPENCL_DEVICE=:GPU:0 selects the first GPU")
            opencv_cases(runner, cv2, info, data_dir)
            cv2.ocl.setUseOpenCL(False)
            opencv_flow2d_cases(runner, cv2, data_dir)
            cv2.ocl.setUseOpenCL(True)
        try:
            import skimage
            import skimage.registration  # noqa: F401
            import skimage.feature  # noqa: F401
        except ImportError as error:
            skimage = None
            print("note: scikit-image is absent (%s): its peers are skipped" % error)
        if skimage is not None:
            machine["skimage"] = skimage.__version__
            try:
                import scipy
                machine["scipy"] = scipy.__version__
            except ImportError:
                pass
            print("scikit-image %s" % skimage.__version__)
            skimage_cases(runner, skimage, data_dir)
    binary = find_vlfeat(args.vlfeat)
    if binary:
        machine["vlfeat_peer"] = binary
        vlfeat_cases(runner, binary, data_dir)
    else:
        print("note: vlfeat_sift_peer not found (build with VLFeat installed, or --vlfeat BIN): "
              "VLFeat is skipped")
    cudasift = find_cudasift(args.cudasift)
    if cudasift and os.path.isfile(os.path.join(data_dir, "stereo", "venus", "left.pgm")):
        machine["cudasift_peer"] = cudasift
        cudasift_cases(runner, cudasift, data_dir)
    else:
        print("note: cudasift_peer not found (bench/peers/build-cudasift.sh, or --cudasift BIN): "
              "CudaSift is skipped")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"peers": runner.rows, "skipped": runner.skipped, "machine": machine},
                      out, indent=1)
            out.write("\n")
    print("%d peer rows, %d skipped" % (len(runner.rows), len(runner.skipped)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
