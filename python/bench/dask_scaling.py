"""Throughput of parvis.dask against the number of workers, and one GPU
worker against the in-process path.

Two workloads, each a directory of input files and one output file per
input (what ``parvis-dask`` does):

- OCT: AO-OCT target volumes registered to one reference (volumes/s);
- stereo: disparity maps of frame pairs by --stereo-method (SAD, BP or
  SGM; pairs/s).

Every timed path reads its inputs from the files, computes, and writes its
results atomically (``parvis.dask.atomic_write``, fsync included), so the
in-process loop and the cluster do the same work; ``--in-memory`` leaves
the writing out (the cluster then returns the results to the client).
Contexts, plans and (for OpenCL) program builds are made by a warm-up on
two items before the clock starts.

Modes:

``--mode scaling`` (default): a local cluster of 1, 2, 4 CPU-backend
workers (``--workers``), each worker running cores / workers OpenMP
threads, beside the in-process loop on one context using every core.

``--mode mixed``: one GPU worker (``PARVIS_BACKEND=opencl``, ``--device``)
alone, then joined by each count of ``--cpu-workers`` CPU-backend workers
(``PARVIS_BACKEND=cpu``), each worker its own ``dask worker`` process on the
cluster's scheduler.  The rows give the pool's rate and how many items each
kind of worker took, so a reader sees whether the CPU workers add their
share or only hold up the batch's tail.

``--mode gpu``: one worker on ``--backend`` (default opencl) and
``--device``, against the in-process paths on the same device: the loop on
one context, and the device-group path (``parvis.DeviceGroup`` of that one
device: ``octreg_sequence`` for OCT; SAD has no sequence call, so its group
path is one thread per device context).  The ratios and the per-item
difference are taken against the group path.  The papers' sizes:
``--oct-size 256 256 256 --oct-targets 32 --stereo-size 1920 1080
--stereo-pairs 200``.

``--mode overhead``: what one worker adds per item to the in-process loop
on ``--backend`` (default opencl; ``cpu`` to measure the distributed layer
alone): the two paths alternate, batch by batch, ``--repeat`` times, and
the median per-item difference of the rounds is reported, which a machine
whose load drifts does not bias.

``--mode multi-gpu``: one ``dask worker`` process per device of ``--gpus``
(each started with ``PARVIS_DEVICE=<device>``, or with
``CUDA_VISIBLE_DEVICES`` from ``--cuda-visible``), against the in-process
device group over the same devices.

Inputs are synthesised: ``--distinct`` different volumes / pairs, linked
under as many names as the batch needs (reads come from the page cache
after the warm-up).  Prints a table, and JSON with ``--json FILE``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

import distributed

import parvis
import parvis.dask as pvd
from parvis.dask import _outputs


# --------------------------------------------------------------- workloads
class Workload:
    """Input files of one batch and the calls that process them."""

    name = ""
    unit = ""

    def __init__(self, directory: Path, count: int, distinct: int) -> None:
        self.directory = directory
        self.count = count
        self.distinct = max(1, min(distinct, count))
        self.inputs: List[Any] = []

    def link(self, originals: Sequence[Path], suffix: str) -> List[Path]:
        """count names over `distinct` files (hard links, else copies)."""
        names = []
        for i in range(self.count):
            name = self.directory / f"in{i:04d}{suffix}"
            source = originals[i % len(originals)]
            if name != source:
                try:
                    os.link(source, name)
                except OSError:
                    shutil.copyfile(source, name)
            names.append(name)
        return names

    def run_dask(self, client: distributed.Client, items: Sequence[Any],
                 out: Optional[Path]) -> Any:
        raise NotImplementedError

    def run_local(self, ctx: parvis.Context, items: Sequence[Any],
                 out: Optional[Path]) -> None:
        raise NotImplementedError

    def run_group(self, group: "InProcessGroup", items: Sequence[Any],
                  out: Optional[Path]) -> None:
        raise NotImplementedError


class InProcessGroup:
    """The in-process path over several devices: a parvis.DeviceGroup (its
    sequence calls spread items over one thread per device) and one context
    per device for the operations the group has no sequence call for."""

    def __init__(self, backend: str, devices: Sequence[Any], cores: int) -> None:
        threads = cores if backend == "cpu" else 0
        # A CPU-backend group is one context on every core; device indices
        # are refused there.
        spec: Any = "all" if backend == "cpu" else list(devices)
        self.group = parvis.DeviceGroup(backend, devices=spec, cpu_threads=threads)
        self.contexts = [parvis.Context(backend, device=None if backend == "cpu" else d,
                                        cpu_threads=threads)
                         for d in (devices if backend != "cpu" else [None])]

    @property
    def size(self) -> int:
        return len(self.contexts)

    def each(self, items: Sequence[Any], work: Any) -> None:
        """work(context, item) over items, one thread per context taking the
        next item as it finishes one (the device group's own scheme)."""
        queue = list(reversed(items))
        lock = threading.Lock()
        errors: List[BaseException] = []

        def drain(ctx: parvis.Context) -> None:
            while True:
                with lock:
                    if not queue or errors:
                        return
                    item = queue.pop()
                try:
                    work(ctx, item)
                except BaseException as error:  # reported by the caller's thread
                    with lock:
                        errors.append(error)
                    return

        threads = [threading.Thread(target=drain, args=(c,)) for c in self.contexts]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]

    def close(self) -> None:
        for ctx in self.contexts:
            ctx.close()
        self.group.close()


