"""Inputs of :mod:`parvis.dask` batches: numpy arrays, dask arrays or files.

On the client, :func:`split_items` turns what the caller gave into one
entry per item and :func:`stage` into what a task carries:

- a numpy array travels inside its task, so the scheduler can run the task
  again on another worker when the first one is lost;
- a dask array is computed on the cluster (``client.compute``) and its
  future passed on, so its data never has to visit the client;
- a file path travels as a string and is read by the worker (the workers
  must see the same file system).

On the worker, :func:`load` reads a path: PGM/PPM/PNG/PFM images through
``parvis.imread``, NIfTI-1 volumes through ``parvis.read_volume`` (uint16
files kept as uint16), raw
little-endian float32 volumes (``.raw``, ``.f32``, ``.bin``) with a shape
given by the caller, and ``.npy`` arrays.  A file that cannot be read
raises :class:`InputError` naming it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple, Union, cast

import numpy as np

import parvis

_da: Any
try:  # dask.array is optional: without it only numpy arrays and files are taken
    import dask.array as _da
except ImportError:  # pragma: no cover - dask[array] comes with the extra
    _da = None

#: One input as the caller may give it.
Source = Union[np.ndarray, "os.PathLike[str]", str, Any]
#: A volume shape (z, y, x) for raw files.
Shape3 = Tuple[int, int, int]

IMAGE_SUFFIXES = (".pgm", ".ppm", ".pnm", ".png", ".pfm")
NIFTI_SUFFIXES = (".nii", ".nii.gz", ".hdr", ".img")
RAW_SUFFIXES = (".raw", ".f32", ".bin")


class InputError(Exception):
    """An input file could not be read (missing, malformed, wrong size)."""


def is_path(item: Any) -> bool:
    return isinstance(item, (str, os.PathLike))


def is_dask_array(item: Any) -> bool:
    return _da is not None and isinstance(item, _da.Array)


def split_items(items: Any, item_ndim: int, what: str) -> List[Source]:
    """One entry per item: a list as given, or the slices of a stacked
    numpy / dask array along its first axis."""
    if isinstance(items, np.ndarray) or is_dask_array(items):
        if items.ndim != item_ndim + 1:
            raise ValueError(f"{what}: a stacked array must have {item_ndim + 1} dimensions "
                             f"(count first), not {items.ndim}")
        return [items[i] for i in range(items.shape[0])]
    if isinstance(items, (str, os.PathLike)):
        raise TypeError(f"{what}: give a list of paths, not one path")
    return list(items)


def label(item: Source, index: int) -> str:
    """How failures and progress name an item."""
    return os.fspath(item) if isinstance(item, (str, os.PathLike)) else f"#{index}"


def stage(client: Any, item: Source) -> Any:
    """What a task carries for one input (see the module's notes)."""
    if isinstance(item, (str, os.PathLike)):
        return os.fspath(item)
    if is_dask_array(item):
        return client.compute(item)
    return np.asarray(item)


def load(payload: Any, volume_shape: Optional[Shape3] = None) -> np.ndarray:
    """The array of one staged input, read from its file when it is a path."""
    if not isinstance(payload, str):
        return np.asarray(payload)
    try:
        return _read_file(payload, volume_shape)
    except InputError:
        raise
    except Exception as error:
        # Not chained: the library's exception need not survive pickling on
        # its way to the client; its text is all the client needs.
        raise InputError(f"{payload}: {error}") from None


def _read_file(path: str, volume_shape: Optional[Shape3]) -> np.ndarray:
    lower = path.lower()
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file")
    if lower.endswith(".pfm"):
        return parvis.imread(path, dtype=np.float32)
    if lower.endswith(IMAGE_SUFFIXES):
        return parvis.imread(path)
    if lower.endswith(NIFTI_SUFFIXES):
        # uint16 files stay 16-bit: the volume operations take them as they
        # are, the others convert them as any dtype (docs/volumes.md).
        return parvis.read_volume(path, keep_u16=True)
    if lower.endswith(RAW_SUFFIXES):
        if volume_shape is None:
            raise InputError(f"{path}: a raw volume needs volume_shape=(z, y, x)")
        nz, ny, nx = (int(v) for v in volume_shape)
        return parvis.read_volume(path, shape=(nz, ny, nx))
    if lower.endswith(".npy"):
        return np.load(path, allow_pickle=False)
    raise InputError(f"{path}: unknown file type (images: {', '.join(IMAGE_SUFFIXES)}; "
                     f"volumes: {', '.join(NIFTI_SUFFIXES + RAW_SUFFIXES)}; or .npy)")


def materialise(item: Source, volume_shape: Optional[Shape3] = None) -> np.ndarray:
    """An input as a numpy array on the client (a reference volume or image)."""
    if isinstance(item, (str, os.PathLike)):
        return load(os.fspath(item), volume_shape)
    if is_dask_array(item):
        return np.asarray(cast(Any, item).compute())
    return np.asarray(item)


def content_key(kind: str, array: np.ndarray, params: Any) -> str:
    """A key naming a plan by what it is built from: operation, array
    contents, dtype, shape and parameters.  Equal keys, equal plans."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(kind.encode())
    digest.update(json.dumps(params, sort_keys=True, default=str).encode())
    data = np.ascontiguousarray(array)
    digest.update(f"{data.dtype.str}{data.shape}".encode())
    digest.update(data.data)  # the buffer itself: no copy of a large reference
    return f"{kind}-{digest.hexdigest()}"


def stems(sources: Sequence[Source], kind: str) -> List[str]:
    """Output base names: each file's name without its extension, or
    ``KIND-000012`` for an array item."""
    from ._outputs import input_stem
    return [input_stem(item) if isinstance(item, (str, os.PathLike)) else f"{kind}-{i:06d}"
            for i, item in enumerate(sources)]


def check_unique(names: Sequence[str], what: str) -> None:
    seen: dict = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    twice = sorted(name for name, count in seen.items() if count > 1)
    if twice:
        raise ValueError(f"{what}: several inputs would write the same output "
                         f"({', '.join(twice[:5])}); give inputs with distinct file names")


def output_paths(output_dir: Optional[Union[str, os.PathLike]], names: Sequence[str],
                 suffix: str) -> List[Optional[str]]:
    if output_dir is None:
        return [None] * len(names)
    directory = Path(output_dir)
    return [str(directory / (name + suffix)) for name in names]
