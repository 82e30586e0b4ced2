"""parvis.dask pieces that need no cluster: result files (atomic writes,
completeness checks, round trips), the worker state's plan cache, device
assignment and the progress bar."""
from __future__ import annotations

import io
import os

import numpy as np
import pytest

import parvis
from conftest import texture

pytest.importorskip("distributed")
import parvis.dask as pvd  # noqa: E402
from parvis.dask import _outputs  # noqa: E402
from parvis.dask._progress import ProgressBar  # noqa: E402


def sample_results(ctx: parvis.Context) -> dict:
    """One real result of each operation (small inputs)."""
    image = texture((64, 64), seed=1, smooth=2)
    syn = parvis.synthesize_oct((40, 48, 64), seed=2)
    volume = texture((8, 12, 12), seed=3, smooth=2)
    disparity = ctx.stereo_sad(image, np.roll(image, -2, axis=1), ndisp=8, lr_check=True)
    assert np.isinf(disparity).any()  # invalid pixels must survive the file too
    return {
        "octreg": ctx.octreg(syn.reference, syn.target),
        "stereo": disparity,
        "flow3d": ctx.flow3d(volume, np.roll(volume, 1, axis=2), warps=1, iterations=3,
                             kernel_size=3, rho=0.8),
        "sift": ctx.sift(image, peak_thresh=0.005),
        "phase_correlate": ctx.phase_correlate(image, np.roll(image, 3, axis=0), upsample=8),
    }


@pytest.fixture(scope="module")
def results() -> dict:
    # Estimated FFTW plans: measuring them would cost more than the calls.
    saved = os.environ.get("PARVIS_FFTW_PLANNER")
    os.environ["PARVIS_FFTW_PLANNER"] = "estimate"
    try:
        with parvis.Context("cpu") as ctx:
            return sample_results(ctx)
    finally:
        if saved is None:
            del os.environ["PARVIS_FFTW_PLANNER"]
        else:
            os.environ["PARVIS_FFTW_PLANNER"] = saved


def assert_same(kind: str, got, want) -> None:
    if kind == "stereo":
        np.testing.assert_array_equal(got, want)
    elif kind == "octreg":
        np.testing.assert_array_equal(got.shifts, want.shifts)
        np.testing.assert_array_equal(got.peak, want.peak)
        np.testing.assert_array_equal(got.valid, want.valid)
        assert got.info == want.info
    else:
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", sorted(_outputs.FORMATS))
def test_result_files_round_trip_exactly(kind, results, tmp_path):
    path = tmp_path / f"item{_outputs.output_suffix(kind)}"
    _outputs.write_result(kind, path, results[kind])
    assert pvd.is_complete(kind, path)
    assert_same(kind, pvd.read_result(kind, path), results[kind])
    assert os.listdir(tmp_path) == [path.name]   # no temporary file left


@pytest.mark.parametrize("kind", sorted(_outputs.FORMATS))
def test_truncated_or_empty_result_files_are_incomplete(kind, results, tmp_path):
    path = tmp_path / f"item{_outputs.output_suffix(kind)}"
    _outputs.write_result(kind, path, results[kind])
    whole = path.read_bytes()
    for size in (0, len(whole) // 2, len(whole) - 3):
        path.write_bytes(whole[:size])
        assert not pvd.is_complete(kind, path), size
    assert not pvd.is_complete(kind, tmp_path / "absent")


def test_atomic_write_failure_leaves_old_file_and_no_part(tmp_path, monkeypatch):
    target = tmp_path / "result.json"
    pvd.atomic_write(target, b"old\n")

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)   # the new bytes never reach the disk
    with pytest.raises(OSError, match="No space"):
        pvd.atomic_write(target, b"new\n")
    monkeypatch.undo()
    assert target.read_bytes() == b"old\n"
    assert os.listdir(tmp_path) == ["result.json"]


