"""2D optical flow with the C library's image defaults (Context.flow2d, and
FlowPlan for image shapes) and Middlebury .flo files (parvis.read_flo /
parvis.write_flo), against known answers: a texture moved by a known
sub-pixel shift, and .flo bytes laid out by hand."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import parvis
from conftest import texture

#: Middlebury's magic: the float 202021.25, b"PIEH" on disk.
FLO_MAGIC = 202021.25
#: The known horizontal motion of the flow tests, pixels.
SHIFT = 1.5
#: Pixels left out at each side when scoring (interpolation edges).
BORDER = 10


def shifted_pair(shape=(96, 128), seed=3):
    """(fixed, moving) with moving(x + SHIFT, y) = fixed(x, y): fixed is
    moving sampled at x + SHIFT (linear interpolation along the rows)."""
    moving = texture(shape, seed=seed, smooth=3)
    columns = np.arange(shape[1])
    fixed = np.stack([np.interp(columns + SHIFT, columns, row) for row in moving])
    return fixed.astype(np.float32), moving


def inner(a: np.ndarray) -> np.ndarray:
    return a[BORDER:-BORDER, BORDER:-BORDER]


def flo_bytes(u: np.ndarray, v: np.ndarray) -> bytes:
    """A .flo file built from the format's description, not the library."""
    rows, columns = u.shape
    pairs = np.stack([u, v], axis=-1).astype("<f4")
    return struct.pack("<fii", FLO_MAGIC, columns, rows) + pairs.tobytes()


# ------------------------------------------------------------------ .flo
def test_write_flo_lays_out_header_and_interleaved_pairs(tmp_path):
    rng = np.random.default_rng(1)
    u = rng.normal(size=(5, 7)).astype(np.float32)
    v = rng.normal(size=(5, 7)).astype(np.float32)
    u[0, 0], v[1, 2] = 1e10, np.inf          # unknown vectors are stored as they are
    path = tmp_path / "field.flo"
    parvis.write_flo(path, (u, v))
    assert path.read_bytes() == flo_bytes(u, v)


def test_read_flo_returns_the_stored_field(tmp_path):
    u = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.25
    v = -2.0 * u
    v[2, 3] = 1e10
    path = tmp_path / "hand.flo"
    path.write_bytes(flo_bytes(u, v))
    flow = parvis.read_flo(path)
    assert isinstance(flow, parvis.Flow)
    np.testing.assert_array_equal(flow.u, u)
    np.testing.assert_array_equal(flow.v, v)
    assert flow.u.dtype == np.float32 and flow.w.shape == (3, 4) and not flow.w.any()


def test_flo_round_trip_of_a_computed_flow(cpu, tmp_path):
    fixed, moving = shifted_pair((40, 48))
    flow = cpu.flow2d(fixed, moving, iterations=10)
    path = tmp_path / "computed.flo"
    parvis.write_flo(path, flow)
    back = parvis.read_flo(path)
    for got, want in zip(back, flow):
        np.testing.assert_array_equal(got, want)


def test_flo_bad_files_and_fields(tmp_path):
    good = flo_bytes(np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32))
    truncated = tmp_path / "truncated.flo"
    truncated.write_bytes(good[:-4])
    with pytest.raises(parvis.FormatError):
        parvis.read_flo(truncated)
    wrong_magic = tmp_path / "magic.flo"
    wrong_magic.write_bytes(struct.pack("<f", 1.0) + good[4:])
    with pytest.raises(parvis.FormatError):
        parvis.read_flo(wrong_magic)
    with pytest.raises(parvis.FileError):
        parvis.read_flo(tmp_path / "missing.flo")

    plane = np.zeros((4, 5), np.float32)
    with pytest.raises(parvis.InvalidArgument):            # two slices: not a 2D flow
        parvis.write_flo(tmp_path / "x.flo", (np.zeros((2, 4, 5), np.float32),) * 2)
    with pytest.raises(parvis.InvalidArgument):
        parvis.write_flo(tmp_path / "x.flo", (plane, np.zeros((4, 6), np.float32)))
    with pytest.raises(parvis.InvalidArgument):            # w would be lost
        parvis.write_flo(tmp_path / "x.flo", (plane, plane, plane + 1))
    with pytest.raises(parvis.InvalidArgument):
        parvis.write_flo(tmp_path / "x.flo", (plane,))
    with pytest.raises(parvis.FileError):
        parvis.write_flo(tmp_path / "no-such-dir" / "x.flo", (plane, plane))
    assert not (tmp_path / "x.flo").exists()


# ------------------------------------------------------------- 2D flow
def test_flow2d_defaults_are_the_libraries_image_defaults(cpu):
    """flow2d without parameters equals flow3d given the values that
    include/parvis/flow.h documents for pv_flow_params_default_2d (levels
    cut to keep 16 px at the coarsest level: 96 px -> 3 levels)."""
    fixed, moving = shifted_pair()
    documented = dict(alpha=0.02, beta=0.0, rho=1.5, kernel_size=0, warps=5, iterations=50,
                      levels=3)
    got = cpu.flow2d(fixed, moving)
    want = cpu.flow3d(fixed, moving, **documented)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    # An explicit parameter wins over the default.
    fewer = cpu.flow2d(fixed, moving, levels=1, iterations=5)
    np.testing.assert_array_equal(fewer.u, cpu.flow3d(fixed, moving, **{
        **documented, "levels": 1, "iterations": 5}).u)


def test_flow2d_recovers_a_known_shift_better_than_the_3d_defaults(ctx):
    fixed, moving = shifted_pair()
    flow = ctx.flow2d(fixed, moving)
    assert flow.u.shape == fixed.shape and not flow.w.any()
    error_2d = float(np.mean(np.abs(inner(flow.u) - SHIFT)) + np.mean(np.abs(inner(flow.v))))
    assert error_2d < 0.01                      # measured 2e-4 px on the CPU backend
    volume_defaults = ctx.flow3d(fixed, moving)
    error_3d = float(np.mean(np.abs(inner(volume_defaults.u) - SHIFT)))
    assert error_3d > 5 * error_2d              # measured 0.054 px


def test_flow2d_backends_agree(cpu, opencl):
    fixed, moving = shifted_pair()
    a, b = cpu.flow2d(fixed, moving), opencl.flow2d(fixed, moving)
    # The flow module's documented cross-check tolerance, PV_FLOW_TOLERANCE.
    assert max(float(np.max(np.abs(x - y))) for x, y in zip(a, b)) <= 1e-3


def test_flow_plan_of_an_image_shape_takes_the_image_defaults(cpu):
    fixed, moving = shifted_pair()
    plan = cpu.flow_plan(fixed.shape)
    try:
        got = plan.run(fixed, moving)
    finally:
        plan.close()
    for a, b in zip(got, cpu.flow2d(fixed, moving)):
        np.testing.assert_array_equal(a, b)


def test_flow2d_refuses_volumes_and_bad_parameters(cpu):
    fixed, moving = shifted_pair((32, 32))
    volume = np.zeros((4, 32, 32), np.float32)
    with pytest.raises(parvis.InvalidArgument):
        cpu.flow2d(volume, volume)
    with pytest.raises(parvis.InvalidArgument):
        cpu.flow2d(fixed, moving[:, :16])
    with pytest.raises(parvis.InvalidArgument):
        cpu.flow2d(fixed, moving, alpha=-1.0)
    with pytest.raises(parvis.InvalidArgument):
        cpu.flow2d(fixed, moving, gradient="sideways")
