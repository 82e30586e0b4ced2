"""Context's registration (include/parvis/register.h): phase correlation,
its plans for many movers against one reference, and normalised
cross-correlation (of one image, a batch of images, or masked)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, cast

import numpy as np

from . import _arrays as A
from ._base import ArrayLike, _ContextBase, _grid_in, _int, _Plan
from ._errors import invalid, raise_status
from ._native import ffi, lib
from ._params import declared_keywords, make
from ._results import NCCResult, PhaseCorrelation, PhaseCorrelationBatch

if TYPE_CHECKING:
    from ._context import Context


def _shift_array(s: Any, ndim: int) -> np.ndarray:
    return np.array([s.dx, s.dy, s.dz][:ndim], dtype=np.float64)


def _phasecorr_options(upsample: int, subpixel: Optional[str], pad: str, window: str) -> Any:
    """A pv_phasecorr_options* from Python's form: upsample 1 gives the
    integer peak, more refines it on a grid of step 1/upsample (subpixel
    None: chosen from upsample).  The declared fields (`parvis params
    phasecorr`) are set through the library, which refuses what its
    declaration does not allow (upsample outside 2..10000 with
    subpixel="upsample", so 0 and negative values too)."""
    upsample = _int(upsample, "upsample")
    if subpixel is None:
        subpixel = "none" if upsample == 1 else "upsample"
    values: Dict[str, Any] = {"subpixel": subpixel, "pad": pad, "window": window}
    if upsample != 1 or subpixel == "upsample":
        values["upsample"] = upsample
    return make("phasecorr", values)


class _RegisterOps(_ContextBase):
    """Context's registration methods."""

    def phase_correlate(self, reference: ArrayLike, moving: ArrayLike, upsample: int = 1, *,
                        subpixel: Optional[str] = None, pad: str = "none",
                        window: str = "none") -> PhaseCorrelation:
        """Phase correlation of two images (2D) or volumes (3D) of one shape.

        Returns PhaseCorrelation(shift, peak, flags) with moving(p) ~
        reference(p - shift); shift is [dx, dy] or [dx, dy, dz] (x = last
        axis).  upsample: 1 gives the integer peak; > 1 refines it on a grid
        of step 1/upsample (Guizar-Sicairos upsampled DFT).  subpixel:
        None (from upsample), "none", "upsample" or "parabolic".  pad: "none"
        (circular), "fft" (to FFT-friendly sizes) or "linear" (>= 2n - 1, no
        wrap-around).  window: "none" or "hann".  Inputs holding NaN/inf are
        refused; constant inputs give shift 0, peak 0 and NO_TEXTURE.
        Volumes may be uint16 (kept as 16 bits, converted on the device,
        with the float32 call's result)."""
        options = _phasecorr_options(upsample, subpixel, pad, window)
        shift = ffi.new("pv_shift *")
        volume = np.ndim(reference) == 3
        ra, rs = _grid_in(reference, "reference", volume, allow_u16=True)
        ma, ms = _grid_in(moving, "moving", volume, allow_u16=True)
        A.same_shape(ra, ma, ("reference", "moving"))
        fn = lib.pv_phase_correlate3d if volume else lib.pv_phase_correlate
        self._call(fn, rs, ms, options, shift)
        return PhaseCorrelation(_shift_array(shift, ra.ndim), shift.peak, int(shift.flags))

    @declared_keywords("phasecorr_masked")
    def phase_correlate_masked(self, reference: ArrayLike, moving: ArrayLike,
                               reference_mask: ArrayLike, moving_mask: Optional[ArrayLike] = None,
                               **params: Any) -> PhaseCorrelation:
        """Masked phase correlation (Padfield 2012; scikit-image's
        phase_cross_correlation with reference_mask / moving_mask) of two
        images (2D) or volumes (3D) of one shape.

        For every integer shift, the normalised cross-correlation over the
        pixels valid in both masks (linear, not circular); shifts whose
        overlap is below overlap_ratio times the largest overlap score 0.
        Returns PhaseCorrelation(shift, peak, flags) with moving(p) ~
        reference(p - shift) (scikit-image returns -shift) and peak the
        best coefficient.  Masks: the shape of their input, any numeric or
        bool dtype, non-zero = valid; moving_mask None means reference_mask.
        A mask without a valid pixel is refused (InvalidArgument)."""
        c_params = make("phasecorr_masked", params)
        volume = np.ndim(reference) == 3
        ra, rs = _grid_in(reference, "reference", volume, allow_u16=True)
        ma, ms = _grid_in(moving, "moving", volume, allow_u16=True)
        A.same_shape(ra, ma, ("reference", "moving"))
        masks = []
        for name, mask in (("reference_mask", reference_mask), ("moving_mask", moving_mask)):
            if mask is None:
                masks.append((None, ffi.NULL))
                continue
            arr = np.asarray(mask)
            if volume or arr.dtype not in (np.uint8, np.float32):
                arr = (arr != 0).astype(np.float32)
            a, st = _grid_in(arr, name, volume, allow_u16=True)
            A.same_shape(ra, a, ("reference", name))
            masks.append((a, st))
        shift = ffi.new("pv_shift *")
        fn = lib.pv_phase_correlate_masked3d if volume else lib.pv_phase_correlate_masked
        self._call(fn, rs, ms, masks[0][1], masks[1][1], c_params, shift)
        return PhaseCorrelation(_shift_array(shift, ra.ndim), shift.peak, int(shift.flags))

    def phasecorr_plan(self, reference: ArrayLike, upsample: int = 1, *,
                       subpixel: Optional[str] = None, pad: str = "none", window: str = "none",
                       max_batch: int = 1) -> "PhaseCorrPlan":
        """A PhaseCorrPlan: the reference's spectrum cached (on the device
        for OpenCL), movers correlated max_batch at a time.  Options as for
        phase_correlate."""
        return PhaseCorrPlan(cast("Context", self), reference, upsample, subpixel=subpixel, pad=pad,
                             window=window, max_batch=max_batch)

    def ncc(self, template: ArrayLike, image: ArrayLike, *, min_overlap: int = 0,
            compute_map: bool = True, out: Optional[np.ndarray] = None) -> NCCResult:
        """Normalised cross-correlation of a template over an image (MATLAB's
        normxcorr2, normalised over the overlapping pixels only).

        Returns NCCResult(map, x, y, coefficient, sub_x, sub_y, flags): the
        full coefficient map (float32, (H_i + H_t - 1, W_i + W_t - 1); None
        with compute_map=False) and the best template offset.  Coefficients
        are 0 where the overlap has fewer than min_overlap pixels or no
        variance; values lie in [-1, 1]."""
        ta, ts = A.image_in(template, "template")
        ia, is_ = A.image_in(image, "image")
        shape = (ia.shape[0] + ta.shape[0] - 1, ia.shape[1] + ta.shape[1] - 1)
        dst = A.output(out, shape) if compute_map else None
        if dst is not None:
            A.refuse_overlap(dst, ta, ia)
        result = ffi.new("pv_ncc_result *")
        self._call(lib.pv_normxcorr2, ts, is_, _int(min_overlap, "min_overlap"),
                   A.out_struct(dst) if dst is not None else ffi.NULL, result)
        return _ncc_result(dst, result)

    def normxcorr2_masked(self, template: ArrayLike, image: ArrayLike,
                          template_mask: ArrayLike, image_mask: Optional[ArrayLike] = None, *,
                          min_overlap: int = 0, compute_map: bool = True,
                          out: Optional[np.ndarray] = None) -> NCCResult:
        """Masked normalised cross-correlation (OpenCV's matchTemplate with
        a mask and TM_CCOEFF_NORMED; Padfield's masked NCC): ncc's map and
        peak, each coefficient normalised over the pixels of the overlap
        valid in both masks (means and variances over those pixels only).

        template_mask: the template's shape; image_mask: the image's shape,
        or None (every image pixel valid); any numeric or bool dtype,
        non-zero = valid.  A mask of another shape or without a valid pixel
        raises InvalidArgument.  Coefficients are 0 where fewer than
        min_overlap pixels are valid in both, or where either side is flat
        over them; values lie in [-1, 1].  With every pixel of both masks
        valid the map is ncc's, bit for bit.  The cost grows as map points
        times the template's valid pixels (direct sums, exact to float
        rounding); calls above 2^38 such pairs are refused."""
        ta, ts = A.image_in(template, "template")
        ia, is_ = A.image_in(image, "image")
        tm, tms = _mask_in(template_mask, "template_mask", ta, "template")
        im, ims = (None, ffi.NULL) if image_mask is None else \
            _mask_in(image_mask, "image_mask", ia, "image")
        shape = (ia.shape[0] + ta.shape[0] - 1, ia.shape[1] + ta.shape[1] - 1)
        dst = A.output(out, shape) if compute_map else None
        if dst is not None:
            A.refuse_overlap(dst, ta, ia, *[m for m in (tm, im) if m is not None])
        result = ffi.new("pv_ncc_result *")
        self._call(lib.pv_normxcorr2_masked, ts, is_, tms, ims,
                   _int(min_overlap, "min_overlap"),
                   A.out_struct(dst) if dst is not None else ffi.NULL, result)
        return _ncc_result(dst, result)

    def normxcorr2_batch(self, template: ArrayLike, images: Sequence[ArrayLike], *,
                         min_overlap: int = 0, compute_maps: bool = True) -> List[NCCResult]:
        """One template against many images of one shape in one call
        (pv_normxcorr2_batch): returns one NCCResult per image, exactly what
        ncc(template, images[i], min_overlap=min_overlap) returns.  The
        template is prepared once; on OpenCL it is uploaded and transformed
        once and every image's work is queued before one wait, which is
        faster than a loop of single calls for many small images.

        images: a sequence of 2D images (uint8 or float32, types may
        differ) or a 3D (count, rows, columns) stack, all of one shape.
        With compute_maps the maps are slices of one float32 (count, rows,
        columns) stack; without, each result's map is None.  An empty batch
        or images of different shapes raise InvalidArgument before any
        work."""
        ta, ts = A.image_in(template, "template")
        try:
            count = len(images)
        except TypeError:
            raise invalid(f"images: expected a sequence of images, got {type(images).__name__}") \
                from None
        if count < 1:
            raise invalid("images: the batch is empty")
        arrays = [A.image_in(images[i], f"images[{i}]") for i in range(count)]
        for i, (a, _) in enumerate(arrays):
            if a.shape != arrays[0][0].shape:
                raise invalid(f"images[{i}]: shape {A.shape_text(a.shape)} differs from "
                              f"images[0]'s {tuple(arrays[0][0].shape)}; a batch holds images "
                              "of one shape")
        structs = ffi.new("pv_image[]", count)
        for i, (_, st) in enumerate(arrays):
            structs[i] = st[0]
        rows, columns = arrays[0][0].shape
        shape = (rows + ta.shape[0] - 1, columns + ta.shape[1] - 1)
        maps = np.empty((count,) + shape, np.float32) if compute_maps else None
        outs = ffi.NULL
        if maps is not None:
            outs = ffi.new("pv_image[]", count)
            for i in range(count):
                outs[i] = A.out_struct(maps[i])[0]
        results = ffi.new("pv_ncc_result[]", count)
        self._call(lib.pv_normxcorr2_batch, ts, structs, count, _int(min_overlap, "min_overlap"),
                   outs, results)
        return [_ncc_result(maps[i] if maps is not None else None, results[i])
                for i in range(count)]


