"""python/build_cdef.py on a small header of its own: what the library's
headers do not use today (inline functions, macros of every shape,
_Static_assert) is turned into declarations cffi accepts, and they compile
and work in API mode."""
from __future__ import annotations

import importlib
import pathlib
import re
import sys
from typing import Any

import pytest

from conftest import REPO

_HEADER = r"""
#ifndef DEMO_H
#define DEMO_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#define PV_API __attribute__((visibility("default")))
#define DEMO_INT (1 << 4)
#define DEMO_HEX 0x10u
#define DEMO_SUM (DEMO_INT + 2)
#define DEMO_FLOAT 0.25f
#define DEMO_EXP 1e-3
#define DEMO_MIXED (DEMO_INT * 0.5)
#define DEMO_STRING "demo"
#define DEMO_TYPE unsigned int
#define DEMO_TWICE(x) ((x) * 2)
typedef struct demo_pair { int32_t a; float b; size_t n; } demo_pair;
PV_API int demo_add(int a, int b) __attribute__((warn_unused_result));
PV_API int demo_print(FILE *stream);
static inline int demo_twice(int x)
{
    if (x > 0) { return DEMO_TWICE(x); }
    return 0;
}
_Static_assert(sizeof(int) >= 4, "int is 32 bits");
#endif
"""

_SOURCE = r"""
#include <parvis.h>
int demo_add(int a, int b) { return a + b; }
int demo_print(FILE *stream) { return stream != NULL; }
"""


def _build_cdef() -> Any:
    here = REPO / "python"
    if not (here / "build_cdef.py").is_file():
        pytest.skip("build_cdef.py is not next to the tests")
    sys.path.insert(0, str(here))
    try:
        return importlib.import_module("build_cdef")
    finally:
        sys.path.remove(str(here))


@pytest.fixture()
def include_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    folder = tmp_path / "include"
    (folder / "parvis").mkdir(parents=True)
    (folder / "parvis.h").write_text('#include "parvis/demo.h"\n')
    (folder / "parvis" / "demo.h").write_text(_HEADER)
    return folder


def test_generated_text(include_dir: pathlib.Path) -> None:
    text = _build_cdef().generate_cdef([include_dir])
    assert "#define DEMO_INT ..." in text and "#define DEMO_SUM ..." in text
    assert "static const double DEMO_FLOAT;" in text
    assert "static const double DEMO_MIXED;" in text
    assert "static const char *const DEMO_STRING;" in text
    assert "/* macros left out: DEMO_TYPE, DEMO_TWICE */" in text
    assert "DEMO_TYPE" not in text.split("*/", 1)[1]
    assert "DEMO_TWICE" not in text.split("*/", 1)[1]
    assert "int demo_twice(int x);" in " ".join(text.split())
    for gone in ("__attribute__", "_Static_assert", "visibility", "{ return"):
        assert gone not in text
    assert re.search(r"\bDEMO_H\b", text) is None  # the include guard
    # The system headers' own declarations stay out (cffi knows their types).
    assert "typedef" in text and "__uint32_t" not in text and "_IO_FILE" not in text


def test_generated_declarations_compile_and_work(include_dir: pathlib.Path,
                                                  tmp_path: pathlib.Path) -> None:
    cffi = pytest.importorskip("cffi")
    builder = cffi.FFI()
    builder.cdef(_build_cdef().generate_cdef([include_dir]))
    builder.set_source("_parvis_cdef_demo", _SOURCE, include_dirs=[str(include_dir)])
    builder.compile(tmpdir=str(tmp_path / "out"))
    sys.path.insert(0, str(tmp_path / "out"))
    try:
        module = importlib.import_module("_parvis_cdef_demo")
    finally:
        sys.path.remove(str(tmp_path / "out"))
    lib, ffi = module.lib, module.ffi
    assert lib.demo_add(2, 3) == 5
    assert lib.demo_twice(21) == 42 and lib.demo_twice(-1) == 0
    assert (lib.DEMO_INT, lib.DEMO_HEX, lib.DEMO_SUM) == (16, 16, 18)
    assert lib.DEMO_FLOAT == 0.25 and lib.DEMO_MIXED == 8.0
    assert lib.DEMO_EXP == pytest.approx(1e-3)
    assert ffi.string(lib.DEMO_STRING) == b"demo"
    assert ffi.sizeof("demo_pair") >= 12


def test_a_broken_header_is_reported(include_dir: pathlib.Path) -> None:
    build_cdef = _build_cdef()
    (include_dir / "parvis" / "demo.h").write_text('#include "parvis/missing.h"\n')
    with pytest.raises(build_cdef.CdefError, match="missing.h"):
        build_cdef.generate_cdef([include_dir])
