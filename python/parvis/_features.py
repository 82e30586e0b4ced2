"""Context's SIFT features (include/parvis/features.h): detection, plans
for a stream of images, descriptor matching, and the chain from two frames
to a homography (pv_sift_match_images, pv_sift_track_next in
include/parvis/geometry.h)."""
from __future__ import annotations

from typing import (TYPE_CHECKING, Any, Callable, Dict, List, Mapping, NamedTuple, Optional,
                    Sequence, Tuple, cast)

import numpy as np

from . import _arrays as A
from ._base import ArrayLike, _choice, _ContextBase, _int, _Plan
from ._convert import c_seed
from ._errors import invalid, raise_status
from ._native import ffi, lib
from ._params import declared, declared_keywords, default_of, make
from ._results import Matches, SiftFeatures

if TYPE_CHECKING:
    from ._context import Context

# The smallest side SIFT takes (PV_SIFT_MIN_SIZE), checked here to say it in
# (rows, columns).
_SIFT_MIN_SIZE = int(lib.PV_SIFT_MIN_SIZE)
_KEYPOINT_FLOATS = ffi.sizeof("pv_sift_keypoint") // 4
_PAIR_WORDS = ffi.sizeof("pv_sift_pair") // 4
_DESCRIPTOR = int(lib.PV_SIFT_DESCRIPTOR_SIZE)
_POINT_MATCH_WORDS = ffi.sizeof("pv_sift_point_match") // 4


_SIFT_PRESETS = {"reference": lib.PV_SIFT_PRESET_REFERENCE, "fast": lib.PV_SIFT_PRESET_FAST}
_SIFT_FIELDS = tuple(p.name for p in declared("sift"))



def _sift_params(preset: str, params: Dict[str, Any]) -> Any:
    """A pv_sift_params* of the named preset with the given declared keywords
    (`parvis params sift`) set through the library."""
    base = ffi.new("pv_sift_params *")
    status = lib.pv_sift_params_preset(base, _choice(_SIFT_PRESETS, preset, "preset"))
    if status:
        raise_status(status, None)
    return make("sift", params, base=base)


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


class SiftChainResult(NamedTuple):
    """The SIFT chain's answer: a homography from the first (or previous)
    frame to the second (or new) one and its inlier matches.

    model: (3, 3) float64 H with x2 ~ H x1 and model[2, 2] == 1 (as
    find_homography gives it), or None for a tracking plan's first frame
    (nothing to match yet).  pairs: (K, 2) int32 (keypoint index in frame 1,
    in frame 2), numbered as SiftPlan.detect numbers them; points1, points2:
    (K, 2) float32 x, y of the inliers in each frame; distances: (K,)
    float32 descriptor distances; keypoints1, keypoints2: keypoints found
    in each frame; matches: matches that passed the ratio (and mutual)
    test, RANSAC's input; inlier_count: K; hypotheses: RANSAC hypotheses
    scored."""
    model: Optional[np.ndarray]
    pairs: np.ndarray
    points1: np.ndarray
    points2: np.ndarray
    distances: np.ndarray
    keypoints1: int
    keypoints2: int
    matches: int
    inlier_count: int
    hypotheses: int


def _chain_params(match: Optional[Mapping[str, Any]],
                  ransac: Optional[Mapping[str, Any]]) -> Tuple[Any, Any]:
    """pv_sift_match_params* and pv_ransac_params* from the declared keywords
    of `parvis params match` and `parvis params ransac` (a seed is taken
    modulo 2**64, as find_homography takes it)."""
    r = dict(ransac or {})
    if "seed" in r:
        r["seed"] = c_seed(r["seed"], "seed", 64)
    return make("match", dict(match or {})), make("ransac", r)