class OctWorkload(Workload):
    name = "oct"
    unit = "volumes/s"

    def __init__(self, directory: Path, count: int, distinct: int,
                 shape: Tuple[int, int, int]) -> None:
        super().__init__(directory, count, distinct)
        self.shape = shape
        self.plans: Dict[int, Any] = {}  # one reference plan per in-process context
        self.reference_path = directory / "reference.raw"
        originals = []
        for k in range(self.distinct):
            syn = parvis.synthesize_oct(shape, seed=7, start=(k % 4, 0.0, k % 3))
            if k == 0:
                parvis.write_volume(self.reference_path, syn.reference)
            path = directory / f"distinct{k}.raw"
            parvis.write_volume(path, syn.target)
            originals.append(path)
        self.inputs = [str(p) for p in self.link(originals, ".raw")]

    def run_dask(self, client: distributed.Client, items: Sequence[Any],
                 out: Optional[Path]) -> Any:
        return pvd.octreg(client, str(self.reference_path), list(items), output_dir=out,
                          volume_shape=self.shape, **task_option())

    def run_group(self, group: InProcessGroup, items: Sequence[Any],
                  out: Optional[Path]) -> None:
        # The group's sequence call takes the targets in memory: read them
        # all first (the reading is timed too).
        reference = parvis.read_volume(self.reference_path, shape=self.shape)
        targets = [parvis.read_volume(path, shape=self.shape) for path in items]
        results = group.group.octreg_sequence(reference, targets)
        if out is not None:
            for path, result in zip(items, results):
                _outputs.write_result("octreg",
                                      out / (_outputs.input_stem(path) + ".octreg.csv"), result)

    def run_local(self, ctx: parvis.Context, items: Sequence[Any],
                 out: Optional[Path]) -> None:
        reference = parvis.read_volume(self.reference_path, shape=self.shape)
        plan = self.plans.get(id(ctx))
        if plan is None:
            plan = self.plans[id(ctx)] = ctx.octreg_plan(reference)
        for path in items:
            target = parvis.read_volume(path, shape=self.shape)
            result = plan.register(target)
            if out is not None:
                _outputs.write_result("octreg",
                                      out / (_outputs.input_stem(path) + ".octreg.csv"), result)


