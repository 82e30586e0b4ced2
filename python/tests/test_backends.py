"""CPU against OpenCL (PoCL on a machine without a GPU), within the C
library's documented cross-check tolerances (include/parvis/*.h)."""
from __future__ import annotations

import numpy as np
import pytest

import parvis
from conftest import STEREO, texture


def test_sad(cpu, opencl, tsukuba):
    left, right, _ = tsukuba
    a = cpu.stereo_sad(left, right, 16, window=7, subpixel=True)
    b = opencl.stereo_sad(left, right, 16, window=7, subpixel=True)
    # identical disparities on >= 99.9% of pixels, sub-pixel values within 1e-3
    close = (a == b) | (np.abs(a - b) <= 1e-3)
    assert close.mean() >= 0.999


def test_bp(cpu, opencl, tsukuba):
    left, right, _ = tsukuba
    a = cpu.stereo_bp(left[:128, :160], right[:128, :160], 16, levels=3, iterations=5)
    b = opencl.stereo_bp(left[:128, :160], right[:128, :160], 16, levels=3, iterations=5)
    assert (a == b).mean() >= 0.995   # identical on >= 99.5% of pixels


@pytest.mark.parametrize("precision", ["f32", "f16"])
def test_bp_cooperative_update(cpu, opencl, tsukuba, precision):
    left, right, _ = tsukuba
    kwargs = dict(levels=3, iterations=5, message_update="cooperative",
                  message_precision=precision)
    a = cpu.stereo_bp(left[:128, :160], right[:128, :160], 16, **kwargs)
    b = opencl.stereo_bp(left[:128, :160], right[:128, :160], 16, **kwargs)
    # the cooperative kernel's scans are exact: every disparity identical
    np.testing.assert_array_equal(a, b)


def test_phase_correlation(cpu, opencl):
    ref = texture((48, 64), seed=9, smooth=2)
    mov = np.roll(ref, (3, -2), axis=(0, 1))
    a = cpu.phase_correlate(ref, mov, upsample=50)
    b = opencl.phase_correlate(ref, mov, upsample=50)
    # sub-pixel within 1e-3 px, or one grid step 1/upsample when two points tie
    np.testing.assert_allclose(a.shift, b.shift, atol=1 / 50 + 1e-9)
    assert a.peak == pytest.approx(b.peak, abs=1e-3)


