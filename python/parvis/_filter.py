"""Context's filters (include/parvis/filter.h): Gaussian blur and gradients."""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from . import _arrays as A
from ._base import ArrayLike, _choice, _ContextBase, _float, _grid_in, _int
from ._native import lib

_GRADIENT = {"central": lib.PV_GRADIENT_CENTRAL, "forward": lib.PV_GRADIENT_FORWARD}


class _FilterOps(_ContextBase):
    """Context's filter methods."""

    def gaussian_blur(self, image: ArrayLike, sigma: float, taps: int = 0,
                      out: Optional[np.ndarray] = None) -> np.ndarray:
        """Separable Gaussian blur of a 2D image (uint8/float32) or a 3D
        float32 volume, borders replicated.  taps: odd tap count, or 0 for
        2 ceil(3 sigma) + 1.  Returns float32 of the input's shape."""
        volume = np.ndim(image) == 3
        a, s = _grid_in(image, "image", volume)
        fn = lib.pv_gaussian_blur3d if volume else lib.pv_gaussian_blur
        dst = A.output(out, a.shape)
        A.refuse_overlap(dst, a)
        self._call(fn, s, A.out_struct(dst), _float(sigma, "sigma"), _int(taps, "taps"))
        return dst

    def gradients(self, image: ArrayLike, scheme: str = "central") -> Tuple[np.ndarray, ...]:
        """Image gradients: (gx, gy) of a 2D image or (gx, gy, gz) of a 3D
        volume, float32.  scheme "central": (f(x+1) - f(x-1)) / 2 inside,
        one-sided at the borders; "forward": f(x+1) - f(x), 0 at the far
        border."""
        src = A.plain(image, "image")
        code = _choice(_GRADIENT, scheme, "scheme")
        if src.ndim == 3:
            a, s = A.volume_in(src, "image")
            outs = tuple(np.empty(a.shape, np.float32) for _ in range(3))
            self._call(lib.pv_gradient3d, s, *(A.volume_struct(o) for o in outs), code)
        else:
            a, s = A.image_in(src, "image")
            outs = tuple(np.empty(a.shape, np.float32) for _ in range(2))
            self._call(lib.pv_gradient, s, *(A.image_struct(o) for o in outs), code)
        return outs
