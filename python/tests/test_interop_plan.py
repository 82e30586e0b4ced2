"""Device-buffer phase-correlation plans, masked phase correlation and
normxcorr2, the normxcorr2 batch and the AO-OCT average with pyopencl arrays
(Context.phasecorr_plan_cl, PhaseCorrPlanCL, phase_correlate_masked_cl,
normxcorr2_masked_cl, normxcorr2_batch_cl, octreg_average_cl;
docs/interop.md): results equal, bit for bit, to the host calls' on an
OpenCL context; more movers than one device call takes; strided views;
refusals.  Skipped without pyopencl or an OpenCL device."""
from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np
import pytest

import parvis
from conftest import BACKENDS, caller_queue

cl = pytest.importorskip("pyopencl")
import pyopencl.array as cla  # noqa: E402

pytestmark = pytest.mark.skipif("opencl" not in BACKENDS, reason="no OpenCL device")


def series(dtype: str, count: int, shape: Tuple[int, ...] = (40, 48)) -> List[np.ndarray]:
    """A random field of dtype and count - 1 copies rolled by (k, -k) (and
    by k % 3 along z for volumes)."""
    rng = np.random.default_rng(3)
    scale = {"uint8": 255, "uint16": 60000, "float32": 1}[dtype]
    field = (rng.random(shape) * scale).astype(dtype)
    axes = tuple(range(len(shape) - 2, len(shape)))
    items = [field]
    for k in range(1, count):
        moved = np.roll(field, (k, -k), axis=axes)
        if len(shape) == 3:
            moved = np.roll(moved, k % 3, axis=0)
        items.append(np.ascontiguousarray(moved))
    return items


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32"])
def test_plan_equals_the_host_plan(on_queue: parvis.Context, opencl: parvis.Context,
                                   queue: Any, dtype: str) -> None:
    images = series(dtype, 7)
    options = {"window": "hann", "pad": "fft", "upsample": 10, "max_batch": 3}
    host = opencl.phasecorr_plan(images[0], **options)
    want = host.correlate_many(np.stack(images))
    on_device = [cla.to_device(queue, a) for a in images]
    with on_queue.phasecorr_plan_cl(on_device[0], **options) as plan:
        got = plan.correlate_many_cl(on_device)
        np.testing.assert_array_equal(got.shifts, want.shifts)
        np.testing.assert_array_equal(got.peaks, want.peaks)
        np.testing.assert_array_equal(got.flags, want.flags)
        np.testing.assert_allclose(got.shifts[4], [-4, 4], atol=0.5)
        one = plan.correlate_cl(on_device[2])
        np.testing.assert_array_equal(one.shift, want.shifts[2])
        # a new reference from the device; host movers on the same plan
        host.set_reference(images[1])
        plan.set_reference_cl(on_device[1])
        again = plan.correlate_many_cl(on_device)
        np.testing.assert_array_equal(again.shifts, host.correlate_many(np.stack(images)).shifts)
        np.testing.assert_array_equal(plan.correlate(images[3]).shift, again.shifts[3])
        assert plan.fft_size == host.fft_size


@pytest.mark.parametrize("dtype", ["uint16", "float32"])
def test_volume_plan_equals_the_host_plan(on_queue: parvis.Context, opencl: parvis.Context,
                                          queue: Any, dtype: str) -> None:
    volumes = series(dtype, 3, (8, 16, 20))
    want = opencl.phasecorr_plan(volumes[0], window="hann").correlate_many(np.stack(volumes))
    # the reference as a strided view: every other slice of a taller array
    tall = np.zeros((16, 16, 20), dtype)
    tall[::2] = volumes[0]
    with on_queue.phasecorr_plan_cl(cla.to_device(queue, tall)[::2], window="hann") as plan:
        got = plan.correlate_many_cl([cla.to_device(queue, v) for v in volumes])
    np.testing.assert_array_equal(got.shifts, want.shifts)
    np.testing.assert_array_equal(got.peaks, want.peaks)