def test_ncc_map(cpu, opencl):
    image = texture((40, 50), seed=10)
    templ = image[5:17, 20:36]
    # Overlaps of a few pixels are ill-conditioned: at least half the template.
    a = cpu.ncc(templ, image, min_overlap=templ.size // 2)
    b = opencl.ncc(templ, image, min_overlap=templ.size // 2)
    np.testing.assert_allclose(a.map, b.map, atol=1e-4)   # maps within 1e-4


def test_blur_and_gradients(cpu, opencl):
    image = parvis.imread(STEREO / "venus" / "left.pgm")[:100, :120]
    a, b = cpu.gaussian_blur(image, 1.7), opencl.gaussian_blur(image, 1.7)
    assert np.abs(a - b).max() <= 1e-5 * 255   # 1e-5 of the value range
    for ga, gb in zip(cpu.gradients(image), opencl.gradients(image)):
        assert np.abs(ga - gb).max() <= 1e-5 * 255


def test_flow(cpu, opencl):
    f = texture((12, 16, 18), seed=11, smooth=3)
    g = np.roll(f, 1, axis=2)
    kw = dict(alpha=1e-3, kernel_size=3, rho=1.0, warps=2, iterations=20)
    for ca, cb in zip(cpu.flow3d(f, g, **kw), opencl.flow3d(f, g, **kw)):
        assert np.abs(ca - cb).max() <= 1e-3   # PV_FLOW_TOLERANCE, voxels


def test_sift(cpu, opencl):
    image = parvis.imread(STEREO / "venus" / "left.pgm")[:200, :240]
    ka, da = cpu.sift(image, descriptor_dtype=np.float32)
    kb, db = opencl.sift(image, descriptor_dtype=np.float32)
    # >= 99% of the CPU keypoints have an OpenCL partner within 0.05 px,
    # descriptors within 1e-3.  A point may carry several orientations: the
    # partner is the nearest one of about the same angle.
    dist = np.linalg.norm(ka[:, None, :2] - kb[None, :, :2], axis=2)
    turn = np.abs(np.angle(np.exp(1j * (ka[:, None, 3] - kb[None, :, 3]))))
    dist = dist + 1e3 * (turn > 1e-2)
    partner = dist.argmin(axis=1)
    paired = dist[np.arange(len(ka)), partner] <= 0.05
    assert paired.mean() >= 0.99
    assert np.abs(da[paired] - db[partner[paired]]).max() <= 1e-3 + 1e-6


def test_sift_detect_batch(cpu, opencl):
    """A batch gives, image by image, what single calls give, on both
    backends; an empty batch is refused."""
    venus = parvis.imread(STEREO / "venus" / "left.pgm")
    frames = [venus[:120, :160], venus[100:220, 50:210], venus[200:320, 150:310]]
    for ctx in (cpu, opencl):
        with ctx.sift_plan((120, 160), preset="fast") as plan:
            batch = plan.detect_batch(frames, descriptor_dtype=np.float32)
            assert len(batch) == len(frames)
            for got, frame in zip(batch, frames):
                want = plan.detect(frame, descriptor_dtype=np.float32)
                assert len(want[0]) > 0
                np.testing.assert_array_equal(got[0], want[0])
                np.testing.assert_array_equal(got[1], want[1])
            with pytest.raises(parvis.InvalidArgument):
                plan.detect_batch([])
            with pytest.raises(parvis.InvalidArgument):
                plan.detect_batch([venus[:120, :161]])


def test_sift_detect_batch_progress(cpu, opencl):
    """Seven frames two at a time: progress after each chunk, the same
    results as one batch (more frames than the OpenCL backend's lanes)."""
    venus = parvis.imread(STEREO / "venus" / "left.pgm")
    frames = [venus[20 * i:20 * i + 120, 25 * i:25 * i + 160] for i in range(7)]
    for ctx in (cpu, opencl):
        with ctx.sift_plan((120, 160), preset="fast") as plan:
            whole = plan.detect_batch(frames, descriptor_dtype=np.float32)
            seen = []
            chunked = plan.detect_batch(frames, descriptor_dtype=np.float32,
                                        progress=lambda done, total: seen.append((done, total)),
                                        chunk=2)
            assert seen == [(2, 7), (4, 7), (6, 7), (7, 7)]
            for a, b in zip(whole, chunked):
                np.testing.assert_array_equal(a[0], b[0])
                np.testing.assert_array_equal(a[1], b[1])
            with pytest.raises(parvis.InvalidArgument):
                plan.detect_batch(frames, progress=lambda done, total: None, chunk=0)


def test_kernel_timing_modes_agree(opencl, tsukuba):
    """Timed by runs of kernels (the default) or kernel by kernel, the same
    disparities, and a kernel time within the call's end-to-end time."""
    left, right, _ = tsukuba
    maps, times = [], []
    for mode in ("runs", "each"):
        opencl.kernel_timing = mode
        maps.append(opencl.stereo_bp(left[:128, :160], right[:128, :160], 16, levels=3,
                                     iterations=5))
        times.append(opencl.last_timing)
    opencl.kernel_timing = "runs"
    np.testing.assert_array_equal(maps[0], maps[1])
    for t in times:
        assert 0 < t["kernel"] <= t["total"]


def test_crosscheck_mode_passes():
    if not parvis.devices():
        pytest.skip("no OpenCL device")
    with parvis.Context("opencl", crosscheck=True) as c:
        ref = texture((32, 32), seed=12)
        r = c.phase_correlate(ref, np.roll(ref, 2, axis=1))
        np.testing.assert_array_equal(r.shift, [2, 0])
