"""``python -m parvis``: what this installation has, and a self-test.

Without arguments it prints the version, where the C library was loaded
from, the backends, the OpenCL platforms and devices, the FFT engine and
the tuning source of each device's context, the library's configuration
(every PARVIS_* variable with its value or default) and the OpenCL loader
environment variables that are set.  ``--selftest`` runs every
operation on the CPU and on each OpenCL device (see parvis._selftest) and
exits with status 1 when any check fails.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional, Tuple

from . import _icd, _native, _selftest
from ._context import Context
from ._errors import Error
from ._io import DeviceInfo, devices, version
from ._native import ffi, lib

#: Environment variables besides PARVIS_* that change what is found.
_OTHER_VARIABLES = ("OCL_ICD_VENDORS", "OCL_ICD_FILENAMES", "OPENCL_VENDOR_PATH",
                    "OMP_NUM_THREADS", "POCL_DEVICES", "LD_LIBRARY_PATH")


def _mapped_file(name: str) -> str:
    """The path of the first file this process mapped whose name starts
    with `name` (Linux's /proc/self/maps), or "" when none is."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.split(maxsplit=5)[-1].strip()
                if os.path.basename(path).startswith(name):
                    return path
    except OSError:
        pass
    return ""


def _loaded_libparvis() -> str:
    """The libparvis file loaded, and whether it is the package's own."""
    path = _mapped_file("libparvis")
    if not path:
        return "unknown"
    bundled = os.path.dirname(path).startswith(os.path.dirname(__file__))
    return f"{path} ({'bundled in the package' if bundled else 'installed'})"


def _tune_source(ctx: Context) -> str:
    text = ffi.new("char[]", 256)
    if lib.pv_tune_source(ctx._live(), text, 256) != lib.PV_OK:
        return "unknown"
    return ffi.string(text).decode(errors="replace")


def _describe_device(dev: DeviceInfo) -> List[str]:
    lines = [f"  [{dev.index}] {dev.name} ({dev.type}, {dev.vendor})",
             f"      platform {dev.platform}; {dev.opencl_version}; driver {dev.driver_version}",
             f"      {dev.compute_units} compute units, "
             f"{dev.global_memory / 2**30:.1f} GiB global memory"]
    try:
        with Context("opencl", device=dev.index) as ctx:
            lines.append(f"      FFT engine {ctx.fft_engine}; tuning {_tune_source(ctx)}")
    except Error as err:
        lines.append(f"      no context: {err}")
    return lines


def _engines() -> str:
    names = []
    for engine in (lib.PV_FFT_FFTW, lib.PV_FFT_CLFFT, lib.PV_FFT_VKFFT):
        if lib.pv_fft_engine_available(engine):
            names.append(ffi.string(lib.pv_fft_engine_name(engine)).decode())
    return ", ".join(names) or "none"


def report() -> str:
    """The installation report that ``python -m parvis`` prints."""
    lines = [f"parvis {version()} (Python package at {os.path.dirname(__file__)})",
             f"extension: {getattr(_native, '__file__', '?')}",
             f"libparvis: {_loaded_libparvis()}",
             "backends: cpu" + (", opencl" if _has_opencl_backend() else ""),
             f"FFT engines built in: {_engines()}"]
    with Context("cpu") as cpu:
        lines.append(f"cpu backend: {cpu.device_name}, {cpu.cpu_threads} threads, "
                     f"FFT engine {cpu.fft_engine}")
    try:
        found = devices()
    except Error as err:
        found = []
        lines.append(f"OpenCL: {err}")
    lines.append(f"OpenCL devices: {len(found)}" + ("" if found else " (the CPU backend is used)"))
    for dev in found:
        lines.extend(_describe_device(dev))
    loader = _mapped_file("libOpenCL")
    if loader:
        lines.append(f"OpenCL loader: {loader}")
    note = _icd.note()
    if note:
        lines.append(f"OpenCL driver: {note}")
    lines.append("configuration (the library's, as read when the last context was made):")
    table = _configuration()
    lines.extend(line for _, line in table)
    # the package's and the programs' own PARVIS_* variables, and the loader's
    known = {name for name, _ in table}
    others = sorted(n for n in os.environ if n.startswith("PARVIS_") and n not in known) + \
        [n for n in _OTHER_VARIABLES if n in os.environ]
    lines.extend(f"  {n}={os.environ[n]}" for n in others)
    return "\n".join(lines)


def _configuration() -> List[Tuple[str, str]]:
    """(name, line) of every PARVIS_* variable of the library's table: its
    value where set, else its default (docs/configuration.md)."""
    entry = ffi.new("pv_config_entry_info *")
    lines: List[Tuple[str, str]] = []
    for i in range(lib.pv_config_count()):
        if lib.pv_config_entry(i, entry) != lib.PV_OK:
            continue
        name = ffi.string(entry.name).decode()
        if entry.is_set:
            line = f"  {name}={ffi.string(entry.value).decode(errors='replace')}"
        else:
            line = f"  {name} (unset: {ffi.string(entry.default_value).decode()})"
        lines.append((name, line))
    return lines


def _has_opencl_backend() -> bool:
    # The OpenCL backend is built with clFFT always (configure requires it),
    # so an OpenCL FFT engine tells whether the backend is in the build.
    return bool(lib.pv_fft_engine_available(lib.PV_FFT_CLFFT)) or \
        bool(lib.pv_fft_engine_available(lib.PV_FFT_VKFFT))


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point: the report, or the self-test with --selftest."""
    parser = argparse.ArgumentParser(
        prog="python -m parvis",
        description="Print what this parvis installation has (version, backends, OpenCL "
                    "devices, FFT engine, tuning source, environment), or check every "
                    "operation on the CPU and each OpenCL device.")
    parser.add_argument("--selftest", action="store_true",
                        help="run each operation on small built-in inputs on the CPU and on "
                             "every OpenCL device (cross-checked against the CPU); exit "
                             "status 1 on any failure")
    args = parser.parse_args(argv)
    if args.selftest:
        return 1 if _selftest.run() else 0
    print(report())
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:       # the reader (e.g. head) closed the pipe
        sys.stderr.close()
        sys.exit(0)
