"""Context's optical flow (include/parvis/flow.h): 3D flow of volumes, 2D
flow of images, plans for a stream of one size, and warping."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple, cast

import numpy as np

from . import _arrays as A
from ._base import ArrayLike, _as_volume, _choice, _ContextBase, _float, _int, _Plan
from ._errors import invalid
from ._filter import _GRADIENT
from ._native import ffi, lib
from ._results import Flow

if TYPE_CHECKING:
    from ._context import Context

def _flow_params(alpha: float, beta: float, rho: float, kernel_size: int, warps: int,
                 iterations: int, levels: int, spacing: float, gradient: str,
                 tolerance: float, check_every: int) -> Any:
    return ffi.new("pv_flow_params *", [
        _float(alpha, "alpha"), _float(beta, "beta"), _float(rho, "rho"),
        _int(kernel_size, "kernel_size"), _int(warps, "warps"), _int(iterations, "iterations"),
        _int(levels, "levels"), _float(spacing, "spacing"),
        _choice(_GRADIENT, gradient, "gradient"), _float(tolerance, "tolerance"),
        _int(check_every, "check_every")])


def _flow_defaults(image_shape: Optional[Tuple[int, ...]] = None) -> Dict[str, Any]:
    """The C library's default flow parameters as flow3d's keywords:
    pv_flow_params_default, or for images (rows, columns) given,
    pv_flow_params_default_2d with the pyramid cut, as `parvis flow` does,
    so that its coarsest level keeps 16 pixels on the smaller side."""
    p = ffi.new("pv_flow_params *")
    if image_shape is None:
        lib.pv_flow_params_default(p)
    else:
        lib.pv_flow_params_default_2d(p)
    gradient = {code: name for name, code in _GRADIENT.items()}[p.gradient]
    params = dict(alpha=p.alpha, beta=p.beta, rho=p.rho, kernel_size=p.kernel_size,
                  warps=p.warps, iterations=p.iterations, levels=p.levels, spacing=p.spacing,
                  gradient=gradient, tolerance=p.tolerance, check_every=p.check_every)
    if image_shape is not None:
        side = min(int(n) for n in image_shape)
        while params["levels"] > 1 and (side >> (params["levels"] - 1)) < 16:
            params["levels"] -= 1
    return params


def _flow_inputs(fixed: ArrayLike, moving: ArrayLike) -> Tuple[Any, ...]:
    shape2d = np.ndim(fixed) == 2
    fa, fs = A.volume_in(_as_volume(fixed, "fixed"), "fixed")
    ma, ms = A.volume_in(_as_volume(moving, "moving"), "moving")
    if shape2d:
        A.same_shape(fa[0], ma[0], ("fixed", "moving"))
    A.same_shape(fa, ma, ("fixed", "moving"))
    return fa, fs, ma, ms, shape2d


def _flow_field(shape: Tuple[int, ...]) -> Tuple[Tuple[np.ndarray, ...], Any]:
    """Three fresh float32 volumes and the pv_flow_field describing them."""
    outs = tuple(np.empty(shape, np.float32) for _ in range(3))
    field = ffi.new("pv_flow_field *")
    field.u, field.v, field.w = (A.volume_struct(o)[0] for o in outs)
    return outs, field


def _flow_result(outs: Tuple[np.ndarray, ...], shape2d: bool) -> Flow:
    if shape2d:
        return Flow(*(o[0] for o in outs))
    return Flow(*outs)


class _FlowOps(_ContextBase):
    """Context's optical flow methods."""

    def flow3d(self, fixed: ArrayLike, moving: ArrayLike, *, alpha: float = 0.05,
               beta: float = 0.0, rho: float = 2.0, kernel_size: int = 15, warps: int = 5,
               iterations: int = 50, levels: int = 1, spacing: float = 1.0,
               gradient: str = "central", tolerance: float = 0.0,
               check_every: int = 10) -> Flow:
        """3D combined local-global optical flow with a divergence penalty.

        fixed, moving: float32 volumes (z, y, x) of one shape (2D images are
        taken as one-slice volumes), finite values.  Returns Flow(u, v, w)
        with moving(p + flow(p)) ~ fixed(p).  alpha: smoothness weight (in
        squared intensity units); beta: divergence weight (0 <= beta <= 2
        alpha); rho/kernel_size: the structure tensor's Gaussian (kernel_size
        0: from rho); warps, iterations: re-samplings and Jacobi iterations;
        levels: pyramid levels; gradient: "central" or "forward"; tolerance:
        > 0 stops a warp early (tested every check_every iterations).
        Defaults: the paper's benchmark setting."""
        params = _flow_params(alpha, beta, rho, kernel_size, warps, iterations, levels,
                              spacing, gradient, tolerance, check_every)
        fa, fs, ma, ms, shape2d = _flow_inputs(fixed, moving)
        outs, field = _flow_field(fa.shape)
        self._call(lib.pv_flow3d, fs, ms, params, field)
        return _flow_result(outs, shape2d)

    def flow2d(self, fixed: ArrayLike, moving: ArrayLike, *, alpha: Optional[float] = None,
               beta: Optional[float] = None, rho: Optional[float] = None,
               kernel_size: Optional[int] = None, warps: Optional[int] = None,
               iterations: Optional[int] = None, levels: Optional[int] = None,
               spacing: Optional[float] = None, gradient: Optional[str] = None,
               tolerance: Optional[float] = None, check_every: Optional[int] = None) -> Flow:
        """2D optical flow between two images, with the C library's image
        defaults (pv_flow_params_default_2d: alpha 0.02, rho 1.5 with taps
        from rho, 4 pyramid levels, 5 warps, 50 iterations; see
        docs/flow2d.md) for every parameter left None.  Without `levels`
        the pyramid is cut so that its coarsest level keeps 16 pixels on the
        smaller side (as `parvis flow` does).

        fixed, moving: float32 images (rows, columns) of one shape, finite
        values; the defaults suit intensities in [0, 1].  Returns Flow(u, v,
        w) of 2D arrays, moving(x + u, y + v) ~ fixed(x, y), u to the right,
        v down the rows, w zero.  Parameters as flow3d; write the result
        with parvis.write_flo."""
        if np.ndim(fixed) != 2 or np.ndim(moving) != 2:
            raise invalid(f"fixed/moving: flow2d takes 2D images, got {np.ndim(fixed)}D "
                          f"and {np.ndim(moving)}D (flow3d takes volumes)")
        given = dict(alpha=alpha, beta=beta, rho=rho, kernel_size=kernel_size, warps=warps,
                     iterations=iterations, levels=levels, spacing=spacing, gradient=gradient,
                     tolerance=tolerance, check_every=check_every)
        chosen = _flow_defaults(np.shape(fixed))
        chosen.update({name: value for name, value in given.items() if value is not None})
        params = _flow_params(**chosen)
        fa, fs, ma, ms, shape2d = _flow_inputs(fixed, moving)
        outs, field = _flow_field(fa.shape)
        self._call(lib.pv_flow3d, fs, ms, params, field)
        return _flow_result(outs, shape2d)

    def flow_plan(self, shape: Tuple[int, ...], **params: Any) -> "FlowPlan":
        """A FlowPlan for volumes of shape (z, y, x) (or images (y, x));
        keyword arguments as for flow3d().  Parameters not given take the
        3D defaults for volumes and the 2D ones (as flow2d) for images."""
        return FlowPlan(cast("Context", self), shape, **params)

    def flow_warp(self, moving: ArrayLike, flow: Tuple[ArrayLike, ArrayLike, ArrayLike]
                  ) -> np.ndarray:
        """warped(p) = moving(p + flow(p)), trilinear, coordinates clamped to
        the volume; flow is (u, v, w) as flow3d returns."""
        ma, ms = A.volume_in(_as_volume(moving, "moving"), "moving")
        comps = [A.volume_array(_as_volume(c, n), n) for c, n in zip(flow, "uvw")]
        if any(c.shape != ma.shape for c in comps):
            raise invalid("flow: u, v, w must have the moving volume's shape "
                          f"{A.shape_text(ma.shape)}, got {[c.shape for c in comps]}")
        field = ffi.new("pv_flow_field *")
        field.u, field.v, field.w = (A.volume_struct(c)[0] for c in comps)
        dst = np.empty(ma.shape, np.float32)
        self._call(lib.pv_flow_warp, ms, field, A.volume_struct(dst))
        return dst.reshape(np.shape(moving)) if np.ndim(moving) == 2 else dst


