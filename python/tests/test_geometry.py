"""RANSAC homography and fundamental matrix from Python: known answers on
synthetic matches with outliers (every backend), the CPU and OpenCL
backends giving the same model and inliers, bad input, and the command
line's model files and inlier columns."""
from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import parvis
from conftest import CLI, REPO

TRUTH_H = np.array([[1.078, -0.2185, 40.0], [0.2185, 1.078, -25.0], [1.2e-4, -0.8e-4, 1.0]])


def apply_h(h: np.ndarray, p: np.ndarray) -> np.ndarray:
    q = np.c_[p, np.ones(len(p))] @ h.T
    return q[:, :2] / q[:, 2:]


def homography_matches(n: int, outliers: float, seed: int):
    """Matches made by TRUTH_H (0.3 px noise) with a share of random outliers."""
    rng = np.random.default_rng(seed)
    p1 = rng.random((n, 2)) * [640, 480]
    p2 = apply_h(TRUTH_H, p1) + rng.normal(0, 0.3, (n, 2))
    bad = rng.random(n) < outliers
    p2[bad] = rng.random((bad.sum(), 2)) * [640, 480]
    return p1.astype(np.float32), p2.astype(np.float32), ~bad


def grid_error(h: np.ndarray) -> float:
    """Largest distance between h's and the truth's images of a grid over image 1."""
    g = np.stack(np.meshgrid(np.linspace(0, 640, 9), np.linspace(0, 480, 9)), -1).reshape(-1, 2)
    return float(np.max(np.hypot(*(apply_h(h, g) - apply_h(TRUTH_H, g)).T)))


def two_views(n: int, outliers: float, seed: int):
    """Two pinhole views of random points (0.3 px noise) with random outliers."""
    rng = np.random.default_rng(seed)
    k = np.array([[500.0, 0, 320], [0, 500, 240], [0, 0, 1]])
    a, b = 0.05, -0.15
    rx = np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])
    ry = np.array([[np.cos(b), 0, np.sin(b)], [0, 1, 0], [-np.sin(b), 0, np.cos(b)]])
    r, t = ry @ rx, np.array([-1.0, 0.2, 0.1])
    z = 4 + 6 * rng.random(n)
    x = np.c_[(rng.random(n) - 0.5) * z * 0.9, (rng.random(n) - 0.5) * z * 0.7, z]
    def project(points):
        q = points @ k.T
        return q[:, :2] / q[:, 2:]
    p1, clean2 = project(x), project(x @ r.T + t)
    p2 = clean2 + rng.normal(0, 0.3, (n, 2))
    bad = rng.random(n) < outliers
    p2[bad] = rng.random((bad.sum(), 2)) * [640, 480]
    return p1.astype(np.float32), p2.astype(np.float32), clean2, ~bad


def sampson(f: np.ndarray, p1: np.ndarray, p2: np.ndarray) -> np.ndarray:
    x1, x2 = np.c_[p1, np.ones(len(p1))], np.c_[p2, np.ones(len(p2))]
    fx1, ftx2 = x1 @ f.T, x2 @ f
    e = np.sum(x2 * fx1, axis=1)
    return np.abs(e) / np.sqrt(fx1[:, 0]**2 + fx1[:, 1]**2 + ftx2[:, 0]**2 + ftx2[:, 1]**2)


def test_homography_known_answer(ctx):
    p1, p2, truth = homography_matches(2000, 0.5, 3)
    r = parvis.find_homography(ctx, p1, p2)
    assert grid_error(r.model) < 1.0          # px, over the whole image
    assert r.inliers[truth].mean() >= 0.95
    assert r.inliers[~truth].mean() <= 0.01
    assert r.inlier_count == r.inliers.sum()
    assert r.model[2, 2] == 1.0  # the OpenCV / Oxford convention


def test_fundamental_known_answer(ctx):
    p1, p2, clean2, truth = two_views(1500, 0.3, 4)
    r = parvis.find_fundamental(ctx, p1, p2)
    residual = sampson(r.model, p1[truth], clean2[truth])
    assert residual.mean() < 0.5 and residual.max() < 2.0    # px
    assert r.inliers[truth].mean() >= 0.95
    s = np.linalg.svd(r.model, compute_uv=False)
    assert s[2] < 1e-6 * s[0]                                 # rank 2


