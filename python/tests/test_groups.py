"""Device groups: each group operation gives exactly (bit for bit) the
results of running its items one by one on a single context of the same
kind.  The CPU backend's group is one context (it already uses every core);
on OpenCL the group holds the same device twice (two contexts, two queues),
which runs the member threads on a one-device host.  Bad input is refused
before any device starts and leaves `out=` untouched."""
from __future__ import annotations

import numpy as np
import pytest

import parvis
from conftest import BACKENDS, texture

OCT_SHAPE = (40, 48, 64)   # B-scans, A-lines, depth
TARGETS = 3
FLOW_N = 12
FRAMES = 3
FLOW = dict(alpha=1e-3, rho=1.0, kernel_size=5, warps=2, iterations=10)
BP = dict(levels=3, iterations=5, tile_padding=8)


def opencl_index() -> int:
    """The device a Context("opencl") runs on: the first GPU, else device 0."""
    found = parvis.devices()
    return next((d.index for d in found if d.type == "GPU"), 0)


def make_group(backend: str) -> parvis.DeviceGroup:
    if backend == "cpu":
        return parvis.DeviceGroup("cpu")
    index = opencl_index()
    return parvis.DeviceGroup("opencl", devices=[index, index])


@pytest.fixture(scope="module", params=BACKENDS)
def pair(request):
    """(group, single context) of one backend."""
    with make_group(request.param) as group, parvis.Context(request.param) as single:
        if group.backend != single.backend:   # PARVIS_BACKEND=cpu overrides
            pytest.skip("the environment forces another backend")
        yield group, single


@pytest.fixture(scope="module")
def oct_inputs():
    """One scene (same seed), a different motion per target."""
    reference = parvis.synthesize_oct(OCT_SHAPE, seed=11).reference
    targets = [parvis.synthesize_oct(OCT_SHAPE, seed=11, start=(0.5 * i, 1.0 + i, 0.0),
                                     integer_shifts=bool(i % 2)).target
               for i in range(TARGETS)]
    return reference, targets


def moving_frames():
    """A smooth texture moving by (0.4, -0.3, 0.2) voxels per frame."""
    z, y, x = np.meshgrid(*(np.arange(FLOW_N, dtype=np.float32),) * 3, indexing="ij")
    frames = []
    for t in range(FRAMES):
        fx, fy, fz = x - 0.4 * t, y + 0.3 * t, z - 0.2 * t
        frames.append((0.5 + 0.2 * np.sin(0.45 * fx) * np.cos(0.35 * fy)
                       + 0.15 * np.sin(0.3 * fz + 0.2 * fx)).astype(np.float32))
    return frames


def stereo_pair():
    left = (texture((48, 64), seed=5) * 255).astype(np.uint8)
    right = np.concatenate([left[:, 3:], left[:, -1:].repeat(3, axis=1)], axis=1)
    return left, right


def test_group_properties(pair):
    group, single = pair
    assert group.size == (1 if single.backend == "cpu" else 2)
    assert group.device_names == [single.device_name] * group.size
    assert repr(group).startswith("<parvis.DeviceGroup of")
    timing = group.last_timing()
    assert set(timing) == {"kernel", "upload", "download", "total"}
    with pytest.raises(parvis.InvalidArgument):
        group.last_timing(group.size)
    with pytest.raises(parvis.InvalidArgument):
        group.last_items(group.size)


def test_octreg_sequence_equals_one_by_one(pair, oct_inputs):
    group, single = pair
    reference, targets = oct_inputs
    with single.octreg_plan(reference) as plan:
        expected = [plan.register(t) for t in targets]
    found = group.octreg_sequence(reference, np.stack(targets))
    assert len(found) == TARGETS
    for f, e in zip(found, expected):
        np.testing.assert_array_equal(f.shifts, e.shifts)
        np.testing.assert_array_equal(f.peak, e.peak)
        np.testing.assert_array_equal(f.valid, e.valid)
        assert f.info == e.info and f.registered is None
    assert sum(group.last_items(i) for i in range(group.size)) == TARGETS
    assert group.last_timing()["total"] > 0


