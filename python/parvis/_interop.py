"""Context's device-buffer methods (parvis/interop.h, docs/interop.md).

pyopencl arrays in and out without copies: the arrays' buffers are handed
to the C library as they are, the work is queued after the arrays' pending
events (and the ``wait_for`` events), and the result array carries the
event that marks the work done, as pyopencl's own operations do.  pyopencl
is imported only when one of these methods is called; the library must
have been built with its OpenCL backend.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Sequence, Tuple, cast

import numpy as np

from ._base import _ContextBase, _float, _int
from ._errors import invalid, raise_status
from ._features import (_SIFT_FIELDS, SiftChainResult, _chain_params, _take_chain_result,
                        _check_descriptor_dtype, _features_arrays)
from ._flow import _flow_params
from ._native import ffi, lib
from ._octreg import _octreg_arrays, _octreg_options
from ._params import declared_keywords, default_of, make
from ._results import OctregResult, SiftFeatures
from ._register import _ncc_result, _phasecorr_options, _shift_array
from ._results import NCCResult, PhaseCorrelation
from ._stereo import bp_params, sgm_params

if TYPE_CHECKING:
    from ._context import Context

#: numpy dtype names and the pixel types of device buffers.
_PIXEL_TYPES = {"uint8": "PV_PIXEL_U8", "uint16": "PV_PIXEL_U16", "float32": "PV_PIXEL_F32"}


def has_interop() -> bool:
    """Whether this build of the library has the device-buffer calls."""
    return hasattr(lib, "pv_stereo_sgm_cl")


def _pyopencl() -> Any:
    if not has_interop():
        raise invalid("device buffers need parvis built with its OpenCL backend")
    try:
        import pyopencl  # noqa: F401  (imported for its array module too)
        import pyopencl.array
    except ImportError as err:
        raise invalid("device buffers need pyopencl (pip install pyopencl)") from err
    return pyopencl


def _handle(kind: str, obj: Any) -> Any:
    """A pyopencl object's OpenCL handle as the C type `kind`."""
    return ffi.cast(kind, ffi.cast("intptr_t", obj.int_ptr))


def _is_array(arr: Any) -> bool:
    return all(hasattr(arr, name) for name in ("base_data", "offset", "shape", "strides",
                                               "dtype", "events"))


_RGB_TYPES = {"uint8": "PV_PIXEL_RGB8", "uint16": "PV_PIXEL_RGB16"}


def buffer_of(arr: Any, name: str, rgb: bool = False) -> Any:
    """The pv_buffer of a 2D pyopencl array whose rows are contiguous; with
    rgb, also of a (rows, columns, 3) uint8 or uint16 array (RGB8 / RGB16,
    each pixel's three samples contiguous)."""
    if not _is_array(arr):
        raise invalid(f"{name}: expected a pyopencl.array.Array, got {type(arr).__name__}")
    colour = rgb and len(arr.shape) == 3 and int(arr.shape[2]) == 3
    if len(arr.shape) != 2 and not colour:
        raise invalid(f"{name}: expected 2D (rows, columns), got shape {tuple(arr.shape)}")
    kind = (_RGB_TYPES if colour else _PIXEL_TYPES).get(str(arr.dtype))
    if kind is None:
        raise invalid(f"{name}: dtype {arr.dtype} is not uint8, uint16"
                      f"{'' if colour else ' or float32'}")
    rows, columns = (int(n) for n in arr.shape[:2])
    item = arr.dtype.itemsize * (3 if colour else 1)
    row_stride, column_stride = (int(s) for s in arr.strides[:2])
    contiguous_pixel = not colour or int(arr.strides[2]) == arr.dtype.itemsize
    if (column_stride != item or row_stride < columns * item or row_stride % item
            or not contiguous_pixel):
        raise invalid(f"{name}: rows must be contiguous (strides {tuple(arr.strides)})")
    if arr.base_data is None:
        raise invalid(f"{name}: the array has no buffer (an empty array?)")
    b = ffi.new("pv_buffer *")
    b.mem = _handle("cl_mem", arr.base_data)
    b.offset = int(arr.offset)
    b.width, b.height, b.stride = columns, rows, row_stride // item
    b.type = getattr(lib, kind)
    return b


