"""parvis.dask on a real LocalCluster of worker processes.

Every batch function is compared, item by item, with the same call made in
this process on a CPU context: the results must be identical (exact
equality, no tolerance).  Both sides use one OpenMP thread and FFTW's
estimated plans (PARVIS_FFTW_PLANNER=estimate): measured plans are chosen
by timing and may differ between processes in the last bits.  Faults: a
worker process killed mid-batch, unreadable input files, and a worker whose
context is lost.
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List

import numpy as np
import pytest

import parvis
from conftest import BACKENDS, STEREO, texture

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
import parvis.dask as pvd  # noqa: E402  (after the importorskip above)

#: What the workers and this process share so that results are bit-identical.
DETERMINISTIC = {"OMP_NUM_THREADS": "1", "PARVIS_FFTW_PLANNER": "estimate"}
OCT_SHAPE = (40, 48, 64)  # B-scans, A-lines, depth: the smallest the defaults take


@pytest.fixture(scope="module")
def deterministic() -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in DETERMINISTIC}
    os.environ.update(DETERMINISTIC)
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def local_cluster(workers: int) -> "distributed.LocalCluster":
    return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                    dashboard_address=":0", silence_logs=logging.ERROR,
                                    env=dict(DETERMINISTIC))


@pytest.fixture(scope="module")
def client(deterministic: None) -> Iterator["distributed.Client"]:
    with local_cluster(2) as cluster, distributed.Client(cluster) as c:
        pvd.register(c, backend="cpu")
        yield c


@pytest.fixture(scope="module")
def local(deterministic: None) -> Iterator[parvis.Context]:
    """The single-process side of every comparison."""
    with parvis.Context("cpu", cpu_threads=1) as ctx:
        yield ctx


def oct_targets(count: int, seed: int = 1) -> List[np.ndarray]:
    """Targets of one reference (the synthesiser's scene for `seed`) with
    different motion traces."""
    return [parvis.synthesize_oct(OCT_SHAPE, seed=seed, start=(i % 3, 0.0, i % 2)).target
            for i in range(count)]


def same_octreg(a: parvis.OctregResult, b: parvis.OctregResult) -> bool:
    return (np.array_equal(a.shifts, b.shifts) and np.array_equal(a.peak, b.peak)
            and np.array_equal(a.valid, b.valid) and a.info == b.info)


def totals(client: "distributed.Client") -> Dict[str, int]:
    out: Dict[str, int] = {}
    for stats in pvd.worker_stats(client).values():
        for key, value in stats.items():
            if isinstance(value, int):
                out[key] = out.get(key, 0) + value
    return out


# ------------------------------------------------------- batch == in-process
def test_octreg_equals_single_process_and_reuses_plans(client, local):
    reference = parvis.synthesize_oct(OCT_SHAPE, seed=11).reference
    targets = oct_targets(6, seed=11)
    pvd.reset_stats(client)
    result = pvd.octreg(client, reference, targets)
    assert result.ok and len(result) == 6
    for target, got in zip(targets, result):
        assert same_octreg(got, local.octreg(reference, target))
    counts = totals(client)
    # One plan per worker that ran targets, reused for all the others.
    assert 1 <= counts["plan_builds:octreg"] <= 2
    assert counts["plan_builds:octreg"] + counts["plan_hits:octreg"] == 6
    # A second batch of the same reference builds nothing.
    again = pvd.octreg(client, reference, da.from_array(np.stack(targets[:2]),
                                                        chunks=(1,) + OCT_SHAPE))
    assert same_octreg(again[1], result[1])
    assert totals(client)["plan_builds:octreg"] == counts["plan_builds:octreg"]


def test_back_to_back_batches_of_one_reference(client, local):
    """Batches of one reference called one after another: each scatters the
    reference under a name of its own, so the release of the previous
    batch's copy cannot take the next batch's with it (that cancelled
    every task of a batch now and then); the workers' plans, cached by the
    reference's content, are still reused."""
    reference = parvis.synthesize_oct(OCT_SHAPE, seed=12).reference
    targets = oct_targets(2, seed=12)
    expected = [local.octreg(reference, t) for t in targets]
    first = pvd.octreg(client, reference, targets)
    assert first.ok
    builds = totals(client)["plan_builds:octreg"]
    for _ in range(6):
        result = pvd.octreg(client, reference, targets)
        assert result.ok, result.failures
        assert all(same_octreg(got, want) for got, want in zip(result, expected))
    assert totals(client)["plan_builds:octreg"] == builds


def test_stereo_sad_and_bp_equal_single_process(client, local):
    left = STEREO / "tsukuba" / "left.pgm"
    right = STEREO / "tsukuba" / "right.pgm"
    l_img, r_img = parvis.imread(left), parvis.imread(right)
    pairs = [(str(left), str(right)), (l_img[:, 16:], r_img[:, 16:]),
             (l_img[40:200], r_img[40:200])]
    sad = pvd.stereo(client, pairs, method="sad", ndisp=16, window=7, subpixel=True)
    bp = pvd.stereo(client, pairs, method="bp", ndisp=16, levels=4, iterations=5)
    assert sad.ok and bp.ok
    for (lp, rp), got_sad, got_bp in zip(pairs, sad, bp):
        la = parvis.imread(lp) if isinstance(lp, str) else lp
        ra = parvis.imread(rp) if isinstance(rp, str) else rp
        np.testing.assert_array_equal(got_sad, local.stereo_sad(la, ra, ndisp=16, window=7,
                                                                subpixel=True))
        np.testing.assert_array_equal(got_bp, local.stereo_bp(la, ra, ndisp=16, levels=4,
                                                              iterations=5))
    # Whole-pixel maps with inf travel packed (uint8 + the inf pixels): still exact.
    checked = pvd.stereo(client, pairs, ndisp=16, window=7, lr_check=True, items_per_task=2)
    assert checked.ok and any(np.isinf(d).any() for d in checked)
    for (lp, rp), got in zip(pairs, checked):
        la = parvis.imread(lp) if isinstance(lp, str) else lp
        ra = parvis.imread(rp) if isinstance(rp, str) else rp
        want = local.stereo_sad(la, ra, ndisp=16, window=7, lr_check=True)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    stacked = np.stack([np.stack([l_img, r_img]), np.stack([r_img, l_img])])  # (2, 2, H, W)
    from_stack = pvd.stereo(client, stacked, ndisp=16, window=7, subpixel=True)
    np.testing.assert_array_equal(from_stack[0], sad[0])


def test_stereo_sgm_equals_single_process(client, local):
    """method="sgm" with non-default settings gives each pair the bits of a
    Context.stereo_sgm call in this process (invalid pixels included)."""
    left = STEREO / "tsukuba" / "left.pgm"
    right = STEREO / "tsukuba" / "right.pgm"
    l_img, r_img = parvis.imread(left), parvis.imread(right)
    pairs = [(str(left), str(right)), (l_img[60:180, :200], r_img[60:180, :200])]
    options = {"ndisp": 16, "census": (7, 7), "paths": 4, "p2": 90, "median": True}
    result = pvd.stereo(client, pairs, method="sgm", **options)
    assert result.ok, result.failures
    for (lp, rp), got in zip(pairs, result):
        la = parvis.imread(lp) if isinstance(lp, str) else lp
        ra = parvis.imread(rp) if isinstance(rp, str) else rp
        want = local.stereo_sgm(la, ra, **options)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    with pytest.raises(ValueError, match="confidence"):
        pvd.stereo(client, pairs, method="sgm", ndisp=16, confidence=True)
    with pytest.raises(ValueError, match="'sgm'"):
        pvd.stereo(client, pairs, method="census", ndisp=16)


def test_stereo_sgm_tasks_use_the_batch(client, local):
    """Tasks of several SGM pairs run their pairs of one shape through
    Context.stereo_sgm_batch: every pair still gets the bits of a single
    stereo_sgm call, a pair of another shape runs on its own, and a pair
    the library refuses (NaN pixels) fails alone."""
    l_img = parvis.imread(STEREO / "tsukuba" / "left.pgm")
    r_img = parvis.imread(STEREO / "tsukuba" / "right.pgm")
    pairs = [(l_img[y:y + 64, 20:148].astype(np.float32),
              r_img[y:y + 64, 20:148].astype(np.float32)) for y in (0, 50, 100)]
    pairs.append((l_img[:40, :90], r_img[:40, :90]))
    bad = pairs[0][0].copy()
    bad[5, 5] = np.nan  # same shape and dtype as pairs 0-2: refused inside their batch
    pairs.append((bad, pairs[0][1]))
    options = {"ndisp": 16, "paths": 8, "subpixel": False}
    result = pvd.stereo(client, pairs, method="sgm", items_per_task=5, **options)
    assert [f.index for f in result.failures] == [4], result.failures
    for (la, ra), got in list(zip(pairs, result))[:4]:
        want = local.stereo_sgm(la, ra, **options)
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_sift_equals_single_process_one_plan_per_size(client, local):
    images = [texture((96, 128), seed=s, smooth=2) for s in range(4)]
    images += [texture((80, 80), seed=9, smooth=2)]
    pvd.reset_stats(client)
    result = pvd.sift(client, images, peak_thresh=0.005)
    assert result.ok
    for image, got in zip(images, result):
        want = local.sift(image, peak_thresh=0.005)
        assert len(want.keypoints) > 0
        np.testing.assert_array_equal(got.keypoints, want.keypoints)
        np.testing.assert_array_equal(got.descriptors, want.descriptors)
    counts = totals(client)
    # Two sizes: at most one plan per size and worker.
    assert 2 <= counts["plan_builds:sift"] <= 4
    assert counts["plan_builds:sift"] + counts["plan_hits:sift"] == 5


def test_phase_correlate_equals_single_process(client, local):
    reference = texture((64, 80), seed=4, smooth=2)
    movings = np.stack([np.roll(reference, (dy, dx), axis=(0, 1))
                        for dy, dx in ((0, 0), (3, -5), (-7, 2), (11, 9))])
    result = pvd.phase_correlate(client, reference, movings, upsample=10, window="hann")
    assert result.ok
    for moving, got, (dy, dx) in zip(movings, result, ((0, 0), (3, -5), (-7, 2), (11, 9))):
        want = local.phase_correlate(reference, moving, upsample=10, window="hann")
        np.testing.assert_array_equal(got.shift, want.shift)
        assert got.peak == want.peak and got.flags == want.flags
        np.testing.assert_allclose(got.shift, [dx, dy], atol=0.1)


@pytest.mark.parametrize("against", ["previous", "first"])
def test_flow3d_sequence_equals_single_process(client, local, against):
    base = texture((12, 16, 16), seed=5, smooth=2)
    frames = np.stack([np.roll(base, k, axis=2) for k in range(4)])
    params = dict(warps=2, iterations=8, kernel_size=5, rho=1.0)
    result = pvd.flow3d_sequence(client, da.from_array(frames, chunks=(1, 12, 16, 16)),
                                 against=against, **params)
    assert result.ok and len(result) == 3
    for i, got in enumerate(result):
        fixed = frames[0] if against == "first" else frames[i]
        want = local.flow3d(fixed, frames[i + 1], **params)
        for component in "uvw":
            np.testing.assert_array_equal(getattr(got, component), getattr(want, component))


@pytest.mark.parametrize("per_task", [None, 2])
def test_futures_come_back_in_input_order(client, local, per_task):
    reference = texture((32, 32), seed=6, smooth=2)
    movings = [np.roll(reference, k, axis=1) for k in range(5)]
    wrong_shape = np.zeros((16, 16), np.float32)
    futures = pvd.phase_correlate(client, reference, movings + [wrong_shape], wait=False,
                                  items_per_task=per_task)
    assert len(futures) == 6
    shifts = [f.result().shift[0] for f in futures[:5]]
    assert shifts == [0, 1, 2, 3, 4]
    with pytest.raises(pvd.ItemError, match="InvalidArgument"):
        futures[5].result()


# ----------------------------------------------------------------- files
def write_targets(directory: Path, targets: List[np.ndarray]) -> List[str]:
    paths = []
    for i, target in enumerate(targets):
        path = directory / f"target{i:02d}.raw"
        parvis.write_volume(path, target)
        paths.append(str(path))
    return paths


def test_file_outputs_rerun_skips_complete_and_redoes_truncated(client, local, tmp_path):
    reference = parvis.synthesize_oct(OCT_SHAPE, seed=3).reference
    targets = oct_targets(4, seed=3)
    paths = write_targets(tmp_path, targets)
    out = tmp_path / "out"
    first = pvd.octreg(client, reference, paths, output_dir=out, volume_shape=OCT_SHAPE)
    assert first.ok and first.skipped == 0
    assert sorted(os.listdir(out)) == [f"target{i:02d}.octreg.csv" for i in range(4)]
    for path, target in zip(first, targets):
        assert same_octreg(pvd.read_result("octreg", path), local.octreg(reference, target))

    stamps = {p: os.stat(p).st_mtime_ns for p in first}
    truncated = Path(first[2])
    truncated.write_bytes(truncated.read_bytes()[:200])   # as a non-atomic writer would
    assert not pvd.is_complete("octreg", truncated)
    second = pvd.octreg(client, reference, paths, output_dir=out, volume_shape=OCT_SHAPE)
    assert second.ok and second.skipped == 3
    assert pvd.is_complete("octreg", truncated)
    for path in (first[0], first[1], first[3]):
        assert os.stat(path).st_mtime_ns == stamps[path]
    assert same_octreg(pvd.read_result("octreg", truncated),
                       local.octreg(reference, targets[2]))
    futures = pvd.octreg(client, reference, paths, output_dir=out, volume_shape=OCT_SHAPE,
                         wait=False)                # all complete: futures of their paths
    assert [f.result() for f in futures] == list(first)


@pytest.mark.parametrize("per_task", [None, 5])   # 5: every item in one task
def test_bad_files_fail_alone(client, local, tmp_path, per_task):
    images = [texture((64, 64), seed=s, smooth=2) for s in range(3)]
    paths = []
    for i, image in enumerate(images):
        path = tmp_path / f"image{i}.pfm"
        parvis.imwrite(path, image)
        paths.append(str(path))
    corrupt = tmp_path / "corrupt.pgm"
    corrupt.write_bytes(b"P5\n64 64\n255\n" + bytes(100))   # truncated pixel data
    missing = tmp_path / "missing.png"
    inputs = [paths[0], str(corrupt), paths[1], str(missing), paths[2]]
    result = pvd.sift(client, inputs, output_dir=tmp_path / "out", items_per_task=per_task)
    assert [f.index for f in result.failures] == [1, 3]
    assert all("InputError" in f.error for f in result.failures)
    assert result.failures[0].source == str(corrupt)
    assert result[1] is None and result[3] is None
    for index, image in zip((0, 2, 4), images):
        got = pvd.read_result("sift", result[index])
        want = local.sift(parvis.imread(paths[index // 2], dtype=np.float32))
        np.testing.assert_array_equal(got.keypoints, want.keypoints)
        np.testing.assert_array_equal(got.descriptors, want.descriptors)


def test_command_line_summary_lists_failures(client, tmp_path):
    good = tmp_path / "a.pgm"
    parvis.imwrite(good, (texture((64, 64), seed=2, smooth=2) * 255).astype(np.uint8))
    missing = tmp_path / "gone.pgm"
    run = subprocess.run(
        [sys.executable, "-m", "parvis.dask", "sift", "--scheduler", client.scheduler.address,
         "-o", str(tmp_path / "out"), str(good), str(missing)],
        capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    assert "2 inputs, 1 done, 0 already complete, 1 failed" in run.stdout
    assert f"{missing}: InputError" in run.stdout
    assert "2/2 [" in run.stderr                      # the progress bar's last state
    assert pvd.is_complete("sift", tmp_path / "out" / "a.sift.npz")


def test_command_line_help_and_usage_errors():
    shown = subprocess.run([sys.executable, "-m", "parvis.dask", "stereo", "--help"],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "--scheduler" in shown.stdout
    odd = subprocess.run([sys.executable, "-m", "parvis.dask", "stereo", "--local", "1",
                          "-o", "out", "only-left.png"], capture_output=True, text=True,
                         timeout=120)
    assert odd.returncode == 2 and "LEFT RIGHT" in odd.stderr
    nowhere = subprocess.run([sys.executable, "-m", "parvis.dask", "sift", "-o", "out", "x.pgm"],
                             capture_output=True, text=True, timeout=60)
    assert nowhere.returncode == 2 and "--scheduler" in nowhere.stderr


def test_cluster_example_runs_on_a_local_cluster():
    example = Path(__file__).resolve().parents[1] / "examples" / "dask_cluster.py"
    run = subprocess.run([sys.executable, str(example), "--local", "1", "--demo",
                          "--backend", "cpu"], capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    assert "6 of 6 registered" in run.stdout
    assert "1 plan builds, 5 plan hits" in run.stdout


# ----------------------------------------------------------------- faults
def test_lost_context_is_rebuilt(client, local):
    reference = texture((48, 48), seed=8, smooth=2)
    movings = [np.roll(reference, k, axis=0) for k in range(8)]
    # Every worker loses its context, so whichever worker the scheduler gives the items to
    # (it may give all of them to one) has to rebuild before it can run them.
    pvd.reset_stats(client)
    client.run(pvd.lose_context)
    result = pvd.phase_correlate(client, reference, movings, upsample=4)
    assert result.ok
    for moving, got in zip(movings, result):
        np.testing.assert_array_equal(got.shift,
                                      local.phase_correlate(reference, moving, upsample=4).shift)
    busy = {w: s for w, s in pvd.worker_stats(client).items() if s["tasks"] > 0}
    assert busy     # some worker ran items after the loss ...
    for stats in busy.values():     # ... and each of them on a new context, rebuilt once
        assert stats["device_failures"] == 1 and stats["context_builds"] == 1


def test_killed_worker_mid_batch(deterministic, local, tmp_path):
    reference = parvis.synthesize_oct(OCT_SHAPE, seed=5).reference
    targets = oct_targets(14, seed=5)
    paths = write_targets(tmp_path, targets)
    out = tmp_path / "out"
    killed: List[int] = []
    with local_cluster(2) as cluster, distributed.Client(cluster) as c:
        pvd.register(c, backend="cpu")
        pids = c.run(os.getpid)

        def kill_one_busy_worker(done: int, total: int, failed: int) -> None:
            if killed or done < 3:
                return
            busy = [w for w, keys in c.processing().items() if keys and w in pids]
            if busy:
                killed.append(pids[busy[0]])
                os.kill(pids[busy[0]], signal.SIGKILL)

        result = pvd.octreg(c, reference, paths, output_dir=out, volume_shape=OCT_SHAPE,
                            progress=kill_one_busy_worker)
        survivors = set(c.run(os.getpid).values())
    assert killed, "no worker was busy after three items"
    assert killed[0] not in survivors   # the scheduler lost it (its nanny started another)
    assert result.ok, result.failures
    names = sorted(os.listdir(out))
    assert names == [f"target{i:02d}.octreg.csv" for i in range(14)]   # no .part- leftovers
    assert len(set(result)) == 14
    for path, target in zip(result, targets):
        assert same_octreg(pvd.read_result("octreg", path), local.octreg(reference, target))


@pytest.mark.skipif("opencl" not in BACKENDS, reason="no OpenCL device")
def test_opencl_workers_equal_single_process_opencl(deterministic):
    left = parvis.imread(STEREO / "tsukuba" / "left.pgm")
    right = parvis.imread(STEREO / "tsukuba" / "right.pgm")
    pairs = [(left, right), (left[:, 8:], right[:, 8:])]
    reference = texture((48, 64), seed=13, smooth=2)
    movings = [np.roll(reference, (k, -k), axis=(0, 1)) for k in range(3)]
    with local_cluster(2) as cluster, distributed.Client(cluster) as c:
        disparities = pvd.stereo(c, pairs, backend="opencl", ndisp=16, window=5)
        shifts = pvd.phase_correlate(c, reference, movings, upsample=8)
        assert disparities.ok and shifts.ok
        backends = {s.get("backend") for s in pvd.worker_stats(c).values() if s["tasks"]}
        assert backends == {"opencl"}
    with parvis.Context("opencl") as ctx:
        for (l_img, r_img), got in zip(pairs, disparities):
            np.testing.assert_array_equal(got, ctx.stereo_sad(l_img, r_img, ndisp=16, window=5))
        for moving, got in zip(movings, shifts):
            want = ctx.phase_correlate(reference, moving, upsample=8)
            np.testing.assert_array_equal(got.shift, want.shift)
            assert got.peak == want.peak


def test_worker_without_its_device_hands_items_to_the_others(client, local):
    """A worker whose device cannot be opened fails each item twice (context
    rebuilt in between), then the client reruns the item on the other
    workers: the batch completes."""
    env = dict(os.environ, PARVIS_DEVICE="no-such-device", **DETERMINISTIC)
    address = client.scheduler.address
    before = set(client.scheduler_info()["workers"])
    broken = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address,
                               "--nworkers", "1", "--nthreads", "1", "--no-dashboard"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client.wait_for_workers(len(before) + 1, timeout=60)
        victim = (set(client.scheduler_info()["workers"]) - before).pop()
        reference = texture((40, 40), seed=12, smooth=2)
        movings = [np.roll(reference, k, axis=1) for k in range(8)]
        pvd.reset_stats(client)
        result = pvd.phase_correlate(client, reference, movings, upsample=2)
        assert result.ok, result.failures
        for moving, got in zip(movings, result):
            np.testing.assert_array_equal(
                got.shift, local.phase_correlate(reference, moving, upsample=2).shift)
        stats = pvd.worker_stats(client)[victim]
        assert stats["tasks"] == 0 and stats["context_builds"] == 0
        assert stats["device_failures"] >= 2       # it tried, and gave its items away
    finally:
        broken.terminate()
        broken.wait(timeout=60)
