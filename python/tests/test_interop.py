"""Device-buffer calls with pyopencl arrays (Context.from_cl and the *_cl
methods, docs/interop.md): results identical to the host methods', events
ordering the work, a chain on the device, and misuse.  Skipped without
pyopencl or an OpenCL device."""
from __future__ import annotations

import numpy as np
import pytest

import parvis
from conftest import BACKENDS, STEREO, caller_queue

cl = pytest.importorskip("pyopencl")
import pyopencl.array as cla  # noqa: E402

pytestmark = pytest.mark.skipif("opencl" not in BACKENDS, reason="no OpenCL device")


def pair():
    left = parvis.imread(STEREO / "tsukuba" / "left.pgm")[:96, :128]
    right = parvis.imread(STEREO / "tsukuba" / "right.pgm")[:96, :128]
    return np.ascontiguousarray(left), np.ascontiguousarray(right)


def test_context_on_the_callers_queue(on_queue, queue):
    assert on_queue.backend == "opencl"
    context_handle, queue_handle = on_queue.cl_handles()
    assert context_handle == queue.context.int_ptr
    assert queue_handle == queue.int_ptr


def test_sgm_equals_the_host_method(on_queue, opencl, queue):
    left, right = pair()
    want, want_conf = opencl.stereo_sgm(left, right, ndisp=16, subpixel=False, confidence=True)
    l_dev, r_dev = cla.to_device(queue, left), cla.to_device(queue, right)
    conf = cla.empty(queue, left.shape, np.float32)
    got = on_queue.stereo_sgm_cl(l_dev, r_dev, ndisp=16, subpixel=False, confidence=conf)
    np.testing.assert_array_equal(got.get(), want)
    np.testing.assert_array_equal(conf.get(), want_conf)


def test_sad_and_blur_equal_the_host_methods(on_queue, opencl, queue):
    left, right = pair()
    want = opencl.stereo_sad(left, right, 16, window=7)
    got = on_queue.stereo_sad_cl(cla.to_device(queue, left), cla.to_device(queue, right), 16,
                                 window=7)
    np.testing.assert_array_equal(got.get(), want)
    blurred = on_queue.gaussian_blur_cl(cla.to_device(queue, left), 1.5)
    np.testing.assert_array_equal(blurred.get(), opencl.gaussian_blur(left, 1.5))


