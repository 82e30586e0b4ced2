"""numpy arrays <-> the C library's pv_image / pv_volume descriptions.

Inputs that the C library can read in place (uint8 or float32, each row
contiguous, rows at a positive stride that is a whole number of elements;
for volumes the same per row and per plane) are passed without a copy: the
C struct points at the array's memory and carries its row stride.  Other
dtypes are converted once to float32 (integers keep their values, float64 is
rounded); other layouts are copied once into C order.  bool, complex and
non-numeric arrays are refused.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from ._errors import invalid
from ._native import ffi, lib

U8 = np.dtype(np.uint8)
F32 = np.dtype(np.float32)
PIXEL_TYPE = {U8: lib.PV_PIXEL_U8, F32: lib.PV_PIXEL_F32}


def _pointer(arr: np.ndarray) -> Any:
    """A void* to arr's first element (arr must stay alive meanwhile)."""
    if arr.flags.c_contiguous:
        return ffi.from_buffer(arr)
    return ffi.cast("void *", arr.ctypes.data)


# The axes a shape of so many dimensions names, numpy's order (x last).
AXES = {2: "rows, columns", 3: "z, y, x"}


def shape_text(shape: Tuple[int, ...], axes: Optional[str] = None) -> str:
    """A shape for a message, the numpy way with its axes named, e.g.
    "(120, 90) (rows, columns)": never the C library's "90x120" (width
    first), which numpy users read backwards."""
    dims = tuple(int(n) for n in shape)
    named = axes if axes is not None else AXES.get(len(dims))
    return f"{dims} ({named})" if named else str(dims)


def same_shape(first: np.ndarray, second: np.ndarray, names: Tuple[str, str]) -> None:
    """Refuse two arrays that a call needs of one shape."""
    if first.shape != second.shape:
        raise invalid(f"{names[1]}: shape {shape_text(second.shape)} differs from "
                      f"{names[0]}'s {tuple(first.shape)}")


def refuse_masked(arr: Any, name: str) -> None:
    """Masks are not supported: a masked array's mask would be dropped
    silently, so the array is refused."""
    if isinstance(arr, np.ma.MaskedArray):
        raise invalid(f"{name}: masked arrays are not supported (the mask would be "
                      "ignored); pass arr.filled(value) or the data np.ma.getdata(arr)")


def plain(arr: Any, name: str) -> np.ndarray:
    """arr as an ndarray (subclasses viewed as ndarray), masked arrays refused."""
    refuse_masked(arr, name)
    return np.asarray(arr)


def _as_numeric(arr: Any, name: str, allowed: Tuple[np.dtype, ...]) -> np.ndarray:
    a = plain(arr, name)
    if a.dtype in allowed:
        return a
    kind = a.dtype.kind
    if kind not in "uif":
        raise invalid(f"{name}: dtype {a.dtype} is not a real number type "
                      f"(give {' or '.join(str(d) for d in allowed)})")
    return a.astype(F32)


def _check_size(a: np.ndarray, name: str, ndim: Tuple[int, ...]) -> None:
    if a.ndim not in ndim:
        want = " or ".join(f"{n}D" for n in ndim)
        raise invalid(f"{name}: expected a {want} array, got shape {shape_text(a.shape)}")
    if a.size == 0:
        raise invalid(f"{name}: the array is empty (shape {shape_text(a.shape)})")
    if max(a.shape) > 2**31 - 1:
        raise invalid(f"{name}: a side of {max(a.shape)} exceeds the C int range")


def image_array(arr: Any, name: str, allow_u8: bool = True) -> np.ndarray:
    """arr as a 2D uint8/float32 array the C library can read in place."""
    a = _as_numeric(arr, name, (U8, F32) if allow_u8 else (F32,))
    _check_size(a, name, (2,))
    item = a.itemsize
    rs, cs = a.strides
    if cs != item or (a.shape[0] > 1 and (rs <= 0 or rs % item or rs < a.shape[1] * item)):
        a = np.ascontiguousarray(a)
    return a


U16 = np.dtype(np.uint16)
# Pixel types of the inputs that SIFT and to_grey take: grey (H, W) arrays
# keyed by dtype, colour (H, W, 3) arrays by dtype.
GREY_ANY_TYPE = {U8: lib.PV_PIXEL_U8, U16: lib.PV_PIXEL_U16, F32: lib.PV_PIXEL_F32}
COLOUR_TYPE = {U8: lib.PV_PIXEL_RGB8, U16: lib.PV_PIXEL_RGB16}


def grey_or_colour_in(arr: Any, name: str) -> Tuple[np.ndarray, Any]:
    """arr as an input that the library converts to grey itself, and its
    pv_image*: (H, W) uint8, uint16 or float32 (other real dtypes become
    float32) or (H, W, 3) uint8 / uint16 RGB, read in place when each
    pixel's samples and each row's pixels are contiguous."""
    a = plain(arr, name)
    if a.ndim != 3:
        a = _as_numeric(a, name, tuple(GREY_ANY_TYPE))
        _check_size(a, name, (2,))
        pixel_type = GREY_ANY_TYPE[a.dtype]
    else:
        if a.shape[2] != 3 or a.dtype not in COLOUR_TYPE:
            raise invalid(f"{name}: a colour image must be (rows, columns, 3) uint8 or "
                          f"uint16, got shape {a.shape} of {a.dtype}")
        _check_size(a, name, (3,))
        pixel_type = COLOUR_TYPE[a.dtype]
    pixel = a.itemsize * (3 if a.ndim == 3 else 1)
    rs = a.strides[0]
    packed = a.strides[1] == pixel and (a.ndim == 2 or a.strides[2] == a.itemsize)
    if not packed or (a.shape[0] > 1 and (rs <= 0 or rs % pixel or rs < a.shape[1] * pixel)):
        a = np.ascontiguousarray(a)
    h, w = a.shape[:2]
    stride = a.strides[0] // pixel if h > 1 else w
    return a, ffi.new("pv_image *", [w, h, stride, pixel_type, _pointer(a)])


