"""A stream of semi-global matching pairs through Python
(Context.stereo_sgm_batch): each slice exactly stereo_sgm's on both
backends, CPU against OpenCL (integer disparities identical, confidence
within 1e-5, stereo.h), and bad batches refused before any work."""
from __future__ import annotations

import numpy as np
import pytest

import parvis

CONFIDENCE_TOLERANCE = 1e-5


def shifted_pairs(count, width=64, height=32, seed=3):
    """count random-dot pairs, pair i's left column x showing right's x - d
    for d = 4 + i % 3."""
    rng = np.random.default_rng(seed)
    lefts, rights = [], []
    for i in range(count):
        d = 4 + i % 3
        base = rng.integers(0, 256, (height, width + d), dtype=np.uint8)
        lefts.append(base[:, :width].copy())
        rights.append(base[:, d:].copy())
    return lefts, rights


@pytest.mark.parametrize("options", [{}, {"median": True, "paths": 4, "subpixel": False}])
def test_batch_equals_single_calls(ctx, options):
    lefts, rights = shifted_pairs(3)
    disps, confs = ctx.stereo_sgm_batch(lefts, rights, ndisp=16, confidence=True, **options)
    assert disps.shape == (3, 32, 64) and disps.dtype == np.float32
    assert confs.shape == disps.shape
    for i in range(3):
        d, c = ctx.stereo_sgm(lefts[i], rights[i], ndisp=16, confidence=True, **options)
        assert np.array_equal(disps[i], d, equal_nan=True)
        assert np.array_equal(confs[i], c)
    # the true shift is found inside the census window's reach of the borders
    assert np.all(np.rint(disps[1][4:-4, 12:-5]) == 5)


def test_stack_input_and_no_confidence(ctx):
    lefts, rights = shifted_pairs(2, seed=8)
    disps = ctx.stereo_sgm_batch(np.stack(lefts), np.stack(rights), ndisp=16, subpixel=False)
    assert isinstance(disps, np.ndarray) and disps.shape == (2, 32, 64)
    assert np.array_equal(disps[0], ctx.stereo_sgm(lefts[0], rights[0], ndisp=16,
                                                   subpixel=False))


def test_cpu_and_opencl_identical_integers(cpu, opencl):
    lefts, rights = shifted_pairs(3, seed=5)
    a, ca = cpu.stereo_sgm_batch(lefts, rights, ndisp=16, subpixel=False, confidence=True)
    b, cb = opencl.stereo_sgm_batch(lefts, rights, ndisp=16, subpixel=False, confidence=True)
    assert np.array_equal(a, b)
    assert np.max(np.abs(ca - cb)) <= CONFIDENCE_TOLERANCE


def test_bad_batches(cpu):
    lefts, rights = shifted_pairs(3)
    with pytest.raises(parvis.InvalidArgument, match="empty"):
        cpu.stereo_sgm_batch([], [])
    with pytest.raises(parvis.InvalidArgument, match="rights"):
        cpu.stereo_sgm_batch(lefts, rights[:2])
    small = [lefts[0], lefts[1][:, :40], lefts[2]]
    with pytest.raises(parvis.InvalidArgument, match=r"lefts\[1\]"):
        cpu.stereo_sgm_batch(small, [rights[0], rights[1][:, :40], rights[2]])
    with pytest.raises(parvis.InvalidArgument, match="ndisp"):
        cpu.stereo_sgm_batch(lefts, rights, ndisp=0)
    with pytest.raises(TypeError):
        cpu.stereo_sgm_batch(lefts, rights, out=np.empty((3, 32, 64), np.float32))
