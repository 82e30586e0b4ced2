"""Auto-tuning controls: parameter round trips and refusals on an OpenCL
context, the CPU backend's answers (the C status as the matching
exception).  The cache lives in a temporary directory (PARVIS_TUNE_DIR)."""
from __future__ import annotations

import os

import pytest

import parvis
from conftest import BACKENDS

needs_opencl = pytest.mark.skipif("opencl" not in BACKENDS, reason="no OpenCL device")


@pytest.fixture
def tune_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PARVIS_TUNE_DIR", str(tmp_path))
    return tmp_path


@pytest.fixture
def fresh_opencl(tune_dir):
    """An OpenCL context of its own: tuning changes stay off the shared one."""
    if "opencl" not in BACKENDS:
        pytest.skip("no OpenCL device")
    with parvis.Context("opencl") as ctx:
        if ctx.backend != "opencl":
            pytest.skip("the environment forces the CPU backend")
        yield ctx


def test_list_and_round_trip(fresh_opencl):
    ctx = fresh_opencl
    # Start from the defaults: a fresh context may hold the tuning
    # database's entry for this device instead (docs/tuning.md).
    ctx.tune_use_defaults()
    params = ctx.tune_list()
    assert params and all(isinstance(p, parvis.TuneParam) for p in params)
    assert {p.family for p in params} == {"filter", "sad", "bp", "register", "flow", "features",
                                          "octreg", "geometry", "sgm"}
    bp = ctx.tune_list("bp")
    assert bp == [p for p in params if p.family == "bp"]
    for p in bp:
        assert ctx.tune_get(p.family, p.name) == p.value
    ctx.tune_set("bp", "BP_LOCAL_VALUES", 7)
    assert ctx.tune_get("bp", "BP_LOCAL_VALUES") == 7
    changed = {p.name: p.value for p in ctx.tune_list("bp")}
    assert changed["BP_LOCAL_VALUES"] == 7
    ctx.tune_use_defaults()
    assert ctx.tune_list("bp") == bp


def test_unknown_names_and_values_refused(fresh_opencl):
    ctx = fresh_opencl
    before = ctx.tune_get("bp", "BP_WG_X")
    with pytest.raises(parvis.InvalidArgument, match="NO_SUCH"):
        ctx.tune_set("bp", "NO_SUCH", 1)
    with pytest.raises(parvis.InvalidArgument):
        ctx.tune_get("bp", "NO_SUCH")
    with pytest.raises(parvis.InvalidArgument, match="nope"):
        ctx.tune_set("nope", "BP_WG_X", 1)
    with pytest.raises(parvis.InvalidArgument):
        ctx.tune_set("bp", "BP_WG_X", -1)
    with pytest.raises(parvis.InvalidArgument):
        ctx.tune_list("fft")
    with pytest.raises(parvis.InvalidArgument):
        ctx.tune(op="fft")
    with pytest.raises(parvis.InvalidArgument):
        ctx.tune(runs=0)
    assert ctx.tune_get("bp", "BP_WG_X") == before


def test_cache_path_and_load(fresh_opencl, tune_dir):
    ctx = fresh_opencl
    path = ctx.tune_cache_path()
    assert os.path.dirname(path) == str(tune_dir)
    assert os.path.basename(path).startswith("tune-")
    ctx.tune_check_cache_writable()
    assert ctx.tune_load() == 0   # no cache file yet


@needs_opencl
def test_unwritable_cache_is_a_file_error(tune_dir, monkeypatch):
    blocker = tune_dir / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("PARVIS_TUNE_DIR", str(blocker))
    with parvis.Context("opencl") as ctx:
        if ctx.backend != "opencl":
            pytest.skip("the environment forces the CPU backend")
        with pytest.raises(parvis.FileError):
            ctx.tune_check_cache_writable()


def test_cpu_backend_answers(tune_dir):
    with parvis.Context("cpu") as ctx:
        with pytest.raises(parvis.Unsupported):
            ctx.tune(op="bp", max_candidates=1, runs=1, write_cache=False)
        with pytest.raises(parvis.Unsupported):
            ctx.tune_get("bp", "BP_WG_X")
        with pytest.raises(parvis.Unsupported):
            ctx.tune_cache_path()
        with pytest.raises(parvis.Unsupported):
            ctx.tune_check_cache_writable()
        ctx.tune_set("bp", "BP_WG_X", 8)   # nothing to set: accepted and ignored
        ctx.tune_use_defaults()
        assert ctx.tune_load() == 0
        assert ctx.tune_list() == []
        with pytest.raises(parvis.InvalidArgument):   # arguments are checked first
            ctx.tune_set("nope", "BP_WG_X", 1)


def test_smallest_search_is_applied_and_cached(fresh_opencl, tune_dir):
    """One SAD candidate, one run, a tiny workload: the record's kept values
    are applied to the context and a new context loads them from the cache."""
    results = fresh_opencl.tune("sad", max_candidates=1, runs=1, width=64, height=48, ndisp=16)
    assert len(results) == 1 and isinstance(results[0], parvis.TuneResult)
    result = results[0]
    assert result.op == "sad" and result.tried >= 1 and 0 <= result.rejected <= result.tried
    assert result.default_ms > 0 and result.best_ms > 0 and result.params
    for name, value in result.params.items():
        assert fresh_opencl.tune_get("sad", name) == value
    assert os.path.exists(fresh_opencl.tune_cache_path())
    with parvis.Context("opencl") as again:
        assert again.tune_load() == len(result.params)
        assert {n: again.tune_get("sad", n) for n in result.params} == result.params
