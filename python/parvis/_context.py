"""parvis.Context: one C pv_context, its creation, properties and close.

The operations are methods of mixin classes, one file per module of the
library (_filter, _colour, _stereo, _features, _register, _octreg, _flow,
_tune), which Context inherits; the plans live with their module."""
from __future__ import annotations

from typing import Any, Dict, Type, TypeVar, Union

from . import _progress
from ._async import _AsyncOps
from ._base import _choice, _ContextBase, _int
from ._colour import _ColourOps
from ._errors import invalid, raise_status
from ._features import _FeaturesOps
from ._features import _sift_preset  # noqa: F401  (the tests import it from here)
from ._filter import _FilterOps
from ._flow import _FlowOps
from ._interop import _InteropOps, create_on_queue
from ._interop_more import _InteropMoreOps
from ._lifetime import check_can_start
from ._native import ffi, lib
from ._octreg import _OctregOps
from ._register import _RegisterOps
from ._stereo import _StereoOps
from ._tune import _TuneOps

_BACKENDS = {"auto": lib.PV_BACKEND_AUTO, "cpu": lib.PV_BACKEND_CPU,
             "opencl": lib.PV_BACKEND_OPENCL}
_KERNEL_TIMINGS = {"runs": lib.PV_KERNEL_TIMING_RUNS, "each": lib.PV_KERNEL_TIMING_EACH}
_FFT = {"auto": lib.PV_FFT_AUTO, "clfft": lib.PV_FFT_CLFFT, "vkfft": lib.PV_FFT_VKFFT}
_T = TypeVar("_T")


_OPERATION_MIXINS = (_FilterOps, _ColourOps, _StereoOps, _FeaturesOps, _RegisterOps, _InteropOps,
                     _InteropMoreOps, _OctregOps, _FlowOps, _TuneOps)


def _operations_as_own(cls: Type[_T]) -> Type[_T]:
    """Name the mixins' public methods in cls's own namespace too.

    They stay the same function objects, found first on cls as they would
    be on the mixin, so nothing changes when they are called; but tools
    that list a class's own members, pdoc's API reference in particular
    (docs/python-api.sh), would otherwise leave the operations off
    Context's page, the mixins being private."""
    for mixin in _OPERATION_MIXINS:
        for name, value in vars(mixin).items():
            if not name.startswith("_") and name not in vars(cls):
                setattr(cls, name, value)
    return cls