def test_flow3d_sequence_equals_one_by_one(pair):
    group, single = pair
    frames = moving_frames()
    expected = [single.flow3d(frames[i], frames[i + 1], **FLOW) for i in range(FRAMES - 1)]
    found = group.flow3d_sequence(frames, **FLOW)
    assert len(found) == FRAMES - 1
    for f, e in zip(found, expected):
        for a, b in zip(f, e):
            np.testing.assert_array_equal(a, b)
    centre = (FLOW_N // 2,) * 3
    assert 0.05 < found[0].u[centre] < 0.8   # the motion is found: +0.4 voxel in x


def test_stereo_bp_equals_single_context_with_the_same_tiles(pair):
    group, single = pair
    left, right = stereo_pair()
    band = -(-left.shape[0] // group.size)   # the group's own split: one band per member
    expected = single.stereo_bp(left, right, 16, tile_height=band, tile_width=left.shape[1], **BP)
    np.testing.assert_array_equal(group.stereo_bp(left, right, 16, **BP), expected)
    tiled = single.stereo_bp(left, right, 16, tile_width=24, tile_height=20, **BP)
    out = np.full(left.shape, -1.0, np.float32)
    assert group.stereo_bp(left, right, 16, tile_width=24, tile_height=20, out=out, **BP) is out
    np.testing.assert_array_equal(out, tiled)


def test_stereo_bp_disc_max_default_scales_with_the_range(pair):
    group, _ = pair
    left, right = stereo_pair()
    derived = group.stereo_bp(left, right, 32, **BP)
    explicit = group.stereo_bp(left, right, 32, disc_max=max(1.7, 32 / 7.5), **BP)
    np.testing.assert_array_equal(derived, explicit)


def test_stereo_sgm_bands_within_the_tolerance(pair):
    """pv_stereo_sgm_group: one member gives Context.stereo_sgm exactly;
    overlapping bands give the same integer disparities on >= 99% of the
    pixels (include/parvis/multi.h)."""
    group, single = pair
    from conftest import STEREO
    left = parvis.imread(STEREO / "tsukuba" / "left.pgm")
    right = parvis.imread(STEREO / "tsukuba" / "right.pgm")
    expected = single.stereo_sgm(left, right, ndisp=16, subpixel=False)
    found = group.stereo_sgm(left, right, ndisp=16, subpixel=False)
    same = np.mean((found == expected) | (np.isinf(found) & np.isinf(expected)))
    if group.size == 1:
        assert same == 1.0
    else:
        assert same >= 0.99
    out = np.full(left.shape, -1.0, np.float32)
    with pytest.raises(parvis.InvalidArgument, match="paths"):
        group.stereo_sgm(left, right, ndisp=16, paths=5, out=out)
    assert (out == -1.0).all()


def test_bad_input_is_refused(oct_inputs):
    reference, targets = oct_inputs
    with parvis.DeviceGroup("cpu") as group:
        with pytest.raises(parvis.InvalidArgument, match="empty"):
            group.octreg_sequence(reference, [])
        with pytest.raises(parvis.InvalidArgument, match=r"targets\[1\]"):
            group.octreg_sequence(reference, [targets[0], targets[1][:, :, :32]])
        frames = moving_frames()
        with pytest.raises(parvis.InvalidArgument, match="at least 2"):
            group.flow3d_sequence(frames[:1])
        with pytest.raises(parvis.InvalidArgument, match=r"frames\[1\]"):
            group.flow3d_sequence([frames[0], frames[1][:8]])
        left, right = stereo_pair()
        out = np.full(left.shape, -1.0, np.float32)
        with pytest.raises(parvis.InvalidArgument):   # the views differ in size
            group.stereo_bp(left, right[:, :40], 16, out=out)
        with pytest.raises(parvis.InvalidArgument):   # ndisp < 1, checked by the C library
            group.stereo_bp(left, right, 0, out=out, **BP)
        assert (out == -1.0).all()
    with pytest.raises(parvis.InvalidArgument):
        parvis.DeviceGroup("cpu", devices=[0])          # indices with the CPU backend
    with pytest.raises(parvis.InvalidArgument):
        parvis.DeviceGroup("cpu", devices=[])
    with pytest.raises(parvis.InvalidArgument):
        parvis.DeviceGroup("cpu", devices="some")


def test_closed_group_refuses_calls(oct_inputs):
    reference, targets = oct_inputs
    group = parvis.DeviceGroup("cpu")
    group.close()
    group.close()
    assert group.closed and repr(group) == "<parvis.DeviceGroup closed>"
    with pytest.raises(parvis.ClosedError):
        group.octreg_sequence(reference, targets)
    with pytest.raises(parvis.ClosedError):
        group.size
    with pytest.raises(parvis.ClosedError):
        group.last_timing()


@pytest.mark.skipif("opencl" not in BACKENDS, reason="no OpenCL device")
def test_opencl_index_out_of_range():
    with pytest.raises(parvis.InvalidArgument, match="4096"):
        parvis.DeviceGroup("opencl", devices=[4096])