@pytest.mark.parametrize("finder,make", [
    (parvis.find_homography, lambda: homography_matches(3000, 0.5, 5)[:2]),
    (parvis.find_fundamental, lambda: two_views(2000, 0.4, 6)[:2]),
])
def test_backends_agree(cpu, opencl, finder, make):
    p1, p2 = make()
    a = finder(cpu, p1, p2, confidence=1.0, iterations=700)
    b = finder(opencl, p1, p2, confidence=1.0, iterations=700)
    assert a.best_hypothesis == b.best_hypothesis
    assert a.hypotheses == b.hypotheses == 700
    np.testing.assert_array_equal(a.model, b.model)
    np.testing.assert_array_equal(a.inliers, b.inliers)


def test_matched_points_feed_the_finder(cpu):
    p1, p2, _ = homography_matches(300, 0.2, 7)
    k1 = np.c_[p1, np.ones((300, 2), np.float32)]
    k2 = np.c_[p2[::-1], np.ones((300, 2), np.float32)]
    pairs = np.c_[np.arange(300), np.arange(300)[::-1]].astype(np.int32)
    q1, q2 = parvis.matched_points(k1, k2, pairs)
    np.testing.assert_array_equal(q1, p1)
    np.testing.assert_array_equal(q2, p2)
    assert grid_error(parvis.find_homography(cpu, q1, q2).model) < 1.0


def test_bad_input(cpu):
    p1, p2, _ = homography_matches(50, 0.0, 8)
    with pytest.raises(parvis.InvalidArgument, match="at least 4"):
        parvis.find_homography(cpu, p1[:3], p2[:3])
    with pytest.raises(parvis.InvalidArgument, match="at least 8"):
        parvis.find_fundamental(cpu, p1[:7], p2[:7])
    line = np.c_[np.arange(50), 2 * np.arange(50) + 1].astype(np.float32)
    with pytest.raises(parvis.InvalidArgument, match="one line"):
        parvis.find_homography(cpu, line, p2)
    bad = p1.copy()
    bad[4, 1] = np.nan
    with pytest.raises(parvis.InvalidArgument, match="NaN"):
        parvis.find_fundamental(cpu, bad, p2)
    with pytest.raises(parvis.InvalidArgument):
        parvis.find_homography(cpu, p1, p2[:-1])
    with pytest.raises(parvis.InvalidArgument):
        parvis.find_homography(cpu, p1.ravel(), p2.ravel())
    with pytest.raises(parvis.InvalidArgument):
        parvis.find_homography(cpu, p1, p2, threshold=0)
    with pytest.raises(parvis.InvalidArgument):
        parvis.find_homography(cpu, p1, p2, confidence=2)
    with pytest.raises(parvis.InvalidArgument):
        parvis.find_homography("cpu", p1, p2)


@pytest.mark.skipif(not CLI.exists(), reason=f"no CLI at {CLI}")
def test_cli_writes_models_and_inlier_columns(tmp_path):
    j1, j2 = REPO / "tests/data/cli/tsukuba-left.jpg", REPO / "tests/data/cli/tsukuba-right.jpg"
    out, h_path, f_path = tmp_path / "m.txt", tmp_path / "H.txt", tmp_path / "F.txt"
    done = subprocess.run([str(CLI), "match", str(j1), str(j2), "-o", str(out), "--homography",
                           str(h_path), "--fundamental", str(f_path), "--json", "--backend",
                           "cpu"], capture_output=True, text=True)
    if done.returncode != 0 and "JPEG" in done.stderr:
        pytest.skip("CLI built without JPEG")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    rows = np.loadtxt(out, comments="#", ndmin=2)
    assert rows.shape == (report["matches"], 7)
    h, f = np.loadtxt(h_path), np.loadtxt(f_path)
    assert h.shape == f.shape == (3, 3)
    assert rows[:, 5].sum() == report["inliers_H"] and rows[:, 6].sum() == report["inliers_F"]
    # The flagged rows are within the default 2 px of the written models
    # (the file's 4-decimal coordinates move them by at most 1e-4 px).
    inl_h, inl_f = rows[:, 5] == 1, rows[:, 6] == 1
    err = np.hypot(*(apply_h(h, rows[inl_h, :2]) - rows[inl_h, 2:4]).T)
    assert err.max() < 2.001
    assert sampson(f, rows[inl_f, :2], rows[inl_f, 2:4]).max() < 2.001
