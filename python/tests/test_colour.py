"""Colour and 16-bit inputs: Context.to_grey, Context.sift and SiftPlan on
(H, W, 3) uint8/uint16 and (H, W) uint16 arrays, and imread keeping a
file's colour and depth."""
from __future__ import annotations

import numpy as np
import pytest

import parvis
from conftest import STEREO


def venus_colour() -> np.ndarray:
    """An RGB picture from venus: three shifted views as R, G and B."""
    grey = parvis.imread(STEREO / "venus" / "left.pgm")[:160, :200]
    return np.stack([grey, np.roll(grey, 3, axis=1), 255 - np.roll(grey, 4, axis=0)], axis=2)


def test_to_grey_known_pixels(ctx):
    """Hand-computed luma (0.299 R + 0.587 G + 0.114 B) and 16-bit / 257."""
    rgb = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [10, 20, 30]]], np.uint8)
    np.testing.assert_allclose(ctx.to_grey(rgb)[0], [76.245, 149.685, 29.07, 18.15], rtol=1e-5)
    deep = rgb.astype(np.uint16) * 257
    np.testing.assert_allclose(ctx.to_grey(deep)[0], [76.245, 149.685, 29.07, 18.15], rtol=1e-5)
    grey16 = np.array([[0, 257, 65535]], np.uint16)
    np.testing.assert_allclose(ctx.to_grey(grey16)[0], [0.0, 1.0, 255.0], rtol=1e-6)
    grey8 = np.array([[0, 7, 255]], np.uint8)
    np.testing.assert_array_equal(ctx.to_grey(grey8)[0], [0.0, 7.0, 255.0])


def test_to_grey_strided_views_and_out(ctx):
    """Views with gaps between rows are read in place; out= is written."""
    rgb = venus_colour()
    view = rgb[10:90, 20:150]
    out = np.empty(view.shape[:2], np.float32)
    got = ctx.to_grey(view, out=out)
    assert got is out
    want = ctx.to_grey(np.ascontiguousarray(view))
    np.testing.assert_array_equal(got, want)


def test_to_grey_backends_agree(cpu, opencl):
    """Both backends do the same float operations in the same order: the
    grey images agree to 1e-6 relative (PV_TOL_COLOUR_REL)."""
    rgb16 = venus_colour().astype(np.uint16) * 257 + 5
    for image in (venus_colour(), rgb16, rgb16[:, :, 1]):
        a, b = cpu.to_grey(image), opencl.to_grey(image)
        assert np.abs(a - b).max() <= 1e-6 * max(1.0, float(np.abs(a).max()))


def test_to_grey_bad_input(cpu):
    with pytest.raises(parvis.InvalidArgument):
        cpu.to_grey(np.zeros((8, 8, 4), np.uint8))       # four channels
    with pytest.raises(parvis.InvalidArgument):
        cpu.to_grey(np.zeros((8, 8, 3), np.float32))     # float colour
    with pytest.raises(parvis.InvalidArgument):
        cpu.to_grey(np.zeros((8, 8), np.uint8), out=np.zeros((8, 8), np.uint8))
    with pytest.raises(parvis.InvalidArgument):
        cpu.to_grey(np.zeros((8, 8), np.uint8), out=np.zeros((8, 9), np.float32))


def test_sift_colour_is_its_grey(ctx):
    """SIFT of an RGB or 16-bit array equals SIFT of its grey image (as
    to_grey gives it, scaled to [0, 1] as uint8 input is): the conversion
    on the device computes the same floats."""
    rgb = venus_colour()
    for image in (rgb, rgb.astype(np.uint16) * 257, rgb[:, :, 0].astype(np.uint16) * 257):
        grey = ctx.to_grey(image) * np.float32(1.0 / 255.0)
        ka, da = ctx.sift(image, preset="fast", first_octave=-1)
        kb, db = ctx.sift(grey, preset="fast", first_octave=-1)
        assert len(ka) > 0
        np.testing.assert_array_equal(ka, kb)
        np.testing.assert_array_equal(da, db)


def test_sift_plan_takes_colour(cpu):
    rgb = venus_colour()
    with cpu.sift_plan(rgb.shape[:2], preset="fast") as plan:
        single = plan.detect(rgb)
        batch = plan.detect_batch([rgb, rgb[:, :, 0]])
        np.testing.assert_array_equal(batch[0][0], single[0])
        with pytest.raises(parvis.InvalidArgument):
            plan.detect(rgb[:, :-1])


def test_imread_colour_and_16_bit(tmp_path):
    """A colour PPM read as RGB (8 and 16 bits) and as 16-bit grey."""
    rgb = np.array([[[255, 0, 0], [10, 20, 30]]], np.uint8)
    path = tmp_path / "card.ppm"
    path.write_bytes(b"P6\n2 1\n255\n" + rgb.tobytes())
    np.testing.assert_array_equal(parvis.imread(path, colour=True), rgb)
    np.testing.assert_array_equal(parvis.imread(path, np.uint16, colour=True),
                                  rgb.astype(np.uint16) * 257)
    # 16-bit grey: round(luma x 257)
    np.testing.assert_array_equal(parvis.imread(path, np.uint16),
                                  [[round(76.245 * 257), round(18.15 * 257)]])
    with pytest.raises(parvis.InvalidArgument):
        parvis.imread(path, np.float32, colour=True)
