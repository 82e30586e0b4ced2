"""Context's stereo matching (include/parvis/stereo.h): SAD, belief
propagation and semi-global matching.  SGM's input and parameter checks are
shared with DeviceGroup and the Dask batch."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays as A
from ._base import ArrayLike, _ContextBase, _int
from ._errors import invalid
from ._native import ffi, lib
from ._params import declared_keywords, default_of, make

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


def sgm_params(**params: Any) -> Any:
    """A pv_sgm_params* from the declared keywords (`parvis params sgm`),
    each set and checked by the library (a refusal raises InvalidArgument
    with its message).  census=(width, height) is a shorthand for
    census_width and census_height."""
    census = params.pop("census", None)
    if census is not None:
        try:
            width, height = (_int(v, "census") for v in census)
        except (TypeError, ValueError):
            raise invalid(f"census: expected a (width, height) pair, got {census!r}") from None
        if (width, height) not in _CENSUS_WINDOWS:
            raise invalid(f"census: {census!r} is not one of (5, 5), (7, 7), (9, 7) "
                          "(width, height)")
        params.update(census_width=width, census_height=height)
    return make("sgm", params)


def sgm_batch_inputs(lefts: Sequence[Any], rights: Sequence[Any],
                     pair_inputs: Any = None) -> Tuple[List[np.ndarray], Any, Any]:
    """The pairs of a batch as 2D images of one shape and one dtype (uint8,
    uint16 or float32; a batch whose pairs differ in dtype is made float32
    throughout), each pair held to sgm_inputs' rules, with their pv_image
    arrays (lefts, rights) for pv_stereo_sgm_batch.  The arrays are returned
    too: the structs point into them, so they must outlive the call.
    pair_inputs: the per-pair preparation (sgm_inputs when None; SAD
    batches pass _stereo_inputs)."""
    prepare = pair_inputs or sgm_inputs
    try:
        count = len(lefts)
    except TypeError:
        raise invalid(f"lefts: expected a sequence of images, got {type(lefts).__name__}") \
            from None
    if count < 1:
        raise invalid("lefts: the batch is empty")
    if len(rights) != count:
        raise invalid(f"rights: {len(rights)} images for {count} left images")
    pairs = [prepare(lefts[i], rights[i]) for i in range(count)]
    shape, dtype = pairs[0][0].shape, pairs[0][0].dtype
    for i, (la, _, _, _) in enumerate(pairs):
        if la.shape != shape:
            raise invalid(f"lefts[{i}]: shape {la.shape} differs from lefts[0]'s {shape}; a "
                          "batch holds pairs of one shape")
    if any(la.dtype != dtype for la, _, _, _ in pairs):
        pairs = [prepare(la.astype(np.float32), ra.astype(np.float32))
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


def bp_params(ndisp: int, disc_max: Optional[float], **params: Any) -> Any:
    """A pv_bp_params* from the declared keywords (`parvis params bp`);
    disc_max None scales with the range as the command line's default does:
    max(the declared 1.7, ndisp / 7.5)."""
    if disc_max is None:
        disc_max = max(default_of("bp", "disc_max"),
                       float(lib.pv_bp_recommended_disc_max(_int(ndisp, "ndisp"))))
    return make("bp", dict(params, ndisp=ndisp, disc_max=disc_max))


class _StereoOps(_ContextBase):
    """Context's stereo methods."""

    @declared_keywords("sad")
    def stereo_sad(self, left: ArrayLike, right: ArrayLike,
                   ndisp: int = default_of("sad", "ndisp"), *,
                   out: Optional[np.ndarray] = None, **params: Any) -> np.ndarray:
        """SAD block-matching stereo; returns the float32 disparity of each
        left pixel (shape of the inputs).

        The left image is the reference: left column x matches right column
        x - d for d in [min_disp, min_disp + ndisp).  Cost: the sum of
        |L - R| over a window x window block (odd window, borders
        replicated); the smallest cost wins, ties to the smaller d.
        Invalid pixels (no candidate inside the right image, or rejected by
        the checks) are +inf, as in Middlebury's PFM files.
        left, right: 2D, same shape, uint8 or float32 (same type, finite).
        out: a float32 array of that shape for the result."""
        la, ls, ra, rs = _stereo_inputs(left, right)
        c_params = make("sad", dict(params, ndisp=ndisp))
        dst = A.output(out, la.shape)
        A.refuse_overlap(dst, la, ra)
        self._call(lib.pv_stereo_sad, ls, rs, c_params, A.out_struct(dst))
        return dst

    @declared_keywords("sad")
    def stereo_sad_batch(self, lefts: Sequence[ArrayLike], rights: Sequence[ArrayLike],
                         ndisp: int = default_of("sad", "ndisp"), **params: Any) -> np.ndarray:
        """SAD block matching of many pairs of one shape in one call
        (pv_stereo_sad_batch): returns a float32 (pairs, rows, columns)
        stack; slice i is exactly stereo_sad(lefts[i], rights[i], ndisp,
        **params).  On OpenCL every pair is queued without a wait and the
        maps come back together (one wait a group of 256 MiB of maps),
        which pays for many small pairs.

        lefts, rights: sequences of as many 2D images (or 3D stacks), each
        pair as for stereo_sad (a batch whose pairs differ in dtype is
        matched in float32 throughout).  An empty batch or pairs of
        different shapes raise InvalidArgument before any work."""
        arrays, left_structs, right_structs = sgm_batch_inputs(lefts, rights, _stereo_inputs)
        count = len(arrays) // 2
        rows, columns = arrays[0].shape
        disparities = np.empty((count, rows, columns), np.float32)
        self._call(lib.pv_stereo_sad_batch, left_structs, right_structs, count,
                   make("sad", dict(params, ndisp=ndisp)), image_structs(disparities))
        return disparities

    @declared_keywords("bp", defaults={"disc_max": None})
    def stereo_bp(self, left: ArrayLike, right: ArrayLike,
                  ndisp: int = default_of("bp", "ndisp"), *,
                  disc_max: Optional[float] = None, out: Optional[np.ndarray] = None,
                  **params: Any) -> np.ndarray:
        """Hierarchical belief-propagation stereo; returns the float32
        disparity of each left pixel (always finite: BP labels every pixel).

        Same convention as stereo_sad: left column x matches right column
        x - d, d in [min_disp, min_disp + ndisp).  disc_max None:
        max(1.7, ndisp / 7.5), the declared 1.7 raised for wide ranges as
        `parvis stereo --method bp` does.  message_update "cooperative"
        normalises messages by their minimum (the same algorithm up to float
        ties), which the OpenCL backend runs with a group of work-items per
        pixel: much faster for wide ranges.  lambda_ is the C field
        `lambda`.  The defaults are the paper's."""
        la, ls, ra, rs = _stereo_inputs(left, right)
        c_params = bp_params(ndisp, disc_max, **params)
        dst = A.output(out, la.shape)
        A.refuse_overlap(dst, la, ra)
        self._call(lib.pv_stereo_bp, ls, rs, c_params, A.out_struct(dst))
        return dst

    @declared_keywords("sgm")
    def stereo_sgm(self, left: ArrayLike, right: ArrayLike, *, confidence: bool = False,
                   census: Optional[Tuple[int, int]] = None, out: Optional[np.ndarray] = None,
                   **params: Any) -> Union[np.ndarray, Tuple[np.ndarray, np.ndarray]]:
        """Semi-global matching of census costs; returns the float32
        disparity of each left pixel, +inf where invalid, or the pair
        (disparity, confidence) when confidence is true.

        Same convention as stereo_sad: left column x matches right column
        x - d, d in [min_disp, min_disp + ndisp); ndisp is at most the
        number of columns.  census=(width, height) is a shorthand for
        census_width and census_height: (5, 5), (7, 7) or (9, 7).  On
        OpenCL, aggregation="auto" keeps one volume a path when they fit
        memory_budget (0: what the device has) and else one summed 16-bit
        volume (about a third of the memory at 8 paths, same result,
        slower); a call that does not fit even that raises
        DeviceMemoryError before allocating.  The confidence is
        1 - S(best)/S(second) in 0..1, 0 where invalid.
        left, right: 2D (rows, columns), same shape, uint8, uint16 or
        float32 (finite); other real dtypes become float32.  out: a float32
        (rows, columns) array for the disparity.  The defaults are libSGM's."""
        la, ls, ra, rs = sgm_inputs(left, right)
        c_params = sgm_params(census=census, **params)
        dst = A.output(out, la.shape)
        A.refuse_overlap(dst, la, ra)
        if not confidence:
            self._call(lib.pv_stereo_sgm, ls, rs, c_params, A.image_struct(dst))
            return dst
        conf = np.empty(la.shape, np.float32)
        self._call(lib.pv_stereo_sgm_confidence, ls, rs, c_params, A.image_struct(dst),
                   A.image_struct(conf))
        return dst, conf

    @declared_keywords("sgm")
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
        params = sgm_params(**options)
        disparities = np.empty((count, rows, columns), np.float32)
        confidences = np.empty((count, rows, columns), np.float32) if confidence else None
        self._call(lib.pv_stereo_sgm_batch, left_structs, right_structs, count, params,
                   image_structs(disparities),
                   image_structs(confidences) if confidences is not None else ffi.NULL)
        return disparities if confidences is None else (disparities, confidences)
