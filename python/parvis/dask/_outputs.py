"""Result files of :mod:`parvis.dask`: written atomically, checked on re-run.

Every output is first written under a temporary name in its final
directory, flushed to the disk (fsync), then renamed over the final name
(an atomic step on POSIX file systems) and the directory entry flushed too.
A job killed at any moment therefore leaves either the complete file or no
file under the final name, at worst a stray temporary file (a hidden
``.NAME.part-*``) that :func:`remove_stale_parts` deletes.  A task that
runs twice (a worker lost after finishing it) writes the same bytes twice;
the rename makes that harmless.

Formats, one file per input:

- OCT registration: CSV ``bscan,dx,dy,dz,peak,valid`` (the columns of
  ``parvis octreg``), after a ``# stripes=.. good_stripes=..`` line and
  closed by a ``# end`` line, so a truncated copy is recognisable; numbers
  are written to full double precision;
- stereo: PFM disparity map (``Pf``, little-endian, rows bottom to top);
- 3D flow: ``.npz`` with arrays ``u``, ``v``, ``w``;
- SIFT: ``.npz`` with ``keypoints`` (N x 4 float32) and ``descriptors``
  (N x 128 uint8);
- phase correlation: JSON ``{"shift": [...], "peak": p, "flags": f}``.

:func:`read_result` loads any of them back into the type the batch call
returns in memory (an OCT result without its ``registered`` volume).
"""

from __future__ import annotations

import io
import json
import os
import secrets
import zipfile
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Mapping, NamedTuple, Sequence, Tuple

import numpy as np

import parvis

PART_MARK = ".part-"


def atomic_write(path: os.PathLike | str, payload: bytes) -> None:
    """Write ``payload`` to ``path`` so that ``path`` is never partial."""
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    temp = final.with_name(f".{final.name}{PART_MARK}{os.getpid()}-{secrets.token_hex(4)}")
    try:
        with open(temp, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, final)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
    _fsync_directory(final.parent)


def _fsync_directory(directory: Path) -> None:
    # The rename is durable only once the directory entry reaches the disk.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse fsync on directories
        pass
    finally:
        os.close(fd)


def remove_stale_parts(paths: Iterable[os.PathLike | str]) -> int:
    """Delete the temporary files left by killed writers of ``paths``.

    Call only when no writer of these outputs is running (before a batch is
    submitted, or after it is finished).  Returns how many were removed.
    """
    removed = 0
    by_directory: Dict[Path, set] = {}
    for path in paths:
        final = Path(path)
        by_directory.setdefault(final.parent, set()).add(final.name)
    for directory, names in by_directory.items():
        if not directory.is_dir():
            continue
        for entry in directory.iterdir():
            name = entry.name
            if not name.startswith(".") or PART_MARK not in name:
                continue
            if name[1:name.rindex(PART_MARK)] in names:
                try:
                    entry.unlink()
                    removed += 1
                except FileNotFoundError:
                    pass
    return removed


# ------------------------------------------------------------- encoders
#: Summary fields of an OCT registration (OctregResult.info), kept in the CSV.
OCTREG_INFO = ("stripes", "good_stripes", "valid_bscans", "subvolumes")
OCTREG_HEADER = "bscan,dx,dy,dz,peak,valid"


def _encode_octreg(result: parvis.OctregResult) -> bytes:
    # repr() of a float reads back to the same double, so a file loads back
    # to exactly the registration's numbers.
    info = " ".join(f"{name}={int(result.info.get(name, 0))}" for name in OCTREG_INFO)
    lines = [f"# {info}", OCTREG_HEADER]
    for k in range(len(result.peak)):
        dx, dy, dz = (repr(float(v)) for v in result.shifts[k])
        lines.append(f"{k},{dx},{dy},{dz},{float(result.peak[k])!r},{int(result.valid[k])}")
    lines.append("# end")
    return ("\n".join(lines) + "\n").encode()


def _decode_octreg(path: Path) -> parvis.OctregResult:
    lines = path.read_text().splitlines()
    info = {name: int(value) for name, value in
            (field.split("=") for field in lines[0][2:].split())}
    rows = [line.split(",") for line in lines[2:-1]]
    shifts = np.array([[float(v) for v in row[1:4]] for row in rows],
                      dtype=np.float64).reshape(len(rows), 3)
    peak = np.array([float(row[4]) for row in rows], dtype=np.float64)
    valid = np.array([row[5] == "1" for row in rows], dtype=bool)
    return parvis.OctregResult(shifts, peak, valid, info, None)


def _complete_octreg(path: Path) -> bool:
    lines = path.read_text().splitlines()
    if len(lines) < 3 or not lines[0].startswith("# ") or lines[1] != OCTREG_HEADER:
        return False
    if lines[-1] != "# end":
        return False
    return all(len(line.split(",")) == 6 for line in lines[2:-1])


