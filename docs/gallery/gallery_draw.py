"""Drawing helpers for make_gallery.py: colour maps, panels, labels, a bar chart.

Everything is numpy only (no matplotlib), so that the gallery looks the same on
any machine that has the parvis package, the GPU host without network
included.  Lines are drawn with the examples' helper (python/examples/_png.py);
PNG files are written here with per-row filters, which the examples' writer
leaves out: smooth colour fields (flow, disparity) then take a few times less
space, and the README's pictures stay small.
"""
from __future__ import annotations

import pathlib
import struct
import sys
import zlib
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python" / "examples"))
from _png import draw_line  # noqa: E402  (the examples' line drawing)

RGB = Tuple[int, int, int]
WHITE: RGB = (255, 255, 255)
BACKGROUND: RGB = (24, 24, 28)

# Anchor colours of a rainbow map in the spirit of "turbo": dark blue for
# small values through cyan, green and yellow to dark red, with a lightness
# that rises and falls smoothly so that steps in depth stay visible.
_RAINBOW = np.array([[48, 18, 59], [65, 69, 171], [70, 117, 237], [40, 164, 253],
                     [26, 204, 211], [50, 236, 149], [120, 254, 81], [182, 245, 53],
                     [227, 215, 55], [254, 170, 45], [246, 112, 24], [213, 56, 8],
                     [162, 17, 2], [122, 4, 3]], np.float64)


