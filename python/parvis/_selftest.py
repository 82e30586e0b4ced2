"""``python -m parvis --selftest``: every operation on every backend, small inputs.

Each check runs one operation on small built-in synthetic inputs whose answer
is known (a texture shifted by a known amount, a linear ramp, a grey colour)
and verifies that answer.  On the CPU that checks the reference backend; on
each OpenCL device the context runs in cross-check mode, so the library
also repeats the call on the CPU and compares the two with its named
tolerances (lib/core/tolerance.h), raising parvis.Mismatch when they differ.
A check passes when no error is raised and the known answer is met.
"""
from __future__ import annotations

import functools
import sys
import time
from typing import Callable, List, Optional, TextIO, Tuple

import numpy as np

from . import _native
from ._context import Context
from ._errors import Error
from ._geometry import find_homography, matched_points
from ._io import devices, synthesize_oct

_SHIFT = 4       # disparity / shift of the stereo and matching inputs (pixels)


class CheckFailed(Exception):
    """A result that does not match the known answer."""


def _texture(shape: Tuple[int, ...], seed: int, smooth: int = 1) -> np.ndarray:
    """Random texture in [0, 1], box-smoothed so that sub-pixel fits work."""
    a = np.random.default_rng(seed).random(shape)
    for _ in range(smooth):
        for axis in range(a.ndim):
            a = (a + np.roll(a, 1, axis) + np.roll(a, -1, axis)) / 3.0
    a = (a - a.min()) / (a.max() - a.min())
    return a.astype(np.float32)


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def _stereo_pair() -> Tuple[np.ndarray, np.ndarray]:
    """left(x) = right(x - _SHIFT): a constant disparity of _SHIFT."""
    right = (_texture((48, 80), 3) * 255).astype(np.uint8)
    left = np.roll(right, _SHIFT, axis=1)
    return left, right


def _disparity_share(disparity: np.ndarray) -> float:
    inner = disparity[8:-8, 16:-8]
    return float(np.mean(np.abs(inner - _SHIFT) <= 1.0))


def check_blur(ctx: Context) -> str:
    image = _texture((48, 64), 1)
    out = ctx.gaussian_blur(image, 1.5)
    _expect(out.shape == image.shape and bool(np.all(np.isfinite(out))), "bad output")
    _expect(float(out.std()) < float(image.std()), "blur did not smooth")
    return f"std {image.std():.3f} -> {out.std():.3f}"


def check_gradient(ctx: Context) -> str:
    ys, xs = np.mgrid[0:32, 0:40].astype(np.float32)
    gx, gy = ctx.gradients(2.0 * xs + 3.0 * ys)
    err = max(float(np.abs(gx[2:-2, 2:-2] - 2).max()), float(np.abs(gy[2:-2, 2:-2] - 3).max()))
    _expect(err < 1e-3, f"ramp slope off by {err:.2g}")
    return f"ramp slopes (2, 3) within {err:.1g}"


def check_colour(ctx: Context) -> str:
    rgb = np.zeros((16, 24, 3), np.uint8)
    rgb[..., 0], rgb[..., 1], rgb[..., 2] = 200, 100, 50
    grey = ctx.to_grey(rgb)
    want = 0.299 * 200 + 0.587 * 100 + 0.114 * 50
    err = float(np.abs(grey - want).max())
    _expect(err < 1e-3, f"Rec. 601 luma off by {err:.2g}")
    return f"luma {want:.2f}"


def check_sad(ctx: Context) -> str:
    share = _disparity_share(ctx.stereo_sad(*_stereo_pair(), ndisp=16, window=5))
    _expect(share > 0.95, f"disparity {_SHIFT} on only {share:.0%} of pixels")
    return f"disparity {_SHIFT} on {share:.0%}"


def check_bp(ctx: Context) -> str:
    share = _disparity_share(ctx.stereo_bp(*_stereo_pair(), ndisp=16))
    _expect(share > 0.9, f"disparity {_SHIFT} on only {share:.0%} of pixels")
    return f"disparity {_SHIFT} on {share:.0%}"


def check_sgm(ctx: Context) -> str:
    share = _disparity_share(getattr(ctx, "stereo_sgm")(*_stereo_pair(), ndisp=16))
    _expect(share > 0.9, f"disparity {_SHIFT} on only {share:.0%} of pixels")
    return f"disparity {_SHIFT} on {share:.0%}"


def check_sift_ransac(ctx: Context) -> str:
    image = _texture((128, 128), 5, smooth=3)
    moved = np.roll(image, (3, _SHIFT), axis=(0, 1))
    f1, f2 = ctx.sift(image), ctx.sift(moved)
    _expect(len(f1.keypoints) >= 8 and len(f2.keypoints) >= 8, "too few keypoints")
    matches = ctx.match(f1.descriptors, f2.descriptors)
    _expect(len(matches.pairs) >= 8, f"only {len(matches.pairs)} matches")
    p1, p2 = matched_points(f1.keypoints, f2.keypoints, matches.pairs)
    result = find_homography(ctx, p1, p2, threshold=1.0)
    h = np.asarray(result.model) / result.model[2][2]
    err = abs(h[0][2] - _SHIFT) + abs(h[1][2] - 3)
    _expect(err < 0.5, f"homography translation ({h[0][2]:.2f}, {h[1][2]:.2f})")
    return f"{len(f1.keypoints)} keypoints, {len(matches.pairs)} matches, translation ok"