class StereoWorkload(Workload):
    name = "stereo"
    unit = "pairs/s"

    def __init__(self, directory: Path, count: int, distinct: int, size: Tuple[int, int],
                 ndisp: int, method: str = "sad") -> None:
        super().__init__(directory, count, distinct)
        self.ndisp = ndisp
        self.method = method
        width, height = size
        rng = np.random.default_rng(3)
        lefts, rights = [], []
        for k in range(self.distinct):
            base = rng.integers(0, 256, (height, width + ndisp), dtype=np.uint8)
            shift = 1 + (k * 7) % (ndisp - 1)
            left, right = directory / f"distinct{k}L.pgm", directory / f"distinct{k}R.pgm"
            parvis.imwrite(left, base[:, shift:shift + width])
            parvis.imwrite(right, base[:, :width])
            lefts.append(left)
            rights.append(right)
        left_names = self.link(lefts, "L.pgm")
        right_names = [self.directory / f"in{i:04d}R.pgm" for i in range(count)]
        for i, name in enumerate(right_names):
            source = rights[i % len(rights)]
            try:
                os.link(source, name)
            except OSError:
                shutil.copyfile(source, name)
        self.inputs = [(str(a), str(b)) for a, b in zip(left_names, right_names)]

    def run_dask(self, client: distributed.Client, items: Sequence[Any],
                 out: Optional[Path]) -> Any:
        return pvd.stereo(client, list(items), method=self.method, ndisp=self.ndisp,
                          output_dir=out, **task_option())

    def run_group(self, group: InProcessGroup, items: Sequence[Any],
                  out: Optional[Path]) -> None:
        # No stereo sequence call in the group: one thread per device
        # context, each taking the next pair.
        group.each(items, lambda ctx, pair: self.run_local(ctx, [pair], out))

    def run_local(self, ctx: parvis.Context, items: Sequence[Any],
                 out: Optional[Path]) -> None:
        for left_path, right_path in items:
            call = getattr(ctx, "stereo_" + self.method)
            disparity = call(parvis.imread(left_path), parvis.imread(right_path),
                             ndisp=self.ndisp)
            if out is not None:
                _outputs.write_result("stereo",
                                      out / (_outputs.input_stem(left_path) + ".disp.pfm"),
                                      disparity)


# ------------------------------------------------------------------ timing
def fresh_dir(root: Path, name: str) -> Path:
    path = root / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


#: Timed batches per measurement; the best rate is kept (set by --repeat).
REPEAT = 1
#: Items per task of the cluster's batches (None: parvis.dask's choice).
ITEMS_PER_TASK: Optional[int] = None


def task_option() -> Dict[str, Any]:
    """The batch calls' items_per_task, when --items-per-task gave one."""
    return {} if ITEMS_PER_TASK is None else {"items_per_task": ITEMS_PER_TASK}


#: False (--in-memory): results stay in memory (returned to the client by
#: the cluster, dropped by the in-process loop) instead of going to files.
WRITE_FILES = True


def output_dir(root: Path, name: str) -> Optional[Path]:
    return fresh_dir(root, name) if WRITE_FILES else None


def best_rate(workload: Workload, root: Path, run: Callable[[Optional[Path]], None]) -> float:
    """The most items per second of REPEAT calls of run(output directory)
    over all the inputs, each into a fresh directory (complete outputs
    would be skipped)."""
    best = 0.0
    for _ in range(REPEAT):
        out = output_dir(root, "out")
        start = time.perf_counter()
        run(out)
        best = max(best, len(workload.inputs) / (time.perf_counter() - start))
    return best


def time_dask(workload: Workload, client: distributed.Client, root: Path) -> float:
    """Items per second of one batch on the cluster, after a warm-up; the
    workers' counters start from zero after the warm-up."""
    warm = workload.run_dask(client, workload.inputs[:2], output_dir(root, "warm"))
    if not warm.ok:
        raise RuntimeError(f"warm-up failed: {warm.failures}")
    pvd.reset_stats(client)

    def batch(out: Optional[Path]) -> None:
        result = workload.run_dask(client, workload.inputs, out)
        if not result.ok:
            raise RuntimeError(f"batch failed: {result.failures[:3]}")

    return best_rate(workload, root, batch)


def time_local(workload: Workload, ctx: parvis.Context, root: Path) -> float:
    """Items per second of the in-process loop, after a warm-up."""
    workload.run_local(ctx, workload.inputs[:2], output_dir(root, "warm"))
    return best_rate(workload, root, lambda out: workload.run_local(ctx, workload.inputs, out))


def time_group(workload: Workload, group: InProcessGroup, root: Path) -> float:
    """Items per second of the in-process group path, after a warm-up."""
    workload.run_group(group, workload.inputs[:2 * group.size], output_dir(root, "warm"))
    return best_rate(workload, root,
                     lambda out: workload.run_group(group, workload.inputs, out))


