"""parvis.DeviceGroup: one context per device, items of a call spread over them."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays as A
from ._base import _choice, _int
from ._context import _BACKENDS, _device_index
from ._flow import _flow_params
from ._octreg import _octreg_arrays, _octreg_options
from ._errors import invalid, raise_status
from ._lifetime import _Handle, check_can_start
from ._native import ffi, lib
from ._results import Flow, OctregResult
from ._params import declared_keywords, default_of
from ._stereo import _stereo_inputs, bp_params, sgm_inputs, sgm_params

ArrayLike = Any


class DeviceGroup(_Handle):
    """Several contexts, one per device, sharing the items of a call.

    DeviceGroup(backend="auto", devices="all", crosscheck=False, cpu_threads=0)

    devices: "all" (every OpenCL device of the platform a context of this
    backend would run on; a CPU backend choice gives one CPU context, which
    already uses every core) or a list of device indices as parvis.devices()
    numbers them, or substrings of device names.  An index may repeat: the
    device then gets several queues.  Indices with backend="cpu" are refused.
    backend, crosscheck and cpu_threads apply to every member as in Context.

    A group call hands its items (the targets of octreg_sequence, the frame
    pairs of flow3d_sequence, the tiles of stereo_bp) to one thread per
    member, one item at a time.  Results equal those of running the items one
    by one on a single context of the same kind.  Arguments, errors, `out=`
    arrays and the released GIL behave as for Context methods; the error of
    a failed item names the member and the item.  One group serves one call
    at a time.  Use it as a context manager, or call close().
    """

    _what = "the device group"

    def __init__(self, backend: str = "auto",
                 devices: Union[str, Sequence[Union[int, str]]] = "all",
                 crosscheck: bool = False, cpu_threads: int = 0) -> None:
        super().__init__()
        options = ffi.new("pv_context_options *")
        lib.pv_context_options_default(options)
        options.backend = _choice(_BACKENDS, backend, "backend")
        options.flags = lib.PV_CONTEXT_CROSSCHECK if crosscheck else 0
        options.cpu_threads = _int(cpu_threads, "cpu_threads")
        if isinstance(devices, str):
            if devices != "all":
                raise invalid(f"devices: {devices!r} is not 'all' or a list of devices")
            indices, count = ffi.NULL, 0
        else:
            chosen = [_device_index(d) for d in devices]
            if not chosen:
                raise invalid("devices: the list is empty (give 'all' for every device)")
            indices, count = ffi.new("int[]", chosen), len(chosen)
        check_can_start("DeviceGroup")
        out = ffi.new("pv_device_group **")
        status = lib.pv_device_group_create(out, options, indices, count)
        if status != lib.PV_OK:
            raise_status(status)
        self._start(out[0])

    # ------------------------------------------------------------- lifetime
    _destroy = lib.pv_device_group_destroy

    def close(self) -> None:
        """Release the group and its contexts (idempotent).  In a process
        forked from the owner it only forgets them."""
        super().close()

    def __repr__(self) -> str:
        if self._forked:
            return "<parvis.DeviceGroup inherited through fork, unusable>"
        if self._ptr is None:
            return "<parvis.DeviceGroup closed>"
        return f"<parvis.DeviceGroup of {self.size}: {', '.join(self.device_names)}>"

    def _call(self, fn: Any, *args: Any) -> None:
        """Run fn(group, *args) under the group's lock; raise on failure
        with the calling thread's message (it names member and item)."""
        with self._entered() as group:
            status = fn(group, *args)
            if status:
                raise_status(status)

    # ----------------------------------------------------------- properties
    @property
    def size(self) -> int:
        """Members (contexts) of the group."""
        with self._entered() as group:
            return int(lib.pv_device_group_size(group))

    @property
    def device_names(self) -> List[str]:
        """The device name of each member, in member order."""
        with self._entered() as ptr:
            return [ffi.string(lib.pv_context_device_name(lib.pv_device_group_context(ptr, i)))
                    .decode(errors="replace") for i in range(lib.pv_device_group_size(ptr))]

    @property
    def backend(self) -> str:
        """"cpu" or "opencl": where the members run."""
        with self._entered() as group:
            ctx = lib.pv_device_group_context(group, 0)
            return "opencl" if lib.pv_context_backend(ctx) == lib.PV_BACKEND_OPENCL else "cpu"

    def last_timing(self, index: Optional[int] = None) -> Dict[str, float]:
        """Times of the last group call, in ms.  For member `index`: "total"
        is its thread's wall time (plan set-up included), "kernel",
        "upload", "download" the sums over its calls.  index None: "total"
        is the call's wall time, the others summed over the members."""
        which = lib.PV_DEVICE_GROUP_WHOLE if index is None else _int(index, "index")
        if index is not None and which < 0:
            raise invalid(f"index: {which} is negative")
        t = ffi.new("pv_timing *")
        self._call(lib.pv_device_group_last_timing, which, t)
        return {"kernel": t.kernel_ms, "upload": t.upload_ms,
                "download": t.download_ms, "total": t.total_ms}

    def last_items(self, index: int) -> int:
        """Items member `index` ran in the last group call."""
        which = _int(index, "index")
        with self._entered() as group:
            items = int(lib.pv_device_group_last_items(group, which))
        if items < 0:
            raise invalid(f"index: {which} is not a member (0 .. {self.size - 1})")
        return items

    # ------------------------------------------------------------ operations
    @declared_keywords("octreg")
    def octreg_sequence(self, reference: ArrayLike, targets: Union[ArrayLike, Sequence[ArrayLike]],
                        **options: Any) -> List[OctregResult]:
        """Register several AO-OCT target volumes against one reference
        (pv_octreg_register_sequence): each member builds an OctregPlan's
        state from the reference, then registers the targets it takes.

        reference: float32 or uint16 (B-scans, A-lines, depth); targets: a sequence of
        volumes of that shape, or a 4D array (count, B-scans, A-lines,
        depth).  Options as Context.octreg_plan.  Returns one OctregResult
        per target (registered None), equal to OctregPlan.register's."""
        c_options = _octreg_options(**options)
        ra, rs = A.volume_in(reference, "reference", allow_u16=True)
        structs, keep = _volume_list(targets, "targets", ra.shape)
        count = len(keep)
        nb = ra.shape[0]
        shifts = ffi.new("pv_octreg_shift[]", count * nb)
        infos = ffi.new("pv_octreg_info[]", count)
        self._call(lib.pv_octreg_register_sequence, rs, structs, count, c_options, shifts, infos)
        s, peak, valid = _octreg_arrays(shifts, count * nb)
        return [OctregResult(s[i * nb:(i + 1) * nb], peak[i * nb:(i + 1) * nb],
                             valid[i * nb:(i + 1) * nb],
                             {"stripes": infos[i].stripes, "good_stripes": infos[i].good_stripes,
                              "valid_bscans": infos[i].valid_bscans,
                              "subvolumes": infos[i].subvolumes}, None)
                for i in range(count)]

    @declared_keywords("flow")
    def flow3d_sequence(self, frames: Union[ArrayLike, Sequence[ArrayLike]],
                        **params: Any) -> List[Flow]:
        """Flow between consecutive frames (pv_flow3d_sequence): result i is
        the flow from frames[i] (fixed) to frames[i + 1] (moving), as
        Context.flow3d gives it.  frames: at least two volumes (z, y, x) of
        one shape (or images (y, x), taken as one-slice volumes), as a
        sequence or one array with the frames on the first axis.
        Parameters as Context.flow3d.  Returns count - 1 Flow results."""
        c_params = _flow_params(**params)
        items = _items(frames, "frames")
        if len(items) < 2:
            raise invalid(f"frames: {len(items)} given, the flow needs at least 2")
        shape2d = np.ndim(items[0]) == 2
        volumes = [np.asarray(f)[np.newaxis] if np.ndim(f) == 2 else f for f in items]
        first = A.volume_array(volumes[0], "frames[0]", allow_u16=True)
        structs, keep = _volume_list(volumes, "frames", first.shape)
        pairs = len(keep) - 1
        outs = [tuple(np.empty(first.shape, np.float32) for _ in range(3)) for _ in range(pairs)]
        fields = ffi.new("pv_flow_field[]", pairs)
        for i, (u, v, w) in enumerate(outs):
            fields[i].u, fields[i].v, fields[i].w = (A.volume_struct(o)[0] for o in (u, v, w))
        self._call(lib.pv_flow3d_sequence, structs, len(keep), c_params, fields)
        if shape2d:
            return [Flow(*(o[0] for o in out)) for out in outs]
        return [Flow(*out) for out in outs]

    @declared_keywords("bp", defaults={"disc_max": None})
    def stereo_bp(self, left: ArrayLike, right: ArrayLike,
                  ndisp: int = default_of("bp", "ndisp"), *,
                  disc_max: Optional[float] = None, out: Optional[np.ndarray] = None,
                  **params: Any) -> np.ndarray:
        """Belief-propagation stereo with the image's tiles spread over the
        members (pv_stereo_bp_group).  Without a tile size the image is cut
        into one band of rows per member.  Equal to Context.stereo_bp with
        the same tile sizes; parameters (disc_max None: max(1.7, ndisp /
        7.5); message_precision, message_update) and result as there."""
        la, ls, ra, rs = _stereo_inputs(left, right)
        c_params = bp_params(ndisp, disc_max, **params)
        dst = A.output(out, la.shape)
        A.refuse_overlap(dst, la, ra)
        self._call(lib.pv_stereo_bp_group, ls, rs, c_params, A.out_struct(dst))
        return dst

    @declared_keywords("sgm")
    def stereo_sgm(self, left: ArrayLike, right: ArrayLike, *,
                   census: Optional[Tuple[int, int]] = None, out: Optional[np.ndarray] = None,
                   **params: Any) -> np.ndarray:
        """Semi-global matching with the image cut into one band of rows per
        member, each band read with PV_SGM_GROUP_OVERLAP (64) rows of context
        above and below (pv_stereo_sgm_group).  Parameters, inputs and the
        float32 result as Context.stereo_sgm (no confidence map).  Not
        identical to one context's result: the paths cross the cuts, and
        multi.h states the tolerance (integer disparities the same on >= 99%
        of pixels)."""
        la, ls, ra, rs = sgm_inputs(left, right)
        c_params = sgm_params(census=census, **params)
        dst = A.output(out, la.shape)
        A.refuse_overlap(dst, la, ra)
        self._call(lib.pv_stereo_sgm_group, ls, rs, c_params, A.image_struct(dst))
        return dst


