"""Build the parvis._native extension with cffi in API mode.

The declarations (cffi's ``cdef``) are not written here: build_cdef.py
produces them at build time from the very headers the extension compiles
against, the installed ones (pkg-config's includedir) in ``system`` mode
and the staged copy of the source tree's ``include/`` (with the generated
``version.h``) in ``bundled`` mode.  A change to a public header therefore
reaches Python with no edit to this file; the extension is still compiled
against the headers (``#include <parvis.h>``), so a declaration that does
not match the library is a build error, not a crash.  Where the library
comes from is chosen by the environment variable PARVIS_PYTHON_LIBRARY:

* ``system``: an installed libparvis, found through ``pkg-config parvis``
  (set PKG_CONFIG_PATH for a non-standard prefix); its directory is
  recorded as the extension's run path.
* ``bundled``: the C library is built from the source tree (build_clib.py)
  and shipped inside the package as ``parvis/_lib/libparvis.so.N``; the
  extension's run path is ``$ORIGIN/_lib``, so nothing needs installing
  and no LD_LIBRARY_PATH is needed.
* ``auto`` (the default): ``system`` when pkg-config finds parvis, else
  ``bundled``.
"""
from __future__ import annotations

import os
import pathlib
import shlex
import subprocess
import sys

from cffi import FFI

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_cdef  # noqa: E402
import build_clib  # noqa: E402

#: Chooses the library the extension links: "auto", "system" or "bundled".
MODE_ENV = "PARVIS_PYTHON_LIBRARY"
#: The folder holding setup.py (and, in an sdist, _csource/).
PACKAGE_ROOT = pathlib.Path(__file__).resolve().parent
#: Where the bundled build copies, builds and stages the C library.
CLIB_WORK = PACKAGE_ROOT / "build" / "parvis-clib"
#: The package's folder for the bundled shared library (the run path's target).
BUNDLED_LIB_DIR = "_lib"


def pkg_config(*args: str) -> list[str]:
    """Run pkg-config for the installed parvis library and split its output."""
    try:
        out = subprocess.run(["pkg-config", *args, "parvis"], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        raise SystemExit(
            "parvis: pkg-config could not find the installed C library "
            f"({err}). Run 'make install' first and point PKG_CONFIG_PATH at "
            "<prefix>/lib/pkgconfig, or unset PARVIS_PYTHON_LIBRARY to build "
            "the library into the package.") from err
    return shlex.split(out)


def _system_library_found() -> bool:
    try:
        return subprocess.run(["pkg-config", "--exists", "parvis"]).returncode == 0
    except OSError:
        return False


def library_mode() -> str:
    """"system" or "bundled", from PARVIS_PYTHON_LIBRARY (see the module doc)."""
    wanted = os.environ.get(MODE_ENV, "auto").strip().lower() or "auto"
    if wanted not in ("auto", "system", "bundled"):
        raise SystemExit(f"parvis: {MODE_ENV}={wanted!r}: use auto, system or bundled")
    if wanted == "auto":
        return "system" if _system_library_found() else "bundled"
    return wanted


def library_version() -> str:
    """The C library's version, which is also the package's."""
    if library_mode() == "system":
        return pkg_config("--modversion")[0]
    return build_clib.source_version(build_clib.find_c_source(PACKAGE_ROOT))


def _system_link_options() -> dict:
    include_dirs = [f[2:] for f in pkg_config("--cflags-only-I")]
    library_dirs = [f[2:] for f in pkg_config("--libs-only-L")]
    libraries = [f[2:] for f in pkg_config("--libs-only-l")]
    libdir = pkg_config("--variable=libdir")
    rpath = [f"-Wl,-rpath,{d}" for d in (libdir + library_dirs) if d]
    return dict(include_dirs=include_dirs, library_dirs=library_dirs, libraries=libraries,
                extra_link_args=list(dict.fromkeys(rpath)))


def _bundled_link_options() -> dict:
    # The staging prefix is filled by setup.py's build_ext before the
    # extension compiles; only its paths are needed here.
    stage = CLIB_WORK / "stage"
    return dict(include_dirs=[str(stage / "include")], library_dirs=[str(stage / "lib")],
                libraries=["parvis"],
                extra_link_args=[f"-Wl,-rpath,$ORIGIN/{BUNDLED_LIB_DIR}"])


#: The Python functions C calls back (cffi's ``extern "Python"``, defined
#: with ``@ffi.def_extern()``): the package's own, so not in any header.
#: Each must have the signature of the C callback type it stands for
#: (pv_progress_fn in parvis/progress.h), which the compiler then checks
#: where the package passes it.
PYTHON_CALLBACKS = """
extern "Python" int _parvis_progress(void *user, const char *op, double done, double total);
"""


def header_dirs() -> list[pathlib.Path]:
    """The include directories whose parvis.h the declarations come from."""
    if library_mode() == "system":
        dirs = pkg_config("--variable=includedir") + \
            [f[2:] for f in pkg_config("--cflags-only-I")]
        return [pathlib.Path(d) for d in dict.fromkeys(dirs) if d]
    return [CLIB_WORK / "stage" / "include"]


def declare_from_headers(builder: FFI) -> None:
    """Give builder the declarations generated from header_dirs()' headers.

    In bundled mode the staged headers exist only once the C library is
    built: setup.py's build_ext calls this from its pre_run hook, after
    building it; in system mode make_builder calls it at once.
    """
    try:
        dirs = header_dirs()
        builder.cdef(build_cdef.generate_cdef(dirs) + build_cdef.generate_interop_cdef(dirs) +
                     PYTHON_CALLBACKS)
    except build_cdef.CdefError as err:
        raise SystemExit(f"parvis: generating the cffi declarations: {err}") from err


def make_builder() -> FFI:
    system = library_mode() == "system"
    options = _system_link_options() if system else _bundled_link_options()
    builder = FFI()
    if system:
        declare_from_headers(builder)
    builder.set_source(
        "parvis._native",
        "#include <parvis.h>\n"
        "#if defined(__has_include)\n"
        "#if __has_include(<parvis/interop.h>)\n"
        "#include <parvis/interop.h> /* the OpenCL builds' device-buffer calls */\n"
        "#endif\n"
        "#endif\n",
        extra_compile_args=["-std=c11"] if os.name == "posix" else [],
        **options,
    )
    return builder


ffibuilder = make_builder()

if __name__ == "__main__":
    if library_mode() == "bundled":
        build_clib.build_c_library(build_clib.find_c_source(PACKAGE_ROOT), CLIB_WORK)
        declare_from_headers(ffibuilder)
    ffibuilder.compile(verbose=True)
