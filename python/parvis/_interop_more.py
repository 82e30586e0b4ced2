"""Context's device-buffer methods beyond _interop.py's: the gradients, the
flow's warp, SIFT tracking and batch detection, and the stereo batches
(parvis/interop.h, docs/interop.md), on pyopencl arrays as there."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ._base import _choice, _ContextBase
from ._errors import invalid, raise_status
from ._features import (_SIFT_FIELDS, SiftChainResult, _chain_params, _take_chain_result,
                        _check_descriptor_dtype, _features_arrays)
from ._filter import _GRADIENT
from ._interop import (_attach, _is_array, _output, _pyopencl, _wait_list, buffer_of,
                       volume_buffer_of)
from ._native import ffi, lib
from ._params import declared_keywords, default_of, make
from ._results import SiftFeatures
from ._stereo import sgm_params

if TYPE_CHECKING:
    from ._context import Context


class _InteropMoreOps(_ContextBase):
    """Context's device-buffer methods of the gradients, the warp, SIFT
    tracking and batches, and the stereo batches (pyopencl arrays)."""

    def gradient_cl(self, image: Any, scheme: str = "central", *,
                    out: Optional[Sequence[Optional[Any]]] = None,
                    wait_for: Optional[Sequence[Any]] = None) -> Tuple[Any, ...]:
        """gradients on a pyopencl array: a 2D image (uint8 or float32,
        rows contiguous) gives (gx, gy), a 3D (z, y, x) volume (float32 or
        uint16) gives (gx, gy, gz), float32 arrays of its shape (out, one
        array a component, or new ones on the input's queue) with the
        completion event added; the results are gradients()'s.  scheme is
        gradients()'s."""
        cl = _pyopencl()
        volume = _is_array(image) and len(image.shape) == 3
        components = 3 if volume else 2
        code = _choice(_GRADIENT, scheme, "scheme")
        outs = list(out) if out is not None else [None] * components
        if len(outs) != components:
            raise invalid(f"out: expected {components} arrays, got {len(outs)}")
        names = ("gx", "gy", "gz")[:components]
        take = volume_buffer_of if volume else buffer_of
        src = take(image, "image")
        outs = [_output(cl, image, o, n) for o, n in zip(outs, names)]
        bufs = [volume_buffer_of(o, n, ("float32",)) if volume else buffer_of(o, n)
                for o, n in zip(outs, names)]
        count, waits = _wait_list([image] + outs, wait_for)
        done = ffi.new("cl_event *")
        if volume:
            self._call(lib.pv_gradient3d_cl, src, bufs[0], bufs[1], bufs[2], code, count, waits,
                       done)
        else:
            self._call(lib.pv_gradient_cl, src, bufs[0], bufs[1], code, count, waits, done)
        _attach(cl, done, outs)
        return tuple(outs)

    def gradient3d_cl(self, volume: Any, scheme: str = "central", *,
                      out: Optional[Sequence[Optional[Any]]] = None,
                      wait_for: Optional[Sequence[Any]] = None) -> Tuple[Any, ...]:
        """gradient_cl for 3D (z, y, x) volumes only (float32 or uint16): a
        2D array is refused rather than taken for an image; returns
        (gx, gy, gz)."""
        _pyopencl()
        if not _is_array(volume) or len(volume.shape) != 3:
            raise invalid("volume: expected a 3D (z, y, x) pyopencl array")
        return self.gradient_cl(volume, scheme, out=out, wait_for=wait_for)

    def flow_warp_cl(self, moving: Any, flow: Sequence[Any], *, out: Optional[Any] = None,
                     wait_for: Optional[Sequence[Any]] = None) -> Any:
        """flow_warp on 3D (z, y, x) float32 pyopencl arrays: moving and the
        flow's components (u, v, w), all of one shape; returns out (a new
        float32 array when None) with the completion event added; the
        results are flow_warp()'s."""
        cl = _pyopencl()
        comps = list(flow)
        if len(comps) != 3:
            raise invalid(f"flow: expected three arrays (u, v, w), got {len(comps)}")
        m = volume_buffer_of(moving, "moving", ("float32",))
        f = [volume_buffer_of(c, n, ("float32",)) for c, n in zip(comps, "uvw")]
        out = _output(cl, moving, out, "out")
        dst = volume_buffer_of(out, "out", ("float32",))
        count, waits = _wait_list([moving] + comps + [out], wait_for)
        done = ffi.new("cl_event *")
        self._call(lib.pv_flow_warp_cl, m, f[0], f[1], f[2], dst, count, waits, done)
        _attach(cl, done, [out])
        return out

    def sift_track_next_cl(self, plan: Any, frame: Any, *,
                           match: Optional[Mapping[str, Any]] = None,
                           ransac: Optional[Mapping[str, Any]] = None,
                           wait_for: Optional[Sequence[Any]] = None) -> SiftChainResult:
        """SiftPlan.track_next on a pyopencl array (types as for
        sift_detect_cl, of the plan's shape): plan is a SiftPlan of this
        context (Context.sift_plan), whose kept frame stays on the device;
        the frame is read on the device, matched to the kept frame and kept
        in its place, and the result comes back as track_next() returns it
        (the call has finished when it returns).  The work waits for the
        frame's pending events and for wait_for."""
        _pyopencl()
        if getattr(plan, "_ctx", None) is not self:
            raise invalid("plan: expected a SiftPlan of this context")
        if tuple(frame.shape[:2]) != tuple(plan.shape):
            raise invalid(f"frame: shape {tuple(frame.shape[:2])} differs from the plan's "
                          f"{tuple(plan.shape)}")
        src = buffer_of(frame, "frame", rgb=True)
        m, r = _chain_params(match, ransac)
        count, waits = _wait_list([frame], wait_for)
        result = ffi.new("pv_sift_chain_result *")
        with plan._entered() as (ctx, p):
            status = lib.pv_sift_track_next_cl(p, src, m, r, result, count, waits, ffi.NULL)
            if status:
                raise_status(status, ctx)
        return _take_chain_result(result)

    @declared_keywords("sift", defaults={name: None for name in _SIFT_FIELDS})
    def sift_detect_batch_cl(self, images: Sequence[Any], *, preset: str = "reference",
                             descriptor_dtype: Any = np.uint8,
                             wait_for: Optional[Sequence[Any]] = None,
                             **params: Any) -> List[SiftFeatures]:
        """SiftPlan.detect_batch on pyopencl arrays of one shape (types as
        for sift_detect_cl): the pixels are read on the device, one
        SiftFeatures per image comes back, in order, each what sift() gives
        for it (the call has finished when it returns).  The work waits for
        the images' pending events and for wait_for; preset,
        descriptor_dtype and the keywords are sift()'s.  An empty batch is
        refused."""
        _pyopencl()
        dtype = _check_descriptor_dtype(descriptor_dtype)
        frames = list(images)
        if not frames:
            raise invalid("images: the batch is empty")
        shape = tuple(frames[0].shape[:2])
        for i, image in enumerate(frames):
            if tuple(image.shape[:2]) != shape:
                raise invalid(f"images[{i}]: shape {tuple(image.shape[:2])} differs from "
                              f"images[0]'s {shape}")
        bufs = ffi.new("pv_buffer[]", len(frames))
        for i, image in enumerate(frames):
            bufs[i] = buffer_of(image, f"images[{i}]", rgb=True)[0]
        count, waits = _wait_list(frames, wait_for)
        results = ffi.new("pv_sift_features[]", len(frames))
        try:
            with self.sift_plan(shape, preset=preset, **params) as plan:
                with plan._entered() as (ctx, p):
                    status = lib.pv_sift_detect_batch_cl(p, bufs, len(frames), results, count,
                                                         waits, ffi.NULL)
                    if status:
                        raise_status(status, ctx)
            return [_features_arrays(results + i, dtype) for i in range(len(frames))]
        finally:
            for i in range(len(frames)):
                lib.pv_sift_features_free(results + i)

    def _stereo_batch(self, lefts: Sequence[Any], rights: Sequence[Any], out: Optional[Any],
                      name: str) -> Tuple[Any, Any, Any, Any, List[Any]]:
        """A stereo batch's C arrays: the pairs' buffers, the (pairs, rows,
        columns) float32 stack `out` (a new one on lefts[0]'s queue when
        None) and its slices' buffers, and the arrays to wait for."""
        cl = _pyopencl()
        ls, rs = list(lefts), list(rights)
        if not ls or len(ls) != len(rs):
            raise invalid(f"lefts, rights: {len(ls)} and {len(rs)} images; a batch needs as "
                          "many of each, at least one")
        left_bufs = ffi.new("pv_buffer[]", len(ls))
        right_bufs = ffi.new("pv_buffer[]", len(ls))
        for i, (left, right) in enumerate(zip(ls, rs)):
            left_bufs[i] = buffer_of(left, f"lefts[{i}]")[0]
            right_bufs[i] = buffer_of(right, f"rights[{i}]")[0]
        shape = (len(ls),) + tuple(int(n) for n in ls[0].shape)
        if out is None:
            out = cl.array.empty(ls[0].queue, shape, "float32")
        elif tuple(out.shape) != shape or str(out.dtype) != "float32":
            raise invalid(f"{name}: expected float32 of shape {shape}, got {out.dtype} "
                          f"{tuple(out.shape)}")
        out_bufs = ffi.new("pv_buffer[]", len(ls))
        for i in range(len(ls)):
            out_bufs[i] = buffer_of(out[i], f"{name}[{i}]")[0]
        return left_bufs, right_bufs, out, out_bufs, ls + rs + [out]

    @declared_keywords("sad")
    def stereo_sad_batch_cl(self, lefts: Sequence[Any], rights: Sequence[Any],
                            ndisp: int = default_of("sad", "ndisp"), *,
                            out: Optional[Any] = None, wait_for: Optional[Sequence[Any]] = None,
                            **params: Any) -> Any:
        """stereo_sad_batch on pyopencl arrays: lefts and rights, sequences
        of as many 2D arrays of one shape and dtype (uint8 or float32, rows
        contiguous); returns out, a float32 (pairs, rows, columns) array (a
        new one on lefts[0]'s queue when None), with the completion event
        added; slice i is stereo_sad(lefts[i], rights[i])'s.  The work
        waits for the arrays' pending events and for wait_for."""
        cl = _pyopencl()
        ls, rs, out, outs, arrays = self._stereo_batch(list(lefts), list(rights), out, "out")
        count, waits = _wait_list(arrays, wait_for)
        done = ffi.new("cl_event *")
        self._call(lib.pv_stereo_sad_batch_cl, ls, rs, len(ls),
                   make("sad", dict(params, ndisp=ndisp)), outs, count, waits, done)
        _attach(cl, done, [out])
        return out

    @declared_keywords("sgm")
    def stereo_sgm_batch_cl(self, lefts: Sequence[Any], rights: Sequence[Any], *,
                            out: Optional[Any] = None, confidence: Optional[Any] = None,
                            wait_for: Optional[Sequence[Any]] = None, **params: Any) -> Any:
        """stereo_sgm_batch on pyopencl arrays: lefts and rights, sequences
        of as many 2D arrays of one shape and dtype (uint8, uint16 or
        float32, rows contiguous); returns out, a float32 (pairs, rows,
        columns) array of disparities (a new one when None), with the
        completion event added (and to confidence, a float32 array of that
        shape that receives the confidences, when given); slice i is
        stereo_sgm(lefts[i], rights[i])'s.  The keywords are stereo_sgm's."""
        cl = _pyopencl()
        lefts, rights = list(lefts), list(rights)
        ls, rs, out, outs, arrays = self._stereo_batch(lefts, rights, out, "out")
        confs: Any = ffi.NULL
        if confidence is not None:
            _, _, confidence, confs, _ = self._stereo_batch(lefts, rights, confidence,
                                                            "confidence")
            arrays.append(confidence)
        count, waits = _wait_list(arrays, wait_for)
        done = ffi.new("cl_event *")
        self._call(lib.pv_stereo_sgm_batch_cl, ls, rs, len(ls), sgm_params(**params), outs, confs,
                   count, waits, done)
        _attach(cl, done, [out, confidence])
        return out