class FlowPlan(_Plan):
    """3D optical flow for volumes of one shape: pyramid, tensor and flow
    buffers kept between run() calls.  Made by Context.flow_plan(shape,
    **params) (parameters as Context.flow3d; those not given take the C
    library's defaults: the 3D ones for a volume shape (z, y, x), the 2D
    ones of Context.flow2d for an image shape (y, x))."""

    _destroy = lib.pv_flow_plan_destroy

    def __init__(self, ctx: Context, shape: Tuple[int, ...], **params: Any) -> None:
        super().__init__(ctx)
        shape = tuple(shape)
        self._image = len(shape) == 2
        if self._image:
            shape = (1,) + shape
        if len(shape) != 3:
            raise invalid(f"shape: expected (z, y, x) or (rows, columns), got {shape}")
        self.shape = tuple(_int(s, "shape") for s in shape)
        defaults = _flow_defaults(self.shape[1:] if self._image else None)
        self._create(lib.pv_flow_plan_create, self.shape[2], self.shape[1], self.shape[0],
                     _flow_params(**{**defaults, **params}), out_type="pv_flow_plan **")

    def run(self, fixed: ArrayLike, moving: ArrayLike) -> Flow:
        """Flow from fixed to moving (both of the plan's shape)."""
        fa, fs, ma, ms, shape2d = _flow_inputs(fixed, moving)
        if fa.shape != self.shape or ma.shape != self.shape:
            raise invalid(f"fixed/moving: shapes {A.shape_text(fa.shape)} and {ma.shape} "
                          f"differ from the plan's {self.shape}")
        outs, field = _flow_field(fa.shape)
        self._call(lib.pv_flow_plan_run, fs, ms, field)
        return _flow_result(outs, shape2d)

    @property
    def stats(self) -> Dict[str, float]:
        """Time per stage of the last run (ms) and the Jacobi iterations run."""
        s = ffi.new("pv_flow_stats *")
        self._call(lib.pv_flow_plan_stats, s)
        return {"pyramid": s.pyramid_ms, "gradient": s.gradient_ms, "resample": s.resample_ms,
                "tensor": s.tensor_ms, "jacobi": s.jacobi_ms, "iterations": s.iterations}
