"""Masked phase correlation (Context.phase_correlate_masked): a known
shift through a masked-out fixed pattern, the declared overlap_ratio
keyword, and agreement with scikit-image's masked phase_cross_correlation
(skipped when scikit-image is not installed)."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import parvis
from conftest import texture


def shifted_pair(shape, shift, seed=0):
    """reference and moving = reference displaced by shift (x first), cut
    from one larger texture, so no wrap-around."""
    m = max(abs(s) for s in shift) + 1
    big = texture(tuple(n + 2 * m for n in shape), seed=seed)
    ref_index = tuple(slice(m, m + n) for n in shape)
    # moving(p) = big(p + m - shift): the shift is given x first, axes are (.., y, x).
    d = list(reversed(shift))
    mov_index = tuple(slice(m - s, m - s + n) for s, n in zip(d, shape))
    return big[ref_index].copy(), big[mov_index].copy()


def test_known_shift_through_mask(ctx):
    ref, mov = shifted_pair((40, 48), (5, -3), seed=1)
    pattern = np.where(np.indices((12, 12)).sum(axis=0) % 2 == 1, 20.0, -20.0)
    ref[14:26, 20:32] += pattern
    mov[14:26, 20:32] += pattern
    mask = np.ones(ref.shape, dtype=bool)
    whole = ctx.phase_correlate_masked(ref, mov, mask)
    assert list(whole.shift) == [0, 0]
    mask[14:26, 20:32] = False
    r = ctx.phase_correlate_masked(ref, mov, mask, mask)
    assert list(r.shift) == [5, -3]
    assert 0.99 < r.peak <= 1.0
    assert r.flags == 0


def test_mask_dtypes(cpu):
    ref, mov = shifted_pair((24, 32), (3, 2), seed=7)
    mask = np.ones(ref.shape)
    mask[:6, :8] = 0
    shifts = [list(cpu.phase_correlate_masked(ref, mov, mask.astype(t)).shift)
              for t in (np.float64, np.int32, bool, np.uint8, np.float32)]
    assert shifts == [[3, 2]] * 5


def test_known_shift_3d(ctx):
    ref, mov = shifted_pair((8, 10, 12), (2, -3, 1), seed=2)
    mask = np.ones(ref.shape, dtype=np.float32)
    mask[:3, :4, :5] = 0
    r = ctx.phase_correlate_masked(ref, mov, mask)
    assert list(r.shift) == [2, -3, 1]


def test_declared_keyword():
    sig = inspect.signature(parvis.Context.phase_correlate_masked)
    assert sig.parameters["overlap_ratio"].default == pytest.approx(0.3)
    assert "overlap_ratio" in inspect.getdoc(parvis.Context.phase_correlate_masked)


def test_refusals(cpu):
    ref, mov = shifted_pair((16, 16), (1, 1))
    mask = np.ones(ref.shape, dtype=np.uint8)
    with pytest.raises(parvis.InvalidArgument):
        cpu.phase_correlate_masked(ref, mov, mask, overlap_ratio=float("nan"))
    with pytest.raises(parvis.InvalidArgument):
        cpu.phase_correlate_masked(ref, mov, mask, overlap_ratio=0.0)
    with pytest.raises(parvis.InvalidArgument):
        cpu.phase_correlate_masked(ref, mov, np.zeros_like(mask))
    with pytest.raises(parvis.InvalidArgument):
        cpu.phase_correlate_masked(ref, mov, mask[:, :-1])
    with pytest.raises(TypeError):
        cpu.phase_correlate_masked(ref, mov, mask, overlap=0.5)


def _skimage_shift(ref, mov, rm, mm, ratio):
    registration = pytest.importorskip("skimage.registration")
    result = registration.phase_cross_correlation(ref, mov, reference_mask=rm, moving_mask=mm,
                                                  overlap_ratio=ratio)
    shift = result[0] if isinstance(result, tuple) else result
    # scikit-image: axes order, the shift that registers moving onto reference.
    return -np.asarray(shift, dtype=np.float64)[::-1]


@pytest.mark.parametrize("ratio", [0.3, 0.6])
def test_matches_skimage_2d(ctx, ratio):
    ref, mov = shifted_pair((40, 48), (6, 4), seed=3)
    rng = np.random.default_rng(4)
    mov = mov + 0.1 * rng.random(mov.shape).astype(np.float32)
    rm = rng.random(ref.shape) > 0.3
    mm = rng.random(ref.shape) > 0.3
    rm[10:25, 5:20] = False
    expected = _skimage_shift(ref, mov, rm, mm, ratio)
    r = ctx.phase_correlate_masked(ref, mov, rm, mm, overlap_ratio=ratio)
    np.testing.assert_allclose(r.shift, expected, atol=0.05)


def test_matches_skimage_3d(ctx):
    ref, mov = shifted_pair((8, 10, 12), (-2, 3, 1), seed=5)
    rng = np.random.default_rng(6)
    rm = rng.random(ref.shape) > 0.25
    expected = _skimage_shift(ref, mov, rm, rm, 0.3)
    r = ctx.phase_correlate_masked(ref, mov, rm)
    np.testing.assert_allclose(r.shift, expected, atol=0.05)
