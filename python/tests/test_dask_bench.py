"""python/bench/dask_scaling.py: its arguments, its table, and short real
runs of the modes this machine can run (the multi-GPU mode on the one
OpenCL device found, the overhead mode on the CPU backend).  The timings of
these runs are not checked, only that every path ran and reported."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BACKENDS

pytest.importorskip("distributed")

BENCH = Path(__file__).resolve().parents[1] / "bench" / "dask_scaling.py"
#: Sizes small enough for a run of a few seconds.
TINY = ["--oct-size", "40", "48", "64", "--oct-targets", "4", "--stereo-size", "96", "64",
        "--stereo-pairs", "6", "--stereo-ndisp", "8", "--distinct", "2", "--cores", "1"]


def load_bench():
    spec = importlib.util.spec_from_file_location("dask_scaling", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_bench(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "rows.json"
    env = dict(os.environ, OMP_NUM_THREADS="1", PARVIS_FFTW_PLANNER="estimate")
    run = subprocess.run([sys.executable, str(BENCH), *args, *TINY, "--json", str(out)],
                         capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "ms/item vs base" in run.stdout
    return json.loads(out.read_text())


@pytest.mark.parametrize("args, message", [
    (["--mode", "multi-gpu", "--backend", "cpu", "--gpus", "0"], "needs --backend opencl"),
    (["--mode", "multi-gpu", "--gpus", "0", "1", "--cuda-visible", "3"], "one id per"),
    (["--items-per-task", "0"], "--items-per-task must be at least 1"),
    (["--repeat", "0"], "--repeat must be at least 1"),
    (["--mode", "quantum"], "invalid choice"),
])
def test_bad_arguments_are_usage_errors(args, message, capsys):
    bench = load_bench()
    with pytest.raises(SystemExit) as stop:
        bench.parse_arguments(args)
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_multi_gpu_defaults_to_the_gpus_found(capsys):
    bench = load_bench()
    import parvis
    names = [d.name for d in parvis.devices() if d.type.lower() == "gpu"]
    if names:
        args = bench.parse_arguments(["--mode", "multi-gpu"])
        assert len(args.gpus) == len(names)
    else:                         # PoCL's CPU device is no GPU: the mode says so
        with pytest.raises(SystemExit):
            bench.parse_arguments(["--mode", "multi-gpu"])
        assert "no OpenCL GPU found" in capsys.readouterr().err


def test_table_compares_with_the_group_path():
    bench = load_bench()
    rows = [{"workload": "oct", "path": "in-process", "workers": 0, "rate": 4.0,
             "unit": "volumes/s"},
            {"workload": "oct", "path": "in-process group", "workers": 0, "rate": 5.0,
             "unit": "volumes/s"},
            {"workload": "oct", "path": "dask", "workers": 1, "rate": 4.0, "unit": "volumes/s"}]
    lines = bench.table(rows).splitlines()
    assert lines[3].split()[-2:] == ["0.80x", "+50.000"]   # 1/4 s - 1/5 s = 50 ms an item


@pytest.mark.skipif("opencl" not in BACKENDS, reason="no OpenCL device")
def test_multi_gpu_mode_on_one_device(tmp_path):
    report = run_bench(tmp_path, "--mode", "multi-gpu", "--gpus", "0", "--in-memory")
    rows = report["rows"]
    assert {(r["workload"], r["path"]) for r in rows} == {
        ("oct", "in-process group"), ("oct", "dask"),
        ("stereo", "in-process group"), ("stereo", "dask")}
    group = next(r for r in rows if r["path"] == "in-process group")
    # The worker opened the device its PARVIS_DEVICE named, as the group did.
    assert all(r["device"] == group["device"] for r in rows)
    assert all(r["rate"] > 0 for r in rows)


def test_overhead_mode_on_the_cpu_backend(tmp_path):
    report = run_bench(tmp_path, "--mode", "overhead", "--backend", "cpu", "--repeat", "2")
    dask_rows = [r for r in report["rows"] if r["path"] == "dask"]
    assert len(dask_rows) == 2 and all(r["rounds"] == 2 for r in dask_rows)
    assert all(r["rate"] > 0 and "extra_ms_per_item" in r for r in report["rows"])
