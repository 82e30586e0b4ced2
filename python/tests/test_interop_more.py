"""The later device-buffer methods (gradient_cl, gradient3d_cl,
flow_warp_cl, sift_track_next_cl, sift_detect_batch_cl,
stereo_sad_batch_cl, stereo_sgm_batch_cl; docs/interop.md, "More device
forms"): results identical to the host methods' on the same pixels,
strided views, and misuse.  Skipped without pyopencl or an OpenCL
device."""
from __future__ import annotations

import numpy as np
import pytest

import parvis
from conftest import BACKENDS

cl = pytest.importorskip("pyopencl")
import pyopencl.array as cla  # noqa: E402

pytestmark = pytest.mark.skipif("opencl" not in BACKENDS, reason="no OpenCL device")


def parvis_device(opencl):
    """The device parvis's OpenCL context runs on, as a pyopencl Device."""
    context_handle, _ = opencl.cl_handles()
    return cl.Context.from_int_ptr(context_handle).devices[0]


@pytest.fixture(scope="module")
def queue(opencl):
    return cl.CommandQueue(cl.Context([parvis_device(opencl)]))


@pytest.fixture(scope="module")
def on_queue(queue):
    with parvis.Context.from_cl(queue) as ctx:
        yield ctx


def padded(queue, array):
    """A device view of array whose rows are 8 samples longer than its
    width (a strided view of a wider array)."""
    pad = [(0, 0)] * (array.ndim - 1) + [(0, 8)]
    wide = cla.to_device(queue, np.ascontiguousarray(np.pad(array, pad)))
    return wide[..., :array.shape[-1]]


def test_gradients_equal_the_host_method(on_queue, opencl, queue):
    rng = np.random.default_rng(2)
    image = rng.integers(0, 256, (40, 56), dtype=np.uint8)
    for scheme in ("central", "forward"):
        got = on_queue.gradient_cl(padded(queue, image), scheme)
        want = opencl.gradients(image, scheme)
        assert len(got) == 2
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.get(), w)
    volume = rng.random((9, 14, 20), dtype=np.float32)
    got = on_queue.gradient3d_cl(cla.to_device(queue, volume))
    for g, w in zip(got, opencl.gradients(volume)):
        np.testing.assert_array_equal(g.get(), w)
    with pytest.raises(parvis.InvalidArgument):
        on_queue.gradient3d_cl(cla.to_device(queue, image))  # 2D
    with pytest.raises(parvis.InvalidArgument, match="scheme"):
        on_queue.gradient_cl(cla.to_device(queue, image), "backward")


def test_flow_warp_equals_the_host_method(on_queue, opencl, queue):
    rng = np.random.default_rng(3)
    moving = rng.random((8, 12, 16), dtype=np.float32)
    z, y, x = np.mgrid[0:8, 0:12, 0:16].astype(np.float32)
    flow = (np.sin(0.3 * y) + 0.25, -0.75 * np.cos(0.2 * x), 0.4 * np.sin(0.5 * (x + z)))
    flow = tuple(np.ascontiguousarray(c, dtype=np.float32) for c in flow)
    got = on_queue.flow_warp_cl(cla.to_device(queue, moving),
                                [cla.to_device(queue, c) for c in flow])
    np.testing.assert_array_equal(got.get(), opencl.flow_warp(moving, flow))
    with pytest.raises(parvis.InvalidArgument, match="three"):
        on_queue.flow_warp_cl(cla.to_device(queue, moving), [cla.to_device(queue, flow[0])])