def volume_buffer_of(arr: Any, name: str, dtypes: Tuple[str, ...] = ("float32", "uint16")
                     ) -> Any:
    """The pv_buffer of a 3D (z, y, x) pyopencl array whose rows are
    contiguous (rows and slices may be padded)."""
    if not _is_array(arr):
        raise invalid(f"{name}: expected a pyopencl.array.Array, got {type(arr).__name__}")
    if len(arr.shape) != 3:
        raise invalid(f"{name}: expected 3D (z, y, x), got shape {tuple(arr.shape)}")
    if str(arr.dtype) not in dtypes:
        raise invalid(f"{name}: dtype {arr.dtype} is not {' or '.join(dtypes)}")
    nz, ny, nx = (int(n) for n in arr.shape)
    item = arr.dtype.itemsize
    slice_stride, row_stride, column_stride = (int(s) for s in arr.strides)
    if (column_stride != item or row_stride < nx * item or row_stride % item
            or slice_stride < row_stride * ny or slice_stride % item):
        raise invalid(f"{name}: rows must be contiguous and slices in order "
                      f"(strides {tuple(arr.strides)})")
    if arr.base_data is None:
        raise invalid(f"{name}: the array has no buffer (an empty array?)")
    b = ffi.new("pv_buffer *")
    b.mem = _handle("cl_mem", arr.base_data)
    b.offset = int(arr.offset)
    b.width, b.height, b.depth = nx, ny, nz
    b.stride, b.slice_stride = row_stride // item, slice_stride // item
    b.type = getattr(lib, _PIXEL_TYPES[str(arr.dtype)])
    return b


def _wait_list(arrays: Sequence[Any], wait_for: Optional[Sequence[Any]]) -> Tuple[int, Any]:
    """The arrays' pending events and wait_for's, as a C list."""
    events: List[Any] = [e for a in arrays if a is not None for e in a.events]
    events += list(wait_for or [])
    if not events:
        return 0, ffi.NULL
    return len(events), ffi.new("cl_event[]", [_handle("cl_event", e) for e in events])


def _output(cl: Any, like: Any, out: Optional[Any], name: str) -> Any:
    """out, or a new float32 array of like's shape on like's queue."""
    if out is None:
        return cl.array.empty(like.queue, like.shape, "float32")
    if tuple(out.shape) != tuple(like.shape) or str(out.dtype) != "float32":
        raise invalid(f"{name}: expected float32 of shape {tuple(like.shape)}, got "
                      f"{out.dtype} {tuple(out.shape)}")
    return out


def _attach(cl: Any, done: Any, outputs: Sequence[Any]) -> None:
    """The completion event, owned by pyopencl, on every output array."""
    event = cl.Event.from_int_ptr(int(ffi.cast("intptr_t", done[0])), retain=False)
    for out in outputs:
        if out is not None:
            out.add_event(event)


def _ncc_map_out(cl: Any, template: Any, image: Any, out: Optional[Any]) -> Any:
    """The float32 map array of a normxcorr2 form (image + template - 1 per
    axis): out after checking it, or a new array on the image's queue."""
    shape = (int(image.shape[0]) + int(template.shape[0]) - 1,
             int(image.shape[1]) + int(template.shape[1]) - 1)
    dst = out if out is not None else cl.array.empty(image.queue, shape, "float32")
    if tuple(dst.shape) != shape or str(dst.dtype) != "float32":
        raise invalid(f"out: expected float32 of shape {shape}, got {dst.dtype} "
                      f"{tuple(dst.shape)}")
    return dst


