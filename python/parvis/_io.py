"""Module-level helpers: devices, version, image and volume files, synthetic data.

File names are str, bytes or os.PathLike; one holding a NUL byte raises
InvalidArgument (a ValueError, as open() raises)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple, Union

import numpy as np

from . import _arrays as A
from ._convert import PathLike, c_float, c_int, c_path, c_seed
from ._errors import invalid, raise_status
from ._lifetime import check_can_start
from ._native import ffi, lib
from ._results import Flow, SyntheticOct

@dataclass(frozen=True)
class DeviceInfo:
    """An OpenCL device as the C library lists it (index: what
    Context(device=...) and PARVIS_DEVICE take)."""
    index: int
    name: str
    vendor: str
    platform: str
    driver_version: str
    opencl_version: str
    type: str
    global_memory: int
    max_alloc: int
    local_memory: int
    compute_units: int
    max_work_group_size: int


def _text(chars: Any) -> str:
    return ffi.string(chars).decode(errors="replace")


def version() -> str:
    """The C library's version string."""
    return _text(lib.pv_version())


def devices() -> List[DeviceInfo]:
    """Every OpenCL device found (empty without OpenCL).  It starts the
    OpenCL driver: a fork child of this process cannot (ForkedError)."""
    check_can_start("devices")
    count = ffi.new("int *")
    status = lib.pv_device_list(ffi.NULL, 0, count)
    if status:
        raise_status(status)
    if count[0] == 0:
        return []
    infos = ffi.new("pv_device_info[]", count[0])
    status = lib.pv_device_list(infos, count[0], count)
    if status:
        raise_status(status)
    return [DeviceInfo(d.index, _text(d.name), _text(d.vendor), _text(d.platform),
                       _text(d.driver_version), _text(d.opencl_version),
                       _text(lib.pv_device_type_name(d.type)), d.global_memory, d.max_alloc,
                       d.local_memory, d.compute_units, d.max_work_group_size)
            for d in (infos[i] for i in range(min(count[0], len(infos))))]


def _path(path: PathLike) -> bytes:
    return c_path(path, "path")


def imread(path: PathLike, dtype: Any = np.uint8, colour: bool = False) -> np.ndarray:
    """Read a PGM/PPM (8/16-bit), PFM, PNG, JPEG or TIFF file as an array.

    dtype uint8: 8-bit data as is, 16-bit scaled by 255/maxval, PFM rounded
    and clamped; uint16: 16-bit data as is, 8-bit data (and PFM) as uint8
    reads it times 257, other deep data scaled by 65535/maxval; float32:
    integer formats keep their values, PFM values as stored (inf kept).
    colour False: a 2D array, colour converted to grey (Rec. 601 luma);
    colour True (uint8 or uint16 only): an (H, W, 3) RGB array, grey files
    with three equal channels, for sift() and to_grey(), which convert on
    the device.  PFM rows are returned top to bottom.  TIFF (its first page;
    grey or RGB of 8/16-bit unsigned or float32 samples) converts as PGM
    (8/16-bit) and PFM (float) do; it needs a library built with libtiff
    (has_tiff(); else Unsupported)."""
    d = np.dtype(dtype)
    types = A.COLOUR_TYPE if colour else A.GREY_ANY_TYPE
    if d not in types:
        allowed = "uint8 or uint16" if colour else "uint8, uint16 or float32"
        raise invalid(f"dtype: {d} is not {allowed}")
    channels = 3 if colour else 1
    image = ffi.new("pv_image *")
    status = lib.pv_image_read(_path(path), types[d], image)
    if status:
        raise_status(status)
    try:
        count = image.height * image.stride * channels
        rows = np.frombuffer(ffi.buffer(image.data, count * d.itemsize), d)
        rows = rows.reshape(image.height, image.stride, channels)[:, :image.width]
        return (rows if colour else rows[:, :, 0]).copy()
    finally:
        lib.pv_image_free(image)


def imwrite(path: PathLike, image: Any) -> None:
    """Write a 2D uint8/float32 image by extension: .pgm (8-bit), .pfm
    (float) or .png (8-bit grey); float data is clamped and rounded for the
    8-bit formats."""
    a, s = A.image_in(image, "image")
    status = lib.pv_image_write(_path(path), s)
    if status:
        raise_status(status)


def has_nifti() -> bool:
    """True when the library was built with NIfTI-1 support."""
    return bool(lib.pv_volume_io_has_nifti())


def has_tiff() -> bool:
    """True when the library was built with TIFF support (libtiff)."""
    return bool(lib.pv_volume_io_has_tiff())


def _is_tiff_name(path: PathLike) -> bool:
    name = os.fsdecode(_path(path)).lower()
    return name.endswith(".tif") or name.endswith(".tiff")


