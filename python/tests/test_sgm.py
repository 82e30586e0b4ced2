"""Semi-global matching through Python: known answers on random-dot pairs,
the input types, CPU against OpenCL (stereo.h: integer disparities
identical on every pixel, sub-pixel values within PV_TOL_SGM_SUBPIXEL, the
confidence within 1e-5), the bundled motorcycle pair's accuracy, and every
refusal raising InvalidArgument."""
from __future__ import annotations

import numpy as np
import pytest

import parvis
from conftest import STEREO

# stereo.h's PV_TOL_SGM_SUBPIXEL is not exported to Python; the sub-pixel
# comparison uses this bound, which that tolerance must stay below.
SUBPIXEL_TOLERANCE = 1e-3
CONFIDENCE_TOLERANCE = 1e-5


def random_dots(width, height, disparity, seed=11):
    """A random-dot pair whose every left pixel at column x >= disparity
    is right's pixel at x - disparity."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, (height, width + disparity), dtype=np.uint8)
    return base[:, :width].copy(), base[:, disparity:].copy()


def square_scene(width=96, height=64, background=4, square=12, seed=7):
    """Random dots at `background` disparity with a square in front of them at
    `square`: a pair with a depth edge and known disparities (the truth)."""
    rng = np.random.default_rng(seed)
    far = rng.integers(0, 256, (height, width + 64), dtype=np.uint8)
    near = rng.integers(0, 256, (height, width + 64), dtype=np.uint8)
    truth = np.full((height, width), float(background), np.float32)
    left = far[:, 32:32 + width].copy()
    right = far[:, 32 + background:32 + background + width].copy()
    y0, y1, x0, x1 = height // 4, 3 * height // 4, width // 3, 2 * width // 3
    left[y0:y1, x0:x1] = near[y0:y1, x0:x1]
    right[y0:y1, x0 - square:x1 - square] = near[y0:y1, x0:x1]
    truth[y0:y1, x0:x1] = square
    return left, right, truth


def test_uniform_disparity_integer(ctx):
    d = 6
    left, right = random_dots(80, 40, d)
    disp = ctx.stereo_sgm(left, right, ndisp=16, subpixel=False)
    assert disp.dtype == np.float32 and disp.shape == left.shape
    # inside the census window's reach of the borders and past the columns
    # with no match, every pixel has the shift
    assert np.all(disp[4:-4, d + 5:-5] == d)
    # columns 0..d-1 have no true match: whatever survives there is finite or inf
    assert np.all(np.isfinite(disp) | np.isinf(disp))


def test_uniform_disparity_subpixel_and_confidence(ctx):
    d = 5
    left, right = random_dots(80, 40, d, seed=2)
    disp, conf = ctx.stereo_sgm(left, right, ndisp=16, confidence=True)
    inner = disp[4:-4, d + 5:-5]
    assert np.all(np.abs(inner - d) < 0.5)
    assert conf.dtype == np.float32 and conf.shape == left.shape
    assert np.all((conf >= 0) & (conf <= 1))
    assert np.all(conf[~np.isfinite(disp)] == 0)
    assert np.median(conf[4:-4, d + 5:-5]) > 0.1


def test_square_scene(ctx):
    left, right, truth = square_scene()
    disp = ctx.stereo_sgm(left, right, ndisp=24, paths=4, subpixel=False)
    known = np.isfinite(disp)
    inner = np.zeros_like(known)
    inner[4:-4, 16:-4] = True
    # the depth edges and the occlusion beside the square may be invalid or
    # off; the rest is exact
    assert np.mean(disp[inner & known] == truth[inner & known]) > 0.93   # measured 0.96
    assert np.mean(known[inner]) > 0.8


def test_min_disp_leaves_columns_without_candidates_invalid(ctx):
    left, right = random_dots(60, 24, 12)
    disp = ctx.stereo_sgm(left, right, ndisp=8, min_disp=10)
    assert np.all(np.isinf(disp[:, :10]))


def test_pixel_types_give_the_same_disparities(cpu):
    # the census compares intensities, so any increasing map of them gives
    # the same costs: uint8, uint16 (x 257) and float32 views agree exactly
    left, right = random_dots(72, 32, 7, seed=4)
    a = cpu.stereo_sgm(left, right, ndisp=16)
    b = cpu.stereo_sgm(left.astype(np.uint16) * 257, right.astype(np.uint16) * 257, ndisp=16)
    c = cpu.stereo_sgm(left.astype(np.float32) / 255, right.astype(np.float32) / 255, ndisp=16)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


def test_out_is_written_in_place(cpu):
    left, right = random_dots(48, 24, 3)
    out = np.zeros(left.shape, np.float32)
    result = cpu.stereo_sgm(left, right, ndisp=8, out=out)
    assert result is out
    assert np.any(out != 0)


@pytest.mark.parametrize("options", [
    {"subpixel": False},
    {"subpixel": False, "paths": 4, "census": (5, 5), "census_symmetric": False},
    {"subpixel": False, "p2_adaptive": True, "median": True, "uniqueness": 1.0},
    {"subpixel": False, "lr_check": False, "census": (7, 7), "p1": 5, "p2": 60},
    {"subpixel": False, "aggregation": "sum"},
    {"subpixel": False, "paths": 4, "p2_adaptive": True, "aggregation": "sum"},
])
def test_cpu_and_opencl_identical_integers(cpu, opencl, options):
    left, right, _ = square_scene(seed=3)
    a, ca = cpu.stereo_sgm(left, right, ndisp=24, confidence=True, **options)
    b, cb = opencl.stereo_sgm(left, right, ndisp=24, confidence=True, **options)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(ca, cb, rtol=0, atol=CONFIDENCE_TOLERANCE)


def test_cpu_and_opencl_subpixel(cpu, opencl):
    left, right, _ = square_scene(seed=9)
    a = cpu.stereo_sgm(left, right, ndisp=24)
    b = opencl.stereo_sgm(left, right, ndisp=24)
    assert np.array_equal(np.isfinite(a), np.isfinite(b))
    finite = np.isfinite(a)
    assert np.max(np.abs(a[finite] - b[finite])) <= SUBPIXEL_TOLERANCE


def test_motorcycle_accuracy(cpu):
    """The bundled quarter-size Middlebury 2014 pair: bad > 2 px with invalid
    pixels counted bad and a 10 px border, as tests/data/stereo/README.md
    quotes libSGM (14.59 %) and OpenCV StereoSGBM (17.49 %)."""
    left = parvis.imread(STEREO / "motorcycle" / "left.pgm")
    right = parvis.imread(STEREO / "motorcycle" / "right.pgm")
    truth = parvis.imread(STEREO / "motorcycle" / "gt.pfm", dtype=np.float32)
    disp = cpu.stereo_sgm(left, right, ndisp=64)
    bad = parvis.disparity_error(disp, truth, gt_scale=1, threshold=2, border=10)
    assert bad < 0.20   # measured 15.39 %


@pytest.mark.parametrize("options, message", [
    ({"ndisp": 0}, "ndisp"),
    ({"ndisp": 49}, "ndisp"),
    ({"ndisp": 8.5}, "ndisp"),
    ({"census": (8, 8)}, "census"),
    ({"census": 9}, "census"),
    ({"paths": 6}, "paths"),
    ({"p1": -1}, "p1"),
    ({"p1": 20, "p2": 10}, "p2"),
    ({"uniqueness": 0.0}, "uniqueness"),
    ({"uniqueness": 1.5}, "uniqueness"),
    ({"lr_max_diff": -1}, "lr_max_diff"),
    ({"memory_budget": -1}, "memory_budget"),
    ({"aggregation": "stripes"}, "aggregation"),
    ({"out": np.zeros((24, 48), np.float64)}, "out"),
    ({"out": np.zeros((48, 24), np.float32)}, "out"),
])
def test_bad_arguments(cpu, options, message):
    left, right = random_dots(48, 24, 3)
    with pytest.raises(parvis.InvalidArgument, match=message):
        cpu.stereo_sgm(left, right, **{"ndisp": 8, **options})


def test_bad_images(cpu):
    left, right = random_dots(48, 24, 3)
    with pytest.raises(parvis.InvalidArgument, match=r"\(rows, columns\)"):
        cpu.stereo_sgm(left, right[:, :40], ndisp=8)
    with pytest.raises(parvis.InvalidArgument, match="2D"):
        cpu.stereo_sgm(np.stack([left, left], axis=2), right, ndisp=8)
    with pytest.raises(parvis.InvalidArgument, match="empty"):
        cpu.stereo_sgm(left[:0], right[:0], ndisp=1)
    nan = left.astype(np.float32)
    nan[3, 3] = np.nan
    with pytest.raises(parvis.InvalidArgument, match="finite"):
        cpu.stereo_sgm(nan, right.astype(np.float32), ndisp=8)
    with pytest.raises(parvis.InvalidArgument, match="dtype"):
        cpu.stereo_sgm(left.astype(np.complex64), right, ndisp=8)