def _chain_result(result: Any) -> SiftChainResult:
    """Copy a C chain result into numpy arrays."""
    n = int(result.inlier_count)
    if n > 0:
        raw = np.frombuffer(ffi.buffer(result.inliers, n * _POINT_MATCH_WORDS * 4), np.int32)
        raw = raw.reshape(n, _POINT_MATCH_WORDS)
        floats = raw.view(np.float32)
        pairs, p1, p2 = raw[:, :2].copy(), floats[:, 2:4].copy(), floats[:, 4:6].copy()
        distances = floats[:, 6].copy()
    else:
        pairs = np.empty((0, 2), np.int32)
        p1, p2 = np.empty((0, 2), np.float32), np.empty((0, 2), np.float32)
        distances = np.empty(0, np.float32)
    model = (np.array(list(result.geometry.model), np.float64).reshape(3, 3)
             if result.has_model else None)
    return SiftChainResult(model, pairs, p1, p2, distances, int(result.keypoints1),
                           int(result.keypoints2), int(result.matches), n,
                           int(result.geometry.hypotheses))


def _take_chain_result(result: Any) -> SiftChainResult:
    """_chain_result of a filled pv_sift_chain_result *, then its C memory
    freed (also when the conversion fails)."""
    try:
        return _chain_result(result)
    finally:
        lib.pv_sift_chain_result_free(result)


