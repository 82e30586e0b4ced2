"""Results in a smaller form for their trip from a worker to the client.

A disparity map is a float32 image whose values are, without sub-pixel
refinement, whole numbers of pixels plus a few ``inf`` (no match) entries:
a 1080p map is 8.3 MB as float32 but 2 MB as uint8.  :func:`compact` stores
such an image as the smallest integer type that holds its whole values and
lists the pixels that type cannot hold (``inf``, ``nan``, fractions, ``-0.0``)
with their exact float32 bits; :func:`expand` rebuilds the float32 image.
The round trip is checked bit for bit on the worker, so the client gets
exactly the array the library returned, and an image that does not pack
well (sub-pixel disparities) travels as it is.  Other results (OCT shifts,
SIFT features, flow fields) are returned unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: Pack only when at most this share of the pixels needs listing apart.
MAX_EXCEPTION_SHARE = 0.05
#: Below this many pixels packing saves less than it costs.
MIN_PIXELS = 4096


@dataclass(frozen=True)
class PackedImage:
    """A float32 image as whole numbers plus a list of exceptions."""
    values: np.ndarray      # the image, rounded, in a small integer type
    positions: np.ndarray   # flat indices of the pixels listed apart
    exact: np.ndarray       # their float32 values (bits as the library wrote them)

    def unpack(self) -> np.ndarray:
        image = self.values.astype(np.float32)
        image.reshape(-1)[self.positions] = self.exact
        return image


#: Integer types tried, smallest first.
PACKED_TYPES = (np.uint8, np.int16)


def compact(result: Any) -> Any:
    """``result`` in its smallest lossless form (a :class:`PackedImage` or
    ``result`` itself)."""
    if (not isinstance(result, np.ndarray) or result.dtype != np.float32
            or result.ndim != 2 or result.size < MIN_PIXELS):
        return result
    image = np.ascontiguousarray(result)
    bits = image.view(np.uint32)
    for dtype in PACKED_TYPES:
        # A plain cast, then a bitwise comparison of its way back: every
        # pixel the type does not hold exactly (inf, nan, fractions, -0.0,
        # values out of range) differs and is listed apart.  Four passes
        # over the image, a few milliseconds for 1080p.
        with np.errstate(invalid="ignore", over="ignore"):
            packed = image.astype(dtype)
        differ = np.flatnonzero(packed.astype(np.float32).view(np.uint32) != bits)
        if differ.size <= MAX_EXCEPTION_SHARE * image.size:
            return PackedImage(packed, differ, image.reshape(-1)[differ])
    return result


def expand(entry: Any) -> Any:
    """The result that :func:`compact` packed (other entries unchanged)."""
    return entry.unpack() if isinstance(entry, PackedImage) else entry