def test_bp_and_grey_equal_the_host_methods(on_queue, opencl, queue):
    left, right = pair()
    want = opencl.stereo_bp(left, right, 16)
    got = on_queue.stereo_bp_cl(cla.to_device(queue, left), cla.to_device(queue, right), 16)
    np.testing.assert_array_equal(got.get(), want)
    rgb = np.stack([left, right, left // 2], axis=-1)
    for image in (rgb, rgb.astype(np.uint16) * 257, left.astype(np.uint16)):
        grey = on_queue.to_grey_cl(cla.to_device(queue, np.ascontiguousarray(image)))
        np.testing.assert_array_equal(grey.get(), opencl.to_grey(image))
    with pytest.raises(parvis.InvalidArgument):
        on_queue.to_grey_cl(cla.to_device(queue, rgb[..., :2].copy()))


def test_volumes_equal_the_host_methods(on_queue, opencl, queue):
    rng = np.random.default_rng(4)
    volume = rng.random((16, 18, 20), dtype=np.float32)
    blurred = on_queue.gaussian_blur3d_cl(cla.to_device(queue, volume), 1.2)
    np.testing.assert_array_equal(blurred.get(), opencl.gaussian_blur(volume, 1.2))
    z, y, x = np.mgrid[0:16, 0:18, 0:20]
    fixed = (3000 + 2000 * np.sin(0.4 * x) * np.cos(0.3 * y + 0.2 * z)).astype(np.uint16)
    moving = (3000 + 2000 * np.sin(0.4 * (x - 0.5)) * np.cos(0.3 * y + 0.2 * z)).astype(np.uint16)
    want = opencl.flow3d(fixed, moving, warps=2, iterations=5)
    got = on_queue.flow3d_cl(cla.to_device(queue, fixed), cla.to_device(queue, moving),
                             warps=2, iterations=5)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.get(), w)
    with pytest.raises(parvis.InvalidArgument):
        on_queue.gaussian_blur3d_cl(cla.to_device(queue, volume[0]), 1.0)  # 2D


def test_a_chain_stays_on_the_device(on_queue, opencl, queue):
    """pyopencl's own arithmetic, then two parvis calls, ordered by the
    arrays' events; only the result comes back."""
    left, right = pair()
    l_dev = cla.to_device(queue, left).astype(np.float32) * 0.5 + 10.0
    r_dev = cla.to_device(queue, right).astype(np.float32) * 0.5 + 10.0
    bl, br = on_queue.gaussian_blur_cl(l_dev, 1.0), on_queue.gaussian_blur_cl(r_dev, 1.0)
    got = on_queue.stereo_sgm_cl(bl, br, ndisp=16, subpixel=False)
    hl = opencl.gaussian_blur(left.astype(np.float32) * 0.5 + 10.0, 1.0)
    hr = opencl.gaussian_blur(right.astype(np.float32) * 0.5 + 10.0, 1.0)
    np.testing.assert_array_equal(got.get(), opencl.stereo_sgm(hl, hr, ndisp=16, subpixel=False))


def test_strided_views_and_wait(on_queue, opencl, queue):
    left, right = pair()
    wide_l = cla.to_device(queue, np.pad(left, ((0, 0), (0, 8))))
    wide_r = cla.to_device(queue, np.pad(right, ((0, 0), (0, 8))))
    got = on_queue.stereo_sgm_cl(wide_l[:, :128], wide_r[:, :128], ndisp=16, subpixel=False)
    on_queue.wait()
    assert on_queue.last_timing["total"] > 0.0
    np.testing.assert_array_equal(got.get(), opencl.stereo_sgm(left, right, ndisp=16,
                                                               subpixel=False))


def test_misuse(on_queue, opencl, queue):
    left, right = pair()
    l_dev, r_dev = cla.to_device(queue, left), cla.to_device(queue, right)
    with pytest.raises(parvis.InvalidArgument, match="pyopencl.array.Array"):
        on_queue.stereo_sgm_cl(left, r_dev)
    with pytest.raises(parvis.InvalidArgument, match="dtype"):
        on_queue.stereo_sgm_cl(l_dev.astype(np.int32), r_dev)
    with pytest.raises(parvis.InvalidArgument, match="contiguous"):
        on_queue.stereo_sgm_cl(l_dev[:, ::2], r_dev[:, ::2])
    with pytest.raises(parvis.InvalidArgument, match="shape"):
        on_queue.stereo_sgm_cl(l_dev, r_dev, out=cla.empty(queue, (4, 4), np.float32))
    out = cla.to_device(queue, np.full(left.shape, 7.0, np.float32))
    with pytest.raises(parvis.InvalidArgument, match="ndisp"):
        on_queue.stereo_sgm_cl(l_dev, r_dev, out=out, ndisp=0)
    foreign_queue = caller_queue(opencl)
    with pytest.raises(parvis.InvalidArgument, match="another cl_context"):
        on_queue.stereo_sgm_cl(cla.to_device(foreign_queue, left), r_dev, out=out)
    failed = cl.UserEvent(queue.context)
    failed.set_status(-1)
    with pytest.raises(parvis.InvalidArgument, match="failed"):
        on_queue.stereo_sgm_cl(l_dev, r_dev, out=out, wait_for=[failed])
    assert np.all(out.get() == 7.0)     # every refusal left it untouched
    with parvis.Context("cpu") as cpu, pytest.raises(parvis.Error, match="OpenCL context"):
        cpu.stereo_sgm_cl(l_dev, r_dev)
