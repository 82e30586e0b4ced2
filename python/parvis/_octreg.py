"""Context's OCT motion correction (include/parvis/octreg.h): one-call
registration and plans that keep the reference's spectra."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Tuple, cast

import numpy as np

from . import _arrays as A
from ._base import ArrayLike, _ContextBase, _float, _Plan
from ._errors import invalid
from ._native import ffi, lib
from ._params import declared_keywords, make
from ._results import OctregResult

if TYPE_CHECKING:
    from ._context import Context

_OCT_AXES = "B-scans, A-lines, depth"


def _octreg_options(**options: Any) -> Any:
    """A pv_octreg_options* from the declared keywords (`parvis params octreg`)."""
    return make("octreg", options)


def _octreg_arrays(shifts: Any, n: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    raw = np.frombuffer(ffi.buffer(shifts, n * ffi.sizeof("pv_octreg_shift")), dtype=np.dtype(
        {"names": ["d", "peak", "valid"], "formats": [("f8", 3), "f8", "i4"],
         "offsets": [0, 24, 32], "itemsize": ffi.sizeof("pv_octreg_shift")}))
    return raw["d"].copy(), raw["peak"].copy(), raw["valid"] != 0


class _OctregOps(_ContextBase):
    """Context's OCT registration methods."""

    @declared_keywords("octreg")
    def octreg(self, reference: ArrayLike, target: ArrayLike, *, registered: bool = False,
               gap_value: float = 0.0, **options: Any) -> OctregResult:
        """Register an AO-OCT target volume to a reference (stripe-wise,
        coarse to fine by 3D phase correlation).

        Volumes: float32 or uint16 arrays of shape (B-scans, A-lines,
        depth), equal shapes; uint16 is uploaded as 16 bits and converted
        on the device, with the results of the same values as float32.  Returns OctregResult(shifts (B, 3) dx, dy, dz; peak; valid;
        info; registered).  registered=True also reconstructs the target at
        the reference's positions (gaps set to gap_value).  For many targets
        against one reference, octreg_plan() keeps the reference's spectra."""
        with self.octreg_plan(reference, **options) as plan:
            return plan.register(target, registered=registered, gap_value=gap_value)

    @declared_keywords("octreg")
    def octreg_plan(self, reference: ArrayLike, **options: Any) -> "OctregPlan":
        """An OctregPlan holding the reference volume's spectra, for
        registering many targets against one reference (float32 or uint16,
        shape (B-scans, A-lines, depth))."""
        return OctregPlan(cast("Context", self), reference, **options)


class OctregPlan(_Plan):
    """AO-OCT registration against one reference volume (B-scans, A-lines,
    depth): the spectra of the whole reference and of its sub-volumes are
    kept.  Made by Context.octreg_plan(reference, **options), whose
    options are the library's declared ones (`parvis params octreg`)."""

    _destroy = lib.pv_octreg_plan_destroy

    def __init__(self, ctx: Context, reference: ArrayLike, **options: Any) -> None:
        super().__init__(ctx)
        ra, rs = A.volume_in(reference, "reference", allow_u16=True)
        self.shape = ra.shape
        self._create(lib.pv_octreg_plan_create, rs, _octreg_options(**options),
                     out_type="pv_octreg_plan **")

    def register(self, target: ArrayLike, *, registered: bool = False,
                 gap_value: float = 0.0) -> OctregResult:
        """Register one target of the reference's shape (see OctregResult)."""
        ta, ts = A.volume_in(target, "target", allow_u16=True)
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
        ta, ts = A.volume_in(target, "target", allow_u16=True)
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
