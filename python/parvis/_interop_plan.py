"""Phase-correlation plans fed from pyopencl arrays (parvis/interop.h's
pv_phasecorr_plan_*_cl, docs/interop.md; made by Context.phasecorr_plan_cl):
the reference and the movers stay on the device, shifts come back to the
host.  Also the AO-OCT average on pyopencl arrays (pv_octreg_average_cl,
behind Context.octreg_average_cl)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, List, NamedTuple, Optional, Sequence

import numpy as np

from ._base import _float, _int, _Plan
from ._errors import invalid, raise_status
from ._interop import (_attach, _is_array, _output, _pyopencl, _wait_list, buffer_of,
                       volume_buffer_of)
from ._lifetime import CObject
from ._native import ffi, lib
from ._octreg import _octreg_arrays, _octreg_options
from ._register import PhaseCorrPlan, _phasecorr_options
from ._results import PhaseCorrelation, PhaseCorrelationBatch

if TYPE_CHECKING:
    from ._context import Context


def _buffer_taker(volume: bool) -> Callable[[Any, str], Any]:
    return volume_buffer_of if volume else buffer_of


class PhaseCorrPlanCL(PhaseCorrPlan):
    """A PhaseCorrPlan whose reference came from a pyopencl array: 2D images
    (uint8, uint16 or float32, rows contiguous) or 3D (z, y, x) volumes
    (float32 or uint16).  The *_cl methods take pyopencl arrays of the
    reference's shape; the host methods (set_reference, correlate,
    correlate_many) take numpy arrays as on any plan.  Each *_cl call waits
    for the arrays' pending events and for wait_for, and returns when its
    shifts are known, equal bit for bit to the host plan's."""

    def __init__(self, ctx: Context, reference: Any, upsample: int = 1, *,
                 subpixel: Optional[str] = None, pad: str = "none", window: str = "none",
                 max_batch: int = 1, wait_for: Optional[Sequence[Any]] = None) -> None:
        _Plan.__init__(self, ctx)  # the host constructor reads numpy arrays
        _pyopencl()
        options = _phasecorr_options(upsample, subpixel, pad, window)
        volume = _is_array(reference) and len(reference.shape) == 3
        buffer = _buffer_taker(volume)(reference, "reference")
        self.ndim = 3 if volume else 2
        self.shape = tuple(int(n) for n in reference.shape)
        fn = lib.pv_phasecorr_plan_create3d_cl if volume else lib.pv_phasecorr_plan_create_cl
        count, waits = _wait_list([reference], wait_for)
        out = ffi.new("pv_phasecorr_plan **")
        with self._ctx._entered() as c:
            status = fn(c, buffer, options, _int(max_batch, "max_batch"), out, count, waits,
                        ffi.NULL)
            if status:
                raise_status(status, c)
            self._adopt(CObject(out[0], self._free()))

    def _device_mover(self, arr: Any, name: str) -> Any:
        if not _is_array(arr):
            raise invalid(f"{name}: expected a pyopencl.array.Array, got {type(arr).__name__}")
        if tuple(int(n) for n in arr.shape) != self.shape:
            raise invalid(f"{name}: shape {tuple(arr.shape)} differs from the reference's "
                          f"{self.shape}")
        return _buffer_taker(self.ndim == 3)(arr, name)

    def set_reference_cl(self, reference: Any, *,
                         wait_for: Optional[Sequence[Any]] = None) -> None:
        """Replace the reference with a pyopencl array of the same shape."""
        buffer = self._device_mover(reference, "reference")
        count, waits = _wait_list([reference], wait_for)
        fn = (lib.pv_phasecorr_plan_set_reference3d_cl if self.ndim == 3
              else lib.pv_phasecorr_plan_set_reference_cl)
        self._call(fn, buffer, count, waits, ffi.NULL)

    def correlate_cl(self, moving: Any, *,
                     wait_for: Optional[Sequence[Any]] = None) -> PhaseCorrelation:
        """Correlate one pyopencl array of the reference's shape."""
        batch = self.correlate_many_cl([moving], wait_for=wait_for)
        return PhaseCorrelation(batch.shifts[0].copy(), float(batch.peaks[0]),
                                int(batch.flags[0]))

    def correlate_many_cl(self, movers: Sequence[Any], *,
                          wait_for: Optional[Sequence[Any]] = None) -> PhaseCorrelationBatch:
        """Correlate a sequence of pyopencl arrays of the reference's shape,
        max_batch at a time on the device."""
        items = list(movers)
        if not items:
            raise invalid("movers: the sequence is empty")
        structs = ffi.new("pv_buffer[]", len(items))
        for i, item in enumerate(items):
            structs[i] = self._device_mover(item, f"movers[{i}]")[0]
        shifts = ffi.new("pv_shift[]", len(items))
        count, waits = _wait_list(items, wait_for)
        fn = (lib.pv_phasecorr_plan_correlate3d_cl if self.ndim == 3
              else lib.pv_phasecorr_plan_correlate_cl)
        self._call(fn, structs, len(items), shifts, count, waits, ffi.NULL)
        return _batch(shifts, len(items), self.ndim)


