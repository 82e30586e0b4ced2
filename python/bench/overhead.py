#!/usr/bin/env python3
"""What a Python call of parvis adds to the C call it makes.

Each case is run two ways, alternately: the package's method, and the bare C
function called through the extension with its arguments prepared
beforehand (the C structs made once, outside the timing).  Both are timed
with time.perf_counter; the overhead is the median over runs of (method
time - bare call time): argument checks, the C structs, the output arrays,
copying results out.  The C library's own end-to-end time of the call
(Context.last_timing["total"]) is printed beside it.  Medians over --runs
pairs after --warmup pairs.  Targets: < 20 us per call and < 5% of the C
time.

    python bench/overhead.py [--backend auto|cpu|opencl] [--runs N] [--quick]
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time
from typing import Callable, List, Tuple

import numpy as np

import parvis
from parvis import _arrays as A
from parvis._native import ffi, lib
from parvis._base import _Plan
from parvis._features import _features_arrays

HERE = pathlib.Path(__file__).resolve()
DATA_DIRS = [HERE.parents[2] / "tests" / "data" / "stereo",
             HERE.parents[3] / "shared" / "data" / "stereo"]


def stereo_dir() -> pathlib.Path:
    for d in DATA_DIRS:
        if (d / "venus" / "left.pgm").exists():
            return d
    sys.exit("overhead: no Venus pair found in " + ", ".join(map(str, DATA_DIRS)))


def image_720p() -> np.ndarray:
    """A 1280x720 grey image made of the bundled scenes (real texture)."""
    d = stereo_dir()
    venus = parvis.imread(d / "venus" / "left.pgm")[:360]
    cones = parvis.imread(d / "cones-quarter" / "left.pgm")[:360]
    row = np.concatenate([venus, cones, venus[:, ::-1]], axis=1)
    return np.ascontiguousarray(np.concatenate([row, row[:, ::-1]], axis=0)[:720, :1280])


def measure(ctx: parvis.Context, method: Callable[[], object], bare: Callable[[], int],
            runs: int, warmup: int) -> Tuple[float, float, float, float]:
    """Medians of (method ms, bare C call ms, C total ms, overhead us)."""
    def timed(fn: Callable[[], object]) -> float:
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3

    for _ in range(warmup):
        method()
        if bare() != 0:
            raise parvis.Error(bare(), "the bare C call failed")
    methods: List[float] = []
    bares: List[float] = []
    totals: List[float] = []
    for i in range(runs):
        # Alternate which of the two goes first, so that a device that is
        # slower (or faster) on the second of two back-to-back calls does
        # not bias the difference.
        if i % 2:
            methods.append(timed(method))
            totals.append(ctx.last_timing["total"])
            bares.append(timed(bare))
        else:
            bares.append(timed(bare))
            methods.append(timed(method))
            totals.append(ctx.last_timing["total"])
    diffs = [(m - b) * 1e3 for m, b in zip(methods, bares)]
    return (statistics.median(methods), statistics.median(bares), statistics.median(totals),
            statistics.median(diffs))


def direct_us(fn: Callable[[], object], runs: int) -> float:
    """Median microseconds of fn."""
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(samples)


def layer_us(method: Callable[[], object], runs: int) -> float:
    """Median microseconds of the method with its C call replaced by a no-op:
    the Python layer alone (argument checks, C structs, output arrays),
    free of the device's run-to-run spread.  Results copied out of C
    (SIFT's arrays) are not in it, since the no-op returns none."""
    context_call, plan_call = parvis.Context._call, _Plan._call
    parvis.Context._call = _Plan._call = lambda self, fn, *args: None  # type: ignore
    try:
        samples = []
        for _ in range(runs):
            t0 = time.perf_counter()
            try:
                method()
            except Exception:  # an empty result some wrappers refuse to read
                pass
            samples.append((time.perf_counter() - t0) * 1e6)
        return statistics.median(samples)
    finally:
        parvis.Context._call, _Plan._call = context_call, plan_call


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "opencl"])
    ap.add_argument("--device", default=None)
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="7 runs, 1 warm-up")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.warmup = 7, 1
    device = int(args.device) if args.device and args.device.isdigit() else args.device

    d = stereo_dir()
    left = parvis.imread(d / "venus" / "left.pgm")
    right = parvis.imread(d / "venus" / "right.pgm")
    hd = image_720p()
    rng = np.random.default_rng(0)
    vol = rng.random((64, 64, 64)).astype(np.float32)
    moved = np.roll(vol, (2, -3, 5), axis=(0, 1, 2))
    sad_out = np.empty(left.shape, np.float32)

    with parvis.Context(args.backend, device=device) as ctx:
        print(f"# parvis {parvis.__version__}, Python {sys.version.split()[0]}, "
              f"{ctx.backend} on {ctx.device_name}; medians of {args.runs} runs")
        c = ctx._ptr
        sad_params = ffi.new("pv_sad_params *")
        lib.pv_sad_params_default(sad_params)
        sad_params.ndisp, sad_params.window = 64, 5
        _, ls = A.image_in(left, "left")
        _, rs = A.image_in(right, "right")
        sad_struct = A.image_struct(sad_out)
        bare_out = np.empty_like(sad_out)
        bare_struct = A.image_struct(bare_out)
        _, hs = A.image_in(hd, "image")
        _, vs = A.volume_in(vol, "vol")
        _, ms = A.volume_in(moved, "moved")
        shift = ffi.new("pv_shift *")
        options = ffi.new("pv_phasecorr_options *")
        lib.pv_phasecorr_options_default(options)
        features = ffi.new("pv_sift_features *")
        # Tiny inputs: the C work is a few microseconds, so the fixed cost
        # of the Python layer stands out of the noise.
        tl, tr = left[:32, :48].copy(), right[:32, :48].copy()
        _, tls = A.image_in(tl, "tl")
        _, trs = A.image_in(tr, "tr")
        tiny_params = ffi.new("pv_sad_params *")
        lib.pv_sad_params_default(tiny_params)
        tiny_params.ndisp, tiny_params.window = 4, 3
        tiny_out = np.empty(tl.shape, np.float32)
        tiny_struct = A.image_struct(tiny_out)
        small = vol[:16, :16, :16].copy()
        small_moved = moved[:16, :16, :16].copy()
        _, sms = A.volume_in(small_moved, "small_moved")
        with ctx.sift_plan(hd.shape) as sift, ctx.phasecorr_plan(vol) as pc, \
                ctx.phasecorr_plan(small) as pc_small:
            cases = [
                ("tiny: sad 48x32/4 3x3, out=",
                 lambda: ctx.stereo_sad(tl, tr, 4, window=3, out=tiny_out),
                 lambda: lib.pv_stereo_sad(c, tls, trs, tiny_params, tiny_struct)),
                ("tiny: pc3d 16^3 (plan)", lambda: pc_small.correlate(small_moved),
                 lambda: lib.pv_phasecorr_plan_correlate3d(pc_small._ptr, sms, 1, shift)),
                ("sad venus 434x383/64 5x5",
                 lambda: ctx.stereo_sad(left, right, 64, window=5),
                 lambda: lib.pv_stereo_sad(c, ls, rs, sad_params, bare_struct)),
                ("sad venus, out=",
                 lambda: ctx.stereo_sad(left, right, 64, window=5, out=sad_out),
                 lambda: lib.pv_stereo_sad(c, ls, rs, sad_params, sad_struct)),
                ("sift 1280x720 (plan)", lambda: sift.detect(hd),
                 lambda: lib.pv_sift_detect_into(sift._ptr, hs, features)),
                ("pc3d 64^3 (plan)", lambda: pc.correlate(moved),
                 lambda: lib.pv_phasecorr_plan_correlate3d(pc._ptr, ms, 1, shift)),
                ("pc3d 64^3 (one-shot)", lambda: ctx.phase_correlate(vol, moved),
                 lambda: lib.pv_phase_correlate3d(c, vs, ms, options, shift)),
            ]
            print(f"{'case':28s} {'C e2e ms':>9s} {'C call ms':>10s} {'Python ms':>10s} "
                  f"{'overhead us':>12s} {'share':>7s} {'layer us':>9s}  target")
            for name, method, bare in cases:
                wall, bare_ms, total, diff_us = measure(ctx, method, bare, args.runs,
                                                        args.warmup)
                if name.startswith("sift"):
                    # SIFT's plan calls C outside _call; its layer is the
                    # argument check plus the copy of the plan's results
                    # into fresh numpy arrays, timed directly.
                    layer = direct_us(lambda: (A.image_in(hd, "image"),
                                               _features_arrays(sift._features, np.uint8)),
                                      args.runs)
                else:
                    layer = layer_us(method, args.runs)
                share = diff_us / (bare_ms * 1e3)
                # A tiny case's C work is microseconds: only the 20 us target applies.
                ok = diff_us < 20.0 and (share < 0.05 or name.startswith("tiny"))
                print(f"{name:28s} {total:9.3f} {bare_ms:10.3f} {wall:10.3f} {diff_us:12.1f} "
                      f"{100 * share:6.2f}% {layer:9.1f}  {'met' if ok else 'missed'}")
        lib.pv_sift_features_free(features)
    print("# overhead = median over pairs of (method time - bare C call time), both from "
          "Python, the pair's order alternating; C e2e = last_timing total; layer = the "
          "method with its C call replaced by a no-op (the Python layer alone)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
