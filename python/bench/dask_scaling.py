"""Throughput of parvis.dask against the number of workers, and one GPU
worker against the in-process path.

Two workloads, each a directory of input files and one output file per
input (what ``parvis-dask`` does):

- OCT: AO-OCT target volumes registered to one reference (volumes/s);
- stereo: SAD disparity maps of frame pairs (pairs/s).

Every timed path reads its inputs from the files, computes, and writes its
results atomically (``parvis.dask.atomic_write``, fsync included), so the
in-process loop and the cluster do the same work; ``--in-memory`` leaves
the writing out (the cluster then returns the results to the client).  Contexts, plans and (for OpenCL) program
builds are made by a warm-up on two items before the clock starts.

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
``--device``, against the in-process loop on a context of the same backend
and device.  The papers' sizes: ``--oct-size 256 256 256 --oct-targets 32
--stereo-size 1920 1080 --stereo-pairs 200``.

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
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

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
                          volume_shape=self.shape)

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
                 ndisp: int) -> None:
        super().__init__(directory, count, distinct)
        self.ndisp = ndisp
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
        return pvd.stereo(client, list(items), method="sad", ndisp=self.ndisp, output_dir=out)

    def run_local(self, ctx: parvis.Context, items: Sequence[Any],
                 out: Optional[Path]) -> None:
        for left_path, right_path in items:
            disparity = ctx.stereo_sad(parvis.imread(left_path), parvis.imread(right_path),
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
#: False (--in-memory): results stay in memory (returned to the client by
#: the cluster, dropped by the in-process loop) instead of going to files.
WRITE_FILES = True


def output_dir(root: Path, name: str) -> Optional[Path]:
    return fresh_dir(root, name) if WRITE_FILES else None


def time_dask(workload: Workload, client: distributed.Client, root: Path) -> float:
    """Items per second of one batch on the cluster, after a warm-up; the
    workers' counters start from zero after the warm-up."""
    warm = workload.run_dask(client, workload.inputs[:2], output_dir(root, "warm"))
    if not warm.ok:
        raise RuntimeError(f"warm-up failed: {warm.failures}")
    pvd.reset_stats(client)
    best = 0.0
    for _ in range(REPEAT):
        out = output_dir(root, "out")   # fresh: complete outputs would be skipped
        start = time.perf_counter()
        result = workload.run_dask(client, workload.inputs, out)
        elapsed = time.perf_counter() - start
        if not result.ok:
            raise RuntimeError(f"batch failed: {result.failures[:3]}")
        best = max(best, len(workload.inputs) / elapsed)
    return best


def time_local(workload: Workload, ctx: parvis.Context, root: Path) -> float:
    """Items per second of the in-process loop, after a warm-up."""
    workload.run_local(ctx, workload.inputs[:2], output_dir(root, "warm"))
    best = 0.0
    for _ in range(REPEAT):
        out = output_dir(root, "out")
        start = time.perf_counter()
        workload.run_local(ctx, workload.inputs, out)
        best = max(best, len(workload.inputs) / (time.perf_counter() - start))
    return best


def worker_environment(threads: int) -> Dict[str, str]:
    """What a worker process must see: its OpenMP threads, and the OpenCL
    drivers the client sees (an ICD list given in the client's environment
    is passed on as it is, since a child's start-up may reset it)."""
    env = {"OMP_NUM_THREADS": str(threads)}
    for name in ("OCL_ICD_FILENAMES", "OCL_ICD_VENDORS"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def local_cluster(workers: int, threads: int, processes: bool = True) -> distributed.LocalCluster:
    extra: Dict[str, Any] = {"env": worker_environment(threads)} if processes else {}
    return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes,
                                    dashboard_address=":0", silence_logs=logging.ERROR, **extra)


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


def gpu(workloads: Sequence[Workload], backend: str, device: Optional[str], cores: int,
        root: Path, processes: bool = True) -> List[Dict[str, Any]]:
    rows = []
    dev: Any = int(device) if device is not None and device.isdigit() else device
    with parvis.Context(backend, device=dev) as ctx:
        name = ctx.device_name
        for workload in workloads:
            rate = time_local(workload, ctx, root)
            rows.append({"workload": workload.name, "path": "in-process", "workers": 0,
                         "device": name, "rate": rate, "unit": workload.unit})
    with local_cluster(1, cores, processes) as cluster, distributed.Client(cluster) as client:
        pvd.register(client, backend=backend, device=dev)
        for workload in workloads:
            rate = time_dask(workload, client, root)
            stats = next(iter(pvd.worker_stats(client).values()))
            rows.append({"workload": workload.name,
                         "path": "dask" if processes else "dask-thread", "workers": 1,
                         "device": stats.get("device_name", "?"), "rate": rate,
                         "unit": workload.unit})
    return rows


