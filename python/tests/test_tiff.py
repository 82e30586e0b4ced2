"""TIFF through parvis.imread and parvis.read_volume: uncompressed files
written here (grey and RGB, 8/16-bit and float32, both byte orders, several
pages) read back exactly; damaged files raise FormatError.  Skipped when
the library was built without libtiff."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import parvis

pytestmark = pytest.mark.skipif(not parvis.has_tiff(), reason="library built without TIFF")


def write_tiff(path, pages, big_endian=False):
    """pages: arrays (H, W) or (H, W, 3) of uint8, uint16 or float32, one
    strip each, the data after the header and the IFDs after the data."""
    order = ">" if big_endian else "<"
    body = bytearray(b"MM\0*" if big_endian else b"II*\0") + b"\0\0\0\0"
    offsets = []
    for page in pages:
        offsets.append(len(body))
        body += np.ascontiguousarray(page).astype(page.dtype.newbyteorder(order)).tobytes()
        if len(body) % 2:
            body += b"\0"
    struct.pack_into(order + "I", body, 4, len(body))
    for i, page in enumerate(pages):
        samples = 3 if page.ndim == 3 else 1
        bits = page.dtype.itemsize * 8
        # BitsPerSample of an RGB page is a count of 3: its values go
        # after this IFD.
        entries = 11
        ifd_size = 2 + 12 * entries + 4
        start = len(body)
        bits_at = start + ifd_size
        extra = struct.pack(order + "3H", bits, bits, bits) + b"\0\0" if samples == 3 else b""
        nxt = bits_at + len(extra) if i + 1 < len(pages) else 0
        fields = [(256, 4, 1, page.shape[1]), (257, 4, 1, page.shape[0]),
                  (258, 3, samples, bits if samples == 1 else bits_at), (259, 3, 1, 1),
                  (262, 3, 1, 2 if samples == 3 else 1), (273, 4, 1, offsets[i]),
                  (277, 3, 1, samples), (278, 4, 1, page.shape[0]),
                  (279, 4, 1, page.nbytes), (284, 3, 1, 1),
                  (339, 3, 1, 3 if page.dtype == np.float32 else 1)]
        assert len(fields) == entries
        ifd = struct.pack(order + "H", entries)
        for tag, kind, count, value in fields:
            short_inline = kind == 3 and count == 1
            value_bytes = (struct.pack(order + "H", value) + b"\0\0" if short_inline
                           else struct.pack(order + "I", value))
            ifd += struct.pack(order + "HHI", tag, kind, count) + value_bytes
        body += ifd + struct.pack(order + "I", nxt) + extra
    path.write_bytes(bytes(body))
    return path


def ramp(shape, dtype, scale):
    values = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) * scale
    return values.astype(dtype)


@pytest.mark.parametrize("big_endian", [False, True])
@pytest.mark.parametrize("dtype,scale", [(np.uint8, 1), (np.uint16, 257), (np.float32, 0.25)])
def test_imread_grey(tmp_path, dtype, scale, big_endian):
    page = ramp((5, 7), dtype, scale)
    path = write_tiff(tmp_path / "g.tif", [page], big_endian)
    got = parvis.imread(path, np.float32)
    np.testing.assert_array_equal(got, page.astype(np.float32))
    if dtype == np.uint16:
        np.testing.assert_array_equal(parvis.imread(path, np.uint16), page)


def test_imread_rgb(tmp_path):
    page = ramp((4, 6, 3), np.uint8, 1)
    path = write_tiff(tmp_path / "c.tiff", [page])
    np.testing.assert_array_equal(parvis.imread(path, np.uint8, colour=True), page)
    grey = parvis.imread(path, np.float32)
    luma = 0.299 * page[..., 0] + 0.587 * page[..., 1] + 0.114 * page[..., 2]
    np.testing.assert_allclose(grey, luma, rtol=1e-6)


@pytest.mark.parametrize("name", ["v.tif", "V.TIFF"])
def test_read_volume(tmp_path, name):
    pages = [ramp((3, 4), np.float32, 0.5) + 100 * k for k in range(5)]
    path = write_tiff(tmp_path / name, pages, big_endian=True)
    volume = parvis.read_volume(path)
    assert volume.shape == (5, 3, 4)
    np.testing.assert_array_equal(volume, np.stack(pages))


def test_volume_page_of_another_size(tmp_path):
    pages = [np.zeros((3, 4), np.uint16), np.zeros((3, 5), np.uint16)]
    path = write_tiff(tmp_path / "odd.tif", pages)
    with pytest.raises(parvis.FormatError, match="page 2"):
        parvis.read_volume(path)


def test_damaged(tmp_path):
    good = write_tiff(tmp_path / "good.tif", [ramp((8, 8), np.uint16, 3)]).read_bytes()
    cut = tmp_path / "cut.tif"
    cut.write_bytes(good[:40])
    with pytest.raises(parvis.FormatError):
        parvis.imread(cut)
    with pytest.raises(parvis.FormatError):
        parvis.read_volume(cut)
    junk = tmp_path / "junk.tif"
    junk.write_bytes(b"II*\0" + b"\xff" * 60)
    with pytest.raises(parvis.FormatError):
        parvis.imread(junk)
