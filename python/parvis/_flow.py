"""Context's optical flow (include/parvis/flow.h): 3D flow of volumes, 2D
flow of images, plans for a stream of one size, and warping."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple, cast

import numpy as np

from . import _arrays as A
from ._base import ArrayLike, _as_volume, _ContextBase, _int, _Plan
from ._errors import invalid
from ._native import ffi, lib
from ._params import declared, declared_keywords, make
from ._results import Flow

if TYPE_CHECKING:
    from ._context import Context

def _flow_params(image_shape: Optional[Tuple[int, ...]] = None, **params: Any) -> Any:
    """A pv_flow_params* from the declared keywords (`parvis params flow`)
    over the C defaults: pv_flow_params_default for volumes, or for images
    (rows, columns) given, pv_flow_params_default_2d with the pyramid cut,
    as `parvis flow` does, so that its coarsest level keeps 16 pixels on the
    smaller side (unless `levels` is given)."""
    base = ffi.new("pv_flow_params *")
    if image_shape is None:
        lib.pv_flow_params_default(base)
    else:
        lib.pv_flow_params_default_2d(base)
        side = min(int(n) for n in image_shape)
        while base.levels > 1 and (side >> (base.levels - 1)) < 16:
            base.levels -= 1
    return make("flow", params, base=base)


def _flow_inputs(fixed: ArrayLike, moving: ArrayLike) -> Tuple[Any, ...]:
    shape2d = np.ndim(fixed) == 2
    fa, fs = A.volume_in(_as_volume(fixed, "fixed"), "fixed", allow_u16=True)
    ma, ms = A.volume_in(_as_volume(moving, "moving"), "moving", allow_u16=True)
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

    @declared_keywords("flow")
    def flow3d(self, fixed: ArrayLike, moving: ArrayLike, **params: Any) -> Flow:
        """3D combined local-global optical flow with a divergence penalty.

        fixed, moving: float32 or uint16 volumes (z, y, x) of one shape (2D
        images are taken as one-slice volumes), finite values; uint16 is
        converted on the device, with the float32 call's result.  Returns Flow(u, v, w)
        with moving(p + flow(p)) ~ fixed(p); alpha is in squared intensity
        units.  Defaults: the paper's benchmark setting."""
        c_params = _flow_params(**params)
        fa, fs, ma, ms, shape2d = _flow_inputs(fixed, moving)
        outs, field = _flow_field(fa.shape)
        self._call(lib.pv_flow3d, fs, ms, c_params, field)
        return _flow_result(outs, shape2d)

    @declared_keywords("flow", defaults={p.keyword: None for p in declared("flow")})
    def flow2d(self, fixed: ArrayLike, moving: ArrayLike, **params: Any) -> Flow:
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
        c_params = _flow_params(np.shape(fixed), **params)
        fa, fs, ma, ms, shape2d = _flow_inputs(fixed, moving)
        outs, field = _flow_field(fa.shape)
        self._call(lib.pv_flow3d, fs, ms, c_params, field)
        return _flow_result(outs, shape2d)

    @declared_keywords("flow", defaults={p.keyword: None for p in declared("flow")})
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
        self._create(lib.pv_flow_plan_create, self.shape[2], self.shape[1], self.shape[0],
                     _flow_params(self.shape[1:] if self._image else None, **params),
                     out_type="pv_flow_plan **")

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
