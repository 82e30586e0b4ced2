"""Build script: the package's metadata lives in pyproject.toml; this file
adds the cffi extension and takes the version from the installed library."""
import os
import sys

from setuptools import setup

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from build_ffi import library_version  # noqa: E402

setup(version=library_version(), cffi_modules=["build_ffi.py:ffibuilder"])