def test_plan_misuse(on_queue: parvis.Context, opencl: parvis.Context, queue: Any) -> None:
    images = series("float32", 2)
    r_dev, m_dev = (cla.to_device(queue, a) for a in images)
    with pytest.raises(parvis.InvalidArgument, match="pyopencl.array.Array"):
        on_queue.phasecorr_plan_cl(images[0])
    with pytest.raises(parvis.InvalidArgument, match="max_batch"):
        on_queue.phasecorr_plan_cl(r_dev, max_batch=0)
    failed = cl.UserEvent(queue.context)
    failed.set_status(-1)
    with pytest.raises(parvis.InvalidArgument, match="failed"):
        on_queue.phasecorr_plan_cl(r_dev, wait_for=[failed])
    with parvis.Context("cpu") as cpu, pytest.raises(parvis.Error, match="OpenCL context"):
        cpu.phasecorr_plan_cl(r_dev)
    foreign = cla.to_device(caller_queue(opencl), images[1])
    with on_queue.phasecorr_plan_cl(r_dev) as plan:
        with pytest.raises(parvis.InvalidArgument, match="shape"):
            plan.correlate_cl(m_dev[:20])
        with pytest.raises(parvis.InvalidArgument, match="pyopencl.array.Array"):
            plan.correlate_many_cl([m_dev, images[1]])
        with pytest.raises(parvis.InvalidArgument, match="empty"):
            plan.correlate_many_cl([])
        with pytest.raises(parvis.InvalidArgument, match="another cl_context"):
            plan.correlate_many_cl([m_dev, foreign])
        with pytest.raises(parvis.InvalidArgument, match="failed"):
            plan.set_reference_cl(m_dev, wait_for=[failed])
        with pytest.raises(parvis.InvalidArgument, match="dtype"):
            plan.correlate_cl(m_dev.astype(np.int32))
        # the plan still works after the refusals
        want = opencl.phasecorr_plan(images[0]).correlate(images[1])
        np.testing.assert_array_equal(plan.correlate_cl(m_dev).shift, want.shift)


def rect_mask(shape: Tuple[int, ...], dtype: str, dy: int = 0, dx: int = 0) -> np.ndarray:
    """A mask of dtype (values 0 / 3): a rectangle, moved by (dy, dx)."""
    mask = np.zeros(shape, dtype)
    mask[..., 3 + dy:shape[-2] - 5 + dy, 4 + dx:shape[-1] - 6 + dx] = 3
    return mask


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_masked_equals_the_host_method(on_queue: parvis.Context, opencl: parvis.Context,
                                       queue: Any, dtype: str) -> None:
    reference, moving = series(dtype, 3)[0::2]
    r_mask, m_mask = rect_mask(reference.shape, dtype), rect_mask(reference.shape, dtype, 2, -2)
    want = opencl.phase_correlate_masked(reference, moving, r_mask, m_mask)
    got = on_queue.phase_correlate_masked_cl(*(cla.to_device(queue, a) for a in
                                               (reference, moving, r_mask, m_mask)))
    np.testing.assert_array_equal(got.shift, want.shift)
    assert got.peak == want.peak and got.flags == want.flags
    np.testing.assert_allclose(got.shift, [-2, 2], atol=0.5)
    one = on_queue.phase_correlate_masked_cl(cla.to_device(queue, reference),
                                             cla.to_device(queue, moving),
                                             cla.to_device(queue, r_mask), overlap_ratio=0.5)
    host_one = opencl.phase_correlate_masked(reference, moving, r_mask, overlap_ratio=0.5)
    np.testing.assert_array_equal(one.shift, host_one.shift)


@pytest.mark.parametrize("dtype", ["uint16", "float32"])
def test_masked_volume_equals_the_host_method(on_queue: parvis.Context, opencl: parvis.Context,
                                              queue: Any, dtype: str) -> None:
    reference, moving = series(dtype, 2, (8, 16, 20))
    mask = rect_mask(reference.shape, dtype)
    want = opencl.phase_correlate_masked(reference, moving, mask)
    got = on_queue.phase_correlate_masked_cl(*(cla.to_device(queue, a) for a in
                                               (reference, moving, mask)))
    np.testing.assert_array_equal(got.shift, want.shift)
    assert got.peak == want.peak


def test_masked_misuse(on_queue: parvis.Context, queue: Any) -> None:
    reference, moving = series("float32", 2)
    r_dev, m_dev = cla.to_device(queue, reference), cla.to_device(queue, moving)
    mask = cla.to_device(queue, rect_mask(reference.shape, "float32"))
    with pytest.raises(parvis.InvalidArgument, match="shape"):
        on_queue.phase_correlate_masked_cl(r_dev, m_dev, mask[:20])
    with pytest.raises(parvis.InvalidArgument, match="no valid"):
        on_queue.phase_correlate_masked_cl(r_dev, m_dev, cla.zeros(queue, reference.shape,
                                                                   np.float32))
    with pytest.raises(parvis.InvalidArgument, match="pyopencl.array.Array"):
        on_queue.phase_correlate_masked_cl(r_dev, m_dev, np.ones(reference.shape, np.float32))
    failed = cl.UserEvent(queue.context)
    failed.set_status(-1)
    with pytest.raises(parvis.InvalidArgument, match="failed"):
        on_queue.phase_correlate_masked_cl(r_dev, m_dev, mask, wait_for=[failed])


