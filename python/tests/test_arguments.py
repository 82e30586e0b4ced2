"""Arguments on their way to C: paths with NUL bytes, integers beyond the
C types, out= arrays of ndarray subclasses, masked arrays, and shapes in
messages said the numpy way."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import parvis
from conftest import BACKENDS, texture

VOLUME = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
IMAGE = (texture((24, 32), seed=3) * 255).astype(np.uint8)


# ---------------------------------------------------------- 4. NUL in paths
def path_forms(tmp_path: pathlib.Path, name: str):
    """The same NUL-bearing file name as str, bytes and os.PathLike."""
    text = str(tmp_path / name)
    return [text, text.encode(), pathlib.Path(text)]


WRITERS = {
    "write_volume": lambda p: parvis.write_volume(p, VOLUME),
    "imwrite": lambda p: parvis.imwrite(p, IMAGE),
    "write_flow": lambda p: parvis.write_flow(p, (VOLUME, VOLUME, VOLUME)),
    "write_flo": lambda p: parvis.write_flo(p, (VOLUME[0], VOLUME[0])),
}
WRITE_NAMES = {"write_volume": "x.nii\0.raw", "imwrite": "x.pgm\0.pfm",
               "write_flow": "x.nii\0.gz", "write_flo": "x.flo\0.txt"}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_nul_in_written_path_refused(tmp_path, writer):
    for path in path_forms(tmp_path, WRITE_NAMES[writer]):
        with pytest.raises(ValueError, match="null byte"):
            WRITERS[writer](path)
    # Nothing was written under the name before the NUL.
    assert list(tmp_path.iterdir()) == []


def test_nul_in_read_path_refused(tmp_path):
    parvis.imwrite(tmp_path / "a.pgm", IMAGE)
    parvis.write_volume(tmp_path / "v.nii", VOLUME)
    parvis.write_volume(tmp_path / "v.raw", VOLUME)
    parvis.write_flo(tmp_path / "f.flo", (VOLUME[0], VOLUME[0]))
    readers = [
        ("a.pgm\0b", parvis.imread),
        ("v.nii\0b", parvis.read_volume),
        ("v.raw\0b", lambda p: parvis.read_volume(p, shape=VOLUME.shape)),
        ("f.flo\0b", parvis.read_flo),
    ]
    for name, read in readers:
        for path in path_forms(tmp_path, name):
            with pytest.raises(parvis.InvalidArgument, match="null byte"):
                read(path)
    # The files themselves read back (the check refuses only the NUL).
    np.testing.assert_array_equal(parvis.imread(tmp_path / "a.pgm"), IMAGE)
    np.testing.assert_array_equal(parvis.read_volume(tmp_path / "v.raw", VOLUME.shape), VOLUME)


# ------------------------------------------------------ 5. integer ranges
OUT_OF_RANGE = {
    "memory_budget=2**70": lambda ctx: ctx.stereo_bp(IMAGE, IMAGE, 4, memory_budget=2**70),
    "memory_budget=-1": lambda ctx: ctx.stereo_bp(IMAGE, IMAGE, 4, memory_budget=-1),
    "ndisp=2**40": lambda ctx: ctx.stereo_sad(IMAGE, IMAGE, 2**40),
    "taps=-2**63": lambda ctx: ctx.gaussian_blur(IMAGE, 1.0, taps=-2**63),
    "sigma=10**400": lambda ctx: ctx.gaussian_blur(IMAGE, 10**400),
    "sift_plan height 2**31": lambda ctx: ctx.sift_plan((2**31, 16)),
    "flow_plan y 2**35": lambda ctx: ctx.flow_plan((2, 2**35, 8)),
    "max_batch=2**32": lambda ctx: ctx.phasecorr_plan(IMAGE, max_batch=2**32),
    "ransac iterations=2**40": lambda ctx: parvis.find_homography(
        ctx, np.ones((8, 2)), np.ones((8, 2)), iterations=2**40),
    "border=2**40": lambda ctx: parvis.disparity_error(IMAGE, IMAGE, border=2**40),
    "threshold=10**400": lambda ctx: parvis.disparity_error(IMAGE, IMAGE, threshold=10**400),
    "read_volume shape 2**40": lambda ctx: parvis.read_volume("unused.raw",
                                                              shape=(2**40, 1, 1)),
    "synthesize_oct 2**31": lambda ctx: parvis.synthesize_oct((2**31, 2, 2)),
    "synthesize_oct 2**32 voxels": lambda ctx: parvis.synthesize_oct((2**30, 2, 2)),
    "saccades=2**33": lambda ctx: parvis.synthesize_oct((8, 8, 8), saccades=2**33),
    "cpu_threads=2**40": lambda ctx: parvis.Context("cpu", cpu_threads=2**40),
}


@pytest.mark.parametrize("case", sorted(OUT_OF_RANGE))
def test_out_of_range_integers_raise_invalid_argument(cpu, case):
    with pytest.raises(parvis.InvalidArgument) as info:
        OUT_OF_RANGE[case](cpu)
    assert not isinstance(info.value, OverflowError)


def test_integers_at_the_c_limits_still_pass(cpu):
    # The largest size_t budget is a valid (unbounded) budget.
    top = 2**64 - 1
    np.testing.assert_array_equal(cpu.stereo_bp(IMAGE, IMAGE, 4, memory_budget=top),
                                  cpu.stereo_bp(IMAGE, IMAGE, 4))
    assert 0 <= parvis.disparity_error(IMAGE.astype(np.float32), IMAGE, border=np.int64(2)) <= 1
    # Seeds are taken modulo 2**32 (octreg) or 2**64 (RANSAC), as before.
    np.testing.assert_array_equal(parvis.synthesize_oct((8, 8, 8), seed=2**32 + 5).target,
                                  parvis.synthesize_oct((8, 8, 8), seed=5).target)


# --------------------------------------------------- 6. out= and masks
def blur_into(ctx, out):
    return ctx.gaussian_blur(IMAGE, 1.5, out=out)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
@pytest.mark.parametrize("backend", BACKENDS)
def test_out_memmap_and_matrix_written_in_place(tmp_path, backend):
    with parvis.Context(backend) as ctx:
        want = ctx.gaussian_blur(IMAGE, 1.5)
        mapped = np.memmap(tmp_path / "out.f32", np.float32, "w+", shape=IMAGE.shape)
        assert blur_into(ctx, mapped) is mapped
        mapped.flush()
        on_disk = np.fromfile(tmp_path / "out.f32", np.float32).reshape(IMAGE.shape)
        np.testing.assert_array_equal(on_disk, want)
        matrix = np.asmatrix(np.zeros(IMAGE.shape, np.float32))
        got = ctx.stereo_sad(IMAGE, IMAGE, 4, out=matrix)
        assert got is matrix
        np.testing.assert_array_equal(np.asarray(matrix), ctx.stereo_sad(IMAGE, IMAGE, 4))


def test_out_memmap_of_bad_layout_still_refused(tmp_path, cpu):
    mapped = np.memmap(tmp_path / "out.f32", np.float32, "w+", shape=(IMAGE.shape[0], 64))
    with pytest.raises(parvis.InvalidArgument, match="shape"):
        blur_into(cpu, mapped)
    with pytest.raises(parvis.InvalidArgument, match="layout"):
        blur_into(cpu, mapped[:, ::2])


def test_masked_arrays_refused(cpu):
    masked = np.ma.masked_array(IMAGE, mask=IMAGE > 128)
    calls = [
        lambda: cpu.stereo_sad(masked, IMAGE, 4),
        lambda: cpu.gaussian_blur(masked, 1.0),
        lambda: cpu.gradients(masked),
        lambda: cpu.to_grey(masked),
        lambda: cpu.flow_warp(np.ma.masked_array(VOLUME), (VOLUME, VOLUME, VOLUME)),
        lambda: cpu.match(np.ma.masked_array(np.zeros((3, 128), np.uint8)),
                          np.zeros((3, 128), np.uint8)),
        lambda: parvis.find_homography(cpu, np.ma.masked_array(np.ones((8, 2))),
                                       np.ones((8, 2))),
        lambda: parvis.write_flo("unused.flo", (np.ma.masked_array(VOLUME[0]), VOLUME[0])),
    ]
    for call in calls:
        with pytest.raises(parvis.InvalidArgument, match="masked arrays are not supported"):
            call()
    out = np.ma.masked_array(np.zeros(IMAGE.shape, np.float32))
    with pytest.raises(parvis.InvalidArgument, match="masked arrays are not supported"):
        blur_into(cpu, out)
    assert not out.any()


# ------------------------------------------------- 7. shapes in messages
TALL, WIDE = np.zeros((40, 24), np.float32), np.zeros((24, 40), np.float32)
MISMATCHED = {
    "stereo_sad": lambda ctx: ctx.stereo_sad(TALL, WIDE, 4),
    "stereo_bp": lambda ctx: ctx.stereo_bp(TALL, WIDE, 4),
    "phase_correlate": lambda ctx: ctx.phase_correlate(TALL, WIDE),
    "phase_correlate_masked": lambda ctx: ctx.phase_correlate_masked(TALL, WIDE, TALL),
    "phase_correlate_masked mask": lambda ctx: ctx.phase_correlate_masked(TALL, TALL, WIDE),
    "normxcorr2_masked mask": lambda ctx: ctx.normxcorr2_masked(TALL, TALL, WIDE),
    "normxcorr2_batch": lambda ctx: ctx.normxcorr2_batch(TALL, [TALL, WIDE]),
    "disparity_error": lambda ctx: parvis.disparity_error(TALL, WIDE),
    "flow2d": lambda ctx: ctx.flow2d(TALL, WIDE),
    "plan.correlate": lambda ctx: ctx.phasecorr_plan(TALL).correlate(WIDE),
    "sift_plan.detect": lambda ctx: ctx.sift_plan(TALL.shape).detect(WIDE),
    "sift too small": lambda ctx: ctx.sift(np.zeros((8, 40), np.float32)),
    "out": lambda ctx: ctx.gaussian_blur(TALL, 1.0, out=WIDE.copy()),
    "write_flo": lambda ctx: parvis.write_flo("unused.flo", (TALL, WIDE)),
}


@pytest.mark.parametrize("case", sorted(MISMATCHED))
def test_shapes_in_messages_are_rows_columns(cpu, case):
    with pytest.raises(parvis.InvalidArgument) as info:
        MISMATCHED[case](cpu)
    message = info.value.message
    # Never the C library's width-first "40x24", which reads backwards to
    # numpy users; the numpy shape with its axes named instead.
    assert "(rows, columns)" in message
    assert not any(f"{a}x{b}" in message for a, b in [(24, 40), (40, 24), (8, 40), (40, 8)])
