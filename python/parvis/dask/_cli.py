"""The ``parvis-dask`` command: parvis batches over files on a Dask cluster.

    parvis-dask octreg  --local 4 -o out/ reference.nii target*.nii
    parvis-dask stereo  --scheduler tcp://host:8786 -o out/ left1.png right1.png ...
    parvis-dask flow3d  --local 2 -o out/ --size 64 64 64 frame*.raw
    parvis-dask sift    --local 2 -o out/ images/*.pgm
    parvis-dask phase   --local 2 -o out/ reference.pgm moving*.pgm

Each input gets one output file in the output directory, written
atomically; running the same command again skips the outputs that are
already complete, so an interrupted job is resumed by running it again.
Progress goes to standard error, the summary (with every failed input and
its error) to standard output.  Exit status: 0 when every input completed,
1 when some failed, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from contextlib import ExitStack
from typing import Any, Dict, List, Optional, Sequence

import distributed

from . import _batch
from ._plugin import register
from ._progress import ProgressBar


def _common(parser: argparse.ArgumentParser) -> None:
    where = parser.add_argument_group("cluster")
    choice = where.add_mutually_exclusive_group(required=True)
    choice.add_argument("--scheduler", metavar="ADDRESS",
                        help="address of a running Dask scheduler (tcp://host:8786)")
    choice.add_argument("--scheduler-file", metavar="PATH",
                        help="scheduler file written by 'dask scheduler --scheduler-file'")
    choice.add_argument("--local", metavar="N", type=int,
                        help="start a local cluster of N worker processes on this machine")
    where.add_argument("--threads", metavar="T", type=int, default=0,
                       help="with --local: OpenMP threads per worker (default: cores / N)")
    device = parser.add_argument_group("device")
    device.add_argument("--backend", choices=("auto", "cpu", "opencl"), default=None,
                        help="backend of every worker's context (default: keep the workers' "
                             "own setting, else auto)")
    device.add_argument("--device", default=None,
                        help="device index or name substring for every worker (default: each "
                             "worker's PARVIS_DEVICE or the GPU CUDA_VISIBLE_DEVICES leaves it)")
    files = parser.add_argument_group("files")
    files.add_argument("-o", "--output-dir", required=True, metavar="DIR",
                       help="directory of the result files (one per input)")
    files.add_argument("--list", metavar="FILE",
                       help="read the inputs from FILE, one per line (stereo: LEFT RIGHT)")
    files.add_argument("--quiet", action="store_true", help="no progress bar")


def _volume_size(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--size", nargs=3, type=int, metavar=("Z", "Y", "X"),
                        help="shape of raw float32 volumes (x fastest); NIfTI files need none")


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parvis-dask", description="Run parvis over many files on a Dask cluster.",
        epilog="Results: OCT registration CSV (.octreg.csv), disparity PFM (.disp.pfm), flow "
               "(.flow.npz: u, v, w), SIFT (.sift.npz: keypoints, descriptors), phase "
               "correlation JSON (.shift.json).  See docs/dask.md.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    octreg = commands.add_parser("octreg", help="register AO-OCT target volumes to a reference")
    octreg.add_argument("reference", help="reference volume")
    octreg.add_argument("inputs", nargs="*", metavar="TARGET", help="target volumes")
    _volume_size(octreg)
    octreg.add_argument("--stripes", type=int, default=10)
    octreg.add_argument("--stripe-width", type=int, default=3)
    octreg.add_argument("--subvolume-width", type=int, default=32)
    octreg.add_argument("--subvolume-step", type=int, default=16)
    octreg.add_argument("--tolerance", type=float, default=8.0)
    octreg.add_argument("--pad", choices=("fft", "linear", "none"), default="fft")
    octreg.add_argument("--subpixel", action="store_true")
    _common(octreg)

    stereo = commands.add_parser("stereo", help="disparity maps of stereo pairs")
    stereo.add_argument("inputs", nargs="*", metavar="IMAGE",
                        help="LEFT RIGHT [LEFT RIGHT ...] images")
    stereo.add_argument("--method", choices=("sad", "bp"), default="sad")
    stereo.add_argument("--ndisp", type=int, default=64)
    stereo.add_argument("--min-disp", type=int, default=0)
    stereo.add_argument("--window", type=int, default=5, help="SAD block size (odd)")
    stereo.add_argument("--subpixel", action="store_true", help="SAD: sub-pixel disparities")
    stereo.add_argument("--levels", type=int, default=5, help="BP pyramid levels")
    stereo.add_argument("--iterations", type=int, default=10, help="BP rounds per level")
    stereo.add_argument("--sigma", type=float, default=1.0, help="BP pre-smoothing")
    _common(stereo)

    flow = commands.add_parser("flow3d", help="3D optical flow along a volume sequence")
    flow.add_argument("inputs", nargs="*", metavar="VOLUME", help="volumes, in time order")
    _volume_size(flow)
    flow.add_argument("--against", choices=("previous", "first"), default="previous",
                      help="flow of each volume from the previous one or from the first")
    flow.add_argument("--alpha", type=float, default=0.05)
    flow.add_argument("--beta", type=float, default=0.0)
    flow.add_argument("--rho", type=float, default=2.0)
    flow.add_argument("--warps", type=int, default=5)
    flow.add_argument("--iterations", type=int, default=50)
    flow.add_argument("--levels", type=int, default=1)
    _common(flow)

    sift = commands.add_parser("sift", help="SIFT keypoints and descriptors of images")
    sift.add_argument("inputs", nargs="*", metavar="IMAGE")
    sift.add_argument("--first-octave", type=int, choices=(-1, 0), default=0)
    sift.add_argument("--peak-thresh", type=float, default=0.01)
    sift.add_argument("--edge-thresh", type=float, default=10.0)
    sift.add_argument("--max-keypoints", type=int, default=0, help="0: all")
    _common(sift)

    phase = commands.add_parser("phase", help="phase-correlate images or volumes with a "
                                              "reference")
    phase.add_argument("reference")
    phase.add_argument("inputs", nargs="*", metavar="MOVING")
    _volume_size(phase)
    phase.add_argument("--upsample", type=int, default=1, help="sub-pixel factor (1: integer)")
    phase.add_argument("--pad", choices=("none", "fft", "linear"), default="none")
    phase.add_argument("--window", choices=("none", "hann"), default="none")
    _common(phase)
    return parser


def _inputs(args: argparse.Namespace, parser: argparse.ArgumentParser) -> List[str]:
    paths = list(args.inputs)
    if args.list:
        with open(args.list) as listing:
            for line in listing:
                line = line.strip()
                if line and not line.startswith("#"):
                    paths.extend(line.split())
    if not paths:
        parser.error(f"{args.command}: no inputs (give paths or --list FILE)")
    return paths


def _shape(args: argparse.Namespace) -> Optional[tuple]:
    return tuple(args.size) if getattr(args, "size", None) else None


def _run(args: argparse.Namespace, paths: List[str], client: distributed.Client,
         progress: Optional[ProgressBar]) -> Any:
    """The batch call of args.command (a BatchResult: the command waits)."""
    common: Dict[str, Any] = {"output_dir": args.output_dir, "progress": progress}
    if args.command == "octreg":
        return _batch.octreg(client, args.reference, paths, volume_shape=_shape(args),
                             stripes=args.stripes, stripe_width=args.stripe_width,
                             subvolume_width=args.subvolume_width,
                             subvolume_step=args.subvolume_step, tolerance=args.tolerance,
                             pad=args.pad, subpixel=args.subpixel, **common)
    if args.command == "stereo":
        pairs = list(zip(paths[0::2], paths[1::2]))
        params: Dict[str, Any] = {"ndisp": args.ndisp, "min_disp": args.min_disp}
        if args.method == "sad":
            params.update(window=args.window, subpixel=args.subpixel)
        else:
            params.update(levels=args.levels, iterations=args.iterations, sigma=args.sigma)
        return _batch.stereo(client, pairs, method=args.method, **params, **common)
    if args.command == "flow3d":
        return _batch.flow3d_sequence(client, paths, against=args.against,
                                      volume_shape=_shape(args), alpha=args.alpha,
                                      beta=args.beta, rho=args.rho, warps=args.warps,
                                      iterations=args.iterations, levels=args.levels, **common)
    if args.command == "sift":
        return _batch.sift(client, paths, first_octave=args.first_octave,
                           peak_thresh=args.peak_thresh, edge_thresh=args.edge_thresh,
                           max_keypoints=args.max_keypoints, **common)
    return _batch.phase_correlate(client, args.reference, paths, upsample=args.upsample,
                                  volume_shape=_shape(args), pad=args.pad, window=args.window,
                                  **common)


def summary(command: str, result: _batch.BatchResult) -> str:
    """The closing report: counts, time, throughput and every failure."""
    total = len(result)
    failed = len(result.failures)
    ran = total - result.skipped - failed
    rate = ran / result.elapsed if result.elapsed > 0 else 0.0
    lines = [f"parvis-dask {command}: {total} inputs, {ran} done, {result.skipped} already "
             f"complete, {failed} failed, {result.elapsed:.1f} s ({rate:.2f} inputs/s)"]
    if failed:
        lines.append("failed:")
        lines.extend(f"  {failure.source}: {failure.error}" for failure in result.failures)
    return "\n".join(lines)


def _client(args: argparse.Namespace, stack: ExitStack) -> distributed.Client:
    if args.local is not None:
        if args.local < 1:
            raise SystemExit("parvis-dask: --local needs at least one worker")
        threads = args.threads or max(1, (os.cpu_count() or 1) // args.local)
        cluster = stack.enter_context(distributed.LocalCluster(
            n_workers=args.local, threads_per_worker=1, processes=True,
            dashboard_address=None, env={"OMP_NUM_THREADS": str(threads)},
            silence_logs=logging.ERROR))
        return stack.enter_context(distributed.Client(cluster))
    if args.scheduler_file:
        return stack.enter_context(distributed.Client(scheduler_file=args.scheduler_file))
    return stack.enter_context(distributed.Client(args.scheduler))


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``parvis-dask`` and ``python -m parvis.dask``."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    paths = _inputs(args, parser)  # usage errors before any cluster starts
    if args.command == "stereo" and len(paths) % 2:
        parser.error("stereo: give the images as LEFT RIGHT pairs (an even count)")
    with ExitStack() as stack:
        client = _client(args, stack)
        if args.backend is not None or args.device is not None:
            device = args.device
            if device is not None and device.isdigit():
                device = int(device)
            register(client, backend=args.backend or "auto", device=device)
        else:
            register(client, keep_settings=True)
        progress = None if args.quiet else ProgressBar(f"parvis-dask {args.command}")
        result = _run(args, paths, client, progress)
        assert isinstance(result, _batch.BatchResult)
        print(summary(args.command, result), flush=True)
        return 1 if result.failures else 0
    return 0  # pragma: no cover - the with block always returns


def entry_point() -> None:
    """Console-script wrapper: exit with main()'s status."""
    sys.exit(main())