@_operations_as_own
class Context(_FilterOps, _ColourOps, _StereoOps, _FeaturesOps, _RegisterOps,
              _OctregOps, _FlowOps, _TuneOps, _InteropOps, _InteropMoreOps, _AsyncOps,
              _ContextBase):
    """A parvis context: one backend and device, and the calls made on it.

    Context(backend="auto", device=None, crosscheck=False, cpu_threads=0)

    backend: "auto" (the first OpenCL GPU, else the CPU backend; a PoCL CPU
    device is never picked), "cpu" (OpenMP + FFTW reference backend) or
    "opencl" (a GPU if any, else any OpenCL device such as PoCL).
    device: None (automatic), an index as parvis.devices() numbers them, or a
    substring of a device name.  crosscheck: run every call on the CPU
    backend too and raise parvis.Mismatch when the results differ beyond the
    operation's documented tolerance.  cpu_threads: OpenMP threads of the
    CPU backend (0: the default).  The environment (PARVIS_BACKEND,
    PARVIS_DEVICE, PARVIS_CROSSCHECK) overrides these, as in the C library;
    PARVIS_KERNEL_TIMING=runs|each sets kernel_timing's initial value.

    Conventions of every method:
      * Images are 2D arrays (rows, columns); volumes 3D arrays (z, y, x).
        x is the last axis.  Shifts and coordinates are given in the C
        library's order (x first).
      * uint8 and float32 inputs whose rows are contiguous are read in place,
        other dtypes are converted once to float32 and other layouts copied
        once (see parvis._arrays).  Results are fresh arrays, or the caller's
        `out=` array (float32, exact shape, rows contiguous; an np.memmap or
        np.matrix of that memory too) written in place.  Masked arrays are
        refused, as inputs and as `out=`: masks are not supported.
      * Bad input raises parvis.InvalidArgument (a ValueError) and leaves
        any `out=` array untouched; other failures raise the parvis.Error
        subclass of the C status.  Shapes in messages are numpy's, axes
        named: (rows, columns), (z, y, x).
      * The GIL is released while the C library works, so threads with
        contexts of their own run in parallel.  One context serves one call
        at a time: concurrent calls on the same context, its properties
        included, wait for each other; after close() they raise
        parvis.ClosedError.
      * Use it as a context manager, or call close(); plans made on it are
        closed with it.
      * A child of fork cannot use the contexts it inherits (their threads
        stay in the parent): they raise parvis.ForkedError.  Start worker
        processes with multiprocessing's 'spawn' or 'forkserver' method
        (docs/python.md).
    """

    _what = "the context"
    set_progress = _progress.set_progress  # progress and cancellation: parvis._progress

    def __init__(self, backend: str = "auto", device: Union[int, str, None] = None,
                 crosscheck: bool = False, cpu_threads: int = 0) -> None:
        super().__init__()
        options = ffi.new("pv_context_options *")
        lib.pv_context_options_default(options)
        options.backend = _choice(_BACKENDS, backend, "backend")
        options.device_index = _device_index(device)
        options.flags = lib.PV_CONTEXT_CROSSCHECK if crosscheck else 0
        options.cpu_threads = _int(cpu_threads, "cpu_threads")
        check_can_start("Context")
        out = ffi.new("pv_context **")
        status = lib.pv_context_create(out, options)
        if status != lib.PV_OK:
            raise_status(status)
        self._start(out[0])

    @classmethod
    def from_cl(cls, queue: Any) -> "Context":
        """A context on a pyopencl CommandQueue's cl_context and queue
        (pv_context_create_cl): parvis retains both while the context
        lives, and orders its work with that queue, so pyopencl arrays of
        that context go in and out of the *_cl methods without copies
        (docs/interop.md)."""
        self = cls.__new__(cls)
        _ContextBase.__init__(self)
        check_can_start("Context.from_cl")
        status, ptr = create_on_queue(queue)
        if status != lib.PV_OK:
            raise_status(status)
        self._start(ptr)
        return self

    # ------------------------------------------------------------- lifetime
    _destroy = lib.pv_context_destroy

    def close(self) -> None:
        """Release the context and every plan made on it (idempotent).  In
        a process forked from the owner it only forgets them.  Calls
        queued with submit or the *_async methods finish first."""
        if not self._forked:
            self._stop_worker()
        super().close()

    def __repr__(self) -> str:
        if self._forked:
            return "<parvis.Context inherited through fork, unusable>"
        if self._ptr is None:
            return "<parvis.Context closed>"
        return f"<parvis.Context {self.backend} on {self.device_name!r}>"

    def _text(self, getter: Any) -> str:
        """A string the C library keeps on the context, read under the lock."""
        with self._entered() as ptr:
            return ffi.string(getter(ptr)).decode(errors="replace")

    def _value(self, getter: Any) -> Any:
        """A value of the context read under the lock."""
        with self._entered() as ptr:
            return getter(ptr)

    # ----------------------------------------------------------- properties
    @property
    def backend(self) -> str:
        """"cpu" or "opencl": where this context runs."""
        return "opencl" if self._value(lib.pv_context_backend) == lib.PV_BACKEND_OPENCL else "cpu"

    @property
    def device_name(self) -> str:
        """The device's name as the driver gives it (the host's CPU on the
        CPU backend)."""
        return self._text(lib.pv_context_device_name)

    @property
    def selection_note(self) -> str:
        """One line saying how the backend was chosen."""
        return self._text(lib.pv_context_selection_note)

    @property
    def cpu_threads(self) -> int:
        """OpenMP threads of the CPU backend's calls."""
        return int(self._value(lib.pv_context_cpu_threads))

    @property
    def crosscheck(self) -> bool:
        """Cross-check mode (settable)."""
        return bool(self._value(lib.pv_context_crosscheck))

    @crosscheck.setter
    def crosscheck(self, enabled: bool) -> None:
        with self._entered() as ptr:
            status = lib.pv_context_set_crosscheck(ptr, int(bool(enabled)))
            if status:
                raise_status(status, ptr)

    @property
    def kernel_timing(self) -> str:
        """How OpenCL kernels are timed for last_timing["kernel"] (settable):
        "runs" (the default: kernels launched one after another are timed
        as one span, two profiling events per run) or "each" (every launch
        timed on its own and summed: the kernels' own time, at a cost in
        host time per launch on some drivers).  The CPU backend accepts
        either and reports its compute time."""
        timing = self._value(lib.pv_context_kernel_timing)
        return next(name for name, value in _KERNEL_TIMINGS.items() if value == timing)

    @kernel_timing.setter
    def kernel_timing(self, timing: str) -> None:
        value = _choice(_KERNEL_TIMINGS, timing, "kernel_timing")
        with self._entered() as ptr:
            status = lib.pv_context_set_kernel_timing(ptr, value)
            if status:
                raise_status(status, ptr)

    @property
    def last_timing(self) -> Dict[str, float]:
        """Times of the last successful call, in ms: "kernel" (device time,
        measured as kernel_timing says; the CPU backend reports its compute
        time), "upload", "download" (host-device copies; 0 on the CPU) and
        "total" (end to end in C)."""
        t = ffi.new("pv_timing *")
        with self._entered() as ptr:
            status = lib.pv_context_last_timing(ptr, t)
            if status:
                raise_status(status, ptr)
        return {"kernel": t.kernel_ms, "upload": t.upload_ms,
                "download": t.download_ms, "total": t.total_ms}

    @property
    def fft_engine(self) -> str:
        """The FFT engine of the next plan: "FFTW" (CPU), "clFFT" or "VkFFT".
        Set it to "auto", "clfft" or "vkfft" (OpenCL contexts)."""
        engine = ffi.new("pv_fft_engine *")
        self._call(lib.pv_context_fft_engine, engine)
        return ffi.string(lib.pv_fft_engine_name(engine[0])).decode()

    @fft_engine.setter
    def fft_engine(self, name: str) -> None:
        self._call(lib.pv_context_set_fft_engine, _choice(_FFT, name, "fft_engine"))


def _device_index(device: Union[int, str, None]) -> int:
    if device is None:
        return -1
    if isinstance(device, str):
        from ._io import devices
        for info in devices():
            if device.lower() in info.name.lower():
                return info.index
        raise invalid(f"device: no OpenCL device name contains {device!r}")
    return _int(device, "device")
