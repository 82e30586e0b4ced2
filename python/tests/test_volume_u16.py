"""16-bit volumes from Python: uint16 arrays go to OCT registration, 3D
phase correlation (plain, planned, masked) and the 3D flow without a
conversion on the host, and give exactly the results of the same values as
float32 (every uint16 is a float32 exactly), on each backend; read_volume
keeps 16 bits when asked and write_volume writes them; the operations that
take float32 only convert uint16 as before."""
from __future__ import annotations

import numpy as np
import pytest

import parvis


def quantise(volumes):
    """The volumes mapped onto 0..65535 by the first one's range, as uint16."""
    lo, hi = float(volumes[0].min()), float(volumes[0].max())
    return [np.clip(np.rint((v - lo) / (hi - lo) * 65535.0), 0, 65535).astype(np.uint16)
            for v in volumes]


@pytest.fixture(scope="module")
def oct_pair():
    synth = parvis.synthesize_oct((40, 48, 64), seed=7, integer_shifts=True)
    return quantise([synth.reference, synth.target])


def test_octreg_u16_equals_float32(ctx, oct_pair):
    ref16, tgt16 = oct_pair
    a = ctx.octreg(ref16, tgt16, registered=True)
    b = ctx.octreg(ref16.astype(np.float32), tgt16.astype(np.float32), registered=True)
    np.testing.assert_array_equal(a.shifts, b.shifts)
    np.testing.assert_array_equal(a.valid, b.valid)
    np.testing.assert_array_equal(a.registered, b.registered)
    assert a.valid.sum() >= 20


def test_octreg_sequence_takes_u16(oct_pair):
    ref16, tgt16 = oct_pair
    with parvis.DeviceGroup("cpu") as group:
        results = group.octreg_sequence(ref16, [tgt16])
    with parvis.Context("cpu") as cpu:
        single = cpu.octreg(ref16.astype(np.float32), tgt16.astype(np.float32))
    np.testing.assert_array_equal(results[0].shifts, single.shifts)


def shifted_pair(n=16):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 65536, size=(n, n, n), dtype=np.uint16)
    b = np.roll(a, (1, -2, 3), axis=(0, 1, 2))
    return a, b


def test_phase_correlate3d_u16_equals_float32(ctx):
    a, b = shifted_pair()
    r16 = ctx.phase_correlate(a, b)
    r32 = ctx.phase_correlate(a.astype(np.float32), b.astype(np.float32))
    np.testing.assert_array_equal(r16.shift, r32.shift)
    assert r16.peak == r32.peak
    np.testing.assert_array_equal(r16.shift, [3, -2, 1])
    with ctx.phasecorr_plan(a, max_batch=2) as plan:
        batch = plan.correlate_many(np.stack([b, a]))
    np.testing.assert_array_equal(batch.shifts[0], r32.shift)
    mask = (np.arange(a.size).reshape(a.shape) % 7 != 0).astype(np.uint16)
    m16 = ctx.phase_correlate_masked(a, b, mask)
    m32 = ctx.phase_correlate_masked(a.astype(np.float32), b.astype(np.float32),
                                     mask.astype(np.float32))
    np.testing.assert_array_equal(m16.shift, m32.shift)
    assert m16.peak == m32.peak


def test_flow3d_u16_equals_float32(ctx):
    z, y, x = np.mgrid[0:16, 0:16, 0:16]
    fixed = (1000 + 300 * np.sin(0.5 * x) * np.cos(0.4 * y) + 40 * z).astype(np.uint16)
    moving = (1000 + 300 * np.sin(0.5 * (x - 1)) * np.cos(0.4 * y) + 40 * z).astype(np.uint16)
    a = ctx.flow3d(fixed, moving, warps=2, iterations=10)
    b = ctx.flow3d(fixed.astype(np.float32), moving.astype(np.float32), warps=2, iterations=10)
    for p, q in zip(a, b):
        np.testing.assert_array_equal(p, q)


def test_read_volume_keeps_u16(tmp_path):
    v = np.arange(60, dtype=np.uint16).reshape(3, 4, 5) * 1000
    raw = tmp_path / "v.raw"
    parvis.write_volume(raw, v)
    assert raw.stat().st_size == 120   # 2 bytes a voxel
    back = parvis.read_volume(raw, (3, 4, 5), keep_u16=True)
    assert back.dtype == np.uint16
    np.testing.assert_array_equal(back, v)
    with pytest.raises(parvis.Error):
        parvis.read_volume(raw, (3, 4, 5))   # 120 bytes are no 3x4x5 float32 volume
    if parvis.has_nifti():
        nii = tmp_path / "v.nii.gz"
        parvis.write_volume(nii, v)
        kept = parvis.read_volume(nii, keep_u16=True)
        assert kept.dtype == np.uint16
        np.testing.assert_array_equal(kept, v)
        floats = parvis.read_volume(nii)
        assert floats.dtype == np.float32
        np.testing.assert_array_equal(floats, v.astype(np.float32))


def test_float_only_operations_convert_u16(ctx):
    a, _ = shifted_pair(8)
    blurred16 = ctx.gaussian_blur(a, 1.0)
    blurred32 = ctx.gaussian_blur(a.astype(np.float32), 1.0)
    np.testing.assert_array_equal(blurred16, blurred32)