def _batch(shifts: Any, count: int, ndim: int) -> PhaseCorrelationBatch:
    """count C shifts as a PhaseCorrelationBatch of ndim axes."""
    d = np.array([[shifts[i].dx, shifts[i].dy, shifts[i].dz][:ndim] for i in range(count)],
                 dtype=np.float64)
    peaks = np.array([shifts[i].peak for i in range(count)], dtype=np.float64)
    flags = np.array([shifts[i].flags for i in range(count)], dtype=np.uint32)
    return PhaseCorrelationBatch(d, peaks, flags)



class OctregAverage(NamedTuple):
    """pv_octreg_average_cl's results: per target and B-scan, shifts
    (targets, B-scans, 3) with columns (dx, dy, dz) as OctregResult's, peak
    and valid (targets, B-scans); the averaged volume and the en-face and
    slow-axis images as float32 pyopencl arrays (None when not asked
    for); coverage (B-scans,) float32 in host memory."""
    shifts: np.ndarray
    peak: np.ndarray
    valid: np.ndarray
    averaged: Optional[Any]
    enface: Optional[Any]
    slow: Optional[Any]
    coverage: np.ndarray


def octreg_average(ctx: Any, reference: Any, targets: List[Any], *, gap_value: float,
                   enface: bool, slow: bool, out: Optional[Any],
                   wait_for: Optional[Sequence[Any]], options: Dict[str, Any]) -> OctregAverage:
    """Context.octreg_average_cl's work: a plan from the reference, the
    average of the targets, the plan destroyed."""
    cl = _pyopencl()
    if not targets:
        raise invalid("targets: the list is empty")
    for i, target in enumerate(targets):
        if tuple(target.shape) != tuple(reference.shape):
            raise invalid(f"targets[{i}]: shape {tuple(target.shape)} differs from the "
                          f"reference's {tuple(reference.shape)}")
    ref = volume_buffer_of(reference, "reference")
    bufs = ffi.new("pv_buffer[]", len(targets))
    for i, target in enumerate(targets):
        bufs[i] = volume_buffer_of(target, f"targets[{i}]")[0]
    nb, na, nd = (int(n) for n in reference.shape)
    averaged = _output(cl, reference, out, "out")
    images = [cl.array.empty(reference.queue, shape, "float32") if wanted else None
              for wanted, shape in ((enface, (nb, na)), (slow, (nd, nb)))]
    outs = [volume_buffer_of(averaged, "out", ("float32",))] + [
        buffer_of(image, "image") if image is not None else ffi.NULL for image in images]
    shifts = ffi.new("pv_octreg_shift[]", nb * len(targets))
    coverage = ffi.new("float[]", nb)
    count, waits = _wait_list([reference, averaged] + targets, wait_for)
    made = ffi.new("pv_octreg_plan **")
    done = ffi.new("cl_event *")
    with ctx._entered() as c:
        status = lib.pv_octreg_plan_create_cl(c, ref, _octreg_options(**options), made, count,
                                              waits, ffi.NULL)
        if status:
            raise_status(status, c)
        try:
            status = lib.pv_octreg_average_cl(made[0], bufs, len(targets), shifts,
                                              _float(gap_value, "gap_value"), *outs, coverage, 0,
                                              ffi.NULL, done)
            if status:
                raise_status(status, c)
        finally:
            lib.pv_octreg_plan_destroy(made[0])
    _attach(cl, done, [averaged] + images)
    d, peak, valid = _octreg_arrays(shifts, nb * len(targets))
    return OctregAverage(d.reshape(len(targets), nb, 3), peak.reshape(len(targets), nb),
                         valid.reshape(len(targets), nb), averaged, images[0], images[1],
                         np.frombuffer(ffi.buffer(coverage), dtype=np.float32).copy())