def start_worker(address: str, backend: str, device: Optional[str],
                 threads: int) -> subprocess.Popen:
    """One ``dask worker`` process whose parvis context uses `backend`."""
    env = dict(os.environ, PARVIS_BACKEND=backend, **worker_environment(threads))
    if device is not None:
        env["PARVIS_DEVICE"] = device
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
            for worker in workers:
                worker.terminate()
            for worker in workers:
                worker.wait(timeout=60)
    return rows


def table(rows: Sequence[Dict[str, Any]]) -> str:
    lines = [f"{'workload':8} {'path':10} {'workers':>7} {'threads/device':>24} "
             f"{'rate':>10}  unit   vs in-process"]
    base = {r["workload"]: r["rate"] for r in rows if r["path"] == "in-process"}
    for r in rows:  # the mixed mode compares with its GPU worker alone
        if r["path"] == "mixed" and r["workers"] == 1:
            base.setdefault(r["workload"], r["rate"])
    for r in rows:
        where = r.get("device", r.get("threads_per_worker", ""))
        ratio = r["rate"] / base[r["workload"]] if base.get(r["workload"]) else float("nan")
        lines.append(f"{r['workload']:8} {r['path']:10} {r['workers']:>7} {str(where):>24} "
                     f"{r['rate']:>10.3f}  {r['unit']:9} {ratio:.2f}x"
                     + (f"  items gpu/cpu {r['items_gpu']}/{r['items_cpu']}"
                        if "items_gpu" in r else ""))
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("scaling", "gpu", "mixed"), default="scaling")
    parser.add_argument("--cpu-workers", type=int, nargs="+", default=[1, 2],
                        help="mixed mode: CPU-backend workers beside the GPU worker")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4],
                        help="worker counts of the scaling mode")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1,
                        help="cores to share among a cluster's workers")
    parser.add_argument("--backend", default="opencl", help="gpu mode: backend")
    parser.add_argument("--device", default=None, help="gpu mode: device index or name")
    parser.add_argument("--workloads", nargs="+", choices=("oct", "stereo"),
                        default=["oct", "stereo"])
    parser.add_argument("--oct-size", type=int, nargs=3, default=[48, 64, 96],
                        metavar=("BSCANS", "ALINES", "DEPTH"))
    parser.add_argument("--oct-targets", type=int, default=12)
    parser.add_argument("--stereo-size", type=int, nargs=2, default=[480, 360],
                        metavar=("WIDTH", "HEIGHT"))
    parser.add_argument("--stereo-pairs", type=int, default=24)
    parser.add_argument("--stereo-ndisp", type=int, default=64)
    parser.add_argument("--distinct", type=int, default=4,
                        help="different inputs synthesised per workload")
    parser.add_argument("--workdir", default=None, help="where the files go (default: a "
                                                        "temporary directory, removed after)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="timed batches per measurement (the best rate is kept)")
    parser.add_argument("--in-memory", action="store_true",
                        help="keep results in memory instead of writing one file per input")
    parser.add_argument("--thread-worker", action="store_true",
                        help="gpu mode: the worker runs in the client's process (a thread, "
                             "through the scheduler as usual) instead of a process of its own")
    parser.add_argument("--json", default=None, help="also write the rows to this file")
    args = parser.parse_args(argv)
    global REPEAT, WRITE_FILES
    REPEAT = max(1, args.repeat)
    WRITE_FILES = not args.in_memory
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
                                            args.stereo_ndisp))
        if args.mode == "scaling":
            rows = scaling(workloads, args.workers, args.cores, root)
        elif args.mode == "mixed":
            rows = mixed(workloads, args.device, args.cpu_workers, args.cores, root)
        else:
            rows = gpu(workloads, args.backend, args.device, args.cores, root,
                       processes=not args.thread_worker)
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
