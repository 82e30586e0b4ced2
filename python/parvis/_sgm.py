"""Semi-global matching's inputs and parameters, shared by Context.stereo_sgm
and the Dask batch (the C contract is in include/parvis/stereo.h)."""
from __future__ import annotations

from typing import Any, List, Sequence, Tuple

import numpy as np

from . import _arrays as A
from ._errors import invalid
from ._native import ffi, lib

_CENSUS_WINDOWS = ((5, 5), (7, 7), (9, 7))


def _int(value: Any, name: str) -> int:
    """value as a C int, else InvalidArgument naming it (_context has the same
    check, but _context imports this module, so it cannot be imported here)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise invalid(f"{name}: expected an integer, got {value!r}")
    if not -2**31 <= int(value) < 2**31:
        raise invalid(f"{name}: {value} is outside the C int range")
    return int(value)


def sgm_inputs(left: Any, right: Any) -> Tuple[np.ndarray, Any, np.ndarray, Any]:
    """Both views as 2D (rows, columns) images of one dtype (uint8, uint16
    or float32; views of different dtypes are both made float32), with
    their pv_image structs."""
    la, ls = A.grey_in(left, "left")
    ra, rs = A.grey_in(right, "right")
    if ra.shape != la.shape:
        raise invalid(f"right: shape {ra.shape} (rows, columns) differs from left's {la.shape}")
    if ra.dtype != la.dtype:
        la, ls = A.grey_in(la.astype(np.float32), "left")
        ra, rs = A.grey_in(ra.astype(np.float32), "right")
    if la.dtype == np.float32 and not (np.isfinite(la).all() and np.isfinite(ra).all()):
        raise invalid("left, right: float32 views must be finite (no NaN or infinity)")
    return la, ls, ra, rs


def sgm_params(columns: int, *, ndisp: int = 64, min_disp: int = 0,
               census: Tuple[int, int] = (9, 7), census_symmetric: bool = True,
               p1: int = 10, p2: int = 120, p2_adaptive: bool = False, paths: int = 8,
               uniqueness: float = 0.95, lr_check: bool = True, lr_max_diff: int = 1,
               subpixel: bool = True, median: bool = False, memory_budget: int = 0) -> Any:
    """A checked pv_sgm_params* for images of `columns` columns; each refusal
    raises InvalidArgument naming the argument (the C library checks the
    same again)."""
    ndisp = _int(ndisp, "ndisp")
    limit = min(int(columns), int(lib.PV_SGM_MAX_NDISP))
    if not 1 <= ndisp <= limit:
        raise invalid(f"ndisp: {ndisp} is outside 1..{limit} (at most the number of columns, "
                      f"{columns}, and {int(lib.PV_SGM_MAX_NDISP)})")
    try:
        width, height = (_int(v, "census") for v in census)
    except (TypeError, ValueError):
        raise invalid(f"census: expected a (width, height) pair, got {census!r}") from None
    if (width, height) not in _CENSUS_WINDOWS:
        raise invalid(f"census: {census!r} is not one of (5, 5), (7, 7), (9, 7) "
                      "(width, height)")
    p1, p2 = _int(p1, "p1"), _int(p2, "p2")
    if p1 < 0 or p2 < p1:
        raise invalid(f"p1, p2: need 0 <= p1 <= p2, got p1={p1}, p2={p2}")
    paths = _int(paths, "paths")
    if paths not in (4, 8):
        raise invalid(f"paths: expected 4 or 8, got {paths}")
    try:
        uniqueness = float(uniqueness)
    except (TypeError, ValueError):
        raise invalid(f"uniqueness: expected a number, got {uniqueness!r}") from None
    if not 0.0 < uniqueness <= 1.0:
        raise invalid(f"uniqueness: {uniqueness} is outside (0, 1] (1 disables the test)")
    lr_max_diff = _int(lr_max_diff, "lr_max_diff")
    if lr_max_diff < 0:
        raise invalid(f"lr_max_diff: {lr_max_diff} is negative")
    if isinstance(memory_budget, (bool, np.bool_)) or \
            not isinstance(memory_budget, (int, np.integer)):
        raise invalid(f"memory_budget: expected a byte count, got {memory_budget!r}")
    budget = int(memory_budget)
    if not 0 <= budget < 2**63:
        raise invalid(f"memory_budget: {budget} is outside 0..2**63-1")
    return ffi.new("pv_sgm_params *", [
        _int(min_disp, "min_disp"), ndisp, width, height, int(bool(census_symmetric)), p1, p2,
        int(bool(p2_adaptive)), paths, uniqueness, int(bool(lr_check)), lr_max_diff,
        int(bool(subpixel)), int(bool(median)), budget])


def sgm_batch_inputs(lefts: Sequence[Any], rights: Sequence[Any]
                     ) -> Tuple[List[np.ndarray], Any, Any]:
    """The pairs of a batch as 2D images of one shape and one dtype (uint8,
    uint16 or float32; a batch whose pairs differ in dtype is made float32
    throughout), each pair held to sgm_inputs' rules, with their pv_image
    arrays (lefts, rights) for pv_stereo_sgm_batch.  The arrays are returned
    too: the structs point into them, so they must outlive the call."""
    try:
        count = len(lefts)
    except TypeError:
        raise invalid(f"lefts: expected a sequence of images, got {type(lefts).__name__}") \
            from None
    if count < 1:
        raise invalid("lefts: the batch is empty")
    if len(rights) != count:
        raise invalid(f"rights: {len(rights)} images for {count} left images")
    pairs = [sgm_inputs(lefts[i], rights[i]) for i in range(count)]
    shape, dtype = pairs[0][0].shape, pairs[0][0].dtype
    for i, (la, _, _, _) in enumerate(pairs):
        if la.shape != shape:
            raise invalid(f"lefts[{i}]: shape {la.shape} differs from lefts[0]'s {shape}; a "
                          "batch holds pairs of one shape")
    if any(la.dtype != dtype for la, _, _, _ in pairs):
        pairs = [sgm_inputs(la.astype(np.float32), ra.astype(np.float32))
                 for la, _, ra, _ in pairs]
    left_structs = ffi.new("pv_image[]", count)
    right_structs = ffi.new("pv_image[]", count)
    arrays: List[np.ndarray] = []
    for i, (la, ls, ra, rs) in enumerate(pairs):
        left_structs[i] = ls[0]
        right_structs[i] = rs[0]
        arrays += [la, ra]
    return arrays, left_structs, right_structs


def image_structs(stack: np.ndarray) -> Any:
    """A pv_image array over the 2D slices of a C-contiguous float32
    (count, rows, columns) stack."""
    structs = ffi.new("pv_image[]", stack.shape[0])
    for i in range(stack.shape[0]):
        structs[i] = A.image_struct(stack[i])[0]
    return structs