def _items(stack: Any, name: str) -> List[Any]:
    """The items of a sequence, or the sub-arrays along an array's first axis."""
    if isinstance(stack, np.ndarray):
        return [stack[i] for i in range(stack.shape[0])] if stack.ndim > 0 else [stack]
    try:
        return list(stack)
    except TypeError:
        raise invalid(f"{name}: expected a sequence of arrays, "
                      f"got {type(stack).__name__}") from None


def _volume_list(stack: Any, name: str, shape: Tuple[int, ...]) -> Tuple[Any, List[np.ndarray]]:
    """A C array of pv_volume for the items of stack, each of `shape`, and
    the numpy arrays it points into (kept alive by the caller).  Its users
    (OCT and flow sequences) take uint16 volumes as they are."""
    items = _items(stack, name)
    if not items:
        raise invalid(f"{name}: the list is empty")
    structs = ffi.new("pv_volume[]", len(items))
    keep = []
    for i, item in enumerate(items):
        a, s = A.volume_in(item, f"{name}[{i}]", allow_u16=True)
        if a.shape != tuple(shape):
            raise invalid(f"{name}[{i}]: shape {A.shape_text(a.shape)} differs from "
                          f"{tuple(shape)}")
        structs[i] = s[0]
        keep.append(a)
    return structs, keep
