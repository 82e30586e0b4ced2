"""parvis.Context: one C pv_context, its operations and its plans."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays as A
from ._convert import c_float, c_int, c_size
from . import _progress
from ._errors import invalid, raise_status
from ._lifetime import CObject, PlanHandle, _Handle, check_can_start
from ._native import ffi, lib
from ._results import (Flow, Matches, NCCResult, OctregResult, PhaseCorrelation,
                       PhaseCorrelationBatch, SiftFeatures, TuneParam, TuneResult)
from ._sgm import image_structs, sgm_batch_inputs, sgm_inputs, sgm_params

ArrayLike = Any

_BACKENDS = {"auto": lib.PV_BACKEND_AUTO, "cpu": lib.PV_BACKEND_CPU,
             "opencl": lib.PV_BACKEND_OPENCL}
_KERNEL_TIMINGS = {"runs": lib.PV_KERNEL_TIMING_RUNS, "each": lib.PV_KERNEL_TIMING_EACH}
_PAD = {"none": lib.PV_PAD_NONE, "fft": lib.PV_PAD_FFT, "linear": lib.PV_PAD_LINEAR}
_WINDOW = {"none": lib.PV_WINDOW_NONE, "hann": lib.PV_WINDOW_HANN}
_SUBPIXEL = {"none": lib.PV_SUBPIXEL_NONE, "upsample": lib.PV_SUBPIXEL_UPSAMPLE,
             "parabolic": lib.PV_SUBPIXEL_PARABOLIC}
_GRADIENT = {"central": lib.PV_GRADIENT_CENTRAL, "forward": lib.PV_GRADIENT_FORWARD}
_FFT = {"auto": lib.PV_FFT_AUTO, "clfft": lib.PV_FFT_CLFFT, "vkfft": lib.PV_FFT_VKFFT}

_OCT_AXES = "B-scans, A-lines, depth"
# PV_SIFT_MIN_SIZE of parvis/features.h (not in the cffi declarations): the
# smallest side SIFT takes, checked here to say it in (rows, columns).
_SIFT_MIN_SIZE = 16
_KEYPOINT_FLOATS = ffi.sizeof("pv_sift_keypoint") // 4
_PAIR_WORDS = ffi.sizeof("pv_sift_pair") // 4
_DESCRIPTOR = int(lib.PV_SIFT_DESCRIPTOR_SIZE)


def _choice(table: Dict[str, int], value: str, name: str) -> int:
    try:
        return table[str(value).lower()]
    except KeyError:
        raise invalid(f"{name}: {value!r} is not one of {', '.join(table)}") from None


_int = c_int
_float = c_float


def _shift_array(s: Any, ndim: int) -> np.ndarray:
    return np.array([s.dx, s.dy, s.dz][:ndim], dtype=np.float64)


def _phasecorr_options(upsample: int, subpixel: Optional[str], pad: str, window: str) -> Any:
    upsample = _int(upsample, "upsample")
    if subpixel is None:
        subpixel = "upsample" if upsample > 1 else "none"
    method = _choice(_SUBPIXEL, subpixel, "subpixel")
    if method == lib.PV_SUBPIXEL_UPSAMPLE and upsample < 2:
        raise invalid(f"upsample: {upsample} must be >= 2 with subpixel='upsample'")
    return ffi.new("pv_phasecorr_options *", [_choice(_PAD, pad, "pad"),
                                              _choice(_WINDOW, window, "window"), method,
                                              upsample if upsample >= 2 else 100])


def _sift_params(first_octave: int, octaves: int, levels: int, sigma0: float,
                 sigma_input: float, peak_thresh: float, edge_thresh: float,
                 orientation_window: float, orientation_peak: float, magnif: float,
                 max_keypoints: int) -> Any:
    return ffi.new("pv_sift_params *", [
        _int(first_octave, "first_octave"), _int(octaves, "octaves"), _int(levels, "levels"),
        _float(sigma0, "sigma0"), _float(sigma_input, "sigma_input"),
        _float(peak_thresh, "peak_thresh"), _float(edge_thresh, "edge_thresh"),
        _float(orientation_window, "orientation_window"),
        _float(orientation_peak, "orientation_peak"), _float(magnif, "magnif"),
        _int(max_keypoints, "max_keypoints")])


def _octreg_options(stripes: int, stripe_width: int, subvolume_width: int, subvolume_step: int,
                    coarse_tolerance: float, tolerance: float, pad: str, subpixel: bool,
                    batch: int) -> Any:
    return ffi.new("pv_octreg_options *", [
        _int(stripes, "stripes"), _int(stripe_width, "stripe_width"),
        _int(subvolume_width, "subvolume_width"), _int(subvolume_step, "subvolume_step"),
        _float(coarse_tolerance, "coarse_tolerance"), _float(tolerance, "tolerance"),
        _choice(_PAD, pad, "pad"), int(bool(subpixel)), _int(batch, "batch")])


def _flow_params(alpha: float, beta: float, rho: float, kernel_size: int, warps: int,
                 iterations: int, levels: int, spacing: float, gradient: str,
                 tolerance: float, check_every: int) -> Any:
    return ffi.new("pv_flow_params *", [
        _float(alpha, "alpha"), _float(beta, "beta"), _float(rho, "rho"),
        _int(kernel_size, "kernel_size"), _int(warps, "warps"), _int(iterations, "iterations"),
        _int(levels, "levels"), _float(spacing, "spacing"),
        _choice(_GRADIENT, gradient, "gradient"), _float(tolerance, "tolerance"),
        _int(check_every, "check_every")])


def _flow_defaults(image_shape: Optional[Tuple[int, int]] = None) -> Dict[str, Any]:
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


def _grid_in(arr: ArrayLike, name: str, volume: bool) -> Tuple[np.ndarray, Any]:
    """arr and its C struct: a float32 volume when volume, else an image
    (uint8 or float32)."""
    return A.volume_in(arr, name) if volume else A.image_in(arr, name)


def _stereo_inputs(left: ArrayLike, right: ArrayLike) -> Tuple[Any, ...]:
    """The two views as C images; mixed uint8/float32 views are both made float32."""
    la, ls = A.image_in(left, "left")
    ra, rs = A.image_in(right, "right")
    A.same_shape(la, ra, ("left", "right"))
    if ra.dtype != la.dtype and ra.shape == la.shape:
        ra, rs = A.image_in(ra.astype(np.float32), "right")
        la, ls = A.image_in(la.astype(np.float32), "left")
    return la, ls, ra, rs


_MESSAGE_PRECISION = {"f32": 0, "f16": 1}
_MESSAGE_UPDATE = {"serial": 0, "cooperative": 1}


def _bp_params(ndisp: int, min_disp: int, levels: int, iterations: int, lambda_: float,
               data_max: float, disc_max: Optional[float], sigma: float, tile_width: int,
               tile_height: int, tile_padding: int, memory_budget: int,
               message_precision: str = "f32", message_update: str = "serial") -> Any:
    """pv_bp_params; disc_max None scales with the range as the CLI's default;
    message_precision "f32" or "f16" (messages stored as IEEE half);
    message_update "serial" (mean-normalised) or "cooperative"
    (minimum-normalised, one work-group per pixel on OpenCL)."""
    budget = c_size(memory_budget, "memory_budget")
    if disc_max is None:
        disc_max = max(1.7, float(lib.pv_bp_recommended_disc_max(_int(ndisp, "ndisp"))))
    return ffi.new("pv_bp_params *", [
        _int(min_disp, "min_disp"), _int(ndisp, "ndisp"), _int(levels, "levels"),
        _int(iterations, "iterations"), _float(lambda_, "lambda_"),
        _float(data_max, "data_max"), _float(disc_max, "disc_max"), _float(sigma, "sigma"),
        _int(tile_width, "tile_width"), _int(tile_height, "tile_height"),
        _int(tile_padding, "tile_padding"), budget,
        _choice(_MESSAGE_PRECISION, message_precision, "message_precision"),
        _choice(_MESSAGE_UPDATE, message_update, "message_update")])


def _features_arrays(feats: Any, descriptor_dtype: Any) -> SiftFeatures:
    """Copy a C SIFT result into fresh numpy arrays."""
    n = feats.count
    dtype = np.dtype(descriptor_dtype)
    if n == 0:
        return SiftFeatures(np.empty((0, 4), np.float32), np.empty((0, _DESCRIPTOR), dtype))
    raw = np.frombuffer(ffi.buffer(feats.keypoints, n * _KEYPOINT_FLOATS * 4), np.float32)
    keypoints = raw.reshape(n, _KEYPOINT_FLOATS)[:, :4].copy()
    if dtype == np.uint8:
        desc = np.frombuffer(ffi.buffer(feats.descriptors_u8, n * _DESCRIPTOR), np.uint8)
    else:
        desc = np.frombuffer(ffi.buffer(feats.descriptors, n * _DESCRIPTOR * 4), np.float32)
    return SiftFeatures(keypoints, desc.reshape(n, _DESCRIPTOR).copy())


def _check_descriptor_dtype(descriptor_dtype: Any) -> Any:
    dtype = np.dtype(descriptor_dtype)
    if dtype not in (np.dtype(np.uint8), np.dtype(np.float32)):
        raise invalid(f"descriptor_dtype: {dtype} is not uint8 or float32")
    return dtype


def _descriptor_set(desc: ArrayLike, name: str) -> Tuple[Any, Tuple[Any, ...]]:
    """A pv_sift_features holding only descriptors (what matching reads)."""
    d = A.plain(desc, name)
    if d.ndim != 2 or d.shape[1] != _DESCRIPTOR:
        raise invalid(f"{name}: expected shape (N, {_DESCRIPTOR}), got {d.shape}")
    if d.dtype == np.uint8:
        d = d.astype(np.float32) * np.float32(1.0 / 512.0)
    elif d.dtype.kind in "uif":
        d = np.ascontiguousarray(d, dtype=np.float32)
    else:
        raise invalid(f"{name}: dtype {d.dtype} is not a real number type")
    n = d.shape[0]
    if n == 0:
        raise invalid(f"{name}: no descriptors")
    keypoints = ffi.new("pv_sift_keypoint[]", n)
    pointer = ffi.cast("float *", ffi.from_buffer(d))
    feats = ffi.new("pv_sift_features *", [n, keypoints, pointer, ffi.NULL, n])
    return feats, (d, keypoints, pointer)


class Context(_Handle):
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

    # ------------------------------------------------------------- lifetime
    _destroy = lib.pv_context_destroy

    def close(self) -> None:
        """Release the context and every plan made on it (idempotent).  In
        a process forked from the owner it only forgets them."""
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

    def _call(self, fn: Any, *args: Any) -> None:
        """Run fn(ctx, *args) under the context's lock; raise on failure."""
        with self._entered() as ptr:
            status = fn(ptr, *args)
            if status:
                raise_status(status, ptr)

    # --------------------------------------------------------------- filters
    def gaussian_blur(self, image: ArrayLike, sigma: float, taps: int = 0,
                      out: Optional[np.ndarray] = None) -> np.ndarray:
        """Separable Gaussian blur of a 2D image (uint8/float32) or a 3D
        float32 volume, borders replicated.  taps: odd tap count, or 0 for
        2 ceil(3 sigma) + 1.  Returns float32 of the input's shape."""
        volume = np.ndim(image) == 3
        a, s = _grid_in(image, "image", volume)
        fn = lib.pv_gaussian_blur3d if volume else lib.pv_gaussian_blur
        dst = A.output(out, a.shape)
        A.refuse_overlap(dst, a)
        self._call(fn, s, A.out_struct(dst), _float(sigma, "sigma"), _int(taps, "taps"))
        return dst

    def gradients(self, image: ArrayLike, scheme: str = "central") -> Tuple[np.ndarray, ...]:
        """Image gradients: (gx, gy) of a 2D image or (gx, gy, gz) of a 3D
        volume, float32.  scheme "central": (f(x+1) - f(x-1)) / 2 inside,
        one-sided at the borders; "forward": f(x+1) - f(x), 0 at the far
        border."""
        src = A.plain(image, "image")
        code = _choice(_GRADIENT, scheme, "scheme")
        if src.ndim == 3:
            a, s = A.volume_in(src, "image")
            outs = tuple(np.empty(a.shape, np.float32) for _ in range(3))
            self._call(lib.pv_gradient3d, s, *(A.volume_struct(o) for o in outs), code)
        else:
            a, s = A.image_in(src, "image")
            outs = tuple(np.empty(a.shape, np.float32) for _ in range(2))
            self._call(lib.pv_gradient, s, *(A.image_struct(o) for o in outs), code)
        return outs

    # ---------------------------------------------------------------- stereo
    def stereo_sad(self, left: ArrayLike, right: ArrayLike, ndisp: int = 64, *,
                   min_disp: int = 0, window: int = 5, subpixel: bool = False,
                   lr_check: bool = False, lr_max_diff: float = 1.0, uniqueness: float = 0.0,
                   out: Optional[np.ndarray] = None) -> np.ndarray:
        """SAD block-matching stereo; returns the float32 disparity of each
        left pixel (shape of the inputs).

        The left image is the reference: left column x matches right column
        x - d for d in [min_disp, min_disp + ndisp).  Cost: the sum of
        |L - R| over a window x window block (odd window, borders
        replicated); the smallest cost wins, ties to the smaller d.
        Invalid pixels (no candidate inside the right image, or rejected by
        the checks) are +inf, as in Middlebury's PFM files.
        subpixel: a parabola through the costs at d-1, d, d+1.
        lr_check: invalidate where |d_LR - d_RL| > lr_max_diff.
        uniqueness: reject a winner of cost c when a candidate outside
        d-1..d+1 costs less than c (1 + uniqueness); 0 disables.
        left, right: 2D, same shape, uint8 or float32 (same type)."""
        la, ls, ra, rs = _stereo_inputs(left, right)
        params = ffi.new("pv_sad_params *", [
            _int(min_disp, "min_disp"), _int(ndisp, "ndisp"), _int(window, "window"),
            int(bool(subpixel)), int(bool(lr_check)), _float(lr_max_diff, "lr_max_diff"),
            _float(uniqueness, "uniqueness")])
        dst = A.output(out, la.shape)
        A.refuse_overlap(dst, la, ra)
        self._call(lib.pv_stereo_sad, ls, rs, params, A.out_struct(dst))
        return dst

    def stereo_bp(self, left: ArrayLike, right: ArrayLike, ndisp: int = 16, *,
                  min_disp: int = 0, levels: int = 5, iterations: int = 10,
                  lambda_: float = 0.07, data_max: float = 15.0,
                  disc_max: Optional[float] = None,
                  sigma: float = 1.0, tile_width: int = 0, tile_height: int = 0,
                  tile_padding: int = 20, memory_budget: int = 0,
                  message_precision: str = "f32", message_update: str = "serial",
                  out: Optional[np.ndarray] = None) -> np.ndarray:
        """Hierarchical belief-propagation stereo; returns the float32
        disparity of each left pixel (always finite: BP labels every pixel).

        Same convention as stereo_sad: left column x matches right column
        x - d, d in [min_disp, min_disp + ndisp).  levels: pyramid levels
        (2^(levels-1) <= the smaller side); iterations: message rounds per
        level; lambda_ (the C field `lambda`): data-cost weight; data_max,
        disc_max: truncations of the data and smoothness costs (disc_max
        None: max(1.7, ndisp / 7.5), the C default 1.7 raised for wide
        ranges as `parvis stereo --method bp` does); sigma:
        Gaussian pre-smoothing (0: none).  tile_width/tile_height/
        tile_padding/memory_budget: image partitions (0: automatic).
        message_precision: "f32", or "f16" to store messages as IEEE half
        (less memory traffic; a few disparities move, see stereo.h).
        message_update: "serial" (messages normalised by their mean), or
        "cooperative" (by their minimum: the same algorithm up to float
        ties, which the OpenCL backend runs with a group of work-items per
        pixel, much faster for wide ranges; both backends still agree).
        The defaults are the paper's (see include/parvis/stereo.h)."""
        la, ls, ra, rs = _stereo_inputs(left, right)
        params = _bp_params(ndisp, min_disp, levels, iterations, lambda_, data_max, disc_max,
                            sigma, tile_width, tile_height, tile_padding, memory_budget,
                            message_precision, message_update)
        dst = A.output(out, la.shape)
        A.refuse_overlap(dst, la, ra)
        self._call(lib.pv_stereo_bp, ls, rs, params, A.out_struct(dst))
        return dst

    def stereo_sgm(self, left: ArrayLike, right: ArrayLike, *, ndisp: int = 64,
                   min_disp: int = 0, census: Tuple[int, int] = (9, 7),
                   census_symmetric: bool = True, p1: int = 10, p2: int = 120,
                   p2_adaptive: bool = False, paths: int = 8, uniqueness: float = 0.95,
                   lr_check: bool = True, lr_max_diff: int = 1, subpixel: bool = True,
                   median: bool = False, memory_budget: int = 0, confidence: bool = False,
                   out: Optional[np.ndarray] = None
                   ) -> Union[np.ndarray, Tuple[np.ndarray, np.ndarray]]:
        """Semi-global matching of census costs; returns the float32
        disparity of each left pixel, +inf where invalid, or the pair
        (disparity, confidence) when confidence is true.

        Same convention as stereo_sad: left column x matches right column
        x - d, d in [min_disp, min_disp + ndisp); ndisp is at most the
        number of columns and 1024.  census: the (width, height) window,
        (5, 5), (7, 7) or (9, 7); census_symmetric: compare pixels mirrored
        through the centre (False: every pixel against the centre).  p1, p2:
        penalties of a one-disparity step and of a larger one (0 <= p1 <=
        p2); p2_adaptive: P2 divided by the intensity step, at least p1.
        paths: 4 or 8 aggregation directions.  uniqueness in (0, 1]: keep a
        winner whose sum is at most uniqueness times every sum outside
        d-1..d+1 (1 disables).  lr_check, lr_max_diff: left-right
        consistency.  subpixel: parabola refinement; median: a 3x3 median.
        memory_budget: bytes the call may use (0: what the device has); a
        call that needs more works in smaller parts, or raises
        DeviceMemoryError before allocating when even those do not fit.
        The confidence is
        1 - S(best)/S(second) in 0..1, 0 where invalid.
        left, right: 2D (rows, columns), same shape, uint8, uint16 or
        float32 (finite); other real dtypes become float32.  out: a float32
        (rows, columns) array for the disparity.  The defaults are libSGM's
        (see include/parvis/stereo.h)."""
        la, ls, ra, rs = sgm_inputs(left, right)
        params = sgm_params(la.shape[1], ndisp=ndisp, min_disp=min_disp, census=census,
                            census_symmetric=census_symmetric, p1=p1, p2=p2,
                            p2_adaptive=p2_adaptive, paths=paths, uniqueness=uniqueness,
                            lr_check=lr_check, lr_max_diff=lr_max_diff, subpixel=subpixel,
                            median=median, memory_budget=memory_budget)
        dst = A.output(out, la.shape)
        A.refuse_overlap(dst, la, ra)
        if not confidence:
            self._call(lib.pv_stereo_sgm, ls, rs, params, A.image_struct(dst))
            return dst
        conf = np.empty(la.shape, np.float32)
        self._call(lib.pv_stereo_sgm_confidence, ls, rs, params, A.image_struct(dst),
                   A.image_struct(conf))
        return dst, conf

    def stereo_sgm_batch(self, lefts: Sequence[ArrayLike], rights: Sequence[ArrayLike], *,
                         confidence: bool = False, **options: Any
                         ) -> Union[np.ndarray, Tuple[np.ndarray, np.ndarray]]:
        """Semi-global matching of a stream of pairs through one plan
        (pv_stereo_sgm_batch): returns a float32 (pairs, rows, columns)
        stack of disparities, or the pair of stacks (disparities,
        confidences) when confidence is true.  Slice i is exactly what
        stereo_sgm(lefts[i], rights[i], **options) returns; on OpenCL the
        transfers of one pair overlap the kernels of the next (docs/sgm.md,
        "A stream of pairs"), which is faster than a loop of single calls.

        lefts, rights: sequences of as many 2D images (or 3D stacks of
        them), all of one shape; each pair as for stereo_sgm (a batch whose
        pairs differ in dtype is matched in float32 throughout).  options:
        the keyword arguments of stereo_sgm (ndisp, min_disp, census, ...,
        memory_budget) other than out, shared by every pair.  An empty batch
        or pairs of different shapes raise InvalidArgument before any work."""
        arrays, left_structs, right_structs = sgm_batch_inputs(lefts, rights)
        count = len(arrays) // 2
        rows, columns = arrays[0].shape
        params = sgm_params(columns, **options)
        disparities = np.empty((count, rows, columns), np.float32)
        confidences = np.empty((count, rows, columns), np.float32) if confidence else None
        self._call(lib.pv_stereo_sgm_batch, left_structs, right_structs, count, params,
                   image_structs(disparities),
                   image_structs(confidences) if confidences is not None else ffi.NULL)
        return disparities if confidences is None else (disparities, confidences)

    # -------------------------------------------------------------- features
    def sift(self, image: ArrayLike, *, preset: str = "reference",
             first_octave: Optional[int] = None, octaves: Optional[int] = None,
             levels: Optional[int] = None, sigma0: Optional[float] = None,
             sigma_input: Optional[float] = None, peak_thresh: Optional[float] = None,
             edge_thresh: Optional[float] = None, orientation_window: Optional[float] = None,
             orientation_peak: Optional[float] = None, magnif: Optional[float] = None,
             max_keypoints: Optional[int] = None,
             descriptor_dtype: Any = np.uint8) -> SiftFeatures:
        """Detect and describe SIFT keypoints (Lowe 2004, VLFeat's conventions).

        image: 2D uint8 (scaled to [0, 1]) or float32 (used as is: keep it in
        [0, 1] for the default thresholds), at least 16 x 16, finite; or 2D
        uint16, or (H, W, 3) uint8 / uint16 RGB, sent to the device as they
        are and converted to grey there as to_grey() does (then scaled to
        [0, 1] as uint8 is, so a 16-bit picture behaves as its 8-bit one).
        preset: "reference" (the defaults: first octave -1, peak threshold
        0) or "fast" (the real-time paper's: first octave 0, peak
        0.01); any other argument given overrides the preset's value.
        first_octave: -1 (upsampled 2x) or 0; octaves: 0 for automatic;
        levels: scales per octave; max_keypoints: 0 for all, else the top K
        by |response|.  Returns SiftFeatures(keypoints (N, 4) float32 x, y,
        sigma, angle; descriptors (N, 128) of descriptor_dtype, uint8 or
        float32).  For many images of one size, sift_plan() keeps the scale
        space between calls."""
        given = dict(first_octave=first_octave, octaves=octaves, levels=levels, sigma0=sigma0,
                     sigma_input=sigma_input, peak_thresh=peak_thresh,
                     edge_thresh=edge_thresh, orientation_window=orientation_window,
                     orientation_peak=orientation_peak, magnif=magnif,
                     max_keypoints=max_keypoints)
        params = {k: v for k, v in given.items() if v is not None}
        with self.sift_plan(np.shape(image)[:2], preset=preset, **params) as plan:
            return plan.detect(image, descriptor_dtype=descriptor_dtype)

    def to_grey(self, image: ArrayLike, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The grey value of each pixel as float32 (H, W), on this context's
        backend.  image: (H, W, 3) uint8 / uint16 RGB (Rec. 601 luma
        0.299 R + 0.587 G + 0.114 B, in float), or (H, W) uint8, uint16 or
        float32 (values kept).  16-bit data is divided by 257, so it lands
        on the 0..255 range of 8-bit data (65535 -> 255).  out: optional
        float32 (H, W) array with contiguous rows, written in place."""
        a, s = A.grey_or_colour_in(image, "image")
        dst = A.output(out, a.shape[:2])
        A.refuse_overlap(dst, a)
        self._call(lib.pv_to_grey, s, A.out_struct(dst))
        return dst

    def sift_plan(self, shape: Tuple[int, ...], **params: Any) -> "SiftPlan":
        """A SiftPlan for images of shape (height, width); keyword arguments
        as for sift() (without descriptor_dtype)."""
        return SiftPlan(self, shape, **params)

    def match(self, desc1: ArrayLike, desc2: ArrayLike, ratio: float = 0.8,
              mutual: bool = False) -> Matches:
        """Match descriptors: for each row of desc1 (query) its nearest and
        second-nearest row of desc2 (train) by L2 distance (ties to the lower
        index); kept when nearest < ratio * second (ratio 1 disables the
        test) and, with mutual=True, when the two are each other's nearest.
        desc1, desc2: (N, 128) uint8 (as sift() returns; divided by 512) or
        float32.  Returns Matches(pairs, distances, second)."""
        q, keep_q = _descriptor_set(desc1, "desc1")
        t, keep_t = _descriptor_set(desc2, "desc2")
        params = ffi.new("pv_sift_match_params *", [_float(ratio, "ratio"), int(bool(mutual))])
        result = ffi.new("pv_sift_matches *")
        self._call(lib.pv_sift_match, q, t, params, result)
        try:
            n = result.count
            if n == 0:
                return Matches(np.empty((0, 2), np.int32), np.empty(0, np.float32),
                               np.empty(0, np.float32))
            raw = np.frombuffer(ffi.buffer(result.pairs, n * _PAIR_WORDS * 4), np.int32)
            raw = raw.reshape(n, _PAIR_WORDS)
            floats = raw.view(np.float32)
            return Matches(raw[:, :2].copy(), floats[:, 2].copy(), floats[:, 3].copy())
        finally:
            lib.pv_sift_matches_free(result)
            del keep_q, keep_t

    # ---------------------------------------------------------- registration
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
        refused; constant inputs give shift 0, peak 0 and NO_TEXTURE."""
        options = _phasecorr_options(upsample, subpixel, pad, window)
        shift = ffi.new("pv_shift *")
        volume = np.ndim(reference) == 3
        ra, rs = _grid_in(reference, "reference", volume)
        ma, ms = _grid_in(moving, "moving", volume)
        A.same_shape(ra, ma, ("reference", "moving"))
        fn = lib.pv_phase_correlate3d if volume else lib.pv_phase_correlate
        self._call(fn, rs, ms, options, shift)
        return PhaseCorrelation(_shift_array(shift, ra.ndim), shift.peak, int(shift.flags))

    def phasecorr_plan(self, reference: ArrayLike, upsample: int = 1, *,
                       subpixel: Optional[str] = None, pad: str = "none", window: str = "none",
                       max_batch: int = 1) -> "PhaseCorrPlan":
        """A PhaseCorrPlan: the reference's spectrum cached (on the device
        for OpenCL), movers correlated max_batch at a time.  Options as for
        phase_correlate."""
        return PhaseCorrPlan(self, reference, upsample, subpixel=subpixel, pad=pad,
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
        return NCCResult(dst, int(result.x), int(result.y), float(result.coefficient),
                         float(result.sub_x), float(result.sub_y), int(result.flags))

    # ---------------------------------------------------------------- octreg
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
        return OctregPlan(self, reference, stripes=stripes, stripe_width=stripe_width,
                          subvolume_width=subvolume_width, subvolume_step=subvolume_step,
                          coarse_tolerance=coarse_tolerance, tolerance=tolerance, pad=pad,
                          subpixel=subpixel, batch=batch)

    # ------------------------------------------------------------------ flow
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
        return FlowPlan(self, shape, **params)

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

    # ---------------------------------------------------------------- tuning
    def tune(self, op: Optional[str] = None, *, max_candidates: int = 0, runs: int = 3,
             width: int = 0, height: int = 0, ndisp: int = 0,
             write_cache: bool = True) -> List[TuneResult]:
        """Auto-tune this context's OpenCL kernels (pv_tune): for op, one
        tunable family ("filter", "sad", "bp", "register", "flow",
        "features", "octreg", "geometry") or None (all of them), build each candidate launch configuration
        (max_candidates per op; 0: all the search makes), check its output
        against the CPU backend, time it (median of `runs` runs) on a
        synthetic width x height workload of ndisp disparities (0: the op's
        defaults) and keep the fastest.  The winners are applied to this
        context and, with write_cache, stored in the cache file
        (tune_cache_path()).  Returns one TuneResult per op searched.  The
        CPU backend has nothing to tune: parvis.Unsupported."""
        options = ffi.new("pv_tune_options *")
        lib.pv_tune_options_default(options)
        keep = ffi.new("char[]", _family(op, "op").encode()) if op is not None else ffi.NULL
        options.op = keep
        options.max_candidates = _int(max_candidates, "max_candidates")
        options.runs = _int(runs, "runs")
        options.width = _int(width, "width")
        options.height = _int(height, "height")
        options.ndisp = _int(ndisp, "ndisp")
        options.write_cache = int(bool(write_cache))
        capacity = 16  # one result per tunable family
        results = ffi.new("pv_tune_result[]", capacity)
        count = ffi.new("int *")
        self._call(lib.pv_tune, options, results, capacity, count)
        return [TuneResult(ffi.string(r.op).decode(), int(r.tried), int(r.rejected),
                           float(r.default_ms), float(r.best_ms),
                           {ffi.string(p.name).decode(): int(p.value)
                            for p in r.params[0:r.param_count]})
                for r in results[0:count[0]]]

    def tune_load(self) -> int:
        """Apply the cached tuning of this context's device (pv_tune_load);
        returns the number of parameters set (0: no usable cache entry, and
        always on the CPU backend)."""
        applied = ffi.new("int *")
        self._call(lib.pv_tune_load, applied)
        return int(applied[0])

    def tune_set(self, family: str, name: str, value: int) -> None:
        """Override one launch parameter on this context (a tunable family,
        names as tune_list() gives them).  An unknown family or name,
        or a negative value, raises parvis.InvalidArgument.  The CPU backend
        has no launch parameters and ignores the call."""
        self._call(lib.pv_tune_set, _family(family, "family").encode(), _name(name),
                   _int(value, "value"))

    def tune_get(self, family: str, name: str) -> int:
        """The current value of one launch parameter (see tune_set); the CPU
        backend raises parvis.Unsupported."""
        value = ffi.new("int *")
        self._call(lib.pv_tune_get, _family(family, "family").encode(), _name(name), value)
        return int(value[0])

    def tune_use_defaults(self) -> None:
        """Put every launch parameter back to its default and stop reading
        the tuning cache automatically on this context."""
        self._call(lib.pv_tune_use_defaults)

    def tune_list(self, family: Optional[str] = None) -> List[TuneParam]:
        """The launch parameters of a tunable family (or None: every one)
        with their current values; empty on the CPU backend."""
        families = (_tune_families() if family is None else [_family(family, "family")])
        found: List[TuneParam] = []
        for fam in families:
            capacity = 256
            params = ffi.new("pv_tune_param[]", capacity)
            count = ffi.new("int *")
            self._call(lib.pv_tune_list, fam.encode(), params, capacity, count)
            found += [TuneParam(fam, ffi.string(p.name).decode(), int(p.value))
                      for p in params[0:count[0]]]
        return found

    def tune_cache_path(self) -> str:
        """Path of this context's tuning cache file ($PARVIS_TUNE_DIR, else
        $XDG_CACHE_HOME/parvis, else ~/.cache/parvis); the CPU backend raises
        parvis.Unsupported."""
        path = ffi.new("char[]", 4096)
        self._call(lib.pv_tune_cache_path, path, 4096)
        return ffi.string(path).decode(errors="surrogateescape")

    def tune_check_cache_writable(self) -> None:
        """Return when the tuning cache file can be written, else raise
        parvis.FileError saying why (parvis.Unsupported on the CPU backend)."""
        self._call(lib.pv_tune_check_cache_writable)


def _family(family: Any, name: str) -> str:
    """A tuning family name; the C library checks it is one of
    _tune_families()."""
    if not isinstance(family, str) or "\0" in family:
        raise invalid(f"{name}: expected a tuning family such as 'bp', got {family!r}")
    return family


def _tune_families() -> List[str]:
    """The tunable families, in the library's order (pv_tune_family_name)."""
    names = []
    while lib.pv_tune_family_name(len(names)) != ffi.NULL:
        names.append(ffi.string(lib.pv_tune_family_name(len(names))).decode())
    return names


def _name(name: Any) -> bytes:
    if not isinstance(name, str) or "\0" in name:
        raise invalid(f"name: expected a parameter name, got {name!r}")
    return name.encode()


def _as_volume(arr: ArrayLike, name: str) -> ArrayLike:
    a = A.plain(arr, name)
    return a[np.newaxis] if a.ndim == 2 else a


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


# ---------------------------------------------------------------------- plans
class _Plan(PlanHandle):
    """State kept between calls on one context; close() or use `with`.  The
    context's close() closes it too; calls on a closed plan raise
    ClosedError."""

    _destroy: Any = None

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)

    def _free(self) -> Callable[[Any], None]:
        """The function that frees the C plan (and anything kept with it)."""
        return type(self)._destroy

    def _call(self, fn: Any, *args: Any) -> None:
        with self._entered() as (ctx, plan):
            status = fn(plan, *args)
            if status:
                raise_status(status, ctx)

    def _create(self, fn: Any, *args: Any, out_type: str) -> None:
        out = ffi.new(out_type)
        with self._ctx._entered() as ctx:
            status = fn(ctx, *args, out)
            if status:
                raise_status(status, ctx)
            self._adopt(CObject(out[0], self._free()))


class SiftPlan(_Plan):
    """SIFT for a stream of images of one size: the scale space and the
    result arrays are kept between detect() calls.  Made by
    Context.sift_plan(shape, **params) (parameters as Context.sift)."""

    _destroy = lib.pv_sift_plan_destroy

    def __init__(self, ctx: Context, shape: Tuple[int, ...], **params: Any) -> None:
        super().__init__(ctx)
        if len(shape) != 2:
            raise invalid(f"shape: expected (rows, columns), got {tuple(shape)}")
        self.shape = (_int(shape[0], "rows"), _int(shape[1], "columns"))
        if min(self.shape) < _SIFT_MIN_SIZE:
            raise invalid(f"shape: {A.shape_text(self.shape)} is smaller than the "
                          f"{_SIFT_MIN_SIZE} x {_SIFT_MIN_SIZE} minimum")
        self._features = ffi.new("pv_sift_features *")
        preset = params.pop("preset", "reference")
        self._create(lib.pv_sift_plan_create, self.shape[1], self.shape[0],
                     _sift_params(**{**_sift_preset(preset), **params}),
                     out_type="pv_sift_plan **")

    def _free(self) -> Callable[[Any], None]:
        features = self._features  # not self: a finaliser must not revive it

        def free(plan: Any) -> None:
            lib.pv_sift_plan_destroy(plan)
            lib.pv_sift_features_free(features)
        return free

    @property
    def octaves(self) -> int:
        """Octaves the plan uses (after defaults and clamping)."""
        with self._entered() as (_, plan):
            return int(lib.pv_sift_plan_octaves(plan))

    def detect(self, image: ArrayLike, descriptor_dtype: Any = np.uint8) -> SiftFeatures:
        """Keypoints and descriptors of an image of the plan's shape (see
        Context.sift)."""
        dtype = _check_descriptor_dtype(descriptor_dtype)
        a, s = A.grey_or_colour_in(image, "image")
        if a.shape[:2] != self.shape:
            raise invalid(f"image: shape {A.shape_text(a.shape[:2])} differs from the "
                          f"plan's {self.shape}")
        with self._entered() as (ctx, plan):
            status = lib.pv_sift_detect_into(plan, s, self._features)
            if status:
                raise_status(status, ctx)
            return _features_arrays(self._features, dtype)

    def detect_batch(self, images: Sequence[ArrayLike], descriptor_dtype: Any = np.uint8,
                     progress: Optional[Callable[[int, int], None]] = None,
                     chunk: int = 16) -> List[SiftFeatures]:
        """Keypoints and descriptors of many images of the plan's shape
        (frames of a video, a photo collection); one SiftFeatures per image,
        in order, each exactly what detect() gives for it.  The images go to
        the library in batches (pv_sift_detect_batch), where the OpenCL
        backend overlaps their work on the device: all in one call, or with
        progress, `chunk` at a time, progress(done, total) being called
        after each.  Every image is checked before any work.  An empty
        batch is refused."""
        dtype = _check_descriptor_dtype(descriptor_dtype)
        if len(images) == 0:
            raise invalid("images: the batch is empty")
        step = _int(chunk, "chunk")
        if step < 1:
            raise invalid(f"chunk: {step} is not >= 1")
        inputs = [A.grey_or_colour_in(image, f"images[{i}]") for i, image in enumerate(images)]
        for i, (a, _) in enumerate(inputs):
            if a.shape[:2] != self.shape:
                raise invalid(f"images[{i}]: shape {A.shape_text(a.shape[:2])} differs from "
                              f"the plan's {self.shape}")
        if progress is None:
            step = len(inputs)
        found: List[SiftFeatures] = []
        for first in range(0, len(inputs), step):
            found.extend(self._detect_chunk(inputs[first:first + step], dtype))
            if progress is not None:
                progress(len(found), len(inputs))
        return found

    def _detect_chunk(self, inputs: List[Tuple[np.ndarray, Any]], dtype: Any) -> List[SiftFeatures]:
        """One pv_sift_detect_batch call on checked inputs."""
        views = ffi.new("pv_image[]", len(inputs))
        for i, (_, s) in enumerate(inputs):
            views[i] = s[0]
        results = ffi.new("pv_sift_features[]", len(inputs))
        with self._entered() as (ctx, plan):
            try:
                status = lib.pv_sift_detect_batch(plan, views, len(inputs), results)
                if status:
                    raise_status(status, ctx)
                return [_features_arrays(results + i, dtype) for i in range(len(inputs))]
            finally:
                for i in range(len(inputs)):
                    lib.pv_sift_features_free(results + i)


_SIFT_PRESETS = {"reference": lib.PV_SIFT_PRESET_REFERENCE, "fast": lib.PV_SIFT_PRESET_FAST}
_SIFT_FIELDS = ("first_octave", "octaves", "levels", "sigma0", "sigma_input", "peak_thresh",
                "edge_thresh", "orientation_window", "orientation_peak", "magnif",
                "max_keypoints")


def _sift_preset(name: str) -> Dict[str, Any]:
    """The settings of a named preset, as the library defines them."""
    params = ffi.new("pv_sift_params *")
    status = lib.pv_sift_params_preset(params, _choice(_SIFT_PRESETS, name, "preset"))
    if status:
        raise_status(status, None)
    return {field: getattr(params, field) for field in _SIFT_FIELDS}


class PhaseCorrPlan(_Plan):
    """Phase correlation against a cached reference (2D image or 3D volume).
    Made by Context.phasecorr_plan(reference, upsample, ...)."""

    def __init__(self, ctx: Context, reference: ArrayLike, upsample: int = 1, *,
                 subpixel: Optional[str] = None, pad: str = "none", window: str = "none",
                 max_batch: int = 1) -> None:
        super().__init__(ctx)
        options = _phasecorr_options(upsample, subpixel, pad, window)
        volume = np.ndim(reference) == 3
        ra, rs = _grid_in(reference, "reference", volume)
        fn = lib.pv_phasecorr_plan_create3d if volume else lib.pv_phasecorr_plan_create
        self.ndim = ra.ndim
        self.shape = ra.shape
        self._create(fn, rs, options, _int(max_batch, "max_batch"),
                     out_type="pv_phasecorr_plan **")

    _destroy = lib.pv_phasecorr_plan_destroy

    def _mover(self, arr: ArrayLike, name: str) -> Tuple[np.ndarray, Any]:
        a, s = _grid_in(arr, name, self.ndim == 3)
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


def _octreg_arrays(shifts: Any, n: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    raw = np.frombuffer(ffi.buffer(shifts, n * ffi.sizeof("pv_octreg_shift")), dtype=np.dtype(
        {"names": ["d", "peak", "valid"], "formats": [("f8", 3), "f8", "i4"],
         "offsets": [0, 24, 32], "itemsize": ffi.sizeof("pv_octreg_shift")}))
    return raw["d"].copy(), raw["peak"].copy(), raw["valid"] != 0


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