class _InteropOps(_ContextBase):
    """Context's device-buffer methods (pyopencl arrays)."""

    @declared_keywords("sgm")
    def stereo_sgm_cl(self, left: Any, right: Any, *, out: Optional[Any] = None,
                      confidence: Optional[Any] = None,
                      wait_for: Optional[Sequence[Any]] = None, **params: Any) -> Any:
        """stereo_sgm on pyopencl arrays (2D, uint8, uint16 or float32,
        rows contiguous, on this context's cl_context): returns out (a new
        float32 array on left's queue when None) with the completion event
        added to it (and to confidence, a float32 array that receives the
        confidence, when given).  The work waits for the inputs' and
        outputs' pending events and for wait_for; the results are
        stereo_sgm's.  float32 inputs are not checked for NaN."""
        cl = _pyopencl()
        inputs = [buffer_of(left, "left"), buffer_of(right, "right")]
        out = _output(cl, left, out, "out")
        if confidence is not None:
            _output(cl, left, confidence, "confidence")
        bufs = inputs + [buffer_of(out, "out")]
        conf = buffer_of(confidence, "confidence") if confidence is not None else ffi.NULL
        count, waits = _wait_list([left, right, out, confidence], wait_for)
        done = ffi.new("cl_event *")
        self._call(lib.pv_stereo_sgm_cl, bufs[0], bufs[1], sgm_params(**params), bufs[2], conf,
                   count, waits, done)
        _attach(cl, done, [out, confidence])
        return out

    @declared_keywords("sad")
    def stereo_sad_cl(self, left: Any, right: Any, ndisp: int = default_of("sad", "ndisp"), *,
                      out: Optional[Any] = None, wait_for: Optional[Sequence[Any]] = None,
                      **params: Any) -> Any:
        """stereo_sad on pyopencl arrays (2D, uint8 or float32, rows
        contiguous): returns out (a new float32 array when None) with the
        completion event added; the results are stereo_sad's."""
        cl = _pyopencl()
        inputs = [buffer_of(left, "left"), buffer_of(right, "right")]
        out = _output(cl, left, out, "out")
        bufs = inputs + [buffer_of(out, "out")]
        count, waits = _wait_list([left, right, out], wait_for)
        done = ffi.new("cl_event *")
        self._call(lib.pv_stereo_sad_cl, bufs[0], bufs[1], make("sad", dict(params, ndisp=ndisp)),
                   bufs[2], count, waits, done)
        _attach(cl, done, [out])
        return out

    @declared_keywords("bp", defaults={"disc_max": None})
    def stereo_bp_cl(self, left: Any, right: Any, ndisp: int = default_of("bp", "ndisp"), *,
                     disc_max: Optional[float] = None, out: Optional[Any] = None,
                     wait_for: Optional[Sequence[Any]] = None, **params: Any) -> Any:
        """stereo_bp on pyopencl arrays (2D, uint8 or float32, rows
        contiguous): returns out (a new float32 array when None) with the
        completion event added; the results are stereo_bp's."""
        cl = _pyopencl()
        inputs = [buffer_of(left, "left"), buffer_of(right, "right")]
        out = _output(cl, left, out, "out")
        bufs = inputs + [buffer_of(out, "out")]
        count, waits = _wait_list([left, right, out], wait_for)
        done = ffi.new("cl_event *")
        self._call(lib.pv_stereo_bp_cl, bufs[0], bufs[1], bp_params(ndisp, disc_max, **params),
                   bufs[2], count, waits, done)
        _attach(cl, done, [out])
        return out

    def phase_correlate_cl(self, reference: Any, moving: Any, upsample: int = 1, *,
                           subpixel: Optional[str] = None, pad: str = "none",
                           window: str = "none",
                           wait_for: Optional[Sequence[Any]] = None) -> PhaseCorrelation:
        """phase_correlate on pyopencl arrays: 2D images (uint8, uint16 or
        float32, rows contiguous) or 3D (z, y, x) volumes (float32 or
        uint16) of one shape, on this context's cl_context.  The inputs stay
        on the device (their scans and means are computed there); the work
        waits for the arrays' pending events and for wait_for, and the
        method returns when it is done, with phase_correlate's
        PhaseCorrelation, equal to it bit for bit.  NaN/inf inputs are
        refused.  Needs a device with double precision (cl_khr_fp64)."""
        _pyopencl()
        options = _phasecorr_options(upsample, subpixel, pad, window)
        volume = len(reference.shape) == 3 if _is_array(reference) else False
        take = volume_buffer_of if volume else buffer_of
        r, m = take(reference, "reference"), take(moving, "moving")
        if tuple(reference.shape) != tuple(moving.shape):
            raise invalid(f"reference and moving differ in shape: {tuple(reference.shape)} and "
                          f"{tuple(moving.shape)}")
        shift = ffi.new("pv_shift *")
        count, waits = _wait_list([reference, moving], wait_for)
        fn = lib.pv_phase_correlate3d_cl if volume else lib.pv_phase_correlate_cl
        self._call(fn, r, m, options, shift, count, waits, ffi.NULL)
        return PhaseCorrelation(_shift_array(shift, 3 if volume else 2), shift.peak,
                                int(shift.flags))

    def phase_correlate3d_cl(self, reference: Any, moving: Any, upsample: int = 1, *,
                             subpixel: Optional[str] = None, pad: str = "none",
                             window: str = "none",
                             wait_for: Optional[Sequence[Any]] = None) -> PhaseCorrelation:
        """phase_correlate_cl for 3D (z, y, x) volumes only (float32 or
        uint16): a 2D array is refused rather than taken for an image."""
        _pyopencl()
        if not _is_array(reference) or len(reference.shape) != 3:
            raise invalid("reference: expected a 3D (z, y, x) pyopencl array")
        return self.phase_correlate_cl(reference, moving, upsample, subpixel=subpixel, pad=pad,
                                       window=window, wait_for=wait_for)

    def normxcorr2_cl(self, template: Any, image: Any, *, min_overlap: int = 0,
                      compute_map: bool = True, out: Optional[Any] = None,
                      wait_for: Optional[Sequence[Any]] = None) -> NCCResult:
        """ncc on pyopencl arrays (2D, uint8 or float32, rows contiguous):
        NCCResult whose map is out (or a new float32 array of shape
        (H_i + H_t - 1, W_i + W_t - 1) on image's queue; None with
        compute_map=False) with the completion event added.  The inputs stay
        on the device (their statistics, centring and scaling, and the
        peak search on the map, run there); the method returns when the
        result is known, equal to ncc's bit for bit.  NaN/inf inputs are
        refused.  Needs a device with double precision (cl_khr_fp64)."""
        cl = _pyopencl()
        t, i = buffer_of(template, "template"), buffer_of(image, "image")
        dst = _ncc_map_out(cl, template, image, out) if compute_map else None
        result = ffi.new("pv_ncc_result *")
        count, waits = _wait_list([template, image, dst], wait_for)
        done = ffi.new("cl_event *")
        self._call(lib.pv_normxcorr2_cl, t, i, _int(min_overlap, "min_overlap"),
                   buffer_of(dst, "out") if dst is not None else ffi.NULL, result, count, waits,
                   done)
        _attach(cl, done, [dst])
        return _ncc_result(dst, result)

    def phasecorr_plan_cl(self, reference: Any, upsample: int = 1, *,
                          subpixel: Optional[str] = None, pad: str = "none",
                          window: str = "none", max_batch: int = 1,
                          wait_for: Optional[Sequence[Any]] = None) -> Any:
        """phasecorr_plan with the reference in a pyopencl array (a 2D
        image, uint8, uint16 or float32, or a 3D (z, y, x) volume, float32
        or uint16): a PhaseCorrPlanCL, whose correlate_cl and
        correlate_many_cl take pyopencl arrays of its shape and return
        shifts equal bit for bit to the host plan's.  Needs a device with
        double precision (cl_khr_fp64)."""
        # imported here: the plan's module builds on this one's helpers
        from ._interop_plan import PhaseCorrPlanCL
        return PhaseCorrPlanCL(cast("Context", self), reference, upsample, subpixel=subpixel,
                               pad=pad, window=window, max_batch=max_batch, wait_for=wait_for)

    def phase_correlate_masked_cl(self, reference: Any, moving: Any, reference_mask: Any,
                                  moving_mask: Optional[Any] = None, *,
                                  wait_for: Optional[Sequence[Any]] = None,
                                  **params: Any) -> PhaseCorrelation:
        """phase_correlate_masked on pyopencl arrays: 2D images (uint8 or
        float32) or 3D (z, y, x) volumes (float32 or uint16) of one shape,
        and masks of their shape (the same dtypes; non-zero: valid;
        moving_mask None means reference_mask's).  The masked means and
        copies are made on the device; the method returns when the shift
        is known, equal to phase_correlate_masked's bit for bit.  Needs a
        device with double precision (cl_khr_fp64)."""
        _pyopencl()
        c_params = make("phasecorr_masked", params)
        volume = _is_array(reference) and len(reference.shape) == 3
        take = volume_buffer_of if volume else buffer_of
        arrays = [reference, moving, reference_mask, moving_mask]
        names = ["reference", "moving", "reference_mask", "moving_mask"]
        bufs = []
        for arr, name in zip(arrays, names):
            if arr is None:
                bufs.append(ffi.NULL)
                continue
            bufs.append(take(arr, name))
            if tuple(arr.shape) != tuple(reference.shape):
                raise invalid(f"{name}: shape {tuple(arr.shape)} differs from the "
                              f"reference's {tuple(reference.shape)}")
        shift = ffi.new("pv_shift *")
        count, waits = _wait_list(arrays, wait_for)
        fn = lib.pv_phase_correlate_masked3d_cl if volume else lib.pv_phase_correlate_masked_cl
        self._call(fn, *bufs, c_params, shift, count, waits, ffi.NULL)
        return PhaseCorrelation(_shift_array(shift, 3 if volume else 2), shift.peak,
                                int(shift.flags))

    def normxcorr2_masked_cl(self, template: Any, image: Any, template_mask: Any,
                             image_mask: Optional[Any] = None, *, min_overlap: int = 0,
                             compute_map: bool = True, out: Optional[Any] = None,
                             wait_for: Optional[Sequence[Any]] = None) -> NCCResult:
        """normxcorr2_masked on pyopencl arrays: template and image 2D
        (uint8 or float32, rows contiguous), template_mask and image_mask
        uint8 arrays of their shapes (non-zero: valid; image_mask None:
        every image pixel valid).  Returns NCCResult whose map is out (or a
        new float32 array on image's queue; None with compute_map=False)
        with the completion event; the masked statistics, copies and the
        peak search run on the device, and the result equals
        normxcorr2_masked's bit for bit.  Needs a device with double
        precision (cl_khr_fp64)."""
        cl = _pyopencl()
        t, i = buffer_of(template, "template"), buffer_of(image, "image")
        masks = [buffer_of(template_mask, "template_mask"),
                 buffer_of(image_mask, "image_mask") if image_mask is not None else ffi.NULL]
        dst = _ncc_map_out(cl, template, image, out) if compute_map else None
        result = ffi.new("pv_ncc_result *")
        count, waits = _wait_list([template, image, template_mask, image_mask, dst], wait_for)
        done = ffi.new("cl_event *")
        self._call(lib.pv_normxcorr2_masked_cl, t, i, masks[0], masks[1],
                   _int(min_overlap, "min_overlap"),
                   buffer_of(dst, "out") if dst is not None else ffi.NULL, result, count, waits,
                   done)
        _attach(cl, done, [dst])
        return _ncc_result(dst, result)

    def normxcorr2_batch_cl(self, template: Any, images: Sequence[Any], *, min_overlap: int = 0,
                            compute_maps: bool = True, out: Optional[Sequence[Any]] = None,
                            wait_for: Optional[Sequence[Any]] = None) -> List[NCCResult]:
        """normxcorr2_batch on pyopencl arrays (2D, uint8 or float32, one
        shape): one NCCResult per image, equal to normxcorr2_batch's (and
        ncc's) bit for bit, each map a float32 pyopencl array (out[i], or a
        new one on the image's queue; None with compute_maps=False)
        carrying the completion event.  The images go through one at a
        time on the device; the method returns when every peak is known."""
        cl = _pyopencl()
        items = list(images)
        if not items:
            raise invalid("images: the batch is empty")
        t = buffer_of(template, "template")
        bufs = ffi.new("pv_buffer[]", len(items))
        for i, image in enumerate(items):
            bufs[i] = buffer_of(image, f"images[{i}]")[0]
        shape = (int(items[0].shape[0]) + int(template.shape[0]) - 1,
                 int(items[0].shape[1]) + int(template.shape[1]) - 1)
        dsts: List[Any] = []
        if compute_maps:
            dsts = list(out) if out is not None else [
                cl.array.empty(image.queue, shape, "float32") for image in items]
            if len(dsts) != len(items):
                raise invalid(f"out: {len(dsts)} maps for {len(items)} images")
        maps = ffi.new("pv_buffer[]", len(dsts)) if dsts else ffi.NULL
        for i, dst in enumerate(dsts):
            if tuple(dst.shape) != shape or str(dst.dtype) != "float32":
                raise invalid(f"out[{i}]: expected float32 of shape {shape}, got {dst.dtype} "
                              f"{tuple(dst.shape)}")
            maps[i] = buffer_of(dst, f"out[{i}]")[0]
        results = ffi.new("pv_ncc_result[]", len(items))
        count, waits = _wait_list([template] + items + dsts, wait_for)
        done = ffi.new("cl_event *")
        self._call(lib.pv_normxcorr2_batch_cl, t, bufs, len(items),
                   _int(min_overlap, "min_overlap"), maps, results, count, waits, done)
        _attach(cl, done, dsts)
        return [_ncc_result(dsts[i] if dsts else None, results + i) for i in range(len(items))]

    def octreg_average_cl(self, reference: Any, targets: Sequence[Any], *,
                          gap_value: float = 0.0, enface: bool = False, slow: bool = False,
                          out: Optional[Any] = None, wait_for: Optional[Sequence[Any]] = None,
                          **options: Any) -> Any:
        """pv_octreg_average on 3D pyopencl arrays (B-scans, A-lines, depth),
        float32 or uint16, of one shape: up to 17 targets registered to the
        reference and their reconstructions averaged on the device.
        Returns an OctregAverage: shifts (targets, B-scans, 3), peak and
        valid per target and B-scan, the averaged float32 volume (out, or a
        new array), the en-face (B-scans, A-lines) and slow-axis (depth,
        B-scans) images when asked for, each with the completion event, and
        the coverage (numpy); equal to the host call's bit for bit.  The
        keywords are octreg()'s options."""
        from ._interop_plan import octreg_average
        return octreg_average(self, reference, list(targets), gap_value=gap_value,
                              enface=enface, slow=slow, out=out, wait_for=wait_for,
                              options=options)

    def to_grey_cl(self, image: Any, *, out: Optional[Any] = None,
                   wait_for: Optional[Sequence[Any]] = None) -> Any:
        """to_grey on a pyopencl array: 2D uint8, uint16 or float32, or
        (rows, columns, 3) uint8 / uint16 RGB; returns out (a new float32
        (rows, columns) array when None) with the completion event added;
        the results are to_grey's."""
        cl = _pyopencl()
        src = buffer_of(image, "image", rgb=True)
        shape = tuple(image.shape[:2])
        if out is None:
            out = cl.array.empty(image.queue, shape, "float32")
        elif tuple(out.shape) != shape or str(out.dtype) != "float32":
            raise invalid(f"out: expected float32 of shape {shape}, got {out.dtype} "
                          f"{tuple(out.shape)}")
        dst = buffer_of(out, "out")
        count, waits = _wait_list([image, out], wait_for)
        done = ffi.new("cl_event *")
        self._call(lib.pv_to_grey_cl, src, dst, count, waits, done)
        _attach(cl, done, [out])
        return out

    def gaussian_blur3d_cl(self, volume: Any, sigma: float, taps: int = 0, *,
                           out: Optional[Any] = None,
                           wait_for: Optional[Sequence[Any]] = None) -> Any:
        """gaussian_blur on a 3D (z, y, x) float32 pyopencl array: returns
        out (a new float32 array when None) with the completion event
        added; the results are gaussian_blur's on the volume."""
        cl = _pyopencl()
        src = volume_buffer_of(volume, "volume", ("float32",))
        out = _output(cl, volume, out, "out")
        dst = volume_buffer_of(out, "out", ("float32",))
        count, waits = _wait_list([volume, out], wait_for)
        done = ffi.new("cl_event *")
        self._call(lib.pv_gaussian_blur3d_cl, src, dst, _float(sigma, "sigma"),
                   _int(taps, "taps"), count, waits, done)
        _attach(cl, done, [out])
        return out

    def flow3d_cl(self, fixed: Any, moving: Any, *, out: Optional[Sequence[Any]] = None,
                  wait_for: Optional[Sequence[Any]] = None, **params: Any) -> Tuple[Any, Any, Any]:
        """flow3d on 3D (z, y, x) pyopencl arrays (float32 or uint16, one
        shape): returns the field's components (u, v, w) as float32 arrays
        (out, three arrays of that shape, or new ones) with the completion
        event added; the results are flow3d's.  The keywords are flow3d's."""
        cl = _pyopencl()
        f = volume_buffer_of(fixed, "fixed")
        m = volume_buffer_of(moving, "moving")
        outs = list(out) if out is not None else [None, None, None]
        if len(outs) != 3:
            raise invalid(f"out: expected three arrays (u, v, w), got {len(outs)}")
        outs = [_output(cl, fixed, o, name) for o, name in zip(outs, ("u", "v", "w"))]
        bufs = [volume_buffer_of(o, name, ("float32",)) for o, name in zip(outs, ("u", "v", "w"))]
        count, waits = _wait_list([fixed, moving] + outs, wait_for)
        done = ffi.new("cl_event *")
        self._call(lib.pv_flow3d_cl, f, m, _flow_params(**params), bufs[0], bufs[1], bufs[2],
                   count, waits, done)
        _attach(cl, done, outs)
        return outs[0], outs[1], outs[2]

    def gaussian_blur_cl(self, image: Any, sigma: float, taps: int = 0, *,
                         out: Optional[Any] = None,
                         wait_for: Optional[Sequence[Any]] = None) -> Any:
        """gaussian_blur on a 2D pyopencl array (uint8 or float32): returns
        out (a new float32 array when None, not overlapping image) with the
        completion event added; the results are gaussian_blur's."""
        cl = _pyopencl()
        src = buffer_of(image, "image")
        out = _output(cl, image, out, "out")
        dst = buffer_of(out, "out")
        count, waits = _wait_list([image, out], wait_for)
        done = ffi.new("cl_event *")
        self._call(lib.pv_gaussian_blur_cl, src, dst, _float(sigma, "sigma"), _int(taps, "taps"),
                   count, waits, done)
        _attach(cl, done, [out])
        return out

    def cl_handles(self) -> Tuple[int, int]:
        """The integer handles of this OpenCL context's cl_context and of the
        queue to order work with (the caller's for a context made by
        Context.from_cl): pyopencl.Context.from_int_ptr(handle) and
        pyopencl.CommandQueue.from_int_ptr(handle) wrap them."""
        if not has_interop():
            raise invalid("cl_handles needs parvis built with its OpenCL backend")
        context = ffi.new("cl_context *")
        queue = ffi.new("cl_command_queue *")
        self._call(lib.pv_context_cl_objects, context, queue)
        return (int(ffi.cast("intptr_t", context[0])), int(ffi.cast("intptr_t", queue[0])))

    @declared_keywords("sift", defaults={name: None for name in _SIFT_FIELDS})
    def sift_detect_cl(self, image: Any, *, preset: str = "reference",
                       descriptor_dtype: Any = np.uint8,
                       wait_for: Optional[Sequence[Any]] = None, **params: Any) -> SiftFeatures:
        """sift on a pyopencl array (2D uint8, uint16 or float32, or
        (rows, columns, 3) uint8 / uint16 RGB, rows contiguous): the pixels
        are read on the device; the keypoints and descriptors come back as
        sift() returns them (the call has finished when it returns).  The
        work waits for the image's pending events and for wait_for.
        preset, descriptor_dtype and the keywords are sift()'s; float32
        images are not checked for NaN."""
        _pyopencl()
        dtype = _check_descriptor_dtype(descriptor_dtype)
        src = buffer_of(image, "image", rgb=True)
        count, waits = _wait_list([image], wait_for)
        features = ffi.new("pv_sift_features *")
        with self.sift_plan(tuple(image.shape[:2]), preset=preset, **params) as plan:
            with plan._entered() as (ctx, p):
                status = lib.pv_sift_detect_cl(p, src, features, count, waits, ffi.NULL)
                if status:
                    raise_status(status, ctx)
        try:
            return _features_arrays(features, dtype)
        finally:
            lib.pv_sift_features_free(features)

    @declared_keywords("sift", defaults={name: None for name in _SIFT_FIELDS})
    def sift_match_images_cl(self, image1: Any, image2: Any, *, preset: str = "reference",
                             match: Optional[Mapping[str, Any]] = None,
                             ransac: Optional[Mapping[str, Any]] = None,
                             wait_for: Optional[Sequence[Any]] = None,
                             **params: Any) -> SiftChainResult:
        """sift_match_images on two pyopencl arrays of one shape (types as
        for sift_detect_cl): detection, matching and the ratio test run on
        the device; the homography and its inlier matches come back as
        sift_match_images() returns them.  The work waits for the images'
        pending events and for wait_for; the keywords are
        sift_match_images()'s."""
        _pyopencl()
        if tuple(image1.shape) != tuple(image2.shape):
            raise invalid(f"image2: shape {tuple(image2.shape)} differs from image1's "
                          f"{tuple(image1.shape)}")
        one, two = buffer_of(image1, "image1", rgb=True), buffer_of(image2, "image2", rgb=True)
        m, r = _chain_params(match, ransac)
        count, waits = _wait_list([image1, image2], wait_for)
        result = ffi.new("pv_sift_chain_result *")
        with self.sift_plan(tuple(image1.shape[:2]), preset=preset, **params) as plan:
            with plan._entered() as (ctx, p):
                status = lib.pv_sift_match_images_cl(p, one, two, m, r, result, count, waits,
                                                     ffi.NULL)
                if status:
                    raise_status(status, ctx)
        return _take_chain_result(result)

    @declared_keywords("octreg")
    def octreg_register_cl(self, reference: Any, target: Any, *, registered: bool = False,
                           gap_value: float = 0.0, out: Optional[Any] = None,
                           wait_for: Optional[Sequence[Any]] = None,
                           **options: Any) -> OctregResult:
        """octreg on 3D pyopencl arrays (B-scans, A-lines, depth), float32
        or uint16, of one shape: the volumes are read on the device (their
        statistics computed there); the shifts, peaks, valid flags and info
        come back as octreg() returns them.  registered=True (or out, a
        float32 array of the shape) also reconstructs the target on the
        device into out (a new array when None), returned as the result's
        registered with the completion event added.  The work waits for the
        volumes' pending events and for wait_for; the keywords are
        octreg()'s."""
        cl = _pyopencl()
        if tuple(reference.shape) != tuple(target.shape):
            raise invalid(f"target: shape {tuple(target.shape)} differs from the reference's "
                          f"{tuple(reference.shape)}")
        ref, tgt = volume_buffer_of(reference, "reference"), volume_buffer_of(target, "target")
        volume = _output(cl, target, out, "out") if registered or out is not None else None
        dst = volume_buffer_of(volume, "out", ("float32",)) if volume is not None else None
        count, waits = _wait_list([reference, target, volume], wait_for)
        n = int(target.shape[0])
        shifts = ffi.new("pv_octreg_shift[]", n)
        info = ffi.new("pv_octreg_info *")
        made = ffi.new("pv_octreg_plan **")
        done = ffi.new("cl_event *")
        with self._entered() as ctx:
            status = lib.pv_octreg_plan_create_cl(ctx, ref, _octreg_options(**options), made,
                                                  count, waits, ffi.NULL)
            if status:
                raise_status(status, ctx)
            try:
                status = lib.pv_octreg_register_cl(made[0], tgt, shifts, info, 0, ffi.NULL,
                                                   ffi.NULL)
                if not status and dst is not None:
                    status = lib.pv_octreg_reconstruct_cl(
                        made[0], tgt, shifts, _float(gap_value, "gap_value"), dst, ffi.NULL,
                        ffi.NULL, ffi.NULL, 0, ffi.NULL, done)
                if status:
                    raise_status(status, ctx)
            finally:
                lib.pv_octreg_plan_destroy(made[0])
        if volume is not None:
            _attach(cl, done, [volume])
        s, peak, valid = _octreg_arrays(shifts, n)
        return OctregResult(s, peak, valid,
                            {"stripes": info.stripes, "good_stripes": info.good_stripes,
                             "valid_bscans": info.valid_bscans, "subvolumes": info.subvolumes},
                            volume)


def create_on_queue(queue: Any) -> Any:
    """pv_context_create_cl on a pyopencl CommandQueue's context and queue:
    the new pv_context pointer."""
    _pyopencl()
    out = ffi.new("pv_context **")
    status = lib.pv_context_create_cl(out, _handle("cl_context", queue.context),
                                      _handle("cl_command_queue", queue))
    return status, out[0]

