"""Result types returned by parvis calls (named tuples: unpack or use fields)."""
from __future__ import annotations

from typing import Dict, NamedTuple, Optional

import numpy as np

from ._native import lib

#: Result flag: an input is constant, so no shift can be measured.
NO_TEXTURE: int = int(lib.PV_REGISTER_NO_TEXTURE)
#: Result flag: the peak lies on the map's edge, so no sub-pixel fit was made.
AT_EDGE: int = int(lib.PV_REGISTER_AT_EDGE)


class SiftFeatures(NamedTuple):
    """SIFT keypoints and their descriptors, in the library's deterministic order.

    keypoints: (N, 4) float32, columns x, y, sigma, angle.  x is the column
    (last array axis) and y the row, in input pixels with the origin at the
    centre of the top-left pixel; sigma in input pixels; angle in radians,
    [0, 2 pi), measured as atan2(dy, dx) with y pointing down.
    descriptors: (N, 128) uint8 (min(512 v, 255) of the unit-norm float
    descriptor v, truncated) or float32 (v itself), as asked for."""
    keypoints: np.ndarray
    descriptors: np.ndarray


class Matches(NamedTuple):
    """Descriptor matches in increasing query order.

    pairs: (M, 2) int32, columns (query index, train index); distances: (M,)
    float32 L2 distance to the nearest train descriptor; second: (M,) float32
    distance to the second nearest (inf when there is none).  Distances are
    in the float descriptors' units (uint8 descriptors are divided by 512)."""
    pairs: np.ndarray
    distances: np.ndarray
    second: np.ndarray


class PhaseCorrelation(NamedTuple):
    """Result of a phase correlation.

    shift: float64 array [dx, dy] (2D) or [dx, dy, dz] (3D): x along the last
    array axis, y the one before, z the first axis of a volume.  The moving
    input is the reference displaced by +shift: moving(p) ~ reference(p - shift),
    so np.roll(reference, (dy, dx), axis=(0, 1)) ~ moving for whole shifts.
    peak: the normalised correlation peak (1 for identical textured inputs).
    flags: NO_TEXTURE | AT_EDGE bits."""
    shift: np.ndarray
    peak: float
    flags: int


class PhaseCorrelationBatch(NamedTuple):
    """Results for a stack of movers: shifts (count, ndim) float64 as in
    PhaseCorrelation.shift, peaks (count,) float64, flags (count,) uint32."""
    shifts: np.ndarray
    peaks: np.ndarray
    flags: np.ndarray


class NCCResult(NamedTuple):
    """Normalised cross-correlation (MATLAB normxcorr2 layout).

    map: float32 of shape (image_h + templ_h - 1, image_w + templ_w - 1), or
    None when not asked for.  Element [v, u] puts the template's top-left
    corner at image row v - templ_h + 1, column u - templ_w + 1.
    x, y: best offset of the template's top-left corner in image
    coordinates (column, row); coefficient: its value; sub_x, sub_y: the
    offset refined by a quadratic fit; flags: NO_TEXTURE | AT_EDGE bits."""
    map: Optional[np.ndarray]
    x: int
    y: int
    coefficient: float
    sub_x: float
    sub_y: float
    flags: int


class OctregResult(NamedTuple):
    """Per-B-scan result of an AO-OCT volume registration.

    A volume is a numpy array of shape (B-scans, A-lines, depth).  shifts:
    (B-scans, 3) float64 with the thesis's axis names, columns (dx, dy, dz):
    dx along the A-lines (axis 1), dy across B-scans (axis 0), dz in depth
    (axis 2); target B-scan k matches reference B-scan k - dy.
    peak: (B-scans,) float64 fine correlation peak; valid: (B-scans,) bool
    (False: rejected, shifts interpolated from valid neighbours);
    info: counts of stripes, good_stripes, valid_bscans, subvolumes;
    registered: the reconstructed volume (reference's shape) when asked for,
    else None."""
    shifts: np.ndarray
    peak: np.ndarray
    valid: np.ndarray
    info: Dict[str, int]
    registered: Optional[np.ndarray]


class Flow(NamedTuple):
    """A flow field: u (x, last axis), v (y), w (z, first axis of a volume)
    in voxels, each float32 of the input's shape; moving(p + flow(p)) ~ fixed(p)."""
    u: np.ndarray
    v: np.ndarray
    w: np.ndarray


class SyntheticOct(NamedTuple):
    """A synthetic AO-OCT pair with its known motion trace: reference and
    target volumes (B-scans, A-lines, depth) float32, shifts (B-scans, 3)
    float64 (dx, dy, dz as in OctregResult) and valid (B-scans,) bool."""
    reference: np.ndarray
    target: np.ndarray
    shifts: np.ndarray
    valid: np.ndarray


class TuneParam(NamedTuple):
    """One tunable OpenCL launch parameter of a context: its kernel family
    ("bp" or "sad"), its name (e.g. "BP_WG_X") and its current value."""
    family: str
    name: str
    value: int


class TuneResult(NamedTuple):
    """The outcome of an auto-tuning search for one kernel family (op "bp"
    or "sad"): candidates tried and rejected (failed to build or run, or
    disagreed with the CPU backend), the median end-to-end times in ms with
    the default and with the kept parameters, and the kept values by name."""
    op: str
    tried: int
    rejected: int
    default_ms: float
    best_ms: float
    params: Dict[str, int]
