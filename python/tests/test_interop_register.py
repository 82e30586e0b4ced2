"""Device-buffer registration methods with pyopencl arrays
(phase_correlate_cl, phase_correlate3d_cl, normxcorr2_cl; docs/interop.md):
results equal, bit for bit, to the host methods' on an OpenCL context and
within the cross-check tolerances of the CPU backend's (shift 1e-3 px,
peak 1e-3, map 1e-4: lib/core/tolerance.h); strided views; refusals.
Skipped without pyopencl or an OpenCL device."""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np
import pytest

import parvis
from conftest import BACKENDS, caller_queue

cl = pytest.importorskip("pyopencl")
import pyopencl.array as cla  # noqa: E402

pytestmark = pytest.mark.skipif("opencl" not in BACKENDS, reason="no OpenCL device")

SHIFT = (-2, 3)  # (dy, dx): the moving image is the reference rolled by it


def moved_pair(dtype: str, shape: Tuple[int, ...] = (48, 64)) -> Tuple[np.ndarray, np.ndarray]:
    """A random reference of dtype and the same rolled by SHIFT (and by 1
    along z for a volume)."""
    rng = np.random.default_rng(7)
    scale = {"uint8": 255, "uint16": 60000, "float32": 1}[dtype]
    reference = (rng.random(shape) * scale).astype(dtype)
    axes = tuple(range(len(shape) - 2, len(shape)))
    moving = np.roll(reference, SHIFT, axis=axes)
    if len(shape) == 3:
        moving = np.roll(moving, 1, axis=0)
    return reference, np.ascontiguousarray(moving)


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32"])
@pytest.mark.parametrize("options", [{}, {"window": "hann", "pad": "fft"},
                                     {"upsample": 20, "window": "hann"}])
def test_phase_correlate_equals_the_host_method(on_queue: parvis.Context,
                                                opencl: parvis.Context, cpu: parvis.Context,
                                                queue: Any, dtype: str, options: Any) -> None:
    reference, moving = moved_pair(dtype)
    want = opencl.phase_correlate(reference, moving, **options)
    got = on_queue.phase_correlate_cl(cla.to_device(queue, reference),
                                      cla.to_device(queue, moving), **options)
    np.testing.assert_array_equal(got.shift, want.shift)
    assert got.peak == want.peak and got.flags == want.flags
    on_cpu = cpu.phase_correlate(reference, moving, **options)
    tolerance = max(1e-3, 1.0 / options.get("upsample", 1)) if "upsample" in options else 1e-3
    np.testing.assert_allclose(got.shift, on_cpu.shift, atol=tolerance + 1e-9)
    assert abs(got.peak - on_cpu.peak) <= 1e-3
    np.testing.assert_allclose(got.shift, [SHIFT[1], SHIFT[0]], atol=0.5)


@pytest.mark.parametrize("dtype", ["uint16", "float32"])
def test_phase_correlate3d_equals_the_host_method(on_queue: parvis.Context,
                                                  opencl: parvis.Context, queue: Any,
                                                  dtype: str) -> None:
    reference, moving = moved_pair(dtype, (10, 20, 24))
    want = opencl.phase_correlate(reference, moving, window="hann")
    # a strided view: every other slice of a taller array
    tall = np.zeros((20, 20, 24), dtype)
    tall[::2] = reference
    tall_dev = cla.to_device(queue, tall)
    got = on_queue.phase_correlate3d_cl(tall_dev[::2], cla.to_device(queue, moving),
                                        window="hann")
    np.testing.assert_array_equal(got.shift, want.shift)
    assert got.peak == want.peak and got.flags == want.flags
    np.testing.assert_allclose(got.shift, [SHIFT[1], SHIFT[0], 1], atol=0.5)


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_normxcorr2_equals_the_host_method(on_queue: parvis.Context, opencl: parvis.Context,
                                           cpu: parvis.Context, queue: Any,
                                           dtype: str) -> None:
    image, _ = moved_pair(dtype)
    template = np.ascontiguousarray(image[15:27, 21:37])
    overlap = template.size // 2
    want = opencl.ncc(template, image, min_overlap=overlap)
    t_dev, i_dev = cla.to_device(queue, template), cla.to_device(queue, image)
    got = on_queue.normxcorr2_cl(t_dev, i_dev, min_overlap=overlap)
    np.testing.assert_array_equal(got.map.get(), want.map)
    assert got[1:] == want[1:]
    assert (got.x, got.y) == (21, 15)
    on_cpu = cpu.ncc(template, image, min_overlap=overlap)
    assert np.max(np.abs(got.map.get() - on_cpu.map)) <= 1e-4
    alone = on_queue.normxcorr2_cl(t_dev, i_dev, min_overlap=overlap, compute_map=False)
    assert alone.map is None and alone[1:] == want[1:]
    # a row-strided view of the image: the left half of a wider array
    wide = np.zeros((image.shape[0], 2 * image.shape[1]), image.dtype)
    wide[:, :image.shape[1]] = image
    view = cla.to_device(queue, wide)[:, :image.shape[1]]
    out = cla.empty(queue, want.map.shape, np.float32)
    strided = on_queue.normxcorr2_cl(t_dev, view, min_overlap=overlap, out=out)
    assert strided.map is out
    np.testing.assert_array_equal(out.get(), want.map)


