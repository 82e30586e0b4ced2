"""Register a directory of AO-OCT volumes to one reference on a Dask cluster.

Start a cluster first (docs/dask.md has the commands), one worker per GPU:

    dask scheduler --port 8786                                   # on the head node
    CUDA_VISIBLE_DEVICES=0 dask worker tcp://head:8786 --nworkers 1 --nthreads 1 &
    CUDA_VISIBLE_DEVICES=1 dask worker tcp://head:8786 --nworkers 1 --nthreads 1 &

then, from any machine that sees the same files:

    python dask_cluster.py --scheduler tcp://head:8786 \\
        --reference /data/ref.nii --targets '/data/scans/*.nii' --output /data/registered

Other ways to get workers:

    python dask_cluster.py --local 2 --demo          # two local workers, synthetic volumes
    python dask_cluster.py --slurm 4 --reference ... # four SLURM jobs of one GPU each
                                                     # (needs dask-jobqueue)

Each worker keeps one parvis context and the reference's plan, so every
target after a worker's first costs only its own registration.  Results
are CSV files (one per target) written atomically; run the same command
again after an interruption and it does only what is missing.
"""

from __future__ import annotations

import argparse
import glob
import logging
import os
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import List, Optional, Sequence

import distributed

import parvis
import parvis.dask as pvd


def slurm_cluster(jobs: int) -> distributed.deploy.Cluster:
    """A dask-jobqueue cluster of `jobs` SLURM jobs, one GPU worker each.

    SLURM sets CUDA_VISIBLE_DEVICES for the GPU it grants, so each worker's
    parvis context lands on its own GPU.  Adapt queue, account and walltime
    to the site."""
    from dask_jobqueue import SLURMCluster  # optional: pip install dask-jobqueue

    cluster = SLURMCluster(
        cores=8, processes=1, memory="32GB", walltime="02:00:00",
        job_extra_directives=["--gres=gpu:1"],
        job_script_prologue=["export OMP_NUM_THREADS=8"],
        worker_extra_args=["--nthreads", "1"])
    cluster.scale(jobs=jobs)
    return cluster


def demo_data(directory: Path, count: int = 6) -> tuple:
    """A synthetic reference and `count` targets with different eye motion."""
    shape = (40, 48, 64)  # B-scans, A-lines, depth
    reference = directory / "reference.nii"
    for k in range(count):
        syn = parvis.synthesize_oct(shape, seed=1, start=(k % 3, 0.0, k % 2))
        if k == 0:
            parvis.write_volume(reference, syn.reference)
        parvis.write_volume(directory / f"target{k:02d}.nii", syn.target)
    return str(reference), str(directory / "target*.nii")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--scheduler", help="address of a running scheduler")
    where.add_argument("--local", type=int, metavar="N", help="start N local workers")
    where.add_argument("--slurm", type=int, metavar="JOBS", help="start JOBS SLURM workers")
    parser.add_argument("--reference", help="reference volume (NIfTI)")
    parser.add_argument("--targets", help="glob of the target volumes (quote it)")
    parser.add_argument("--output", help="output directory (default: <reference dir>/out)")
    parser.add_argument("--backend", default="auto", choices=("auto", "cpu", "opencl"))
    parser.add_argument("--demo", action="store_true",
                        help="synthesise a small data set in a temporary directory and use it")
    args = parser.parse_args(argv)

    with ExitStack() as stack:
        if args.demo:
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            args.reference, args.targets = demo_data(directory)
        if not args.reference or not args.targets:
            parser.error("give --reference and --targets, or --demo")
        targets: List[str] = sorted(glob.glob(args.targets))
        output = args.output or os.path.join(os.path.dirname(args.reference), "out")

        if args.local:
            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=args.local, threads_per_worker=1, dashboard_address=":0",
                silence_logs=logging.ERROR))
            client = stack.enter_context(distributed.Client(cluster))
        elif args.slurm:
            cluster = stack.enter_context(slurm_cluster(args.slurm))
            client = stack.enter_context(distributed.Client(cluster))
            client.wait_for_workers(1)
        else:
            client = stack.enter_context(distributed.Client(args.scheduler))

        # One context per worker on the device its environment gives it.
        pvd.register(client, backend=args.backend)
        result = pvd.octreg(client, args.reference, targets, output_dir=output,
                            progress=pvd.ProgressBar("octreg"))
        for name, stats in sorted(pvd.worker_stats(client).items()):
            print(f"{name}: {stats.get('device_name', '-')}, {stats['tasks']} targets, "
                  f"{stats['plan_builds']} plan builds, {stats['plan_hits']} plan hits")
        print(f"{len(result) - len(result.failures)} of {len(result)} registered "
              f"({result.skipped} already done) into {output}")
        for failure in result.failures:
            print(f"  failed: {failure.source}: {failure.error}", file=sys.stderr)
        return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
