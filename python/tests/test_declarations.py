"""The cffi declarations, generated from the headers at build time
(python/build_cdef.py), cover the whole public C API: every function the
headers mark PV_API, and the constants the package uses, are reachable
through parvis._native.lib."""
from __future__ import annotations

import pathlib
import re
from typing import Dict, List

import pytest

from parvis._native import ffi, lib

from conftest import REPO

#: PV_API functions deliberately not exposed to Python, with the reason.
#: Empty: every public function is declared.
EXCLUDED: Dict[str, str] = {}

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_API_NAME = re.compile(r"\bPV_API\b([^;{]*?)\b([A-Za-z_]\w*)\s*\(", re.S)


def _header_root() -> pathlib.Path:
    """The headers of the tree the tests come from (a checkout or an sdist)."""
    for candidate in (REPO / "include", REPO / "python" / "_csource" / "include"):
        if (candidate / "parvis.h").is_file():
            return candidate
    pytest.skip("no C headers next to the tests (an installed copy of the tests alone)")


def public_functions(root: pathlib.Path) -> List[str]:
    """The names of the functions the headers under root mark PV_API."""
    names: List[str] = []
    for header in sorted(root.rglob("*.h")):
        text = _COMMENT.sub(" ", header.read_text())
        text = re.sub(r"^\s*#.*$", " ", text, flags=re.M)  # PV_API's own #define
        names += [m.group(2) for m in _API_NAME.finditer(text)]
    return names


def test_the_header_scan_finds_the_api() -> None:
    names = public_functions(_header_root())
    # A floor well under today's count (144), so that a scan that
    # silently matched nothing cannot pass the coverage test below.
    assert len(names) > 100
    assert len(set(names)) == len(names), "a function declared twice"
    for known in ("pv_context_create", "pv_stereo_sgm", "pv_sift_detect", "pv_flow3d",
                  "pv_octreg_register", "pv_tune", "pv_find_homography"):
        assert known in names


def test_every_pv_api_function_is_declared() -> None:
    names = public_functions(_header_root())
    missing = [n for n in names if n not in EXCLUDED and not hasattr(lib, n)]
    assert missing == []
    stale = [n for n in EXCLUDED if n not in names]
    assert stale == [], "exclusions for functions the headers no longer declare"


def test_declared_functions_are_callable() -> None:
    # The declarations are compiled against the headers: types are real.
    assert ffi.string(lib.pv_version()).decode() != ""
    assert ffi.string(lib.pv_status_string(lib.PV_ERR_INVALID)).decode() != ""
    assert lib.pv_backend_name(lib.PV_BACKEND_CPU) != ffi.NULL


def test_constants_come_from_the_headers() -> None:
    header = (_header_root() / "parvis" / "features.h").read_text()
    size = re.search(r"#define\s+PV_SIFT_DESCRIPTOR_SIZE\s+(\d+)", header)
    assert size is not None and lib.PV_SIFT_DESCRIPTOR_SIZE == int(size.group(1))
    # Floating-point and string macros are declared as constants, not dropped.
    assert lib.PV_FLOW_TOLERANCE == pytest.approx(1e-3)
    assert ffi.string(lib.PV_VERSION_STRING).decode() == ffi.string(lib.pv_version()).decode()
    assert lib.PV_RANSAC_MAX_ITERATIONS == 1 << 20
    assert lib.PV_DEVICE_GROUP_WHOLE == -1
