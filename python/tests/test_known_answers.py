"""Known answers through Python: synthetic inputs whose result is known
exactly (shifted textures, identical images, translated volumes), on every
backend found.  Tolerances are the C library's documented ones."""
from __future__ import annotations

import numpy as np
import pytest

import parvis
from conftest import STEREO, texture


def shifted_pair(width, height, disparity, seed=3):
    """Right image = left image's texture moved left by `disparity` columns:
    left column x shows what right column x - d shows."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, (height, width + disparity), dtype=np.uint8)
    left = base[:, :width].copy()
    right = base[:, disparity:].copy()
    return left, right


def test_sad_uniform_disparity(ctx):
    d, window = 7, 5
    left, right = shifted_pair(90, 40, d)
    disp = ctx.stereo_sad(left, right, 16, window=window)
    r = window // 2
    # Every pixel whose window and match lie inside both images has d.
    inner = disp[r:-r, d + r:-r]
    assert np.all(inner == d)
    # Columns x < 0 - min_disp have no candidate at all for d > x: still
    # finite here (d = 0 is always a candidate), invalid marks are inf only.
    assert np.all(np.isfinite(disp) | np.isinf(disp))


def test_sad_invalid_pixels_are_inf(ctx):
    left, right = shifted_pair(60, 20, 5)
    # min_disp 10: left columns 0..9 have no candidate inside the right image.
    disp = ctx.stereo_sad(left, right, 8, min_disp=10, window=3)
    assert np.all(np.isinf(disp[:, :10]))
    assert np.all(np.isfinite(disp[:, 17:]))


@pytest.mark.parametrize("update", ["serial", "cooperative"])
def test_bp_uniform_disparity(ctx, update):
    d = 4
    left, right = shifted_pair(64, 48, d, seed=5)
    disp = ctx.stereo_bp(left, right, 8, levels=3, iterations=5, sigma=0.0,
                         message_update=update)
    assert np.isfinite(disp).all()
    assert np.mean(disp[4:-4, d + 4:-4] == d) >= 0.99


def test_bp_unknown_message_update_is_refused(ctx):
    left, right = shifted_pair(32, 24, 2, seed=5)
    with pytest.raises(parvis.InvalidArgument):
        ctx.stereo_bp(left, right, 8, levels=2, message_update="parallel")


def test_sad_tsukuba_quality(cpu, tsukuba):
    left, right, gt = tsukuba
    disp = cpu.stereo_sad(left, right, 16, window=9)
    # Middlebury error, bad > 1 px, ground truth scaled by 16, 18 px border.
    bad = parvis.disparity_error(disp, gt, gt_scale=16, threshold=1, border=18)
    assert bad < 0.15


@pytest.mark.parametrize("shift", [(5, -7), (-3, 11), (0, 0)])
def test_phase_correlate_2d_integer(ctx, shift):
    ref = texture((64, 72), seed=1)
    mov = np.roll(ref, shift, axis=(0, 1))
    r = ctx.phase_correlate(ref, mov)
    np.testing.assert_array_equal(r.shift, [shift[1], shift[0]])
    assert r.peak == pytest.approx(1.0, abs=1e-3)
    assert r.flags == 0


def test_phase_correlate_2d_subpixel(ctx):
    # A band-limited pattern moved by a fractional shift (Fourier shift).
    ref = texture((64, 64), seed=2, smooth=3).astype(np.float64)
    dx, dy = 2.25, -1.5
    ky = np.fft.fftfreq(64)[:, None]
    kx = np.fft.fftfreq(64)[None, :]
    mov = np.fft.ifft2(np.fft.fft2(ref) * np.exp(-2j * np.pi * (kx * dx + ky * dy))).real
    r = ctx.phase_correlate(ref.astype(np.float32), mov.astype(np.float32), upsample=100)
    np.testing.assert_allclose(r.shift, [dx, dy], atol=0.02)


def test_phase_correlate_3d(ctx):
    ref = texture((24, 20, 28), seed=4)
    mov = np.roll(ref, (2, -3, 5), axis=(0, 1, 2))
    r = ctx.phase_correlate(ref, mov)
    np.testing.assert_array_equal(r.shift, [5, -3, 2])
    assert r.peak == pytest.approx(1.0, abs=1e-3)


def test_phase_correlate_constant_has_no_texture(cpu):
    flat = np.full((32, 32), 7, np.uint8)
    r = cpu.phase_correlate(flat, flat)
    assert r.flags & parvis.NO_TEXTURE
    assert r.peak == 0 and not r.shift.any()


def test_phasecorr_plan_batch(ctx):
    ref = texture((48, 40), seed=6)
    shifts = [(1, 2), (-4, 3), (0, -6)]
    movers = np.stack([np.roll(ref, s, axis=(0, 1)) for s in shifts])
    with ctx.phasecorr_plan(ref, max_batch=2) as plan:
        batch = plan.correlate_many(movers)
        np.testing.assert_array_equal(batch.shifts, [[s[1], s[0]] for s in shifts])
        single = plan.correlate(movers[1])
        np.testing.assert_array_equal(single.shift, [3, -4])
        plan.set_reference(movers[0])
        np.testing.assert_array_equal(plan.correlate(movers[0]).shift, [0, 0])
        assert plan.fft_size == (40, 48)


def test_ncc_finds_template(ctx):
    image = texture((50, 60), seed=7)
    templ = image[12:24, 30:46]
    r = ctx.ncc(templ, image, min_overlap=templ.size)
    assert (r.x, r.y) == (30, 12)
    assert r.coefficient == pytest.approx(1.0, abs=1e-4)
    assert r.map.shape == (50 + 12 - 1, 60 + 16 - 1)
    assert r.map[12 + 11, 30 + 15] == pytest.approx(1.0, abs=1e-4)
    assert np.all(np.abs(r.map) <= 1.0 + 1e-5)
    assert ctx.ncc(templ, image, min_overlap=templ.size, compute_map=False).map is None


def test_octreg_synthetic_trace(cpu):
    s = parvis.synthesize_oct((40, 48, 64), seed=11, integer_shifts=True)
    r = cpu.octreg(s.reference, s.target, registered=True)
    both = r.valid & s.valid
    assert both.mean() >= 0.8
    # Integer trace: the fine step recovers it exactly on accepted B-scans.
    agree = np.all(np.abs(r.shifts[both] - s.shifts[both]) < 0.5, axis=1)
    assert agree.mean() >= 0.9
    assert r.registered.shape == s.reference.shape
    assert r.info["valid_bscans"] == int(r.valid.sum())


def test_octreg_plan_reuse(cpu):
    s = parvis.synthesize_oct((40, 48, 64), seed=12, integer_shifts=True)
    with cpu.octreg_plan(s.reference) as plan:
        a = plan.register(s.target)
        b = plan.register(s.target)
        np.testing.assert_array_equal(a.shifts, b.shifts)
        vol = plan.reconstruct(s.target, a.shifts, a.valid)
        np.testing.assert_array_equal(vol, plan.register(s.target, registered=True).registered)


def plane_waves(shape, offset):
    """A band-limited scene sampled at p + offset (offset in (x, y, z))."""
    z, y, x = np.meshgrid(*(np.arange(n, dtype=np.float64) for n in shape), indexing="ij")
    x, y, z = x + offset[0], y + offset[1], z + offset[2]
    f = (np.sin(2 * np.pi * (x + 0.5 * y) / 11.0) + np.cos(2 * np.pi * (y - 0.3 * z) / 13.0)
         + np.sin(2 * np.pi * (z + 0.7 * x) / 9.0 + 1.0))
    return (0.5 + f / 6.0).astype(np.float32)


def test_flow3d_translation(ctx):
    shape, c = (20, 22, 24), (0.5, -0.3, 0.25)
    fixed = plane_waves(shape, c)
    moving = plane_waves(shape, (0, 0, 0))
    flow = ctx.flow3d(fixed, moving, alpha=1e-3, kernel_size=5, rho=1.0, warps=3,
                      iterations=60)
    inner = (slice(4, -4),) * 3
    for comp, want in zip(flow, c):
        assert abs(float(np.mean(comp[inner])) - want) < 0.1
    warped = ctx.flow_warp(moving, flow)
    assert np.abs(warped[inner] - fixed[inner]).mean() < 0.01


def test_gaussian_blur_and_gradients(ctx):
    flat = np.full((20, 30), 9.0, np.float32)
    np.testing.assert_allclose(ctx.gaussian_blur(flat, 2.0), 9.0, rtol=1e-6)
    ramp = np.tile(np.arange(30, dtype=np.float32) * 2, (20, 1))
    gx, gy = ctx.gradients(ramp)
    np.testing.assert_allclose(gx, 2.0, rtol=1e-6)
    np.testing.assert_allclose(gy, 0.0, atol=1e-6)
    gx, gy = ctx.gradients(ramp, scheme="forward")
    np.testing.assert_allclose(gx[:, :-1], 2.0, rtol=1e-6)
    assert np.all(gx[:, -1] == 0)
    vol = np.broadcast_to(np.arange(8, dtype=np.float32)[:, None, None], (8, 9, 10)).copy()
    gx, gy, gz = ctx.gradients(vol)
    np.testing.assert_allclose(gz, 1.0, rtol=1e-6)
    np.testing.assert_allclose(ctx.gaussian_blur(vol, 1.0)[:, 4, 4].mean(), vol[:, 4, 4].mean(),
                               rtol=1e-5)


def test_sift_translation_and_match(ctx):
    image = parvis.imread(STEREO / "venus" / "left.pgm")
    moved = np.roll(image, (6, 9), axis=(0, 1))
    kp1, d1 = ctx.sift(image)
    kp2, d2 = ctx.sift(moved)
    assert kp1.shape[1] == 4 and d1.shape == (kp1.shape[0], 128) and d1.dtype == np.uint8
    assert kp1.shape[0] > 50
    m = ctx.match(d1, d2, ratio=0.8, mutual=True)
    assert len(m.pairs) > 10
    offsets = kp2[m.pairs[:, 1], :2] - kp1[m.pairs[:, 0], :2]
    near = np.all(np.abs(offsets - [9, 6]) < 0.5, axis=1)
    assert near.mean() > 0.8
    assert np.all(m.distances <= m.second)


def test_sift_plan_stream(cpu):
    image = parvis.imread(STEREO / "tsukuba" / "left.pgm")
    with cpu.sift_plan(image.shape, max_keypoints=50) as plan:
        assert plan.octaves >= 1
        a = plan.detect(image)
        b = plan.detect(image[::-1].copy())
        c = plan.detect(image, descriptor_dtype=np.float32)
    assert len(a.keypoints) == 50
    np.testing.assert_array_equal(a.keypoints, c.keypoints)
    np.testing.assert_array_equal(a.descriptors, np.minimum(c.descriptors * 512, 255).astype(np.uint8))
    assert not np.array_equal(a.keypoints, b.keypoints)


def test_match_self(cpu):
    rng = np.random.default_rng(0)
    d = rng.random((30, 128)).astype(np.float32)
    m = cpu.match(d, d, ratio=1.0)
    np.testing.assert_array_equal(m.pairs, np.stack([np.arange(30)] * 2, axis=1))
    np.testing.assert_allclose(m.distances, 0, atol=1e-6)