def grey_in(arr: Any, name: str) -> Tuple[np.ndarray, Any]:
    """arr as a 2D (rows, columns) uint8, uint16 or float32 image read in
    place where possible (other real dtypes become float32), and its
    pv_image*."""
    a = _as_numeric(arr, name, tuple(GREY_ANY_TYPE))
    _check_size(a, name, (2,))
    item = a.itemsize
    rs, cs = a.strides
    if cs != item or (a.shape[0] > 1 and (rs <= 0 or rs % item or rs < a.shape[1] * item)):
        a = np.ascontiguousarray(a)
    h, w = a.shape
    stride = a.strides[0] // item if h > 1 else w
    return a, ffi.new("pv_image *", [w, h, stride, GREY_ANY_TYPE[a.dtype], _pointer(a)])


def image_struct(a: np.ndarray) -> Any:
    """pv_image* describing a 2D array prepared by image_array (no copy)."""
    h, w = a.shape
    stride = a.strides[0] // a.itemsize if h > 1 else w
    return ffi.new("pv_image *", [w, h, stride, PIXEL_TYPE[a.dtype], _pointer(a)])


def image_in(arr: Any, name: str, allow_u8: bool = True) -> Tuple[np.ndarray, Any]:
    a = image_array(arr, name, allow_u8)
    return a, image_struct(a)


def volume_array(arr: Any, name: str, allow_u16: bool = False) -> np.ndarray:
    """arr as a 3D (z, y, x) array the C library can read in place: float32,
    or, when allow_u16 (the operations that take 16-bit volumes: OCT
    registration, 3D phase correlation, the 3D flow's inputs), uint16 kept
    as it is, with no conversion on the host.  Other real dtypes become
    float32."""
    a = _as_numeric(arr, name, (F32, U16) if allow_u16 else (F32,))
    _check_size(a, name, (3,))
    sz, sy, sx = a.strides
    nz, ny, nx = a.shape
    item = a.itemsize
    ok = sx == item and (ny == 1 or (sy > 0 and sy % item == 0 and sy >= nx * item)) and \
        (nz == 1 or (sz > 0 and sz % item == 0 and sz >= (sy if ny > 1 else nx * item) * ny))
    if not ok:
        a = np.ascontiguousarray(a)
    return a


def volume_struct(a: np.ndarray) -> Any:
    """pv_volume* describing a 3D float32 or uint16 array prepared by
    volume_array (no copy)."""
    nz, ny, nx = a.shape
    item = a.itemsize
    sy = a.strides[1] // item if ny > 1 else nx
    sz = a.strides[0] // item if nz > 1 else sy * ny
    s = ffi.new("pv_volume *")
    s.nx, s.ny, s.nz, s.stride_y, s.stride_z = nx, ny, nz, sy, sz
    if a.dtype == U16:
        s.type = lib.PV_VOLUME_U16
        s.data_u16 = ffi.cast("uint16_t *", _pointer(a))
    else:
        s.type = lib.PV_VOLUME_F32
        s.data = ffi.cast("float *", _pointer(a))
    return s


def volume_in(arr: Any, name: str, allow_u16: bool = False) -> Tuple[np.ndarray, Any]:
    """volume_array and its pv_volume*."""
    a = volume_array(arr, name, allow_u16)
    return a, volume_struct(a)


def output(out: Optional[np.ndarray], shape: Tuple[int, ...], name: str = "out") -> np.ndarray:
    """A fresh float32 array of shape, or the caller's `out` after checking
    that the C library can write it in place.

    An ndarray subclass is taken when its memory is such a buffer (an
    np.memmap, an np.matrix: written through a plain ndarray view of the
    same memory, and returned as the caller's object).  A masked array is
    refused: its mask would be neither read nor written."""
    if out is None:
        return np.empty(shape, F32)
    if not isinstance(out, np.ndarray):
        raise invalid(f"{name}: expected a numpy array, got {type(out).__name__}")
    refuse_masked(out, name)
    if out.dtype != F32:
        raise invalid(f"{name}: dtype must be float32, got {out.dtype}")
    if out.shape != tuple(shape):
        raise invalid(f"{name}: shape must be {shape_text(shape)}, got {tuple(out.shape)}")
    if not out.flags.writeable:
        raise invalid(f"{name}: the array is read-only")
    view = out.view(np.ndarray)
    fixed = image_array(view, name) if view.ndim == 2 else volume_array(view, name)
    if fixed is not view:
        raise invalid(f"{name}: its layout cannot be written in place "
                      "(each row must be contiguous, at a positive stride)")
    return out


def refuse_overlap(out: np.ndarray, *inputs: np.ndarray, name: str = "out") -> None:
    """The C library's outputs may not share memory with its inputs."""
    for a in inputs:
        if np.may_share_memory(out, a):
            raise invalid(f"{name}: shares memory with an input")


def out_struct(a: np.ndarray) -> Any:
    """The C struct of an array checked by output() (subclasses as their
    ndarray view of the same memory)."""
    view = a.view(np.ndarray)
    return image_struct(view) if view.ndim == 2 else volume_struct(view)