def _encode_pfm(image: np.ndarray) -> bytes:
    data = np.asarray(image, dtype="<f4")
    if data.ndim != 2:
        raise ValueError("a PFM holds a 2D image")
    header = f"Pf\n{data.shape[1]} {data.shape[0]}\n-1.0\n".encode()
    return header + np.ascontiguousarray(data[::-1]).tobytes()


def _pfm_layout(head: bytes) -> Tuple[int, int, int, str]:
    """(width, height, header bytes, dtype) of a greyscale PFM's header."""
    parts = head.split(b"\n", 3)
    if len(parts) < 4 or parts[0] != b"Pf":
        raise ValueError("not a greyscale PFM")
    width, height = (int(v) for v in parts[1].split())
    scale = float(parts[2])
    header = len(parts[0]) + len(parts[1]) + len(parts[2]) + 3
    return width, height, header, "<f4" if scale < 0 else ">f4"


def _decode_pfm(path: Path) -> np.ndarray:
    raw = path.read_bytes()
    width, height, header, dtype = _pfm_layout(raw[:64])
    rows = np.frombuffer(raw, dtype=dtype, count=width * height, offset=header)
    return rows.reshape(height, width)[::-1].astype(np.float32)


def _complete_pfm(path: Path) -> bool:
    with open(path, "rb") as handle:
        width, height, header, _ = _pfm_layout(handle.read(64))
    return path.stat().st_size == header + 4 * width * height


def _encode_npz(arrays: Mapping[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **{name: np.asarray(value) for name, value in arrays.items()})
    return buffer.getvalue()


def _decode_npz(path: Path) -> Dict[str, np.ndarray]:
    with np.load(path) as archive:
        return {key: archive[key] for key in archive.files}


def _npz_check(keys: Sequence[str]) -> Callable[[Path], bool]:
    def complete(path: Path) -> bool:
        try:
            arrays = _decode_npz(path)  # reads every member: checks each CRC
        except (OSError, ValueError, zipfile.BadZipFile, EOFError):
            return False
        return all(key in arrays for key in keys)
    return complete


def _encode_phase(result: parvis.PhaseCorrelation) -> bytes:
    value = {"shift": [float(v) for v in result.shift], "peak": float(result.peak),
             "flags": int(result.flags)}
    return (json.dumps(value, sort_keys=True) + "\n").encode()


def _decode_phase(path: Path) -> parvis.PhaseCorrelation:
    value = json.loads(path.read_text())
    return parvis.PhaseCorrelation(np.array(value["shift"], dtype=np.float64),
                                   float(value["peak"]), int(value["flags"]))


def _complete_phase(path: Path) -> bool:
    try:
        value = json.loads(path.read_text())
    except ValueError:
        return False
    return isinstance(value, dict) and {"shift", "peak", "flags"} <= set(value)


class Format(NamedTuple):
    """How one operation's result is stored: file suffix, encoder, check
    that a file is whole, and decoder back to the in-memory result."""
    suffix: str
    encode: Callable[[Any], bytes]
    complete: Callable[[Path], bool]
    decode: Callable[[Path], Any]


FORMATS: Dict[str, Format] = {
    "octreg": Format(".octreg.csv", _encode_octreg, _complete_octreg, _decode_octreg),
    "stereo": Format(".disp.pfm", _encode_pfm, _complete_pfm, _decode_pfm),
    "flow3d": Format(".flow.npz", lambda flow: _encode_npz(flow._asdict()), _npz_check("uvw"),
                     lambda path: parvis.Flow(**_decode_npz(path))),
    "sift": Format(".sift.npz", lambda feats: _encode_npz(feats._asdict()),
                   _npz_check(("keypoints", "descriptors")),
                   lambda path: parvis.SiftFeatures(**_decode_npz(path))),
    "phase_correlate": Format(".shift.json", _encode_phase, _complete_phase, _decode_phase),
}


def is_complete(kind: str, path: os.PathLike | str) -> bool:
    """True when ``path`` holds a whole output of ``kind``."""
    final = Path(path)
    if not final.is_file():
        return False
    try:
        return FORMATS[kind].complete(final)
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        return False


def write_result(kind: str, path: os.PathLike | str, result: Any) -> None:
    atomic_write(path, FORMATS[kind].encode(result))


def read_result(kind: str, path: os.PathLike | str) -> Any:
    """Load an output file back into the form the batch call returns."""
    return FORMATS[kind].decode(Path(path))


def output_suffix(kind: str) -> str:
    return FORMATS[kind].suffix


def input_stem(path: os.PathLike | str) -> str:
    """File name without its (possibly double, .nii.gz) extension."""
    name = Path(path).name
    for double in (".nii.gz", ".raw.gz"):
        if name.endswith(double):
            return name[: -len(double)]
    return Path(name).stem
