"""Arrays reach the C library without copies where the layout allows, and
results land in the caller's `out=` arrays in place."""
from __future__ import annotations

import numpy as np
import pytest

import parvis
from parvis import _arrays
from parvis._native import ffi


def address(cdata):
    return int(ffi.cast("uintptr_t", cdata))


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_contiguous_image_not_copied(dtype):
    a = np.zeros((30, 40), dtype)
    arr, s = _arrays.image_in(a, "a")
    assert arr is a
    assert address(s.data) == a.ctypes.data
    assert (s.width, s.height, s.stride) == (40, 30, 40)


def test_row_strided_view_not_copied():
    big = np.zeros((50, 70), np.float32)
    view = big[5:35, 10:50]
    arr, s = _arrays.image_in(view, "view")
    assert arr is view
    assert address(s.data) == view.ctypes.data
    assert s.stride == 70 and (s.width, s.height) == (40, 30)


def test_volume_view_not_copied():
    big = np.zeros((10, 20, 30), np.float32)
    view = big[2:8, 3:17, 4:24]
    arr, s = _arrays.volume_in(view, "view")
    assert arr is view
    assert address(s.data) == view.ctypes.data
    assert (s.nx, s.ny, s.nz, s.stride_y, s.stride_z) == (20, 14, 6, 30, 600)


@pytest.mark.parametrize("make", [
    lambda: np.zeros((40, 30), np.float32).T,            # columns not contiguous
    lambda: np.zeros((30, 40), np.float32)[::-1],        # negative row stride
    lambda: np.zeros((30, 40), np.float64),              # other dtype
    lambda: np.zeros((30, 40), np.uint16),
])
def test_other_layouts_copied_once(make):
    a = make()
    arr, s = _arrays.image_in(a, "a")
    assert arr is not a and arr.flags.c_contiguous
    assert arr.dtype in (np.uint8, np.float32)
    assert address(s.data) == arr.ctypes.data


def test_strided_view_gives_the_copy_result(cpu):
    rng = np.random.default_rng(0)
    big_l = rng.integers(0, 255, (60, 90), dtype=np.uint8)
    big_r = rng.integers(0, 255, (60, 90), dtype=np.uint8)
    view_l, view_r = big_l[5:50, 7:80], big_r[5:50, 7:80]
    np.testing.assert_array_equal(cpu.stereo_sad(view_l, view_r, 8),
                                  cpu.stereo_sad(view_l.copy(), view_r.copy(), 8))
    v = rng.random((12, 14, 16)).astype(np.float32)
    big = np.zeros((14, 18, 20), np.float32)
    big[1:13, 2:16, 3:19] = v
    np.testing.assert_array_equal(cpu.gaussian_blur(big[1:13, 2:16, 3:19], 1.0),
                                  cpu.gaussian_blur(v, 1.0))


def test_out_written_in_place(cpu):
    left = np.random.default_rng(1).integers(0, 255, (24, 40), dtype=np.uint8)
    out = np.full((24, 40), -5.0, np.float32)
    res = cpu.stereo_sad(left, left, 4, out=out)
    assert res is out and np.all(out == 0)
    big = np.full((30, 50), -1.0, np.float32)
    region = big[3:27, 5:45]
    res = cpu.gaussian_blur(left, 1.0, out=region)
    assert res is region
    assert np.all(big[:3] == -1) and np.all(big[:, :5] == -1)
    np.testing.assert_array_equal(region, cpu.gaussian_blur(left, 1.0))


def test_results_are_fresh_arrays(cpu):
    img = np.ones((20, 20), np.float32)
    a = cpu.gaussian_blur(img, 1.0)
    b = cpu.gaussian_blur(img, 1.0)
    assert not np.shares_memory(a, b) and not np.shares_memory(a, img)
    kp, desc = cpu.sift(np.random.default_rng(2).integers(0, 255, (64, 64), np.uint8))
    assert kp.flags.owndata or kp.base is None or kp.flags.c_contiguous
