"""Context's stereo matching (include/parvis/stereo.h): SAD, belief
propagation and semi-global matching.  SGM's input and parameter checks are
shared with DeviceGroup and the Dask batch."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays as A
from ._base import ArrayLike, _choice, _ContextBase, _float, _int
from ._convert import c_size
from ._errors import invalid
from ._native import ffi, lib

_CENSUS_WINDOWS = ((5, 5), (7, 7), (9, 7))


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


def _stereo_inputs(left: ArrayLike, right: ArrayLike) -> Tuple[Any, ...]:
    """The two views as C images; mixed uint8/float32 views are both made float32."""
    la, ls = A.image_in(left, "left")
    ra, rs = A.image_in(right, "right")
    A.same_shape(la, ra, ("left", "right"))
    if ra.dtype != la.dtype and ra.shape == la.shape:
        ra, rs = A.image_in(ra.astype(np.float32), "right")
        la, ls = A.image_in(la.astype(np.float32), "left")
    return la, ls, ra, rs


_MESSAGE_PRECISION = {"f32": 0, "f16": 1}
_MESSAGE_UPDATE = {"serial": 0, "cooperative": 1}


def _bp_params(ndisp: int, min_disp: int, levels: int, iterations: int, lambda_: float,
               data_max: float, disc_max: Optional[float], sigma: float, tile_width: int,
               tile_height: int, tile_padding: int, memory_budget: int,
               message_precision: str = "f32", message_update: str = "serial") -> Any:
    """pv_bp_params; disc_max None scales with the range as the CLI's default;
    message_precision "f32" or "f16" (messages stored as IEEE half);
    message_update "serial" (mean-normalised) or "cooperative"
    (minimum-normalised, one work-group per pixel on OpenCL)."""
    budget = c_size(memory_budget, "memory_budget")
    if disc_max is None:
        disc_max = max(1.7, float(lib.pv_bp_recommended_disc_max(_int(ndisp, "ndisp"))))
    return ffi.new("pv_bp_params *", [
        _int(min_disp, "min_disp"), _int(ndisp, "ndisp"), _int(levels, "levels"),
        _int(iterations, "iterations"), _float(lambda_, "lambda_"),
        _float(data_max, "data_max"), _float(disc_max, "disc_max"), _float(sigma, "sigma"),
        _int(tile_width, "tile_width"), _int(tile_height, "tile_height"),
        _int(tile_padding, "tile_padding"), budget,
        _choice(_MESSAGE_PRECISION, message_precision, "message_precision"),
        _choice(_MESSAGE_UPDATE, message_update, "message_update")])


class _StereoOps(_ContextBase):
    """Context's stereo methods."""

    def stereo_sad(self, left: ArrayLike, right: ArrayLike, ndisp: int = 64, *,
                   min_disp: int = 0, window: int = 5, subpixel: bool = False,
                   lr_check: bool = False, lr_max_diff: float = 1.0, uniqueness: float = 0.0,
                   out: Optional[np.ndarray] = None) -> np.ndarray:
        """SAD block-matching stereo; returns the float32 disparity of each
        left pixel (shape of the inputs).

        The left image is the reference: left column x matches right column
        x - d for d in [min_disp, min_disp + ndisp).  Cost: the sum of
        |L - R| over a window x window block (odd window, borders
        replicated); the smallest cost wins, ties to the smaller d.
        Invalid pixels (no candidate inside the right image, or rejected by
        the checks) are +inf, as in Middlebury's PFM files.
        subpixel: a parabola through the costs at d-1, d, d+1.
        lr_check: invalidate where |d_LR - d_RL| > lr_max_diff.
        uniqueness: reject a winner of cost c when a candidate outside
        d-1..d+1 costs less than c (1 + uniqueness); 0 disables.
        left, right: 2D, same shape, uint8 or float32 (same type)."""
        la, ls, ra, rs = _stereo_inputs(left, right)
        params = ffi.new("pv_sad_params *", [
            _int(min_disp, "min_disp"), _int(ndisp, "ndisp"), _int(window, "window"),
            int(bool(subpixel)), int(bool(lr_check)), _float(lr_max_diff, "lr_max_diff"),
            _float(uniqueness, "uniqueness")])
        dst = A.output(out, la.shape)
        A.refuse_overlap(dst, la, ra)
        self._call(lib.pv_stereo_sad, ls, rs, params, A.out_struct(dst))
        return dst

    def stereo_bp(self, left: ArrayLike, right: ArrayLike, ndisp: int = 16, *,
                  min_disp: int = 0, levels: int = 5, iterations: int = 10,
                  lambda_: float = 0.07, data_max: float = 15.0,
                  disc_max: Optional[float] = None,
                  sigma: float = 1.0, tile_width: int = 0, tile_height: int = 0,
                  tile_padding: int = 20, memory_budget: int = 0,
                  message_precision: str = "f32", message_update: str = "serial",
                  out: Optional[np.ndarray] = None) -> np.ndarray:
        """Hierarchical belief-propagation stereo; returns the float32
        disparity of each left pixel (always finite: BP labels every pixel).

        Same convention as stereo_sad: left column x matches right column
        x - d, d in [min_disp, min_disp + ndisp).  levels: pyramid levels
        (2^(levels-1) <= the smaller side); iterations: message rounds per
        level; lambda_ (the C field `lambda`): data-cost weight; data_max,
        disc_max: truncations of the data and smoothness costs (disc_max
        None: max(1.7, ndisp / 7.5), the C default 1.7 raised for wide
        ranges as `parvis stereo --method bp` does); sigma:
        Gaussian pre-smoothing (0: none).  tile_width/tile_height/
        tile_padding/memory_budget: image partitions (0: automatic).
        message_precision: "f32", or "f16" to store messages as IEEE half
        (less memory traffic; a few disparities move, see stereo.h).
        message_update: "serial" (messages normalised by their mean), or
        "cooperative" (by their minimum: the same algorithm up to float
        ties, which the OpenCL backend runs with a group of work-items per
        pixel, much faster for wide ranges; both backends still agree).
        The defaults are the paper's (see include/parvis/stereo.h)."""
        la, ls, ra, rs = _stereo_inputs(left, right)
        params = _bp_params(ndisp, min_disp, levels, iterations, lambda_, data_max, disc_max,
                            sigma, tile_width, tile_height, tile_padding, memory_budget,
                            message_precision, message_update)
        dst = A.output(out, la.shape)
        A.refuse_overlap(dst, la, ra)
        self._call(lib.pv_stereo_bp, ls, rs, params, A.out_struct(dst))
        return dst

    def stereo_sgm(self, left: ArrayLike, right: ArrayLike, *, ndisp: int = 64,
                   min_disp: int = 0, census: Tuple[int, int] = (9, 7),
                   census_symmetric: bool = True, p1: int = 10, p2: int = 120,
                   p2_adaptive: bool = False, paths: int = 8, uniqueness: float = 0.95,
                   lr_check: bool = True, lr_max_diff: int = 1, subpixel: bool = True,
                   median: bool = False, memory_budget: int = 0, confidence: bool = False,
                   out: Optional[np.ndarray] = None
                   ) -> Union[np.ndarray, Tuple[np.ndarray, np.ndarray]]:
        """Semi-global matching of census costs; returns the float32
        disparity of each left pixel, +inf where invalid, or the pair
        (disparity, confidence) when confidence is true.

        Same convention as stereo_sad: left column x matches right column
        x - d, d in [min_disp, min_disp + ndisp); ndisp is at most the
        number of columns and 1024.  census: the (width, height) window,
        (5, 5), (7, 7) or (9, 7); census_symmetric: compare pixels mirrored
        through the centre (False: every pixel against the centre).  p1, p2:
        penalties of a one-disparity step and of a larger one (0 <= p1 <=
        p2); p2_adaptive: P2 divided by the intensity step, at least p1.
        paths: 4 or 8 aggregation directions.  uniqueness in (0, 1]: keep a
        winner whose sum is at most uniqueness times every sum outside
        d-1..d+1 (1 disables).  lr_check, lr_max_diff: left-right
        consistency.  subpixel: parabola refinement; median: a 3x3 median.
        memory_budget: bytes the call may use (0: what the device has); a
        call that needs more works in smaller parts, or raises
        DeviceMemoryError before allocating when even those do not fit.
        The confidence is
        1 - S(best)/S(second) in 0..1, 0 where invalid.
        left, right: 2D (rows, columns), same shape, uint8, uint16 or
        float32 (finite); other real dtypes become float32.  out: a float32
        (rows, columns) array for the disparity.  The defaults are libSGM's
        (see include/parvis/stereo.h)."""
        la, ls, ra, rs = sgm_inputs(left, right)
        params = sgm_params(la.shape[1], ndisp=ndisp, min_disp=min_disp, census=census,
                            census_symmetric=census_symmetric, p1=p1, p2=p2,
                            p2_adaptive=p2_adaptive, paths=paths, uniqueness=uniqueness,
                            lr_check=lr_check, lr_max_diff=lr_max_diff, subpixel=subpixel,
                            median=median, memory_budget=memory_budget)
        dst = A.output(out, la.shape)
        A.refuse_overlap(dst, la, ra)
        if not confidence:
            self._call(lib.pv_stereo_sgm, ls, rs, params, A.image_struct(dst))
            return dst
        conf = np.empty(la.shape, np.float32)
        self._call(lib.pv_stereo_sgm_confidence, ls, rs, params, A.image_struct(dst),
                   A.image_struct(conf))
        return dst, conf

    def stereo_sgm_batch(self, lefts: Sequence[ArrayLike], rights: Sequence[ArrayLike], *,
                         confidence: bool = False, **options: Any
                         ) -> Union[np.ndarray, Tuple[np.ndarray, np.ndarray]]:
        """Semi-global matching of a stream of pairs through one plan
        (pv_stereo_sgm_batch): returns a float32 (pairs, rows, columns)
        stack of disparities, or the pair of stacks (disparities,
        confidences) when confidence is true.  Slice i is exactly what
        stereo_sgm(lefts[i], rights[i], **options) returns; on OpenCL the
        transfers of one pair overlap the kernels of the next (docs/sgm.md,
        "A stream of pairs"), which is faster than a loop of single calls.

        lefts, rights: sequences of as many 2D images (or 3D stacks of
        them), all of one shape; each pair as for stereo_sgm (a batch whose
        pairs differ in dtype is matched in float32 throughout).  options:
        the keyword arguments of stereo_sgm (ndisp, min_disp, census, ...,
        memory_budget) other than out, shared by every pair.  An empty batch
        or pairs of different shapes raise InvalidArgument before any work."""
        arrays, left_structs, right_structs = sgm_batch_inputs(lefts, rights)
        count = len(arrays) // 2
        rows, columns = arrays[0].shape
        params = sgm_params(columns, **options)
        disparities = np.empty((count, rows, columns), np.float32)
        confidences = np.empty((count, rows, columns), np.float32) if confidence else None
        self._call(lib.pv_stereo_sgm_batch, left_structs, right_structs, count, params,
                   image_structs(disparities),
                   image_structs(confidences) if confidences is not None else ffi.NULL)
        return disparities if confidences is None else (disparities, confidences)
