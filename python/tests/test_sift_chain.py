"""The SIFT chain from Python: Context.sift_match_images, SiftPlan.match_images,
track_next and track_reset (pv_sift_match_images, pv_sift_track_next).

Known answer: a crop of the Venus image and a turned (0.12 rad), scaled
(0.92), shifted copy; the model maps the frame's corners within 1 px of the
truth.  The chain equals sift() + match() + find_homography() with the same
parameters (the same inlier pairs and model to 1e-12).  Tracking over three
frames: no model for the first, then each step's model equal to
match_images(previous, frame)'s.  Bad input: shapes, parameters, a
featureless frame.  192 x 160 frames keep it quick on PoCL."""
from __future__ import annotations

import numpy as np
import pytest

import parvis
from conftest import STEREO

H, W = 160, 192


def _venus() -> np.ndarray:
    return np.asarray(parvis.imread(STEREO / "venus" / "left.pgm"), np.float64)


def _motion(scale: float, angle: float, dx: float, dy: float) -> np.ndarray:
    """The similarity about the frame's centre, then a shift, as a 3 x 3 H."""
    c, s = scale * np.cos(angle), scale * np.sin(angle)
    cx, cy = 0.5 * (W - 1), 0.5 * (H - 1)
    return np.array([[c, -s, cx + dx - c * cx + s * cy],
                     [s, c, cy + dy - s * cx - c * cy],
                     [0.0, 0.0, 1.0]])


def _frame(venus: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Venus from (100, 90) seen through h (bilinear, zero outside), as uint8."""
    v, u = np.mgrid[0:H, 0:W].astype(np.float64)
    inverse = np.linalg.inv(h)
    x = inverse[0, 0] * u + inverse[0, 1] * v + inverse[0, 2] + 100.0
    y = inverse[1, 0] * u + inverse[1, 1] * v + inverse[1, 2] + 90.0
    x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
    fx, fy = x - x0, y - y0
    rows, cols = venus.shape

    def at(yy: np.ndarray, xx: np.ndarray) -> np.ndarray:
        inside = (xx >= 0) & (yy >= 0) & (xx < cols) & (yy < rows)
        return np.where(inside, venus[np.clip(yy, 0, rows - 1), np.clip(xx, 0, cols - 1)], 0.0)

    value = ((at(y0, x0) * (1 - fx) + at(y0, x0 + 1) * fx) * (1 - fy)
             + (at(y0 + 1, x0) * (1 - fx) + at(y0 + 1, x0 + 1) * fx) * fy)
    return np.clip(value + 0.5, 0, 255).astype(np.uint8)


def _corner_error(estimate: np.ndarray, truth: np.ndarray) -> float:
    corners = np.array([[0, 0, 1], [W - 1, 0, 1], [0, H - 1, 1], [W - 1, H - 1, 1]], float).T
    a, b = estimate @ corners, truth @ corners
    return float(np.max(np.hypot(*(a[:2] / a[2] - b[:2] / b[2]))))


@pytest.fixture(scope="module")
def pair():
    venus = _venus()
    truth = _motion(0.92, 0.12, 6.0, -4.0)
    return _frame(venus, np.eye(3)), _frame(venus, truth), truth


def test_known_answer(ctx, pair):
    a, b, truth = pair
    r = ctx.sift_match_images(a, b)
    assert isinstance(r, parvis.SiftChainResult)
    assert r.model is not None and r.model[2, 2] == 1.0
    assert _corner_error(r.model, truth) < 1.0
    assert r.inlier_count >= 20 and r.inlier_count <= r.matches
    assert r.pairs.shape == (r.inlier_count, 2) and r.pairs.dtype == np.int32
    assert r.points1.shape == r.points2.shape == (r.inlier_count, 2)
    q = truth @ np.vstack([r.points1.T, np.ones(r.inlier_count)])
    assert np.max(np.hypot(*(q[:2] / q[2] - r.points2.T))) < 3.0
    assert np.all(np.diff(r.pairs[:, 0]) > 0)


@pytest.mark.parametrize("mutual", [False, True])
def test_equals_composed_calls(ctx, pair, mutual):
    a, b, _ = pair
    r = ctx.sift_match_images(a, b, match={"mutual": mutual}, ransac={"seed": 7})
    f1, f2 = ctx.sift(a, descriptor_dtype=np.float32), ctx.sift(b, descriptor_dtype=np.float32)
    m = ctx.match(f1.descriptors, f2.descriptors, mutual=mutual)
    p1, p2 = parvis.matched_points(f1.keypoints, f2.keypoints, m.pairs)
    g = parvis.find_homography(ctx, p1, p2, seed=7)
    assert (r.keypoints1, r.keypoints2, r.matches) == (len(f1.keypoints), len(f2.keypoints),
                                                       len(m.pairs))
    np.testing.assert_allclose(r.model, g.model, rtol=1e-12, atol=1e-12)
    assert r.inlier_count == g.inlier_count and r.hypotheses == g.hypotheses
    np.testing.assert_array_equal(r.pairs, m.pairs[g.inliers])
    np.testing.assert_array_equal(r.points1, p1[g.inliers])
    np.testing.assert_array_equal(r.distances, m.distances[g.inliers])


def test_tracking(ctx):
    venus = _venus()
    path = [_motion(1.0 - 0.02 * i, 0.04 * i, 3.0 * i, -2.0 * i) for i in range(3)]
    frames = [_frame(venus, h) for h in path]
    ransac = {"seed": 5}  # other than the default, passed to both calls
    with ctx.sift_plan((H, W)) as plan, ctx.sift_plan((H, W)) as pairs:
        first = plan.track_next(frames[0], ransac=ransac)
        assert first.model is None and first.keypoints2 > 0 and first.inlier_count == 0
        for i in range(1, 3):
            r = plan.track_next(frames[i], ransac=ransac)
            step = path[i] @ np.linalg.inv(path[i - 1])
            assert _corner_error(r.model, step) < 1.0
            same = pairs.match_images(frames[i - 1], frames[i], ransac=ransac)
            np.testing.assert_allclose(r.model, same.model, rtol=1e-12, atol=1e-12)
            np.testing.assert_array_equal(r.pairs, same.pairs)
        plan.track_reset()
        assert plan.track_next(frames[2], ransac=ransac).model is None


def test_bad_input(cpu, pair):
    a, b, _ = pair
    with cpu.sift_plan((H, W)) as plan:
        with pytest.raises(parvis.InvalidArgument, match="image2"):
            plan.match_images(a, b[:-8])
        with pytest.raises(parvis.InvalidArgument):
            plan.match_images(a, b, match={"ratio": -1.0})
        with pytest.raises(parvis.InvalidArgument):
            plan.match_images(a, b, ransac={"threshold": 0.0})
        with pytest.raises(TypeError):
            plan.match_images(a, b, ransac={"thresh": 1.0})
        flat = np.full((H, W), 90, np.uint8)
        with pytest.raises(parvis.InvalidArgument, match="at least 4"):
            plan.match_images(a, flat)
        with pytest.raises(parvis.InvalidArgument, match="frame"):
            plan.track_next(b[:, :-8])