def check_phasecorr2d(ctx: Context) -> str:
    ref = _texture((64, 64), 7)
    result = ctx.phase_correlate(ref, np.roll(ref, (3, -5), axis=(0, 1)))
    _expect(np.allclose(result.shift, [-5, 3]), f"shift {result.shift}")
    return "shift (-5, 3)"


def check_phasecorr3d(ctx: Context) -> str:
    ref = _texture((16, 24, 32), 8)
    result = ctx.phase_correlate(ref, np.roll(ref, (1, 2, -3), axis=(0, 1, 2)))
    _expect(np.allclose(result.shift, [-3, 2, 1]), f"shift {result.shift}")
    return "shift (-3, 2, 1)"


def check_ncc(ctx: Context) -> str:
    image = _texture((48, 48), 9)
    template = image[10:26, 20:36]
    # Overlaps of a few pixels give ill-conditioned float32 coefficients;
    # the tests exclude them the same way.
    result = ctx.ncc(template, image, min_overlap=template.size // 2)
    where = (result.x, result.y)
    _expect(where == (20, 10) and result.coefficient > 0.999,
            f"best offset {where}, coefficient {result.coefficient:.4f}")
    return f"offset (20, 10), coefficient {result.coefficient:.4f}"


def check_octreg(ctx: Context) -> str:
    synth = synthesize_oct((40, 48, 64), seed=2, saccades=0, tremor=0.2)
    result = ctx.octreg(synth.reference, synth.target)
    both = result.valid & synth.valid
    _expect(int(both.sum()) >= 20, f"only {int(both.sum())} B-scans registered")
    err = float(np.median(np.abs(result.shifts[both] - synth.shifts[both])))
    _expect(err < 1.0, f"median shift error {err:.2f} voxels")
    return f"{int(both.sum())} B-scans, median error {err:.2f} voxels"


def _flow_shift(u: np.ndarray) -> float:
    return float(np.median(u[(slice(2, -2),) * u.ndim]))


def check_flow2d(ctx: Context) -> str:
    fixed = _texture((48, 64), 11, smooth=2)
    flow = ctx.flow2d(fixed, np.roll(fixed, 1, axis=1))
    u = _flow_shift(flow.u)
    _expect(abs(u - 1.0) < 0.3, f"median u {u:.2f}, want 1")
    return f"median u {u:.2f}"


def check_flow3d(ctx: Context) -> str:
    fixed = _texture((16, 20, 24), 12, smooth=2)
    flow = ctx.flow3d(fixed, np.roll(fixed, 1, axis=2), warps=3, iterations=30)
    u = _flow_shift(flow.u)
    _expect(abs(u - 1.0) < 0.3, f"median u {u:.2f}, want 1")
    return f"median u {u:.2f}"


#: (name, check, whether this build has it).
CHECKS: List[Tuple[str, Callable[[Context], str], bool]] = [
    ("gaussian-blur", check_blur, True),
    ("gradient", check_gradient, True),
    ("colour", check_colour, True),
    ("sad", check_sad, True),
    ("bp", check_bp, True),
    ("sgm", check_sgm, hasattr(_native.lib, "pv_stereo_sgm") and hasattr(Context, "stereo_sgm")),
    ("sift-match-ransac", check_sift_ransac, True),
    ("phasecorr-2d", check_phasecorr2d, True),
    ("phasecorr-3d", check_phasecorr3d, True),
    ("ncc", check_ncc, True),
    ("octreg", check_octreg, True),
    ("flow-2d", check_flow2d, True),
    ("flow-3d", check_flow3d, True),
]


def _targets() -> List[Tuple[str, Callable[[], Context]]]:
    """The CPU, then every OpenCL device in cross-check mode."""
    found: List[Tuple[str, Callable[[], Context]]] = [("cpu", lambda: Context("cpu"))]
    try:
        listed = devices()
    except Error:
        listed = []
    for dev in listed:
        found.append((f"opencl:{dev.index} {dev.name}", functools.partial(
            Context, "opencl", device=dev.index, crosscheck=True)))
    return found


def _run_one(check: Callable[[Context], str], ctx: Context) -> Tuple[bool, str]:
    try:
        return True, check(ctx)
    except CheckFailed as err:
        return False, f"wrong answer: {err}"
    except Error as err:
        return False, f"{type(err).__name__}: {err}"


def run(out: Optional[TextIO] = None) -> int:
    """Run every check on every target, one line each; returns the failures."""
    out = out or sys.stdout
    passed = failed = 0
    for target, make in _targets():
        print(f"selftest on {target}", file=out, flush=True)
        try:
            ctx = make()
        except Error as err:
            print(f"  FAIL  context: {err}", file=out, flush=True)
            failed += 1
            continue
        with ctx:
            for name, check, present in CHECKS:
                if not present:
                    print(f"  skip  {name:<18} (not in this build)", file=out, flush=True)
                    continue
                start = time.perf_counter()
                ok, detail = _run_one(check, ctx)
                ms = (time.perf_counter() - start) * 1e3
                print(f"  {'ok  ' if ok else 'FAIL'}  {name:<18} {ms:8.1f} ms  {detail}",
                      file=out, flush=True)
                passed, failed = passed + ok, failed + (not ok)
    print(f"selftest: {passed} passed, {failed} failed", file=out, flush=True)
    return failed
