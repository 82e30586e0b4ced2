"""A small PNG writer (zlib only) and drawing helpers for the examples."""
from __future__ import annotations

import struct
import zlib

import numpy as np


def write_png(path: str, image: np.ndarray) -> None:
    """Write an (H, W) grey or (H, W, 3) RGB uint8 array as a PNG file."""
    a = np.ascontiguousarray(image, dtype=np.uint8)
    colour = 2 if a.ndim == 3 else 0
    h, w = a.shape[:2]
    rows = a.reshape(h, -1)
    raw = b"".join(b"\x00" + rows[y].tobytes() for y in range(h))   # filter 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", w, h, 8, colour, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def colour_map(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Blue -> cyan -> green -> yellow -> red for lo..hi; non-finite -> black."""
    stops = np.array([[0, 0, 143], [0, 112, 255], [0, 224, 160], [128, 255, 32],
                      [255, 208, 0], [255, 64, 0], [160, 0, 0]], np.float64)
    t = np.clip((np.nan_to_num(values, posinf=lo, neginf=lo) - lo) / max(hi - lo, 1e-9), 0, 1)
    pos = t * (len(stops) - 1)
    i = np.minimum(pos.astype(int), len(stops) - 2)
    f = (pos - i)[..., None]
    rgb = stops[i] * (1 - f) + stops[i + 1] * f
    rgb[~np.isfinite(values)] = 0
    return rgb.astype(np.uint8)


def draw_line(rgb: np.ndarray, x0: float, y0: float, x1: float, y1: float,
              colour: tuple) -> None:
    """Draw a straight line of single pixels into an RGB image."""
    n = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
    xs = np.rint(np.linspace(x0, x1, n)).astype(int)
    ys = np.rint(np.linspace(y0, y1, n)).astype(int)
    keep = (xs >= 0) & (xs < rgb.shape[1]) & (ys >= 0) & (ys < rgb.shape[0])
    rgb[ys[keep], xs[keep]] = colour
