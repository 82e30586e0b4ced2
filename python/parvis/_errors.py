"""Exceptions raised by parvis, one per C status code."""
from __future__ import annotations

from typing import Dict, Optional, Type

from ._native import ffi, lib
from ._progress import take_raised

__all__ = [
    "Error", "InvalidArgument", "OutOfMemory", "FileError", "FormatError",
    "Unsupported", "OpenCLError", "BuildError", "NoDevice", "Mismatch",
    "DeviceMemoryError", "Cancelled", "ClosedError", "ForkedError",
]


class Error(Exception):
    """A parvis call failed.

    ``status`` is the C library's ``pv_status`` (negative), ``status_name`` its
    short name and ``message`` the library's explanation (the argument, file
    or OpenCL call at fault)."""

    def __init__(self, status: int, message: str) -> None:
        self.status = int(status)
        self.status_name = ffi.string(lib.pv_status_string(self.status)).decode()
        self.message = message
        super().__init__(f"{message} [{self.status_name}, status {self.status}]")


class InvalidArgument(Error, ValueError):
    """A bad argument (PV_ERR_INVALID): size, type, range, NaN, ..."""


class OutOfMemory(Error, MemoryError):
    """Host memory ran out or a size overflowed (PV_ERR_NOMEM)."""


class FileError(Error, OSError):
    """A file could not be opened, read or written (PV_ERR_IO)."""


class FormatError(Error, ValueError):
    """A file is malformed, truncated or unsupported (PV_ERR_FORMAT)."""


class Unsupported(Error):
    """The backend or this build lacks the feature (PV_ERR_UNSUPPORTED)."""


class OpenCLError(Error):
    """An OpenCL call failed (PV_ERR_OPENCL)."""


class BuildError(Error):
    """An OpenCL program failed to build (PV_ERR_BUILD)."""


class NoDevice(Error):
    """No usable device for the requested backend (PV_ERR_NO_DEVICE)."""


class Mismatch(Error):
    """Cross-check mode: the backends disagree beyond tolerance (PV_ERR_MISMATCH)."""


class DeviceMemoryError(Error):
    """A buffer exceeds what the device can hold (PV_ERR_DEVICE_MEMORY)."""


class Cancelled(Error):
    """The context's progress callable stopped the call (PV_ERR_CANCELLED).
    A Python exception raised by the callable is re-raised instead, with
    this error as its context."""


class ClosedError(Error, ValueError):
    """The context or plan was closed; it reports PV_ERR_INVALID."""


class ForkedError(Unsupported):
    """The context, group or plan was inherited through ``fork`` (or this
    process was forked from one that had used parvis): its threads did not
    survive the fork.  Start processes with multiprocessing's 'spawn' or
    'forkserver' method.  It reports PV_ERR_UNSUPPORTED."""


_BY_STATUS: Dict[int, Type[Error]] = {
    lib.PV_ERR_INVALID: InvalidArgument,
    lib.PV_ERR_NOMEM: OutOfMemory,
    lib.PV_ERR_IO: FileError,
    lib.PV_ERR_FORMAT: FormatError,
    lib.PV_ERR_UNSUPPORTED: Unsupported,
    lib.PV_ERR_OPENCL: OpenCLError,
    lib.PV_ERR_BUILD: BuildError,
    lib.PV_ERR_NO_DEVICE: NoDevice,
    lib.PV_ERR_MISMATCH: Mismatch,
    lib.PV_ERR_DEVICE_MEMORY: DeviceMemoryError,
    lib.PV_ERR_CANCELLED: Cancelled,
}


def error_for(status: int, message: str) -> Error:
    return _BY_STATUS.get(status, Error)(status, message)


def invalid(message: str) -> InvalidArgument:
    """An InvalidArgument raised by the Python layer before any C call."""
    return InvalidArgument(lib.PV_ERR_INVALID, message)


def raise_status(status: int, ctx: Optional[object] = None) -> None:
    """Raise the exception for a failed C call.  ctx is the pv_context the
    call ran on (its message), or None for the calling thread's message."""
    if ctx is not None:
        text = ffi.string(lib.pv_context_last_error(ctx)).decode(errors="replace")
        if not text:
            text = ffi.string(lib.pv_last_error()).decode(errors="replace")
    else:
        text = ffi.string(lib.pv_last_error()).decode(errors="replace")
    error = error_for(status, text or "parvis call failed")
    if status == lib.PV_ERR_CANCELLED and ctx is not None:
        raised = take_raised(ctx)
        if raised is not None:
            raise raised from error
    raise error
