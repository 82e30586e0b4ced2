"""What the operation modules share: the base class of Context that their
mixins (_filter, _colour, _stereo, _features, _register, _octreg, _flow,
_tune) extend, the plans' base class, and the argument checks they all use."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Tuple

import numpy as np

from . import _arrays as A
from ._convert import c_float, c_int
from ._errors import invalid, raise_status
from ._lifetime import CObject, PlanHandle, _Handle
from ._native import ffi

if TYPE_CHECKING:
    from ._context import Context

ArrayLike = Any


def _choice(table: Dict[str, int], value: str, name: str) -> int:
    try:
        return table[str(value).lower()]
    except KeyError:
        raise invalid(f"{name}: {value!r} is not one of {', '.join(table)}") from None


_int = c_int
_float = c_float


def _grid_in(arr: ArrayLike, name: str, volume: bool,
             allow_u16: bool = False) -> Tuple[np.ndarray, Any]:
    """arr and its C struct: a float32 volume when volume (uint16 kept as it
    is when allow_u16), else an image (uint8 or float32)."""
    return A.volume_in(arr, name, allow_u16) if volume else A.image_in(arr, name)


def _as_volume(arr: ArrayLike, name: str) -> ArrayLike:
    a = A.plain(arr, name)
    return a[np.newaxis] if a.ndim == 2 else a


class _ContextBase(_Handle):
    """The part of Context the operation mixins call: each of them runs its
    C function through _call, under the context's lock."""

    def _call(self, fn: Any, *args: Any) -> None:
        """Run fn(ctx, *args) under the context's lock; raise on failure."""
        with self._entered() as ptr:
            status = fn(ptr, *args)
            if status:
                raise_status(status, ptr)


class _Plan(PlanHandle):
    """State kept between calls on one context; close() or use `with`.  The
    context's close() closes it too; calls on a closed plan raise
    ClosedError."""

    _destroy: Any = None

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)

    def _free(self) -> Callable[[Any], None]:
        """The function that frees the C plan (and anything kept with it)."""
        return type(self)._destroy

    def _call(self, fn: Any, *args: Any) -> None:
        with self._entered() as (ctx, plan):
            status = fn(plan, *args)
            if status:
                raise_status(status, ctx)

    def _create(self, fn: Any, *args: Any, out_type: str) -> None:
        out = ffi.new(out_type)
        with self._ctx._entered() as ctx:
            status = fn(ctx, *args, out)
            if status:
                raise_status(status, ctx)
            self._adopt(CObject(out[0], self._free()))