class _FeaturesOps(_ContextBase):
    """Context's SIFT methods."""

    @declared_keywords("sift", defaults={name: None for name in _SIFT_FIELDS})
    def sift(self, image: ArrayLike, *, preset: str = "reference",
             descriptor_dtype: Any = np.uint8, **params: Any) -> SiftFeatures:
        """Detect and describe SIFT keypoints (Lowe 2004, VLFeat's conventions).

        image: 2D uint8 (scaled to [0, 1]) or float32 (used as is: keep it in
        [0, 1] for the default thresholds), at least 16 x 16, finite; or 2D
        uint16, or (H, W, 3) uint8 / uint16 RGB, sent to the device as they
        are and converted to grey there as to_grey() does (then scaled to
        [0, 1] as uint8 is, so a 16-bit picture behaves as its 8-bit one).
        preset: "reference" (the declared defaults: first octave -1, peak
        threshold 0) or "fast" (the real-time paper's: first octave 0, peak
        0.01); a declared parameter given (not None) overrides the preset's
        value.  Returns SiftFeatures(keypoints (N, 4) float32 x, y,
        sigma, angle; descriptors (N, 128) of descriptor_dtype, uint8 or
        float32).  For many images of one size, sift_plan() keeps the scale
        space between calls."""
        with self.sift_plan(np.shape(image)[:2], preset=preset, **params) as plan:
            return plan.detect(image, descriptor_dtype=descriptor_dtype)

    @declared_keywords("sift", defaults={name: None for name in _SIFT_FIELDS})
    def sift_plan(self, shape: Tuple[int, ...], *, preset: str = "reference",
                  **params: Any) -> "SiftPlan":
        """A SiftPlan for images of shape (height, width); keyword arguments
        as for sift() (without descriptor_dtype)."""
        return SiftPlan(cast("Context", self), shape, preset=preset, **params)

    @declared_keywords("sift", defaults={name: None for name in _SIFT_FIELDS})
    def sift_match_images(self, image1: ArrayLike, image2: ArrayLike, *,
                          preset: str = "reference", match: Optional[Mapping[str, Any]] = None,
                          ransac: Optional[Mapping[str, Any]] = None,
                          **params: Any) -> SiftChainResult:
        """Two frames of one shape to a homography: SIFT on both, matching
        with the ratio test, RANSAC (pv_sift_match_images).  On OpenCL the
        keypoints and descriptors stay on the device; only the model and
        the inlier matches come back.  The answer equals sift() on both,
        match(), then find_homography() on the matched points, with the same
        parameters.  image1, image2: as for sift(), of one shape.  preset
        and the declared SIFT keywords: as for sift().  match: keywords of
        `parvis params match` (ratio, mutual); ransac: keywords of `parvis
        params ransac` (iterations, threshold, confidence, seed, refine).
        Raises parvis.InvalidArgument when fewer than 4 matches survive
        (a featureless frame, unrelated frames).  For a video, sift_plan()
        and SiftPlan.track_next() keep the previous frame on the device."""
        with self.sift_plan(np.shape(image1)[:2], preset=preset, **params) as plan:
            return plan.match_images(image1, image2, match=match, ransac=ransac)

    @declared_keywords("match")
    def match(self, desc1: ArrayLike, desc2: ArrayLike,
              ratio: float = default_of("match", "ratio"), **params: Any) -> Matches:
        """Match descriptors: for each row of desc1 (query) its nearest and
        second-nearest row of desc2 (train) by L2 distance (ties to the lower
        index); kept when nearest < ratio * second (ratio 1 disables the
        test) and, with mutual=True, when the two are each other's nearest
        (both declared: `parvis params match`).
        desc1, desc2: (N, 128) uint8 (as sift() returns; divided by 512) or
        float32.  Returns Matches(pairs, distances, second)."""
        q, keep_q = _descriptor_set(desc1, "desc1")
        t, keep_t = _descriptor_set(desc2, "desc2")
        c_params = make("match", dict(params, ratio=ratio))
        result = ffi.new("pv_sift_matches *")
        self._call(lib.pv_sift_match, q, t, c_params, result)
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
                     _sift_params(preset, params), out_type="pv_sift_plan **")

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

    def _frame(self, image: ArrayLike, name: str) -> Tuple[np.ndarray, Any]:
        """A checked input of the plan's shape (kept alive by the caller)."""
        a, s = A.grey_or_colour_in(image, name)
        if a.shape[:2] != self.shape:
            raise invalid(f"{name}: shape {A.shape_text(a.shape[:2])} differs from the "
                          f"plan's {self.shape}")
        return a, s

    def _chain(self, fn: Callable[..., int], images: Sequence[Any],
               match: Optional[Mapping[str, Any]],
               ransac: Optional[Mapping[str, Any]]) -> SiftChainResult:
        m, r = _chain_params(match, ransac)
        result = ffi.new("pv_sift_chain_result *")
        with self._entered() as (ctx, plan):
            status = fn(plan, *images, m, r, result)
            if status:
                raise_status(status, ctx)
            return _take_chain_result(result)

    def match_images(self, image1: ArrayLike, image2: ArrayLike, *,
                     match: Optional[Mapping[str, Any]] = None,
                     ransac: Optional[Mapping[str, Any]] = None) -> SiftChainResult:
        """Two frames of the plan's shape to a homography from image1 to
        image2 (see Context.sift_match_images; match and ransac: the
        declared keywords of `parvis params match` and `parvis params
        ransac`).  image2 becomes the plan's kept frame, so track_next()
        continues from it."""
        inputs = [self._frame(image1, "image1"), self._frame(image2, "image2")]
        return self._chain(lib.pv_sift_match_images, [s for _, s in inputs], match, ransac)

    def track_next(self, frame: ArrayLike, *, match: Optional[Mapping[str, Any]] = None,
                   ransac: Optional[Mapping[str, Any]] = None) -> SiftChainResult:
        """Tracking through a video (pv_sift_track_next): detect frame once,
        match the plan's kept (previous) frame to it and estimate the
        homography from the previous frame to this one, exactly as
        match_images(previous, frame) would; frame then becomes the kept
        frame.  On OpenCL the kept frame's keypoints and descriptors stay
        on the device.  The first frame (or the first after track_reset()
        or a failure) has nothing to match: its result's model is None.
        Raises parvis.InvalidArgument when fewer than 4 matches survive;
        the plan then keeps frame, so the next call matches to it."""
        inputs = [self._frame(frame, "frame")]
        return self._chain(lib.pv_sift_track_next, [s for _, s in inputs], match, ransac)

    def track_reset(self) -> None:
        """Forget the kept frame: the next track_next() starts a new track."""
        with self._entered() as (_, plan):
            lib.pv_sift_track_reset(plan)

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


def _sift_preset(name: str) -> Dict[str, Any]:
    """The settings of a named preset, as the library defines them."""
    params = ffi.new("pv_sift_params *")
    status = lib.pv_sift_params_preset(params, _choice(_SIFT_PRESETS, name, "preset"))
    if status:
        raise_status(status, None)
    return {field: getattr(params, field) for field in _SIFT_FIELDS}