def test_normxcorr2_batch_equals_the_host_method(on_queue: parvis.Context,
                                                 opencl: parvis.Context, queue: Any) -> None:
    images = series("uint8", 2) + series("float32", 1)
    template = np.ascontiguousarray(images[0][7:17, 9:21])
    want = opencl.normxcorr2_batch(template, images, min_overlap=20)
    on_device = [cla.to_device(queue, a) for a in images]
    got = on_queue.normxcorr2_batch_cl(cla.to_device(queue, template), on_device, min_overlap=20)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.map.get(), w.map)
        assert g[1:] == w[1:]
    assert (got[0].x, got[0].y) == (9, 7)
    alone = on_queue.normxcorr2_batch_cl(cla.to_device(queue, template), on_device,
                                         min_overlap=20, compute_maps=False)
    assert all(a.map is None and a[1:] == w[1:] for a, w in zip(alone, want))
    with pytest.raises(parvis.InvalidArgument, match="empty"):
        on_queue.normxcorr2_batch_cl(cla.to_device(queue, template), [])
    with pytest.raises(parvis.InvalidArgument, match="maps"):
        on_queue.normxcorr2_batch_cl(cla.to_device(queue, template), on_device,
                                     out=[cla.empty(queue, (4, 4), np.float32)])


def test_octreg_average_registers_each_target(on_queue: parvis.Context,
                                              opencl: parvis.Context, queue: Any) -> None:
    first = parvis.synthesize_oct((40, 48, 64), seed=11, integer_shifts=True)
    second = parvis.synthesize_oct((40, 48, 64), seed=12, integer_shifts=True)
    reference = first.reference
    targets = [first.target, second.target]
    got = on_queue.octreg_average_cl(cla.to_device(queue, reference),
                                     [cla.to_device(queue, t) for t in targets],
                                     enface=True, slow=True)
    # each target's shifts are octreg's (the average registers them so)
    for k, target in enumerate(targets):
        want = opencl.octreg(reference, target)
        np.testing.assert_array_equal(got.shifts[k], want.shifts)
        np.testing.assert_array_equal(got.valid[k], want.valid)
    assert got.averaged.shape == reference.shape and np.all(np.isfinite(got.averaged.get()))
    assert got.enface.shape == (40, 48) and got.slow.shape == (64, 40)
    assert got.coverage.shape == (40,) and got.coverage.max() > 0
    with pytest.raises(parvis.InvalidArgument, match="empty"):
        on_queue.octreg_average_cl(cla.to_device(queue, reference), [])
    with pytest.raises(parvis.InvalidArgument, match="shape"):
        on_queue.octreg_average_cl(cla.to_device(queue, reference),
                                   [cla.to_device(queue, reference[:20])])


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_normxcorr2_masked_equals_the_host_method(on_queue: parvis.Context,
                                                  opencl: parvis.Context, queue: Any,
                                                  dtype: str) -> None:
    image = series(dtype, 1)[0]
    template = np.ascontiguousarray(image[7:17, 9:21])
    t_mask = np.ones(template.shape, np.uint8)
    t_mask[:, 5] = 0
    i_mask = np.ones(image.shape, np.uint8)
    i_mask[:2] = 0
    want = opencl.normxcorr2_masked(template, image, t_mask, i_mask, min_overlap=20)
    args = [cla.to_device(queue, a) for a in (template, image, t_mask, i_mask)]
    got = on_queue.normxcorr2_masked_cl(*args, min_overlap=20)
    np.testing.assert_array_equal(got.map.get(), want.map)
    assert got[1:] == want[1:] and (got.x, got.y) == (9, 7)
    alone = on_queue.normxcorr2_masked_cl(*args[:3], min_overlap=20, compute_map=False)
    assert alone.map is None
    assert alone[1:] == opencl.normxcorr2_masked(template, image, t_mask, min_overlap=20)[1:]
    with pytest.raises(parvis.InvalidArgument, match="no valid"):
        on_queue.normxcorr2_masked_cl(args[0], args[1], cla.zeros(queue, template.shape,
                                                                  np.uint8))
    with pytest.raises(parvis.InvalidArgument, match="shape"):
        on_queue.normxcorr2_masked_cl(*args, out=cla.empty(queue, (4, 4), np.float32))
