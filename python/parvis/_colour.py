"""Context's colour conversion (include/parvis/colour.h)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from . import _arrays as A
from ._base import ArrayLike, _ContextBase
from ._native import lib


class _ColourOps(_ContextBase):
    """Context's colour methods."""

    def to_grey(self, image: ArrayLike, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The grey value of each pixel as float32 (H, W), on this context's
        backend.  image: (H, W, 3) uint8 / uint16 RGB (Rec. 601 luma
        0.299 R + 0.587 G + 0.114 B, in float), or (H, W) uint8, uint16 or
        float32 (values kept).  16-bit data is divided by 257, so it lands
        on the 0..255 range of 8-bit data (65535 -> 255).  out: optional
        float32 (H, W) array with contiguous rows, written in place."""
        a, s = A.grey_or_colour_in(image, "image")
        dst = A.output(out, a.shape[:2])
        A.refuse_overlap(dst, a)
        self._call(lib.pv_to_grey, s, A.out_struct(dst))
        return dst
