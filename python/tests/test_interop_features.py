"""Device-buffer forms of SIFT and of the AO-OCT registration with pyopencl
arrays (Context.sift_detect_cl, sift_match_images_cl, octreg_register_cl;
docs/interop.md): results identical to the host methods' on the same
pixels, padded rows, and misuse.  Skipped without pyopencl or an OpenCL
device."""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np
import pytest

import parvis
from conftest import BACKENDS, STEREO

cl = pytest.importorskip("pyopencl")
import pyopencl.array as cla  # noqa: E402

pytestmark = pytest.mark.skipif("opencl" not in BACKENDS, reason="no OpenCL device")

#: The second frame: the first moved by this many pixels (x, y).
SHIFT = (5, 3)


def frames() -> Tuple[np.ndarray, np.ndarray]:
    """A crop of Tsukuba and the same scene moved by SHIFT."""
    image = parvis.imread(STEREO / "tsukuba" / "left.pgm")
    dx, dy = SHIFT
    first = np.ascontiguousarray(image[40:136, 60:188])
    second = np.ascontiguousarray(image[40 + dy:136 + dy, 60 + dx:188 + dx])
    return first, second


def padded(queue: Any, host: np.ndarray) -> Any:
    """host on the device in a buffer whose rows are 7 elements longer."""
    wide = np.zeros(host.shape[:-1] + (host.shape[-1] + 7,), host.dtype)
    wide[..., :host.shape[-1]] = host
    return cla.to_device(queue, wide)[..., :host.shape[-1]]


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_sift_detect_equals_the_host_method(on_queue: parvis.Context, opencl: parvis.Context,
                                            queue: Any, dtype: str) -> None:
    image = frames()[0]
    if dtype == "float32":
        image = image.astype(np.float32) / 255.0
    want = opencl.sift(image)
    got = on_queue.sift_detect_cl(padded(queue, image))
    assert len(want.keypoints) > 20
    np.testing.assert_array_equal(got.keypoints, want.keypoints)
    np.testing.assert_array_equal(got.descriptors, want.descriptors)
    floats = on_queue.sift_detect_cl(cla.to_device(queue, image), descriptor_dtype=np.float32,
                                     preset="fast")
    np.testing.assert_array_equal(floats.descriptors,
                                  opencl.sift(image, preset="fast",
                                              descriptor_dtype=np.float32).descriptors)


def test_sift_match_images_equals_the_host_method(on_queue: parvis.Context,
                                                  opencl: parvis.Context, queue: Any) -> None:
    first, second = frames()
    want = opencl.sift_match_images(first, second)
    # the known answer: the scene moved by -SHIFT from the first frame to the second
    assert want.model is not None
    assert abs(want.model[0, 2] + SHIFT[0]) < 0.25 and abs(want.model[1, 2] + SHIFT[1]) < 0.25
    got = on_queue.sift_match_images_cl(padded(queue, first), cla.to_device(queue, second))
    np.testing.assert_array_equal(got.model, want.model)
    np.testing.assert_array_equal(got.pairs, want.pairs)
    np.testing.assert_array_equal(got.points1, want.points1)
    np.testing.assert_array_equal(got.points2, want.points2)
    assert got.inlier_count == want.inlier_count >= 8
    assert (got.keypoints1, got.keypoints2, got.matches) == \
        (want.keypoints1, want.keypoints2, want.matches)


@pytest.mark.parametrize("dtype", ["float32", "uint16"])
def test_octreg_register_equals_the_host_method(on_queue: parvis.Context,
                                                opencl: parvis.Context, queue: Any,
                                                dtype: str) -> None:
    s = parvis.synthesize_oct((40, 48, 64), seed=11, integer_shifts=True)
    reference, target = s.reference, s.target
    if dtype == "uint16":
        reference = np.clip(reference * 20000.0, 0, 65535).astype(np.uint16)
        target = np.clip(target * 20000.0, 0, 65535).astype(np.uint16)
    want = opencl.octreg(reference, target, registered=True)
    got = on_queue.octreg_register_cl(padded(queue, reference), cla.to_device(queue, target),
                                      registered=True)
    assert want.valid.sum() > 20
    np.testing.assert_array_equal(got.shifts, want.shifts)
    np.testing.assert_array_equal(got.peak, want.peak)
    np.testing.assert_array_equal(got.valid, want.valid)
    assert got.info == want.info
    assert isinstance(got.registered, cla.Array)
    np.testing.assert_array_equal(got.registered.get(), want.registered)
    plain = on_queue.octreg_register_cl(cla.to_device(queue, reference),
                                        cla.to_device(queue, target))
    assert plain.registered is None
    np.testing.assert_array_equal(plain.shifts, want.shifts)


def test_misuse(on_queue: parvis.Context, queue: Any, cpu: parvis.Context) -> None:
    first, second = frames()
    with pytest.raises(parvis.InvalidArgument):
        on_queue.sift_detect_cl(first)  # a numpy array, not a device array
    with pytest.raises(parvis.InvalidArgument):
        on_queue.sift_detect_cl(cla.to_device(queue, first[:, :, None].repeat(2, axis=2)))
    with pytest.raises(parvis.InvalidArgument):
        on_queue.sift_match_images_cl(cla.to_device(queue, first),
                                      cla.to_device(queue, second[:-1]))
    volume = np.zeros((40, 48, 64), np.uint8)
    with pytest.raises(parvis.InvalidArgument):
        on_queue.octreg_register_cl(cla.to_device(queue, volume), cla.to_device(queue, volume))
    flat = np.zeros((40, 48, 64), np.float32)
    with pytest.raises(parvis.InvalidArgument):  # a constant volume: nothing to register
        on_queue.octreg_register_cl(cla.to_device(queue, flat), cla.to_device(queue, flat))
    with pytest.raises(parvis.Unsupported):
        cpu.sift_detect_cl(cla.to_device(queue, first))
