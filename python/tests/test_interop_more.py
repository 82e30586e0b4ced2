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


def scene(seed, dx, dy, shape=(80, 96)):
    """A frame of smooth texture seen from (dx, dy): coarse random values
    interpolated over 4-pixel cells, as uint8."""
    rows, columns = shape
    coarse = np.random.default_rng(seed).integers(0, 256, (rows // 4 + 8, columns // 4 + 8))
    y, x = np.mgrid[0:rows, 0:columns]
    sy, sx = y + dy, x + dx
    cy, cx, fy, fx = sy // 4, sx // 4, (sy % 4) / 4.0, (sx % 4) / 4.0
    top = coarse[cy, cx] * (1 - fx) + coarse[cy, cx + 1] * fx
    bottom = coarse[cy + 1, cx] * (1 - fx) + coarse[cy + 1, cx + 1] * fx
    return np.floor(top * (1 - fy) + bottom * fy).astype(np.uint8)


def same_features(got, want):
    assert len(want.keypoints) > 10
    np.testing.assert_array_equal(got.keypoints, want.keypoints)
    np.testing.assert_array_equal(got.descriptors, want.descriptors)


def same_chain(got, want):
    """Two SiftChainResults equal field for field."""
    assert (got.model is None) == (want.model is None)
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)
        else:
            assert g == w


def test_sift_track_equals_the_host_method(on_queue, opencl, queue):
    frames = [scene(7, 3 * k, 2 * k) for k in range(3)]
    with opencl.sift_plan(frames[0].shape) as host, on_queue.sift_plan(frames[0].shape) as dev:
        for k, frame in enumerate(frames):
            want = host.track_next(frame)
            got = on_queue.sift_track_next_cl(dev, padded(queue, frame))
            assert (want.model is None) == (k == 0)
            same_chain(got, want)
        with pytest.raises(parvis.InvalidArgument, match="SiftPlan of this context"):
            on_queue.sift_track_next_cl(host, cla.to_device(queue, frames[0]))
        with pytest.raises(parvis.InvalidArgument, match="shape"):
            on_queue.sift_track_next_cl(dev, cla.to_device(queue, frames[0][:40]))


def test_sift_detect_batch_equals_the_host_method(on_queue, opencl, queue):
    frames = [scene(20 + i, i, 0) for i in range(7)]
    with opencl.sift_plan(frames[0].shape) as host:
        want = host.detect_batch(frames)
    got = on_queue.sift_detect_batch_cl([padded(queue, f) for f in frames])
    assert len(got) == len(frames)
    for g, w in zip(got, want):
        same_features(g, w)
    with pytest.raises(parvis.InvalidArgument, match="empty"):
        on_queue.sift_detect_batch_cl([])
    with pytest.raises(parvis.InvalidArgument, match="differs"):
        on_queue.sift_detect_batch_cl([cla.to_device(queue, frames[0]),
                                       cla.to_device(queue, frames[1][:40])])


def stereo_pairs(count, dtype=np.uint8):
    """count pairs of random texture, pair i's right image its left one
    moved by 4 - i pixels."""
    rng = np.random.default_rng(9)
    lefts, rights = [], []
    for i in range(count):
        left = rng.integers(0, 256, (40, 64)).astype(dtype)
        right = np.concatenate([left[:, 4 - i:], left[:, 60 + i:]], axis=1)
        lefts.append(left)
        rights.append(np.ascontiguousarray(right))
    return lefts, rights


def test_stereo_batches_equal_the_host_methods(on_queue, opencl, queue):
    lefts, rights = stereo_pairs(3)
    dl = [padded(queue, a) for a in lefts]
    dr = [padded(queue, a) for a in rights]
    got = on_queue.stereo_sad_batch_cl(dl, dr, 12, window=5)
    np.testing.assert_array_equal(got.get(), opencl.stereo_sad_batch(lefts, rights, 12, window=5))
    conf = cla.empty(queue, (3, 40, 64), np.float32)
    got = on_queue.stereo_sgm_batch_cl(dl, dr, ndisp=16, confidence=conf)
    want, want_conf = opencl.stereo_sgm_batch(lefts, rights, ndisp=16, confidence=True)
    np.testing.assert_array_equal(got.get(), want)
    np.testing.assert_array_equal(conf.get(), want_conf)
    with pytest.raises(parvis.InvalidArgument, match="pyopencl.array.Array"):
        on_queue.stereo_sad_batch_cl(lefts, rights, 12)  # numpy arrays
    with pytest.raises(parvis.InvalidArgument, match="as many"):
        on_queue.stereo_sgm_batch_cl(dl, dr[:2], ndisp=16)
    with pytest.raises(parvis.InvalidArgument, match="shape"):
        on_queue.stereo_sad_batch_cl(dl, dr, 12, out=cla.empty(queue, (2, 40, 64), np.float32))
    with pytest.raises(parvis.InvalidArgument):  # a pair of another shape
        on_queue.stereo_sgm_batch_cl(dl[:2] + [dl[2][:20]], dr[:2] + [dr[2][:20]], ndisp=16)
