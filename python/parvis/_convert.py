"""Python values -> the C library's scalar and path arguments.

Every integer, number and path that the package hands to C goes through
one of these, so that a value C cannot hold raises the package's
InvalidArgument (a ValueError) naming the argument, never the builtin
OverflowError of a cffi conversion, and a path is never cut short.
"""
from __future__ import annotations

import os
from typing import Any, Union

import numpy as np

from ._errors import invalid
from ._native import ffi

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

INT_MIN, INT_MAX = -2**31, 2**31 - 1
SIZE_MAX = 2**(8 * ffi.sizeof("size_t")) - 1


def c_int(value: Any, name: str, low: int = INT_MIN, high: int = INT_MAX) -> int:
    """value as a C int in [low, high]: a Python or numpy integer (bool is
    refused, as is a float, even a whole one)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise invalid(f"{name}: expected an integer, got {value!r}")
    number = int(value)
    if not low <= number <= high:
        if (low, high) == (INT_MIN, INT_MAX):
            raise invalid(f"{name}: {number} is outside the C int range")
        raise invalid(f"{name}: {number} is outside [{low}, {high}]")
    return number


def c_size(value: Any, name: str) -> int:
    """value as a C size_t (0 .. SIZE_MAX)."""
    return c_int(value, name, 0, SIZE_MAX)


def c_seed(value: Any, name: str, bits: int) -> int:
    """An integer seed taken modulo 2**bits (any integer, negative ones
    included: a seed only needs to be reproducible)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise invalid(f"{name}: expected an integer, got {value!r}")
    return int(value) & ((1 << bits) - 1)


def c_float(value: Any, name: str) -> float:
    """value as a C float or double (any real number; NaN and infinities
    pass, the C library judges them)."""
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise invalid(f"{name}: expected a number, got {value!r}") from None


def c_path(path: PathLike, name: str = "path") -> bytes:
    """A file name as the C library takes it: str (encoded as os.fsencode
    does), bytes or os.PathLike.  An embedded NUL byte would cut the name
    short in C, so it is refused with a ValueError (InvalidArgument), as
    open() does."""
    encoded = os.fsencode(path)  # other types: TypeError, as open() raises
    if b"\0" in encoded:
        raise invalid(f"{name}: embedded null byte in {path!r}")
    return encoded