def test_decisions_on_values(on_queue: parvis.Context, opencl: parvis.Context,
                             queue: Any) -> None:
    reference, moving = moved_pair("float32")
    flat = np.full_like(reference, 0.25)
    want = opencl.phase_correlate(reference, flat)
    got = on_queue.phase_correlate_cl(cla.to_device(queue, reference), cla.to_device(queue, flat))
    assert got.flags == want.flags == parvis.NO_TEXTURE
    moving[4, 5] = np.nan
    with pytest.raises(parvis.InvalidArgument, match="NaN"):
        opencl.phase_correlate(reference, moving)
    with pytest.raises(parvis.InvalidArgument, match="NaN"):
        on_queue.phase_correlate_cl(cla.to_device(queue, reference), cla.to_device(queue, moving))
    template = np.full((8, 8), 3.0, np.float32)
    ncc = on_queue.normxcorr2_cl(cla.to_device(queue, template), cla.to_device(queue, reference))
    assert ncc.flags == parvis.NO_TEXTURE and np.all(ncc.map.get() == 0.0)
    with pytest.raises(parvis.InvalidArgument, match="NaN"):
        on_queue.normxcorr2_cl(cla.to_device(queue, template), cla.to_device(queue, moving))


def test_misuse(on_queue: parvis.Context, opencl: parvis.Context, queue: Any) -> None:
    reference, moving = moved_pair("float32")
    r_dev, m_dev = cla.to_device(queue, reference), cla.to_device(queue, moving)
    with pytest.raises(parvis.InvalidArgument, match="pyopencl.array.Array"):
        on_queue.phase_correlate_cl(reference, m_dev)
    with pytest.raises(parvis.InvalidArgument, match="shape"):
        on_queue.phase_correlate_cl(r_dev, m_dev[:40])
    with pytest.raises(parvis.InvalidArgument, match="dtype"):
        on_queue.normxcorr2_cl(r_dev.astype(np.int32), m_dev)
    with pytest.raises(parvis.InvalidArgument, match="3D"):
        on_queue.phase_correlate3d_cl(r_dev, m_dev)
    with pytest.raises(parvis.InvalidArgument, match="shape"):
        on_queue.normxcorr2_cl(r_dev[:8, :8], m_dev, out=cla.empty(queue, (4, 4), np.float32))
    foreign = cla.to_device(caller_queue(opencl), moving)
    with pytest.raises(parvis.InvalidArgument, match="another cl_context"):
        on_queue.phase_correlate_cl(r_dev, foreign)
    failed = cl.UserEvent(queue.context)
    failed.set_status(-1)
    with pytest.raises(parvis.InvalidArgument, match="failed"):
        on_queue.phase_correlate_cl(r_dev, m_dev, wait_for=[failed])
    with parvis.Context("cpu") as cpu, pytest.raises(parvis.Error, match="OpenCL context"):
        cpu.phase_correlate_cl(r_dev, m_dev)