def _volume_copy(volume: Any) -> np.ndarray:
    """A numpy copy (float32, or uint16 for a U16 volume) of a volume the
    library allocated, which is freed."""
    try:
        u16 = volume.type == lib.PV_VOLUME_U16
        dtype, item = (np.uint16, 2) if u16 else (np.float32, 4)
        pointer = volume.data_u16 if u16 else volume.data
        n = volume.stride_z * volume.nz
        flat = np.frombuffer(ffi.buffer(pointer, n * item), dtype)
        full = flat.reshape(volume.nz, volume.stride_z)[:, :volume.stride_y * volume.ny]
        return full.reshape(volume.nz, volume.ny, volume.stride_y)[:, :, :volume.nx].copy()
    finally:
        lib.pv_volume_free(volume)


def read_volume(path: PathLike, shape: Optional[Tuple[int, int, int]] = None, *,
                keep_u16: bool = False) -> np.ndarray:
    """Read a volume (z, y, x): float32, or uint16 with keep_u16.

    NIfTI-1 (.nii, .nii.gz, .hdr/.img) when shape is None (any numeric type,
    scaled by scl_slope/scl_inter); a multi-page TIFF (.tif, .tiff, case
    ignored) when shape is None, page k as z = k (grey pages of one size,
    8/16-bit unsigned or float32, values as stored; has_tiff()); raw
    little-endian float32 when shape (z, y, x) is given (the file must hold
    exactly that many values).

    keep_u16=True keeps 16 bits: an unscaled uint16 NIfTI file and 16-bit
    TIFF pages come back as a uint16 array (other files as float32), and a
    raw file is read as little-endian uint16 samples.  OCT registration,
    3D phase correlation and the 3D flow take such arrays as they are; the
    OpenCL backend uploads 2 bytes a voxel and converts on the device, with
    the results of the same values as float32."""
    volume = ffi.new("pv_volume *")
    if shape is None and _is_tiff_name(path):
        read = lib.pv_volume_read_tiff_native if keep_u16 else lib.pv_volume_read_tiff
        status = read(_path(path), volume)
    elif shape is None:
        read = lib.pv_volume_read_nifti_native if keep_u16 else lib.pv_volume_read_nifti
        status = read(_path(path), volume)
    else:
        if len(shape) != 3:
            raise invalid(f"shape: expected (z, y, x), got {shape}")
        nz, ny, nx = (c_int(n, f"shape[{axis}]") for axis, n in enumerate(shape))
        kind = lib.PV_VOLUME_U16 if keep_u16 else lib.PV_VOLUME_F32
        status = lib.pv_volume_read_raw_typed(_path(path), nx, ny, nz, kind, volume)
    if status:
        raise_status(status)
    return _volume_copy(volume)


def write_volume(path: PathLike, volume: Any) -> None:
    """Write a 3D volume (z, y, x), float32 or uint16 (other dtypes as
    float32): NIfTI-1 for .nii / .nii.gz / .hdr names (datatype float32 or
    uint16), raw little-endian samples of the array's type otherwise."""
    a, s = A.volume_in(volume, "volume", allow_u16=True)
    name = _path(path)
    if name.endswith((b".nii", b".nii.gz", b".hdr", b".img")):
        status = lib.pv_volume_write_nifti(name, s)
    else:
        status = lib.pv_volume_write_raw(name, s)
    if status:
        raise_status(status)


def write_flow(path: PathLike, flow: Union[Flow, Tuple[Any, Any, Any]]) -> None:
    """Write a flow field (u, v, w) as a NIfTI-1 vector field."""
    comps = [A.volume_array(c, n) for c, n in zip(flow, "uvw")]
    if len({c.shape for c in comps}) != 1:
        raise invalid(f"flow: u, v, w must have one shape, got {[c.shape for c in comps]} "
                      "(z, y, x)")
    field = ffi.new("pv_flow_field *")
    field.u, field.v, field.w = (A.volume_struct(c)[0] for c in comps)
    status = lib.pv_flow_write_nifti(_path(path), field)
    if status:
        raise_status(status)


def read_flo(path: PathLike) -> Flow:
    """Read a Middlebury .flo file: Flow(u, v, w), each float32 (rows,
    columns), w zero.  Unknown vectors (components above 1e9 in magnitude,
    as in Middlebury's ground truth) are kept as stored."""
    field = ffi.new("pv_flow_field *")
    status = lib.pv_flow_read_flo(_path(path), field)
    if status:
        raise_status(status)
    try:
        u, v, w = (_plane_copy(part) for part in (field.u, field.v, field.w))
    finally:
        lib.pv_flow_field_free(field)
    return Flow(u, v, w)


def _plane_copy(volume: Any) -> np.ndarray:
    """The first z-slice of a C volume as a fresh (rows, columns) array."""
    rows = np.frombuffer(ffi.buffer(volume.data, volume.ny * volume.stride_y * 4), np.float32)
    return rows.reshape(volume.ny, volume.stride_y)[:, :volume.nx].copy()


