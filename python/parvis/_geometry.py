"""Robust two-view geometry: RANSAC homography and fundamental matrix.

    f1, f2 = ctx.sift(image1), ctx.sift(image2)
    m = ctx.match(f1.descriptors, f2.descriptors)
    p1, p2 = f1.keypoints[m.pairs[:, 0], :2], f2.keypoints[m.pairs[:, 1], :2]
    h = parvis.find_homography(ctx, p1, p2, threshold=2.0)
    print(h.model, h.inlier_count)

The C library's pv_find_homography / pv_find_fundamental underneath (see
docs/geometry.md): the CPU and OpenCL backends draw the same samples and
pick the same model.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, NamedTuple, Tuple

import numpy as np

from . import _arrays as A
from ._context import Context
from ._convert import c_seed
from ._errors import invalid
from ._native import ffi, lib
from ._params import declared_keywords, make

ArrayLike = Any

#: Matches in a minimal sample: 4 for a homography, 8 for a fundamental matrix.
HOMOGRAPHY_SAMPLE: int = int(lib.PV_HOMOGRAPHY_SAMPLE)
FUNDAMENTAL_SAMPLE: int = int(lib.PV_FUNDAMENTAL_SAMPLE)


class GeometryResult(NamedTuple):
    """A RANSAC model.

    model: (3, 3) float64; a homography scaled so that model[2, 2] == 1, as
    OpenCV's findHomography and the Oxford sets write it (unit Frobenius
    norm instead where |model[2, 2]| is at most 1e-9 of the norm); a
    fundamental matrix of unit Frobenius norm, its largest |entry| positive.  A homography maps image 1 to image 2 (x2 ~ H x1); a
    fundamental matrix has x2^T F x1 = 0.  inliers: (N,) bool, the matches
    within the threshold of the model; inlier_count: their number;
    hypotheses: hypotheses scored before the stop; best_hypothesis: the
    winning sample's index."""
    model: np.ndarray
    inliers: np.ndarray
    inlier_count: int
    hypotheses: int
    best_hypothesis: int


def _points(a: ArrayLike, name: str) -> np.ndarray:
    p = np.ascontiguousarray(A.plain(a, name), dtype=np.float32)
    if p.ndim != 2 or p.shape[1] != 2:
        raise invalid(f"{name}: expected an (N, 2) array of x, y, got shape {p.shape}")
    return p


def _params(params: Dict[str, Any]) -> Any:
    """A pv_ransac_params* from the declared keywords (`parvis params
    ransac`); a seed is taken modulo 2**64 (any integer is a valid seed: it
    only needs to be reproducible)."""
    if "seed" in params:
        params = dict(params, seed=c_seed(params["seed"], "seed", 64))
    return make("ransac", params)


def _find(fn: Callable[..., int], ctx: Context, points1: ArrayLike, points2: ArrayLike,
          params: Any) -> GeometryResult:
    if not isinstance(ctx, Context):
        raise invalid(f"ctx: expected a parvis.Context, got {type(ctx).__name__}")
    p1, p2 = _points(points1, "points1"), _points(points2, "points2")
    if p1.shape != p2.shape:
        raise invalid(f"points1 {p1.shape} and points2 {p2.shape} differ in shape")
    n = p1.shape[0]
    result = ffi.new("pv_geometry_result *")
    mask = np.zeros(max(n, 1), np.uint8)
    ctx._call(fn, ffi.from_buffer("float[]", p1), ffi.from_buffer("float[]", p2), n, params,
              result, ffi.from_buffer("uint8_t[]", mask))
    model = np.array(list(result.model), dtype=np.float64).reshape(3, 3)
    return GeometryResult(model, mask[:n].astype(bool), int(result.inlier_count),
                          int(result.hypotheses), int(result.best_hypothesis))


@declared_keywords("ransac")
def find_homography(ctx: Context, points1: ArrayLike, points2: ArrayLike,
                    **params: Any) -> GeometryResult:
    """The homography H mapping points1 to points2 (both (N, 2) x, y in
    pixels, N >= 4), by RANSAC on ctx's backend: inliers are matches whose
    transfer error |H x1 - x2| is below threshold px; up to `iterations`
    hypotheses, fewer once `confidence` is reached (1 runs them all); the
    winner refined by least squares on its inliers unless refine=False.
    Raises parvis.InvalidArgument for fewer than 4 matches, NaN/Inf, or
    degenerate (collinear) point sets."""
    return _find(lib.pv_find_homography, ctx, points1, points2,
                 _params(params))


@declared_keywords("ransac")
def find_fundamental(ctx: Context, points1: ArrayLike, points2: ArrayLike,
                     **params: Any) -> GeometryResult:
    """The fundamental matrix F of matches points1 <-> points2 (x2^T F x1 =
    0; N >= 8), by RANSAC as find_homography, with the Sampson distance as
    the inlier distance; the refined F has rank 2."""
    return _find(lib.pv_find_fundamental, ctx, points1, points2,
                 _params(params))


def matched_points(keypoints1: np.ndarray, keypoints2: np.ndarray,
                   pairs: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The x, y of each match: keypoints as SiftFeatures.keypoints, pairs as
    Matches.pairs (query index into keypoints1, train index into keypoints2)."""
    k1, k2 = A.plain(keypoints1, "keypoints1"), A.plain(keypoints2, "keypoints2")
    p = A.plain(pairs, "pairs")
    if p.ndim != 2 or p.shape[1] != 2:
        raise invalid(f"pairs: expected an (M, 2) array, got shape {p.shape}")
    return (np.ascontiguousarray(k1[p[:, 0], :2], np.float32),
            np.ascontiguousarray(k2[p[:, 1], :2], np.float32))