def test_stale_parts_are_removed_only_for_named_outputs(tmp_path):
    (tmp_path / ".a.sift.npz.part-12-abcd").write_bytes(b"half")
    (tmp_path / ".b.sift.npz.part-13-abcd").write_bytes(b"half")
    (tmp_path / ".hidden").write_bytes(b"user's")
    removed = pvd.remove_stale_parts([tmp_path / "a.sift.npz"])
    assert removed == 1
    assert sorted(os.listdir(tmp_path)) == [".b.sift.npz.part-13-abcd", ".hidden"]


def test_input_stems_handle_double_extensions():
    assert _outputs.input_stem("/x/scan07.nii.gz") == "scan07"
    assert _outputs.input_stem("left.png") == "left"


def test_plan_cache_counts_and_evicts(tmp_path):
    state = pvd.WorkerState(backend="cpu", max_plans=2)
    image = texture((32, 32), seed=1, smooth=2)
    built = []

    def build(ctx: parvis.Context):
        plan = ctx.phasecorr_plan(image)
        built.append(plan)
        return plan

    with state.session():
        first = state.plan("phase", "a", build)
        assert state.plan("phase", "a", build) is first
        state.plan("phase", "b", build)
        state.plan("phase", "c", build)       # evicts "a", the least recently used
    stats = state.stats()
    assert stats["plan_builds"] == 3 and stats["plan_hits"] == 1
    assert stats["plan_hits:phase"] == 1 and stats["cached_plans"] == 2
    assert stats["context_builds"] == 1 and stats["backend"] == "cpu"
    assert first.closed and not built[2].closed
    state.close()
    assert all(plan.closed for plan in built)
    with pytest.raises(pvd.ContextLost):
        with state.session():
            pass


def test_rebuild_after_loss_opens_a_new_context():
    state = pvd.WorkerState(backend="cpu")
    with state.session() as ctx:
        first = ctx
    state.lose_context()
    assert first.closed
    state.rebuild()
    with state.session() as ctx:
        assert not ctx.closed and ctx is not first
    assert state.stats()["context_builds"] == 2 and state.stats()["device_failures"] == 1
    state.close()