def _ncc_result(map_: Optional[np.ndarray], result: Any) -> NCCResult:
    """NCCResult from a pv_ncc_result and its map (or None)."""
    return NCCResult(map_, int(result.x), int(result.y), float(result.coefficient),
                     float(result.sub_x), float(result.sub_y), int(result.flags))


def _mask_in(mask: ArrayLike, name: str, owner: np.ndarray,
             owner_name: str) -> Tuple[np.ndarray, Any]:
    """A mask as a uint8 image (non-zero = valid) of its input's shape."""
    arr = np.asarray(mask)
    if arr.ndim != 2:
        raise invalid(f"{name}: expected a 2D array, got {arr.ndim} dimension(s)")
    if arr.dtype != np.uint8:
        if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
            raise invalid(f"{name}: expected a numeric or bool array, got dtype {arr.dtype}")
        arr = (arr != 0).astype(np.uint8)
    a, st = A.image_in(arr, name)
    A.same_shape(owner, a, (owner_name, name))
    return a, st


class PhaseCorrPlan(_Plan):
    """Phase correlation against a cached reference (2D image or 3D volume).
    Made by Context.phasecorr_plan(reference, upsample, ...)."""

    def __init__(self, ctx: Context, reference: ArrayLike, upsample: int = 1, *,
                 subpixel: Optional[str] = None, pad: str = "none", window: str = "none",
                 max_batch: int = 1) -> None:
        super().__init__(ctx)
        options = _phasecorr_options(upsample, subpixel, pad, window)
        volume = np.ndim(reference) == 3
        ra, rs = _grid_in(reference, "reference", volume, allow_u16=True)
        fn = lib.pv_phasecorr_plan_create3d if volume else lib.pv_phasecorr_plan_create
        self.ndim = ra.ndim
        self.shape = ra.shape
        self._create(fn, rs, options, _int(max_batch, "max_batch"),
                     out_type="pv_phasecorr_plan **")

    _destroy = lib.pv_phasecorr_plan_destroy

    def _mover(self, arr: ArrayLike, name: str) -> Tuple[np.ndarray, Any]:
        a, s = _grid_in(arr, name, self.ndim == 3, allow_u16=True)
        if a.shape != self.shape:
            raise invalid(f"{name}: shape {A.shape_text(a.shape)} differs from the "
                          f"reference's {self.shape}")
        return a, s

    def set_reference(self, reference: ArrayLike) -> None:
        """Replace the reference (same shape)."""
        a, s = self._mover(reference, "reference")
        fn = (lib.pv_phasecorr_plan_set_reference3d if self.ndim == 3
              else lib.pv_phasecorr_plan_set_reference)
        self._call(fn, s)

    def correlate(self, moving: ArrayLike) -> PhaseCorrelation:
        """Correlate one mover of the reference's shape (see
        Context.phase_correlate for the result)."""
        a, s = self._mover(moving, "moving")
        shift = ffi.new("pv_shift *")
        fn = (lib.pv_phasecorr_plan_correlate3d if self.ndim == 3
              else lib.pv_phasecorr_plan_correlate)
        self._call(fn, s, 1, shift)
        return PhaseCorrelation(_shift_array(shift, self.ndim), shift.peak, int(shift.flags))

    def correlate_many(self, movers: ArrayLike) -> PhaseCorrelationBatch:
        """Correlate a stack of movers (shape (count,) + the reference's
        shape, or a sequence of such arrays), max_batch at a time on the
        device."""
        items = [movers[i] for i in range(len(movers))]
        if not items:
            raise invalid("movers: the stack is empty")
        kind = "pv_volume[]" if self.ndim == 3 else "pv_image[]"
        structs = ffi.new(kind, len(items))
        keep = []
        for i, item in enumerate(items):
            a, s = self._mover(item, f"movers[{i}]")
            structs[i] = s[0]
            keep.append(a)
        shifts = ffi.new("pv_shift[]", len(items))
        fn = (lib.pv_phasecorr_plan_correlate3d if self.ndim == 3
              else lib.pv_phasecorr_plan_correlate)
        self._call(fn, structs, len(items), shifts)
        raw = np.frombuffer(ffi.buffer(shifts), dtype=np.dtype(
            {"names": ["d", "peak", "flags"], "formats": [("f8", 3), "f8", "u4"],
             "offsets": [0, 24, 32], "itemsize": ffi.sizeof("pv_shift")}))
        return PhaseCorrelationBatch(raw["d"][:, :self.ndim].copy(), raw["peak"].copy(),
                                     raw["flags"].copy())

    @property
    def fft_size(self) -> Tuple[int, ...]:
        """Transform size per axis (x first) after padding."""
        size = ffi.new("int[3]")
        with self._entered() as (ctx, plan):
            status = lib.pv_phasecorr_plan_fft_size(plan, size)
            if status:
                raise_status(status, ctx)
        return tuple(size[i] for i in range(self.ndim))
