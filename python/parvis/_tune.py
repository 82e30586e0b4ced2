"""Context's tuning (include/parvis/tune.h): searching the OpenCL
kernels' launch parameters, and reading, setting and caching them."""
from __future__ import annotations

from typing import Any, List, Optional

from ._base import _ContextBase, _int
from ._errors import invalid
from ._native import ffi, lib
from ._results import TuneParam, TuneResult


class _TuneOps(_ContextBase):
    """Context's tuning methods."""

    def tune(self, op: Optional[str] = None, *, max_candidates: int = 0, runs: int = 3,
             width: int = 0, height: int = 0, ndisp: int = 0,
             write_cache: bool = True) -> List[TuneResult]:
        """Auto-tune this context's OpenCL kernels (pv_tune): for op, one
        tunable family ("filter", "sad", "bp", "register", "flow",
        "features", "octreg", "geometry") or None (all of them), build each candidate launch configuration
        (max_candidates per op; 0: all the search makes), check its output
        against the CPU backend, time it (median of `runs` runs) on a
        synthetic width x height workload of ndisp disparities (0: the op's
        defaults) and keep the fastest.  The winners are applied to this
        context and, with write_cache, stored in the cache file
        (tune_cache_path()).  Returns one TuneResult per op searched.  The
        CPU backend has nothing to tune: parvis.Unsupported."""
        options = ffi.new("pv_tune_options *")
        lib.pv_tune_options_default(options)
        keep = ffi.new("char[]", _family(op, "op").encode()) if op is not None else ffi.NULL
        options.op = keep
        options.max_candidates = _int(max_candidates, "max_candidates")
        options.runs = _int(runs, "runs")
        options.width = _int(width, "width")
        options.height = _int(height, "height")
        options.ndisp = _int(ndisp, "ndisp")
        options.write_cache = int(bool(write_cache))
        capacity = 16  # one result per tunable family
        results = ffi.new("pv_tune_result[]", capacity)
        count = ffi.new("int *")
        self._call(lib.pv_tune, options, results, capacity, count)
        return [TuneResult(ffi.string(r.op).decode(), int(r.tried), int(r.rejected),
                           float(r.default_ms), float(r.best_ms),
                           {ffi.string(p.name).decode(): int(p.value)
                            for p in r.params[0:r.param_count]})
                for r in results[0:count[0]]]

    def tune_load(self) -> int:
        """Apply the cached tuning of this context's device (pv_tune_load);
        returns the number of parameters set (0: no usable cache entry, and
        always on the CPU backend)."""
        applied = ffi.new("int *")
        self._call(lib.pv_tune_load, applied)
        return int(applied[0])

    def tune_set(self, family: str, name: str, value: int) -> None:
        """Override one launch parameter on this context (a tunable family,
        names as tune_list() gives them).  An unknown family or name,
        or a negative value, raises parvis.InvalidArgument.  The CPU backend
        has no launch parameters and ignores the call."""
        self._call(lib.pv_tune_set, _family(family, "family").encode(), _name(name),
                   _int(value, "value"))

    def tune_get(self, family: str, name: str) -> int:
        """The current value of one launch parameter (see tune_set); the CPU
        backend raises parvis.Unsupported."""
        value = ffi.new("int *")
        self._call(lib.pv_tune_get, _family(family, "family").encode(), _name(name), value)
        return int(value[0])

    def tune_use_defaults(self) -> None:
        """Put every launch parameter back to its default and stop reading
        the tuning cache automatically on this context."""
        self._call(lib.pv_tune_use_defaults)

    def tune_list(self, family: Optional[str] = None) -> List[TuneParam]:
        """The launch parameters of a tunable family (or None: every one)
        with their current values; empty on the CPU backend."""
        families = (_tune_families() if family is None else [_family(family, "family")])
        found: List[TuneParam] = []
        for fam in families:
            capacity = 256
            params = ffi.new("pv_tune_param[]", capacity)
            count = ffi.new("int *")
            self._call(lib.pv_tune_list, fam.encode(), params, capacity, count)
            found += [TuneParam(fam, ffi.string(p.name).decode(), int(p.value))
                      for p in params[0:count[0]]]
        return found

    def tune_cache_path(self) -> str:
        """Path of this context's tuning cache file ($PARVIS_TUNE_DIR, else
        $XDG_CACHE_HOME/parvis, else ~/.cache/parvis); the CPU backend raises
        parvis.Unsupported."""
        path = ffi.new("char[]", 4096)
        self._call(lib.pv_tune_cache_path, path, 4096)
        return ffi.string(path).decode(errors="surrogateescape")

    def tune_check_cache_writable(self) -> None:
        """Return when the tuning cache file can be written, else raise
        parvis.FileError saying why (parvis.Unsupported on the CPU backend)."""
        self._call(lib.pv_tune_check_cache_writable)


def _family(family: Any, name: str) -> str:
    """A tuning family name; the C library checks it is one of
    _tune_families()."""
    if not isinstance(family, str) or "\0" in family:
        raise invalid(f"{name}: expected a tuning family such as 'bp', got {family!r}")
    return family


def _tune_families() -> List[str]:
    """The tunable families, in the library's order (pv_tune_family_name)."""
    names: List[str] = []
    while lib.pv_tune_family_name(len(names)) != ffi.NULL:
        names.append(ffi.string(lib.pv_tune_family_name(len(names))).decode())
    return names


def _name(name: Any) -> bytes:
    if not isinstance(name, str) or "\0" in name:
        raise invalid(f"name: expected a parameter name, got {name!r}")
    return name.encode()