def test_device_assignment_order(monkeypatch):
    monkeypatch.delenv("PARVIS_DEVICE", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    assert pvd.assigned_device() is None          # the driver shows GPU 3 alone
    monkeypatch.setenv("PARVIS_DEVICE", "1")
    assert pvd.assigned_device() == 1
    monkeypatch.setenv("PARVIS_DEVICE", "Tesla")
    assert pvd.assigned_device() == "Tesla"
    assert pvd.assigned_device("gfx90a") == "gfx90a"


def test_plugin_rejects_bad_settings():
    with pytest.raises(ValueError):
        pvd.ParvisWorkerPlugin(backend="cuda")
    with pytest.raises(ValueError):
        pvd.ParvisWorkerPlugin(max_plans=0)


def test_progress_bar_text():
    out = io.StringIO()
    bar = ProgressBar("octreg", stream=out, width=10, interval=0.0)
    bar(0, 4, 0)
    bar(2, 4, 1)
    bar(4, 4, 1)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("octreg: 0/4 [..........]")
    assert lines[1].startswith("octreg: 2/4 [#####.....]") and lines[1].endswith("1 failed")
    assert "/s" in lines[1] and "left" in lines[1]
    assert lines[2].startswith("octreg: 4/4 [##########]")


def test_batch_result_failure_report():
    result = pvd.BatchResult([1, None], [pvd.ItemFailure(1, "b.png", "InputError: b.png: gone")])
    assert not result.ok and list(result) == [1, None] and len(result) == 2
    with pytest.raises(RuntimeError, match="b.png: InputError"):
        result.raise_on_failure()
    assert pvd.BatchResult([1]).raise_on_failure().ok


def test_duplicate_output_names_are_refused(tmp_path):
    from parvis.dask import _inputs
    names = _inputs.stems([tmp_path / "a" / "x.png", tmp_path / "b" / "x.png"], "sift")
    with pytest.raises(ValueError, match="same output"):
        _inputs.check_unique(names, "sift")
    assert _inputs.stems([np.zeros((2, 2))], "sift") == ["sift-000000"]


def test_raw_volume_without_shape_is_an_input_error(tmp_path):
    from parvis.dask import _inputs
    path = tmp_path / "v.raw"
    parvis.write_volume(path, np.zeros((4, 4, 4), np.float32))
    with pytest.raises(pvd.InputError, match="volume_shape"):
        _inputs.load(str(path))
    assert _inputs.load(str(path), (4, 4, 4)).shape == (4, 4, 4)
    with pytest.raises(pvd.InputError, match="unknown file type"):
        (tmp_path / "v.txt").write_text("1")
        _inputs.load(str(tmp_path / "v.txt"))


def test_worker_threads_follow_the_environment(monkeypatch):
    """A nanny applies its env after the worker process started with
    OMP_NUM_THREADS=1: the context's thread count is read from the
    environment as it is when the context opens."""
    from parvis.dask._plugin import WorkerState, worker_threads
    monkeypatch.delenv("PARVIS_CPU_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert worker_threads() == 2
    monkeypatch.setenv("PARVIS_CPU_THREADS", "1")
    assert worker_threads() == 1
    monkeypatch.setenv("PARVIS_CPU_THREADS", "zero")
    assert worker_threads() == 2
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.delenv("PARVIS_CPU_THREADS")
    assert worker_threads() == 0
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    state = WorkerState("cpu")
    with state.session() as ctx:
        assert ctx.cpu_threads == 1
    state.close()


# ------------------------------------------------- compact results, tasks
def bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and \
        np.array_equal(np.ascontiguousarray(a).view(np.uint32),
                       np.ascontiguousarray(b).view(np.uint32))


def test_disparity_maps_pack_losslessly(results):
    from parvis.dask._compact import PackedImage, compact, expand
    disparity = results["stereo"]                     # whole values and inf (lr_check)
    packed = compact(disparity)
    assert isinstance(packed, PackedImage) and packed.values.dtype == np.uint8
    assert packed.positions.size == np.count_nonzero(np.isinf(disparity))
    assert bits_equal(expand(packed), disparity)
    signed = disparity - 12.0                          # negative disparities: int16
    special = signed.copy()
    special[0, :3] = (np.nan, -0.0, 2.5)               # listed apart, bits kept
    for image in (signed, special):
        packed = compact(image)
        assert isinstance(packed, PackedImage) and packed.values.dtype == np.int16
        assert bits_equal(expand(packed), image)


def test_results_that_do_not_pack_travel_unchanged(results):
    from parvis.dask._compact import compact, expand
    fractions = results["stereo"] + np.float32(0.25)   # sub-pixel disparities
    large = np.full((100, 100), 1e6, np.float32)       # beyond int16
    small = np.zeros((8, 8), np.float32)               # not worth packing
    for item in (fractions, large, small, results["octreg"], results["sift"]):
        assert compact(item) is item
        assert expand(item) is item


def test_task_size_groups_items_per_worker():
    from parvis.dask._batch import MAX_ITEMS_PER_TASK, task_size
    assert task_size(200, 1) == MAX_ITEMS_PER_TASK     # capped
    assert task_size(32, 1) == 8                       # about four tasks per worker
    assert task_size(6, 2) == 1
    assert task_size(0, 0) == 1
    assert task_size(200, 1, requested=3) == 3
    with pytest.raises(ValueError):
        task_size(10, 1, requested=0)


def test_every_command_option_has_help():
    from parvis.dask._cli import _build_parser
    parser = _build_parser()
    commands = next(a for a in parser._actions if a.choices and "octreg" in a.choices)
    assert set(commands.choices) == {"octreg", "stereo", "flow3d", "sift", "phase"}
    for name, sub in commands.choices.items():
        for action in sub._actions:
            assert action.help, f"parvis-dask {name}: {action.option_strings or action.dest}"
        assert "Inputs:" in sub.description and "Outputs:" in sub.description, name
        assert sub.epilog.startswith("example:\n  parvis-dask " + name), name