def rainbow(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """(H, W) values to (H, W, 3) uint8 colours, lo..hi over the rainbow;
    non-finite values (invalid disparities, unknown ground truth) black."""
    finite = np.isfinite(values)
    t = np.clip((np.where(finite, values, lo) - lo) / max(hi - lo, 1e-9), 0.0, 1.0)
    pos = t * (len(_RAINBOW) - 1)
    i = np.minimum(pos.astype(int), len(_RAINBOW) - 2)
    f = (pos - i)[..., None]
    rgb = _RAINBOW[i] * (1 - f) + _RAINBOW[i + 1] * f
    rgb[~finite] = 0
    return np.rint(rgb).astype(np.uint8)


def flow_colours(u: np.ndarray, v: np.ndarray, max_magnitude: float) -> np.ndarray:
    """A flow field as colours: the direction as hue (right red, down
    yellow-green, left cyan, up blue-violet), the length as saturation,
    white for no motion, full colour at max_magnitude pixels."""
    hue = (np.arctan2(v, u) / (2 * np.pi)) % 1.0
    sat = np.clip(np.hypot(u, v) / max(max_magnitude, 1e-9), 0.0, 1.0)
    sector = hue * 6.0
    k = np.floor(sector).astype(int) % 6
    f = sector - np.floor(sector)
    p, q, t = 1 - sat, 1 - sat * f, 1 - sat * (1 - f)
    one = np.ones_like(sat)
    table = [(one, t, p), (q, one, p), (p, one, t), (p, q, one), (t, p, one), (one, p, q)]
    rgb = np.zeros(u.shape + (3,))
    for sector_index, channels in enumerate(table):
        mask = k == sector_index
        for c in range(3):
            rgb[..., c][mask] = channels[c][mask]
    return np.rint(rgb * 255).astype(np.uint8)


def grey(image: np.ndarray, lo: float = 0.0, hi: float = 255.0) -> np.ndarray:
    """A grey image as (H, W, 3) uint8, lo..hi stretched to 0..255."""
    t = np.clip((np.asarray(image, np.float64) - lo) / max(hi - lo, 1e-9), 0, 1)
    g = np.rint(t * 255).astype(np.uint8)
    return np.repeat(g[..., None], 3, axis=2)


def backdrop(image: np.ndarray, factor: int) -> np.ndarray:
    """A grey photograph shrunk by factor and cut to 32 grey levels: enough
    for a picture that is only context, and half the PNG bytes of 256."""
    return shrink(grey(image), factor) // 8 * 8


def shrink(rgb: np.ndarray, factor: int) -> np.ndarray:
    """Every factor x factor block averaged (the picture's edge rows and
    columns that do not fill a block are dropped)."""
    if factor <= 1:
        return rgb
    h, w = rgb.shape[0] // factor * factor, rgb.shape[1] // factor * factor
    blocks = rgb[:h, :w].reshape(h // factor, factor, w // factor, factor, -1)
    return np.rint(blocks.mean(axis=(1, 3))).astype(np.uint8)


def nearest_resize(rgb: np.ndarray, height: int, width: int) -> np.ndarray:
    """Resized by nearest neighbour (keeps flat colour areas flat)."""
    ys = (np.arange(height) * rgb.shape[0] / height).astype(int)
    xs = (np.arange(width) * rgb.shape[1] / width).astype(int)
    return rgb[ys][:, xs]


# A 5x7 pixel font of our own for the labels: each glyph is seven rows of
# five bits, the most significant bit the leftmost pixel.
_FONT: Dict[str, Sequence[int]] = {
    "0": (14, 17, 19, 21, 25, 17, 14), "1": (4, 12, 4, 4, 4, 4, 14),
    "2": (14, 17, 1, 2, 4, 8, 31), "3": (31, 2, 4, 2, 1, 17, 14),
    "4": (2, 6, 10, 18, 31, 2, 2), "5": (31, 16, 30, 1, 1, 17, 14),
    "6": (6, 8, 16, 30, 17, 17, 14), "7": (31, 1, 2, 4, 8, 8, 8),
    "8": (14, 17, 17, 14, 17, 17, 14), "9": (14, 17, 17, 15, 1, 2, 12),
    "A": (14, 17, 17, 31, 17, 17, 17), "B": (30, 17, 17, 30, 17, 17, 30),
    "C": (14, 17, 16, 16, 16, 17, 14), "D": (28, 18, 17, 17, 17, 18, 28),
    "E": (31, 16, 16, 30, 16, 16, 31), "F": (31, 16, 16, 30, 16, 16, 16),
    "G": (14, 17, 16, 23, 17, 17, 15), "H": (17, 17, 17, 31, 17, 17, 17),
    "I": (14, 4, 4, 4, 4, 4, 14), "J": (7, 2, 2, 2, 2, 18, 12),
    "K": (17, 18, 20, 24, 20, 18, 17), "L": (16, 16, 16, 16, 16, 16, 31),
    "M": (17, 27, 21, 21, 17, 17, 17), "N": (17, 17, 25, 21, 19, 17, 17),
    "O": (14, 17, 17, 17, 17, 17, 14), "P": (30, 17, 17, 30, 16, 16, 16),
    "Q": (14, 17, 17, 17, 21, 18, 13), "R": (30, 17, 17, 30, 20, 18, 17),
    "S": (15, 16, 16, 14, 1, 1, 30), "T": (31, 4, 4, 4, 4, 4, 4),
    "U": (17, 17, 17, 17, 17, 17, 14), "V": (17, 17, 17, 17, 17, 10, 4),
    "W": (17, 17, 17, 21, 21, 21, 10), "X": (17, 17, 10, 4, 10, 17, 17),
    "Y": (17, 17, 10, 4, 4, 4, 4), "Z": (31, 1, 2, 4, 8, 16, 31),
    " ": (0,) * 7, ".": (0, 0, 0, 0, 0, 12, 12), ",": (0, 0, 0, 0, 12, 4, 8),
    "-": (0, 0, 0, 31, 0, 0, 0), "/": (1, 2, 2, 4, 8, 8, 16),
    "(": (2, 4, 8, 8, 8, 4, 2), ")": (8, 4, 2, 2, 2, 4, 8),
    ":": (0, 12, 12, 0, 12, 12, 0), ";": (0, 12, 12, 0, 12, 4, 8), "%": (24, 25, 2, 4, 8, 19, 3),
    "^": (4, 10, 17, 0, 0, 0, 0), "+": (0, 4, 4, 31, 4, 4, 0),
    "=": (0, 0, 31, 0, 31, 0, 0), ">": (8, 4, 2, 1, 2, 4, 8),
    "<": (2, 4, 8, 16, 8, 4, 2), "_": (0, 0, 0, 0, 0, 0, 31),
}
GLYPH_W, GLYPH_H = 6, 8   # a glyph's cell: 5x7 pixels and a pixel of spacing


def text_width(text: str, scale: int = 2) -> int:
    """Width in pixels of text drawn at scale."""
    return len(text) * GLYPH_W * scale


def draw_text(rgb: np.ndarray, x: int, y: int, text: str, colour: RGB = WHITE,
              scale: int = 2) -> None:
    """Draw text (upper-cased; unknown characters as blanks) with its top-left
    corner at (x, y); pixels outside the image are clipped."""
    for n, char in enumerate(text.upper()):
        rows = _FONT.get(char, _FONT[" "])
        for r, bits in enumerate(rows):
            for c in range(5):
                if bits >> (4 - c) & 1:
                    y0, x0 = y + r * scale, x + (n * GLYPH_W + c) * scale
                    rgb[max(y0, 0):max(y0 + scale, 0), max(x0, 0):max(x0 + scale, 0)] = colour


def titled(panel: np.ndarray, title: str, scale: int = 2) -> np.ndarray:
    """The panel with a dark strip above it holding the title."""
    strip_h = GLYPH_H * scale + 8
    out = np.empty((panel.shape[0] + strip_h, panel.shape[1], 3), np.uint8)
    out[:] = BACKGROUND
    out[strip_h:] = panel
    draw_text(out, 4, 5, title, WHITE, scale)
    return out


def grid(panels: List[np.ndarray], columns: int, gap: int = 6) -> np.ndarray:
    """Panels in rows of `columns`, left to right, separated by gap pixels."""
    rows = [panels[i:i + columns] for i in range(0, len(panels), columns)]
    cell_h = max(p.shape[0] for p in panels)
    cell_w = max(p.shape[1] for p in panels)
    out = np.empty((len(rows) * (cell_h + gap) + gap, columns * (cell_w + gap) + gap, 3),
                   np.uint8)
    out[:] = BACKGROUND
    for r, row in enumerate(rows):
        for c, p in enumerate(row):
            y, x = gap + r * (cell_h + gap), gap + c * (cell_w + gap)
            out[y:y + p.shape[0], x:x + p.shape[1]] = p
    return out


def thick_line(rgb: np.ndarray, p0: Tuple[float, float], p1: Tuple[float, float],
               colour: RGB, width: int = 1) -> None:
    """A line width pixels thick (offset copies of a one-pixel line)."""
    for d in range(width):
        off = d - width // 2
        draw_line(rgb, p0[0] + off, p0[1], p1[0] + off, p1[1], colour)
        draw_line(rgb, p0[0], p0[1] + off, p1[0], p1[1] + off, colour)


def polygon(rgb: np.ndarray, points: np.ndarray, colour: RGB, width: int = 2) -> None:
    """A closed polygon through points ((N, 2) x, y)."""
    for i in range(len(points)):
        a, b = points[i], points[(i + 1) % len(points)]
        thick_line(rgb, (a[0], a[1]), (b[0], b[1]), colour, width)


def colour_bar(width: int, height: int, lo: float, hi: float, label: str) -> np.ndarray:
    """A horizontal rainbow scale from lo to hi with its end values and a label."""
    bar = rainbow(np.tile(np.linspace(lo, hi, width), (height, 1)), lo, hi)
    out = np.empty((height + 20, width, 3), np.uint8)
    out[:] = BACKGROUND
    out[:height] = bar
    draw_text(out, 2, height + 4, f"{lo:g}", WHITE, 2)
    draw_text(out, (width - text_width(label)) // 2, height + 4, label, WHITE, 2)
    end = f"{hi:g}"
    draw_text(out, width - text_width(end) - 2, height + 4, end, WHITE, 2)
    return out


def bar_chart(labels: List[str], series: List[Tuple[str, RGB, List[float]]], title: str,
              subtitle: str, decades: Tuple[int, int] = (0, 3),
              plot_width: int = 460, row_height: int = 26) -> np.ndarray:
    """Horizontal bars on a log10 axis from 10^decades[0] to 10^decades[1]:
    one row per label, one bar per series (name, colour, values; a value
    <= 0 or non-finite draws nothing), a legend and the title above."""
    label_w = max(text_width(s) for s in labels) + 12
    top, bottom = 64, 34
    h = top + row_height * len(labels) + bottom
    w = max(label_w + plot_width + 90, text_width(title) + 12, text_width(subtitle) + 12)
    out = np.empty((h, w, 3), np.uint8)
    out[:] = BACKGROUND
    draw_text(out, 6, 6, title, WHITE, 2)
    draw_text(out, 6, 26, subtitle, (190, 190, 190), 2)
    lo, hi = decades

    def x_of(value: float) -> int:
        return label_w + int(round((np.log10(value) - lo) / (hi - lo) * plot_width))

    for d in range(lo, hi + 1):
        x = x_of(10.0 ** d)
        out[top - 4:h - bottom + 4, x] = (90, 90, 96)
        tick = f"{10 ** d}X"
        draw_text(out, x - text_width(tick) // 2, h - bottom + 8, tick, WHITE, 2)
    bar_h = max(3, (row_height - 6) // len(series))
    for r, label in enumerate(labels):
        y = top + r * row_height
        draw_text(out, 6, y + (row_height - 14) // 2, label, WHITE, 2)
        for s, (_, colour, values) in enumerate(series):
            v = values[r]
            if np.isfinite(v) and v > 0:
                y0 = y + 3 + s * bar_h
                out[y0:y0 + bar_h - 1, label_w:max(label_w + 1, x_of(min(v, 10.0 ** hi)))] = colour
    legend_x = w - 8
    for name, colour, _ in reversed(series):
        legend_x -= text_width(name) + 28
        out[46:58, legend_x:legend_x + 14] = colour
        draw_text(out, legend_x + 20, 45, name, WHITE, 2)
    return out


def _paeth(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """PNG's Paeth predictor of each byte from its left, upper and upper-left."""
    p = a + b - c
    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
    return np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))


def filtered_rows(rgb: np.ndarray) -> bytes:
    """The image's scanlines, each with the PNG filter (none, sub, up or
    Paeth) whose output has the smallest sum of magnitudes, the usual
    heuristic for what deflate packs best."""
    x = np.ascontiguousarray(rgb, np.uint8).reshape(rgb.shape[0], -1).astype(np.int16)
    left = np.zeros_like(x)
    left[:, 3:] = x[:, :-3]
    up = np.zeros_like(x)
    up[1:] = x[:-1]
    upleft = np.zeros_like(x)
    upleft[1:, 3:] = x[:-1, :-3]
    candidates = np.stack([x, x - left, x - up, x - _paeth(left, up, upleft)]) % 256
    cost = np.where(candidates > 127, 256 - candidates, candidates).sum(axis=2)
    best = cost.argmin(axis=0)
    rows = candidates[best, np.arange(x.shape[0])].astype(np.uint8)
    codes = (0, 1, 2, 4)   # PNG's filter types: none, sub, up, (average 3 unused), Paeth
    return b"".join(bytes([codes[f]]) + r.tobytes() for f, r in zip(best, rows))


def write_png(path: pathlib.Path, rgb: np.ndarray) -> None:
    """Write an (H, W, 3) uint8 image as an 8-bit RGB PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", rgb.shape[1], rgb.shape[0], 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                     + chunk(b"IDAT", zlib.compress(filtered_rows(rgb), 9))
                     + chunk(b"IEND", b""))


def save(path: pathlib.Path, rgb: np.ndarray, note: Optional[str] = None) -> None:
    """Write rgb as a PNG and say so (with the file's size)."""
    write_png(path, rgb)
    size = path.stat().st_size
    print(f"wrote {path} ({rgb.shape[1]}x{rgb.shape[0]}, {size // 1024} KiB)"
          + (f": {note}" if note else ""))
