"""Build script: the package's metadata lives in pyproject.toml; this file
adds the cffi extension, builds the C library into the package when no
installed one is used (PARVIS_PYTHON_LIBRARY, see build_ffi.py), and puts
the C sources into the sdist so that it builds the same way."""
import os
import pathlib
import shutil
import sys
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_clib  # noqa: E402
import build_ffi  # noqa: E402


class BuildExtWithLibrary(build_ext):
    """build_ext that first builds and stages libparvis in bundled mode,
    and afterwards copies the shared library next to the extension."""

    _library_built = False

    def _build_library(self) -> None:
        if not self._library_built:
            source = build_clib.find_c_source(build_ffi.PACKAGE_ROOT)
            build_clib.build_c_library(source, build_ffi.CLIB_WORK)
            self._library_built = True

    def pre_run(self, ext: Any, ffi: Any) -> None:
        """cffi's hook, called before it writes the extension's C source: in
        bundled mode the declarations come from the staged headers, which
        exist once the library is built (build_ffi.declare_from_headers)."""
        if build_ffi.library_mode() == "bundled":
            self._build_library()
            build_ffi.declare_from_headers(ffi)

    def run(self) -> None:
        bundled = build_ffi.library_mode() == "bundled"
        # The extension's sources do not change between modes, but its link
        # does: always relink (one small file), and never let a bundled
        # library left in build/ by an earlier bundled build into a wheel
        # that links an installed one.
        self.force = True
        shipped = pathlib.Path(self.build_lib) / "parvis" / build_ffi.BUNDLED_LIB_DIR
        shutil.rmtree(shipped, ignore_errors=True)
        if bundled:
            self._build_library()
        super().run()
        if bundled:
            self._ship_library(build_ffi.CLIB_WORK / "stage" / "lib")

    def _ship_library(self, libdir: pathlib.Path) -> None:
        library = build_clib.shared_library_soname_file(libdir)
        roots = [pathlib.Path(self.build_lib)]
        if self.inplace:
            roots.append(build_ffi.PACKAGE_ROOT)
        for root in roots:
            dest = root / "parvis" / build_ffi.BUNDLED_LIB_DIR
            dest.mkdir(parents=True, exist_ok=True)
            # Copy the file the soname symlink points at, under the soname.
            shutil.copyfile(library.resolve(), dest / library.name)
            build_clib.log(f"bundled {library.name} into {dest}")


class SdistWithCSource(sdist):
    """sdist that carries the C source tree (with a generated configure)
    in _csource/, where build_clib.find_c_source looks first."""

    def make_release_tree(self, base_dir: str, files: list) -> None:
        super().make_release_tree(base_dir, files)
        source = build_clib.find_c_source(build_ffi.PACKAGE_ROOT)
        dest = pathlib.Path(base_dir) / build_clib.SOURCE_IN_SDIST
        build_clib.log(f"copying the C sources from {source} into the sdist")
        build_clib.copy_c_source(source, dest)
        build_clib.ensure_configure_script(dest)


setup(version=build_ffi.library_version(), cffi_modules=["build_ffi.py:ffibuilder"],
      cmdclass={"build_ext": BuildExtWithLibrary, "sdist": SdistWithCSource})
