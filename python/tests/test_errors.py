"""Bad input: each a clear exception (never a crash), outputs untouched."""
from __future__ import annotations

import numpy as np
import pytest

import parvis
from parvis._native import lib

U8 = np.zeros((20, 30), np.uint8)


def test_error_classes():
    assert issubclass(parvis.InvalidArgument, ValueError)
    assert issubclass(parvis.InvalidArgument, parvis.Error)
    with pytest.raises(parvis.InvalidArgument) as info:
        parvis.Context("cpu").stereo_sad(U8, U8, ndisp=0)
    err = info.value
    assert err.status == lib.PV_ERR_INVALID and err.status_name
    assert "ndisp" in err.message


@pytest.mark.parametrize("left, right, why", [
    (np.zeros((4, 5, 6), np.uint8), np.zeros((4, 5, 6), np.uint8), "2D"),
    (np.zeros(10, np.uint8), np.zeros(10, np.uint8), "2D"),
    (np.zeros((0, 5), np.uint8), np.zeros((0, 5), np.uint8), "empty"),
    (np.zeros((5, 5), complex), np.zeros((5, 5), complex), "dtype"),
    (np.zeros((5, 5), bool), np.zeros((5, 5), bool), "dtype"),
    (np.array([["a"]]), np.array([["a"]]), "dtype"),
    (U8, np.zeros((20, 31), np.uint8), "size"),
])
def test_stereo_bad_arrays(cpu, left, right, why):
    with pytest.raises(parvis.InvalidArgument):
        cpu.stereo_sad(left, right, 4)


def test_bad_parameters(cpu):
    with pytest.raises(parvis.InvalidArgument, match="window"):
        cpu.stereo_sad(U8, U8, 4, window=4)
    with pytest.raises(parvis.InvalidArgument):
        cpu.stereo_bp(U8, U8, 4, lambda_=-1)
    with pytest.raises(parvis.InvalidArgument):
        cpu.stereo_bp(U8, U8, 4, lambda_=float("nan"))
    with pytest.raises(parvis.InvalidArgument, match="expected an integer"):
        cpu.stereo_sad(U8, U8, 4.5)
    with pytest.raises(parvis.InvalidArgument, match="pad"):
        cpu.phase_correlate(U8, U8, pad="mirror")
    with pytest.raises(parvis.InvalidArgument, match="backend"):
        parvis.Context("cuda")
    with pytest.raises(parvis.InvalidArgument):
        cpu.gaussian_blur(U8, sigma=0)
    with pytest.raises(parvis.InvalidArgument):
        cpu.gradients(U8, scheme="sobel")


def test_nan_refused_where_c_refuses(cpu):
    a = np.random.default_rng(0).random((32, 32)).astype(np.float32)
    b = a.copy()
    b[3, 4] = np.nan
    with pytest.raises(parvis.InvalidArgument):
        cpu.phase_correlate(a, b)
    with pytest.raises(parvis.InvalidArgument):
        cpu.sift(b)
    v = np.random.default_rng(1).random((8, 16, 16)).astype(np.float32)
    w = v.copy()
    w[1, 2, 3] = np.inf
    with pytest.raises(parvis.InvalidArgument):
        cpu.flow3d(v, w, kernel_size=3)
    s = parvis.synthesize_oct((40, 48, 64))
    t = s.target.copy()
    t[5, 5, 5] = np.nan
    with pytest.raises(parvis.InvalidArgument):
        cpu.octreg(s.reference, t)


def test_out_untouched_on_error(cpu):
    out = np.full((20, 30), 42.0, np.float32)
    with pytest.raises(parvis.InvalidArgument):
        cpu.stereo_sad(U8, U8, 4, window=2, out=out)
    assert np.all(out == 42.0)
    with pytest.raises(parvis.InvalidArgument):
        cpu.stereo_bp(U8, U8, 1, out=out)
    assert np.all(out == 42.0)
    with pytest.raises(parvis.InvalidArgument):
        cpu.gaussian_blur(U8, float("nan"), out=out)
    assert np.all(out == 42.0)


@pytest.mark.parametrize("out, why", [
    (np.zeros((20, 30), np.float64), "dtype"),
    (np.zeros((21, 30), np.float32), "shape"),
    (np.zeros((30, 20), np.float32).T, "layout"),
    ("not an array", "numpy"),
])
def test_bad_out_refused(cpu, out, why):
    with pytest.raises(parvis.InvalidArgument, match=why):
        cpu.stereo_sad(U8, U8, 4, out=out)


def test_out_read_only_and_aliasing(cpu):
    ro = np.zeros((20, 30), np.float32)
    ro.flags.writeable = False
    with pytest.raises(parvis.InvalidArgument, match="read-only"):
        cpu.stereo_sad(U8, U8, 4, out=ro)
    img = np.ones((20, 30), np.float32)
    with pytest.raises(parvis.InvalidArgument, match="shares memory"):
        cpu.gaussian_blur(img, 1.0, out=img)


def test_plan_shape_mismatch(cpu):
    ref = np.random.default_rng(0).random((16, 16)).astype(np.float32)
    with cpu.phasecorr_plan(ref) as plan:
        with pytest.raises(parvis.InvalidArgument, match="differs"):
            plan.correlate(np.zeros((16, 17), np.float32))
        with pytest.raises(parvis.InvalidArgument, match="empty"):
            plan.correlate_many([])
    with cpu.sift_plan((32, 32)) as sp:
        with pytest.raises(parvis.InvalidArgument, match="differs"):
            sp.detect(np.zeros((32, 33), np.uint8))
        with pytest.raises(parvis.InvalidArgument, match="descriptor_dtype"):
            sp.detect(np.zeros((32, 32), np.uint8), descriptor_dtype=np.int16)


def test_match_bad_descriptors(cpu):
    with pytest.raises(parvis.InvalidArgument, match="128"):
        cpu.match(np.zeros((4, 64), np.uint8), np.zeros((4, 128), np.uint8))
    with pytest.raises(parvis.InvalidArgument, match="no descriptors"):
        cpu.match(np.zeros((0, 128), np.uint8), np.zeros((4, 128), np.uint8))
    with pytest.raises(parvis.InvalidArgument):
        cpu.match(np.zeros((3, 128), np.uint8), np.zeros((3, 128), np.uint8), ratio=1.5)


def test_sift_too_small(cpu):
    with pytest.raises(parvis.InvalidArgument):
        cpu.sift(np.zeros((8, 8), np.uint8))


def test_file_errors(tmp_path):
    with pytest.raises(parvis.FileError):
        parvis.imread(tmp_path / "missing.pgm")
    bad = tmp_path / "bad.pgm"
    bad.write_bytes(b"P5\n10 10\n255\nshort")
    with pytest.raises(parvis.FormatError):
        parvis.imread(bad)
    with pytest.raises(parvis.FormatError):
        parvis.read_volume(bad, shape=(2, 2, 2))
    with pytest.raises(parvis.InvalidArgument):
        parvis.imread(bad, dtype=np.int32)
