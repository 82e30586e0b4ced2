"""SAD batches (Context.stereo_sad_batch): each slice is exactly the single
call's on both backends, mixed dtypes are matched in float32, and bad
batches are refused before any work."""
from __future__ import annotations

import numpy as np
import pytest

import parvis


def pairs(count: int, dtype=np.uint8, shape=(32, 48)):
    rng = np.random.default_rng(5)
    lefts = [rng.integers(0, 256, shape).astype(dtype) for _ in range(count)]
    rights = [np.roll(l, -(1 + i % 3), axis=1) for i, l in enumerate(lefts)]
    return lefts, rights


@pytest.mark.parametrize("options", [{}, {"lr_check": True, "subpixel": True}])
def test_batch_equals_single_calls(ctx, options):
    lefts, rights = pairs(4)
    stack = ctx.stereo_sad_batch(lefts, rights, 8, **options)
    assert stack.shape == (4, 32, 48) and stack.dtype == np.float32
    for i, (l, r) in enumerate(zip(lefts, rights)):
        np.testing.assert_array_equal(stack[i], ctx.stereo_sad(l, r, 8, **options))


def test_mixed_dtypes_match_in_float32(cpu):
    lefts, rights = pairs(2)
    lefts[1] = lefts[1].astype(np.float32)
    rights[1] = rights[1].astype(np.float32)
    stack = cpu.stereo_sad_batch(lefts, rights, 8)
    np.testing.assert_array_equal(
        stack[0], cpu.stereo_sad(lefts[0].astype(np.float32), rights[0].astype(np.float32), 8))


def test_bad_batches(cpu):
    lefts, rights = pairs(3)
    with pytest.raises(parvis.InvalidArgument):
        cpu.stereo_sad_batch([], [], 8)
    with pytest.raises(parvis.InvalidArgument):
        cpu.stereo_sad_batch(lefts, rights[:2], 8)
    with pytest.raises(parvis.InvalidArgument):
        cpu.stereo_sad_batch(lefts[:2] + [lefts[2][:, :40]], rights[:2] + [rights[2][:, :40]], 8)
    with pytest.raises(parvis.InvalidArgument, match="pair 0"):
        cpu.stereo_sad_batch(lefts, rights, 64)  # more disparities than columns
    floats = [l.astype(np.float32) for l in lefts]
    floats[1][3, 3] = np.nan
    with pytest.raises(parvis.InvalidArgument, match="pair 1"):
        cpu.stereo_sad_batch(floats, [r.astype(np.float32) for r in rights], 8)