def worker_environment(threads: int) -> Dict[str, str]:
    """What a worker process must see: its OpenMP threads, and the OpenCL
    drivers the client sees (an ICD list given in the client's environment
    is passed on as it is, since a child's start-up may reset it)."""
    env = {"OMP_NUM_THREADS": str(threads)}
    for name in ("OCL_ICD_FILENAMES", "OCL_ICD_VENDORS"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def local_cluster(workers: int, threads: int, processes: bool = True,
                  worker_threads: int = 1) -> distributed.LocalCluster:
    """workers processes (or threads of this one), each with worker_threads
    task threads and `threads` OpenMP threads."""
    extra: Dict[str, Any] = {"env": worker_environment(threads)} if processes else {}
    return distributed.LocalCluster(n_workers=workers, threads_per_worker=worker_threads,
                                    processes=processes, dashboard_address=":0",
                                    silence_logs=logging.ERROR, **extra)


def scaling(workloads: Sequence[Workload], worker_counts: Sequence[int], cores: int,
            root: Path) -> List[Dict[str, Any]]:
    rows = []
    with parvis.Context("cpu", cpu_threads=cores) as ctx:
        for workload in workloads:
            rate = time_local(workload, ctx, root)
            rows.append({"workload": workload.name, "path": "in-process", "workers": 0,
                         "threads_per_worker": cores, "rate": rate, "unit": workload.unit})
    for count in worker_counts:
        threads = max(1, cores // count)
        with local_cluster(count, threads) as cluster, distributed.Client(cluster) as client:
            pvd.register(client, backend="cpu")
            for workload in workloads:
                rate = time_dask(workload, client, root)
                rows.append({"workload": workload.name, "path": "dask", "workers": count,
                             "threads_per_worker": threads, "rate": rate,
                             "unit": workload.unit})
    return rows


def device_argument(device: Optional[str]) -> Any:
    """A --device value as parvis takes it: an index, a name substring or None."""
    return int(device) if device is not None and device.isdigit() else device


def gpu(workloads: Sequence[Workload], backend: str, device: Optional[str], cores: int,
        root: Path, processes: bool = True, worker_threads: int = 1) -> List[Dict[str, Any]]:
    """One worker on one device against the in-process paths on that device:
    the loop on one context and the device group of that one device."""
    rows = []
    dev = device_argument(device)
    threads = cores if backend == "cpu" else 0
    with parvis.Context(backend, device=dev, cpu_threads=threads) as ctx:
        name = ctx.device_name
        for workload in workloads:
            rate = time_local(workload, ctx, root)
            rows.append({"workload": workload.name, "path": "in-process", "workers": 0,
                         "device": name, "rate": rate, "unit": workload.unit})
    group = InProcessGroup(backend, [dev if dev is not None else 0], cores)
    try:
        for workload in workloads:
            rows.append({"workload": workload.name, "path": "in-process group", "workers": 0,
                         "device": name, "rate": time_group(workload, group, root),
                         "unit": workload.unit})
    finally:
        group.close()
    with local_cluster(1, cores, processes, worker_threads) as cluster, \
            distributed.Client(cluster) as client:
        pvd.register(client, backend=backend, device=dev)
        for workload in workloads:
            rate = time_dask(workload, client, root)
            stats = next(iter(pvd.worker_stats(client).values()))
            rows.append({"workload": workload.name,
                         "path": "dask" if processes else "dask-thread", "workers": 1,
                         "device": stats.get("device_name", "?"), "rate": rate,
                         "unit": workload.unit})
    return rows


def multi_gpu(workloads: Sequence[Workload], backend: str, gpus: Sequence[str],
              cuda_ids: Optional[Sequence[str]], cores: int,
              root: Path) -> List[Dict[str, Any]]:
    """One worker process per GPU against the in-process device group over
    the same GPUs.  gpus: the devices as parvis numbers or names them
    (parvis.devices()); the group opens them, and each worker gets one as
    its PARVIS_DEVICE.  cuda_ids (same order): start worker k with
    CUDA_VISIBLE_DEVICES=cuda_ids[k] instead, so that it sees that GPU alone
    and opens it by the automatic choice."""
    if cuda_ids is not None and len(cuda_ids) != len(gpus):
        raise ValueError("--cuda-visible: give one id per --gpus entry")
    rows = []
    devices = [device_argument(g) for g in gpus]
    group = InProcessGroup(backend, devices, cores)
    try:
        names = ", ".join(ctx.device_name for ctx in group.contexts)
        for workload in workloads:
            rows.append({"workload": workload.name, "path": "in-process group",
                         "workers": 0, "device": names,
                         "rate": time_group(workload, group, root), "unit": workload.unit})
    finally:
        group.close()
    threads = max(1, cores // max(1, len(gpus)))
    with distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=":0",
                                  silence_logs=logging.ERROR) as cluster, \
            distributed.Client(cluster) as client:
        workers = []
        try:
            for k, gpu_id in enumerate(gpus):
                extra = ({"CUDA_VISIBLE_DEVICES": str(cuda_ids[k])} if cuda_ids is not None
                         else {"PARVIS_DEVICE": str(gpu_id)})
                workers.append(start_worker(cluster.scheduler_address, backend,
                                            None, threads, extra))
            client.wait_for_workers(len(gpus), timeout=180)
            pvd.register(client, backend=backend)
            for workload in workloads:
                rate = time_dask(workload, client, root)
                opened = sorted(str(s.get("device_name", "?"))
                                for s in pvd.worker_stats(client).values())
                rows.append({"workload": workload.name, "path": "dask",
                             "workers": len(gpus), "device": ", ".join(opened),
                             "rate": rate, "unit": workload.unit})
        finally:
            stop_workers(workers)
    return rows


def overhead(workloads: Sequence[Workload], backend: str, device: Optional[str], cores: int,
             rounds: int, root: Path) -> List[Dict[str, Any]]:
    """What one worker adds per item to the in-process loop on the same
    backend, measured on a loaded machine: the two paths alternate, batch by
    batch, `rounds` times, and the median per-item difference of the rounds
    is reported (slow drifts of the machine's load cancel out)."""
    rows = []
    dev = device_argument(device)
    threads = cores if backend == "cpu" else 0
    with parvis.Context(backend, device=dev, cpu_threads=threads) as ctx, \
            local_cluster(1, cores) as cluster, distributed.Client(cluster) as client:
        pvd.register(client, backend=backend, device=dev)
        for workload in workloads:
            workload.run_local(ctx, workload.inputs[:2], output_dir(root, "warm"))
            warm = workload.run_dask(client, workload.inputs[:2], output_dir(root, "warm"))
            if not warm.ok:
                raise RuntimeError(f"warm-up failed: {warm.failures}")
            local_ms, dask_ms = [], []
            for _ in range(rounds):
                for times, run in ((local_ms, lambda out: workload.run_local(
                        ctx, workload.inputs, out)),
                                   (dask_ms, lambda out: workload.run_dask(
                        client, workload.inputs, out).raise_on_failure())):
                    out = output_dir(root, "out")
                    start = time.perf_counter()
                    run(out)
                    times.append(1e3 * (time.perf_counter() - start) / len(workload.inputs))
            differences = sorted(d - l for d, l in zip(dask_ms, local_ms))
            for path, times in (("in-process", local_ms), ("dask", dask_ms)):
                median = sorted(times)[len(times) // 2]
                rows.append({"workload": workload.name, "path": path,
                             "workers": 0 if path == "in-process" else 1,
                             "device": ctx.device_name, "rate": 1e3 / median,
                             "unit": workload.unit, "ms_per_item": median,
                             "extra_ms_per_item": (differences[len(differences) // 2]
                                                   if path == "dask" else 0.0),
                             "rounds": rounds})
    return rows


def start_worker(address: str, backend: str, device: Optional[str], threads: int,
                 extra_env: Optional[Dict[str, str]] = None) -> subprocess.Popen:
    """One ``dask worker`` process whose parvis context uses `backend`."""
    env = dict(os.environ, PARVIS_BACKEND=backend, **worker_environment(threads))
    if device is not None:
        env["PARVIS_DEVICE"] = device
    env.update(extra_env or {})
    command = [sys.executable, "-m", "distributed.cli.dask_worker", address,
               "--nworkers", "1", "--nthreads", "1", "--no-dashboard",
               "--name", f"{backend}-{time.monotonic_ns()}"]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def items_by_backend(client: distributed.Client) -> Dict[str, int]:
    """Tasks run since the last reset, summed by each worker's backend."""
    counts: Dict[str, int] = {}
    for stats in pvd.worker_stats(client).values():
        backend = str(stats.get("backend", "?"))
        counts[backend] = counts.get(backend, 0) + int(stats.get("tasks", 0))
    return counts


def mixed(workloads: Sequence[Workload], device: Optional[str], cpu_counts: Sequence[int],
          cores: int, root: Path) -> List[Dict[str, Any]]:
    """One GPU worker, then the same with CPU-backend workers beside it."""
    rows = []
    with distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=":0",
                                  silence_logs=logging.ERROR) as cluster, \
            distributed.Client(cluster) as client:
        workers = [start_worker(cluster.scheduler_address, "opencl", device, 2)]
        try:
            client.wait_for_workers(1, timeout=120)
            pvd.register(client, backend="auto")
            present = 0
            for count in sorted(set([0] + list(cpu_counts))):
                threads = max(1, (cores - 2) // max(1, count))
                while present < count:
                    workers.append(start_worker(cluster.scheduler_address, "cpu", None,
                                                threads))
                    present += 1
                client.wait_for_workers(1 + count, timeout=120)
                for workload in workloads:
                    rate = time_dask(workload, client, root)
                    taken = items_by_backend(client)
                    rows.append({"workload": workload.name, "path": "mixed", "workers": 1 + count,
                                 "device": f"1 gpu + {count} cpu x{threads}t",
                                 "rate": rate, "unit": workload.unit,
                                 "items_gpu": taken.get("opencl", 0),
                                 "items_cpu": taken.get("cpu", 0)})
        finally:
            stop_workers(workers)
    return rows


def stop_workers(workers: Sequence[subprocess.Popen]) -> None:
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.wait(timeout=60)


def baselines(rows: Sequence[Dict[str, Any]]) -> Dict[str, float]:
    """The rate each workload's rows are compared with: the in-process
    device group where measured, else the in-process loop, else (mixed mode)
    the GPU worker alone."""
    base: Dict[str, float] = {}
    for path in ("in-process group", "in-process"):
        for r in rows:
            if r["path"] == path:
                base.setdefault(r["workload"], r["rate"])
    for r in rows:
        if r["path"] == "mixed" and r["workers"] == 1:
            base.setdefault(r["workload"], r["rate"])
    return base


def table(rows: Sequence[Dict[str, Any]]) -> str:
    """The rows as text: rate, ratio to the baseline and, per item, the time
    the path adds to (or saves from) the baseline."""
    lines = [f"{'workload':8} {'path':16} {'workers':>7} {'threads/device':>24} "
             f"{'rate':>10}  {'unit':9} {'ratio':>6} {'ms/item vs base':>16}"]
    base = baselines(rows)
    for r in rows:
        where = r.get("device", r.get("threads_per_worker", ""))
        ratio, extra = float("nan"), float("nan")
        if base.get(r["workload"]) and r["rate"] > 0:
            ratio = r["rate"] / base[r["workload"]]
            extra = r.get("extra_ms_per_item",
                          1e3 * (1.0 / r["rate"] - 1.0 / base[r["workload"]]))
        lines.append(f"{r['workload']:8} {r['path']:16} {r['workers']:>7} {str(where):>24} "
                     f"{r['rate']:>10.3f}  {r['unit']:9} {ratio:>5.2f}x {extra:>+16.3f}"
                     + (f"  items gpu/cpu {r['items_gpu']}/{r['items_cpu']}"
                        if "items_gpu" in r else ""))
    return "\n".join(lines)


def parse_arguments(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("scaling", "gpu", "multi-gpu", "mixed", "overhead"),
                        default="scaling", help="what to compare (see below)")
    parser.add_argument("--cpu-workers", type=int, nargs="+", default=[1, 2],
                        help="mixed mode: CPU-backend workers beside the GPU worker")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4],
                        help="worker counts of the scaling mode")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1,
                        help="cores to share among a cluster's workers")
    parser.add_argument("--backend", default="opencl", choices=("cpu", "opencl"),
                        help="gpu, multi-gpu and overhead modes: backend (default opencl)")
    parser.add_argument("--device", default=None,
                        help="gpu, mixed and overhead modes: device index or name substring")
    parser.add_argument("--gpus", nargs="+", default=None, metavar="DEVICE",
                        help="multi-gpu mode: the devices (parvis indices or name substrings), "
                             "one worker each (default: every GPU of parvis.devices())")
    parser.add_argument("--cuda-visible", nargs="+", default=None, metavar="ID",
                        help="multi-gpu mode: start worker k with CUDA_VISIBLE_DEVICES=ID[k] "
                             "instead of PARVIS_DEVICE (one id per --gpus entry)")
    parser.add_argument("--worker-threads", type=int, default=1,
                        help="gpu mode: task threads of the worker (its context serves one "
                             "at a time; more overlap tasks' reading and writing)")
    parser.add_argument("--items-per-task", type=int, default=None,
                        help="items per Dask task (default: parvis.dask's choice)")
    parser.add_argument("--workloads", nargs="+", choices=("oct", "stereo"),
                        default=["oct", "stereo"], help="which workloads to time")
    parser.add_argument("--oct-size", type=int, nargs=3, default=[48, 64, 96],
                        metavar=("BSCANS", "ALINES", "DEPTH"), help="OCT volume shape")
    parser.add_argument("--oct-targets", type=int, default=12,
                        help="OCT targets per batch")
    parser.add_argument("--stereo-size", type=int, nargs=2, default=[480, 360],
                        metavar=("WIDTH", "HEIGHT"), help="stereo image size")
    parser.add_argument("--stereo-pairs", type=int, default=24, help="stereo pairs per batch")
    parser.add_argument("--stereo-ndisp", type=int, default=64,
                        help="disparities searched")
    parser.add_argument("--stereo-method", choices=("sad", "bp", "sgm"), default="sad",
                        help="the stereo method of the stereo workload (default sad)")
    parser.add_argument("--distinct", type=int, default=4,
                        help="different inputs synthesised per workload")
    parser.add_argument("--workdir", default=None, help="where the files go (default: a "
                                                        "temporary directory, removed after)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="timed batches per measurement (the best rate is kept; overhead "
                             "mode: rounds of both paths, medians reported)")
    parser.add_argument("--in-memory", action="store_true",
                        help="keep results in memory instead of writing one file per input")
    parser.add_argument("--thread-worker", action="store_true",
                        help="gpu mode: the worker runs in the client's process (a thread, "
                             "through the scheduler as usual) instead of a process of its own")
    parser.add_argument("--json", default=None, help="also write the rows to this file")
    args = parser.parse_args(argv)
    for name in ("repeat", "worker_threads", "cores", "oct_targets", "stereo_pairs", "distinct"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.items_per_task is not None and args.items_per_task < 1:
        parser.error("--items-per-task must be at least 1")
    if args.mode == "multi-gpu":
        if args.gpus is None:
            args.gpus = [str(d.index) for d in parvis.devices() if d.type.lower() == "gpu"]
            if not args.gpus:
                parser.error("multi-gpu: no OpenCL GPU found (name the devices with --gpus)")
        if args.cuda_visible is not None and len(args.cuda_visible) != len(args.gpus):
            parser.error("--cuda-visible: give one id per --gpus entry")
        if args.backend == "cpu":
            parser.error("multi-gpu: needs --backend opencl")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_arguments(argv)
    global REPEAT, WRITE_FILES, ITEMS_PER_TASK
    REPEAT = args.repeat
    WRITE_FILES = not args.in_memory
    ITEMS_PER_TASK = args.items_per_task
    load_before = os.getloadavg()  # other processes' load skews every figure: say so

    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        root = Path(tmp)
        workloads: List[Workload] = []
        if "oct" in args.workloads:
            workloads.append(OctWorkload(fresh_dir(root, "oct"), args.oct_targets,
                                         args.distinct, tuple(args.oct_size)))
        if "stereo" in args.workloads:
            workloads.append(StereoWorkload(fresh_dir(root, "stereo"), args.stereo_pairs,
                                            args.distinct, tuple(args.stereo_size),
                                            args.stereo_ndisp, args.stereo_method))
        if args.mode == "scaling":
            rows = scaling(workloads, args.workers, args.cores, root)
        elif args.mode == "mixed":
            rows = mixed(workloads, args.device, args.cpu_workers, args.cores, root)
        elif args.mode == "overhead":
            rows = overhead(workloads, args.backend, args.device, args.cores, args.repeat, root)
        elif args.mode == "multi-gpu":
            rows = multi_gpu(workloads, args.backend, args.gpus, args.cuda_visible, args.cores,
                             root)
        else:
            rows = gpu(workloads, args.backend, args.device, args.cores, root,
                       processes=not args.thread_worker, worker_threads=args.worker_threads)
    load = os.getloadavg()
    print(table(rows))
    print(f"cores {args.cores}, load average before/after {load_before[0]:.1f}/{load[0]:.1f}, "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"mode": args.mode, "args": vars(args), "rows": rows,
                       "load_average": [load_before[0], load[0]],
                       "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")}, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
