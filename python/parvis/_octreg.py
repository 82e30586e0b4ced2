"""Context's OCT motion correction (include/parvis/octreg.h): one-call
registration and plans that keep the reference's spectra."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Tuple, cast

import numpy as np

from . import _arrays as A
from ._base import ArrayLike, _choice, _ContextBase, _float, _int, _Plan
from ._errors import invalid
from ._native import ffi, lib
from ._register import _PAD
from ._results import OctregResult

if TYPE_CHECKING:
    from ._context import Context

_OCT_AXES = "B-scans, A-lines, depth"


def _octreg_options(stripes: int, stripe_width: int, subvolume_width: int, subvolume_step: int,
                    coarse_tolerance: float, tolerance: float, pad: str, subpixel: bool,
                    batch: int) -> Any:
    return ffi.new("pv_octreg_options *", [
        _int(stripes, "stripes"), _int(stripe_width, "stripe_width"),
        _int(subvolume_width, "subvolume_width"), _int(subvolume_step, "subvolume_step"),
        _float(coarse_tolerance, "coarse_tolerance"), _float(tolerance, "tolerance"),
        _choice(_PAD, pad, "pad"), int(bool(subpixel)), _int(batch, "batch")])


def _octreg_arrays(shifts: Any, n: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    raw = np.frombuffer(ffi.buffer(shifts, n * ffi.sizeof("pv_octreg_shift")), dtype=np.dtype(
        {"names": ["d", "peak", "valid"], "formats": [("f8", 3), "f8", "i4"],
         "offsets": [0, 24, 32], "itemsize": ffi.sizeof("pv_octreg_shift")}))
    return raw["d"].copy(), raw["peak"].copy(), raw["valid"] != 0


class _OctregOps(_ContextBase):
    """Context's OCT registration methods."""

    def octreg(self, reference: ArrayLike, target: ArrayLike, *, registered: bool = False,
               gap_value: float = 0.0, **options: Any) -> OctregResult:
        """Register an AO-OCT target volume to a reference (stripe-wise,
        coarse to fine by 3D phase correlation).

        Volumes: float32 arrays of shape (B-scans, A-lines, depth), equal
        shapes.  Returns OctregResult(shifts (B, 3) dx, dy, dz; peak; valid;
        info; registered).  registered=True also reconstructs the target at
        the reference's positions (gaps set to gap_value).  options:
        stripes=10, stripe_width=3, subvolume_width=32, subvolume_step=16,
        coarse_tolerance=0.0, tolerance=8.0, pad="fft", subpixel=False,
        batch=0 (see OctregPlan).  For many targets against one reference,
        octreg_plan() keeps the reference's spectra."""
        with self.octreg_plan(reference, **options) as plan:
            return plan.register(target, registered=registered, gap_value=gap_value)

    def octreg_plan(self, reference: ArrayLike, *, stripes: int = 10, stripe_width: int = 3,
                    subvolume_width: int = 32, subvolume_step: int = 16,
                    coarse_tolerance: float = 0.0, tolerance: float = 8.0, pad: str = "fft",
                    subpixel: bool = False, batch: int = 0) -> "OctregPlan":
        """An OctregPlan holding the reference volume's spectra, for
        registering many targets against one reference (float32, shape
        (B-scans, A-lines, depth)).  Options and their C defaults are
        described in OctregPlan."""
        return OctregPlan(cast("Context", self), reference, stripes=stripes, stripe_width=stripe_width,
                          subvolume_width=subvolume_width, subvolume_step=subvolume_step,
                          coarse_tolerance=coarse_tolerance, tolerance=tolerance, pad=pad,
                          subpixel=subpixel, batch=batch)


class OctregPlan(_Plan):
    """AO-OCT registration against one reference volume (B-scans, A-lines,
    depth): the spectra of the whole reference and of its sub-volumes are
    kept.  Made by Context.octreg_plan(reference, **options).

    Options (C defaults): stripes (10) coarse stripes of stripe_width (3)
    B-scans; fine sub-volumes of subvolume_width (32, factors 2, 3, 5, 7)
    B-scans every subvolume_step (16); coarse_tolerance (0: twice the stripe
    spacing) and tolerance (8 voxels) of the spike and continuity filters;
    pad "fft" | "linear" | "none"; subpixel refinement; batch (0: sized to
    the device)."""

    _destroy = lib.pv_octreg_plan_destroy

    def __init__(self, ctx: Context, reference: ArrayLike, **options: Any) -> None:
        super().__init__(ctx)
        ra, rs = A.volume_in(reference, "reference")
        self.shape = ra.shape
        self._create(lib.pv_octreg_plan_create, rs, _octreg_options(**options),
                     out_type="pv_octreg_plan **")

    def register(self, target: ArrayLike, *, registered: bool = False,
                 gap_value: float = 0.0) -> OctregResult:
        """Register one target of the reference's shape (see OctregResult)."""
        ta, ts = A.volume_in(target, "target")
        if ta.shape != self.shape:
            raise invalid(f"target: shape {A.shape_text(ta.shape, _OCT_AXES)} differs from "
                          f"the reference's {self.shape}")
        n = ta.shape[0]
        shifts = ffi.new("pv_octreg_shift[]", n)
        info = ffi.new("pv_octreg_info *")
        self._call(lib.pv_octreg_register, ts, shifts, info)
        volume = None
        if registered:
            volume = np.empty(self.shape, np.float32)
            self._call(lib.pv_octreg_reconstruct, ts, shifts, _float(gap_value, "gap_value"),
                       A.volume_struct(volume), ffi.NULL, ffi.NULL, ffi.NULL)
        s, peak, valid = _octreg_arrays(shifts, n)
        return OctregResult(s, peak, valid,
                            {"stripes": info.stripes, "good_stripes": info.good_stripes,
                             "valid_bscans": info.valid_bscans, "subvolumes": info.subvolumes},
                            volume)

    def reconstruct(self, target: ArrayLike, shifts: ArrayLike, valid: ArrayLike, *,
                    gap_value: float = 0.0) -> np.ndarray:
        """Resample a target's valid B-scans to the reference's positions
        from given shifts ((B, 3) dx, dy, dz) and valid flags ((B,) bool)."""
        ta, ts = A.volume_in(target, "target")
        if ta.shape != self.shape:
            raise invalid(f"target: shape {A.shape_text(ta.shape, _OCT_AXES)} differs from "
                          f"the reference's {self.shape}")
        n = ta.shape[0]
        s = A.plain(shifts, "shifts").astype(np.float64)
        v = A.plain(valid, "valid")
        if s.shape != (n, 3) or v.shape != (n,):
            raise invalid(f"shifts/valid: expected shapes ({n}, 3) and ({n},)")
        c = ffi.new("pv_octreg_shift[]", n)
        for k in range(n):
            c[k] = [s[k, 0], s[k, 1], s[k, 2], 0.0, int(bool(v[k]))]
        volume = np.empty(self.shape, np.float32)
        self._call(lib.pv_octreg_reconstruct, ts, c, _float(gap_value, "gap_value"),
                   A.volume_struct(volume), ffi.NULL, ffi.NULL, ffi.NULL)
        return volume