def write_flo(path: PathLike, flow: Union[Flow, Tuple[Any, ...]]) -> None:
    """Write the u and v of a 2D flow as a Middlebury .flo file.

    flow: a Flow (as Context.flow2d returns it) or a (u, v) or (u, v, w)
    tuple of float32 (rows, columns) arrays of one shape (one-slice volumes
    (1, rows, columns) are taken too); w is not stored and must be zero."""
    parts = tuple(flow)
    if len(parts) not in (2, 3):
        raise invalid(f"flow: expected (u, v) or (u, v, w), got {len(parts)} arrays")
    comps = [A.volume_array(_one_slice(c, n), n) for c, n in zip(parts[:2], "uv")]
    if comps[0].shape != comps[1].shape:
        raise invalid(f"flow: u {comps[0].shape[1:]} and v {comps[1].shape[1:]} differ in "
                      "shape (rows, columns)")
    if comps[0].shape[0] != 1:
        raise invalid(f"flow: .flo holds a 2D flow, got volumes of {comps[0].shape[0]} slices")
    if len(parts) == 3 and np.any(A.plain(parts[2], "w") != 0):
        raise invalid("flow: w is not zero; .flo holds u and v only")
    field = ffi.new("pv_flow_field *")
    field.u, field.v = (A.volume_struct(c)[0] for c in comps)
    status = lib.pv_flow_write_flo(_path(path), field)
    if status:
        raise_status(status)


def _one_slice(component: Any, name: str) -> np.ndarray:
    a = A.plain(component, name)
    if a.ndim == 2:
        return a[np.newaxis]
    if a.ndim == 3:
        return a
    raise invalid(f"flow: {name} must be 2D (rows, columns), got {a.ndim} dimensions")


def disparity_error(disparity: Any, ground_truth: Any, gt_scale: float = 1.0,
                    threshold: float = 1.0, border: int = 0) -> float:
    """Middlebury error: the share (0..1) of pixels with known ground truth
    (gt / gt_scale > 0) whose disparity differs by more than threshold,
    leaving border pixels out on each side.  inf disparities count as bad."""
    da, ds = A.image_in(disparity, "disparity")
    ga, gs = A.image_in(ground_truth, "ground_truth")
    A.same_shape(da, ga, ("disparity", "ground_truth"))
    if da.dtype != np.float32:
        da, ds = A.image_in(da.astype(np.float32), "disparity")
    bad = ffi.new("double *")
    status = lib.pv_disparity_error(ds, gs, c_float(gt_scale, "gt_scale"),
                                    c_float(threshold, "threshold"), c_int(border, "border"), bad)
    if status:
        raise_status(status)
    return float(bad[0])


def synthesize_oct(shape: Tuple[int, int, int] = (40, 48, 64), seed: int = 1, *,
                   noise: float = 0.05, drift: Tuple[float, float, float] = (4.0, 2.0, 1.5),
                   tremor: float = 0.4, saccades: int = 2, saccade_size: float = 6.0,
                   start: Tuple[float, float, float] = (0.0, 0.0, 0.0),
                   integer_shifts: bool = False) -> SyntheticOct:
    """An AO-OCT-like reference and target with a known eye-motion trace.

    shape: (B-scans, A-lines, depth).  drift, start: (dx, dy, dz) in voxels
    (thesis axes, as OctregResult.shifts).  Returns SyntheticOct(reference,
    target, shifts, valid).  It runs OpenMP threads: a fork child of a
    process that used parvis cannot call it (ForkedError)."""
    if len(shape) != 3:
        raise invalid(f"shape: expected (B-scans, A-lines, depth), got {shape}")
    sizes = tuple(c_int(n, f"shape[{axis}]", 1) for axis, n in enumerate(shape))
    params = ffi.new("pv_octreg_synth_params *")
    lib.pv_octreg_synth_params_default(params)
    params.size = [sizes[2], sizes[1], sizes[0]]
    params.seed = c_seed(seed, "seed", 32)
    params.noise = c_float(noise, "noise")
    params.drift = [c_float(v, "drift") for v in drift]
    params.tremor = c_float(tremor, "tremor")
    params.saccades = c_int(saccades, "saccades")
    params.saccade_size = c_float(saccade_size, "saccade_size")
    params.start = [c_float(v, "start") for v in start]
    params.integer_shifts = int(bool(integer_shifts))
    _check_synthetic_size(sizes)
    check_can_start("synthesize_oct")
    reference = np.empty(sizes, np.float32)
    target = np.empty(sizes, np.float32)
    trace = ffi.new("pv_octreg_shift[]", sizes[0])
    status = lib.pv_octreg_synthesize(params, A.volume_struct(reference),
                                      A.volume_struct(target), trace)
    if status:
        raise_status(status)
    from ._octreg import _octreg_arrays
    shifts, _, valid = _octreg_arrays(trace, sizes[0])
    return SyntheticOct(reference, target, shifts, valid)


def _check_synthetic_size(sizes: Tuple[int, ...]) -> None:
    """Refuse a synthetic volume too large for one C allocation before the
    two numpy arrays are made (each side already fits a C int)."""
    voxels = sizes[0] * sizes[1] * sizes[2]
    if voxels > 2**31 - 1:
        raise invalid(f"shape: {sizes} holds {voxels} voxels; synthesize_oct makes at "
                      "most 2**31 - 1")
