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
import textwrap
from contextlib import ExitStack
from typing import Any, Dict, List, NamedTuple, Optional, Sequence

import distributed

from . import _batch
from ._plugin import register
from ._progress import ProgressBar


def _common(parser: argparse.ArgumentParser) -> None:
    where = parser.add_argument_group("cluster (one of --scheduler, --scheduler-file, --local)")
    choice = where.add_mutually_exclusive_group(required=True)
    choice.add_argument("--scheduler", metavar="ADDRESS",
                        help="address of a running Dask scheduler (tcp://host:8786)")
    choice.add_argument("--scheduler-file", metavar="PATH",
                        help="scheduler file written by 'dask scheduler --scheduler-file'")
    choice.add_argument("--local", metavar="N", type=int,
                        help="start a local cluster of N worker processes on this machine")
    where.add_argument("--threads", metavar="T", type=int, default=0,
                       help="with --local: OpenMP threads per worker (default: cores / N)")
    where.add_argument("--items-per-task", metavar="K", type=int, default=None,
                       help="inputs sent to a worker in one task (default: about four tasks "
                            "per worker, at most 16 inputs each); a worker reads a task's "
                            "next inputs and writes its results while the device computes")
    device = parser.add_argument_group("device")
    device.add_argument("--backend", choices=("auto", "cpu", "opencl"), default=None,
                        help="backend of every worker's context (default: keep the workers' "
                             "own setting, else auto)")
    device.add_argument("--device", default=None,
                        help="device index or name substring for every worker (default: each "
                             "worker's PARVIS_DEVICE or the GPU CUDA_VISIBLE_DEVICES leaves it)")
    files = parser.add_argument_group("files")
    files.add_argument("-o", "--output-dir", required=True, metavar="DIR",
                       help="directory of the result files (one per input; created if "
                            "missing; complete files already there are kept and skipped)")
    files.add_argument("--list", metavar="FILE",
                       help="read the inputs from FILE, one per line (stereo: LEFT RIGHT); "
                            "blank lines and lines starting with # are left out")
    files.add_argument("--quiet", action="store_true",
                       help="no progress bar on standard error")


def _volume_size(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--size", nargs=3, type=int, metavar=("Z", "Y", "X"),
                        help="shape of raw float32 volumes (.raw, .f32, .bin; x fastest); "
                             "NIfTI files carry their own")


#: Text shared by every sub-command's --help.
_OUTPUT_NOTE = ("Each input gets one output file in DIR, named after it, written "
                "atomically; running the command again skips complete outputs and redoes "
                "missing or truncated ones.  Standard output ends with a summary listing every "
                "failed input; exit status 0 when all completed, 1 when some failed, 2 for a "
                "usage error.")


def _command(commands: Any, name: str, summary: str, inputs: str, outputs: str,
             example: str) -> argparse.ArgumentParser:
    """A sub-command whose --help says what it reads, what it writes and
    how it is called."""
    return commands.add_parser(
        name, help=summary, formatter_class=argparse.RawDescriptionHelpFormatter,
        description=f"{summary[0].upper()}{summary[1:]}.\n\n"
                    + textwrap.fill(f"Inputs: {inputs}", 79) + "\n\n"
                    + textwrap.fill(f"Outputs: {outputs} {_OUTPUT_NOTE}", 79),
        epilog=f"example:\n  {example}")


class _Setting(NamedTuple):
    """One of a command's own options: its flag, its type (bool: a switch
    that is off unless given), its default, its --help text and the values
    it accepts (None: any of its type)."""
    flag: str
    kind: type
    default: Any
    help: str
    choices: Optional[Sequence[Any]] = None


#: Each command's own settings, in --help order.
_SETTINGS: Dict[str, Sequence[_Setting]] = {
    "octreg": (
        _Setting("--stripes", int, 10, "coarse stripes sampled across the volume (default 10)"),
        _Setting("--stripe-width", int, 3, "B-scans per coarse stripe (default 3)"),
        _Setting("--subvolume-width", int, 32,
                 "B-scans per fine sub-volume (factors 2, 3, 5, 7; default 32)"),
        _Setting("--subvolume-step", int, 16, "B-scans between fine sub-volumes (default 16)"),
        _Setting("--tolerance", float, 8.0,
                 "largest distance in voxels between the positions of neighbouring B-scans "
                 "before one is marked invalid (default 8)"),
        _Setting("--pad", str, "fft",
                 "zero padding of each B-scan in x and z: to a fast FFT size, to twice the size "
                 "(no wrap-around) or none (sizes must then have factors 2, 3, 5, 7 only; "
                 "default fft)", ("fft", "linear", "none")),
        _Setting("--subpixel", bool, False, "refine each shift below one voxel"),
    ),
    "stereo": (
        _Setting("--method", str, "sad",
                 "SAD block matching, belief propagation or semi-global matching (default sad)",
                 ("sad", "bp", "sgm")),
        _Setting("--ndisp", int, 64, "disparities searched, from --min-disp up (default 64)"),
        _Setting("--min-disp", int, 0, "smallest disparity searched (default 0)"),
        _Setting("--window", int, 5, "SAD block size (odd; default 5)"),
        _Setting("--subpixel", bool, False, "SAD: sub-pixel disparities"),
        _Setting("--levels", int, 5, "BP pyramid levels (default 5)"),
        _Setting("--iterations", int, 10, "BP message rounds per level (default 10)"),
        _Setting("--sigma", float, 1.0, "BP Gaussian pre-smoothing (0: none; default 1)"),
        _Setting("--census", str, "9x7", "SGM census window (default 9x7)",
                 ("5x5", "7x7", "9x7")),
        _Setting("--census-plain", bool, False,
                 "SGM: every window pixel against the centre, not mirrored pairs"),
        _Setting("--p1", int, 10, "SGM penalty of a one-disparity step (default 10)"),
        _Setting("--p2", int, 120, "SGM penalty of a larger step, >= --p1 (default 120)"),
        _Setting("--p2-adaptive", bool, False, "SGM: P2 divided by the intensity step"),
        _Setting("--paths", int, 8, "SGM aggregation directions (default 8)", (4, 8)),
        _Setting("--uniqueness", float, 0.95,
                 "SGM uniqueness ratio in (0, 1], 1 = off (default 0.95)"),
        _Setting("--no-lr-check", bool, False, "SGM: keep pixels failing the left-right check"),
        _Setting("--lr-max-diff", int, 1, "SGM left-right check's largest difference (default 1)"),
        _Setting("--no-subpixel", bool, False, "SGM: integer disparities"),
        _Setting("--median", bool, False, "SGM: 3x3 median of the result"),
    ),
    "flow3d": (
        _Setting("--against", str, "previous",
                 "flow of each volume from the previous one or from the first",
                 ("previous", "first")),
        _Setting("--alpha", float, 0.05,
                 "smoothness weight, in squared intensity units (default 0.05)"),
        _Setting("--beta", float, 0.0,
                 "divergence (volume-preserving) weight, 0 .. 2 alpha (default 0)"),
        _Setting("--rho", float, 2.0,
                 "standard deviation of the structure tensor's Gaussian, voxels (default 2)"),
        _Setting("--warps", int, 5, "re-samplings of the moving volume per level (default 5)"),
        _Setting("--iterations", int, 50, "Jacobi iterations per warp (default 50)"),
        _Setting("--levels", int, 1, "pyramid levels, factor 2 each (default 1)"),
    ),
    "sift": (
        _Setting("--first-octave", int, 0,
                 "-1: start from the image upsampled 2x (more, smaller keypoints); 0: from the "
                 "image (default)", (-1, 0)),
        _Setting("--peak-thresh", float, 0.01,
                 "smallest |DoG| of a keypoint, intensities in [0, 1] (default 0.01)"),
        _Setting("--edge-thresh", float, 10.0,
                 "largest principal-curvature ratio kept (edge rejection; default 10)"),
        _Setting("--max-keypoints", int, 0, "keep the strongest K keypoints (0: all)"),
    ),
    "phase": (
        _Setting("--upsample", int, 1,
                 "sub-pixel factor: the peak refined on a 1/N grid (1: integer)"),
        _Setting("--pad", str, "none",
                 "zero padding: none (circular correlation), to a fast FFT size, or to twice the "
                 "size (default none)", ("none", "fft", "linear")),
        _Setting("--window", str, "none",
                 "window applied before the transform (default none)", ("none", "hann")),
    ),
}


def _add_settings(parser: argparse.ArgumentParser, command: str) -> None:
    """Add the command's own settings (_SETTINGS) to its parser."""
    for setting in _SETTINGS[command]:
        if setting.kind is bool:
            parser.add_argument(setting.flag, action="store_true", help=setting.help)
            continue
        keywords: Dict[str, Any] = {"default": setting.default, "help": setting.help}
        if setting.kind is not str:
            keywords["type"] = setting.kind
        if setting.choices is not None:
            keywords["choices"] = setting.choices
        parser.add_argument(setting.flag, **keywords)


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parvis-dask", description="Run parvis over many files on a Dask cluster.  "
                                        "'parvis-dask COMMAND --help' describes each command.",
        epilog="Results: OCT registration CSV (.octreg.csv), disparity PFM (.disp.pfm), flow "
               "(.flow.npz: u, v, w), SIFT (.sift.npz: keypoints, descriptors), phase "
               "correlation JSON (.shift.json).  See docs/dask.md.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    octreg = _command(
        commands, "octreg", "register AO-OCT target volumes to a reference",
        "a reference volume and target volumes of its shape (B-scans, A-lines, depth): "
        "NIfTI-1 (.nii, .nii.gz), raw float32 (.raw, .f32, .bin, with --size) or .npy.",
        "TARGET.octreg.csv per target: a '# stripes=.. good_stripes=.. valid_bscans=.. "
        "subvolumes=..' line, then 'bscan,dx,dy,dz,peak,valid' rows (one per B-scan, "
        "shifts in voxels), then '# end'.",
        "parvis-dask octreg --local 4 -o registered/ reference.nii scans/*.nii")
    octreg.add_argument("reference", help="reference volume (read once, sent to every worker)")
    octreg.add_argument("inputs", nargs="*", metavar="TARGET", help="target volumes")
    _volume_size(octreg)
    _add_settings(octreg, "octreg")
    _common(octreg)

    stereo = _command(
        commands, "stereo", "disparity maps of stereo pairs",
        "LEFT RIGHT image pairs given one after the other (or 'LEFT RIGHT' lines with "
        "--list): PGM/PPM/PNG (8-bit) or PFM (float), rectified, left as reference.",
        "LEFT.disp.pfm per pair: the float32 disparity of each left pixel (greyscale "
        "little-endian PFM; inf where SAD or SGM finds no valid match).",
        "parvis-dask stereo --local 2 -o disp/ --method bp --ndisp 64 l1.png r1.png "
        "l2.png r2.png")
    stereo.add_argument("inputs", nargs="*", metavar="IMAGE",
                        help="LEFT RIGHT [LEFT RIGHT ...] images")
    _add_settings(stereo, "stereo")
    _common(stereo)

    flow = _command(
        commands, "flow3d", "3D optical flow along a volume sequence",
        "volumes of one shape (z, y, x) in time order: NIfTI-1, raw float32 (with --size) "
        "or .npy; at least two.",
        "MOVING.flow.npz per volume after the first: arrays u, v, w (float32, voxels) with "
        "moving(p + flow(p)) ~ fixed(p), the fixed volume being the previous one (or the "
        "first with --against first).",
        "parvis-dask flow3d --scheduler-file sched.json -o flow/ --against first frames/*.nii")
    flow.add_argument("inputs", nargs="*", metavar="VOLUME", help="volumes, in time order")
    _volume_size(flow)
    _add_settings(flow, "flow3d")
    _common(flow)

    sift = _command(
        commands, "sift", "SIFT keypoints and descriptors of images",
        "images: PGM/PPM/PNG (8-bit) or PFM (float); colour is turned to grey.",
        "IMAGE.sift.npz per image: keypoints (N x 4 float32: x, y, sigma, angle) and "
        "descriptors (N x 128 uint8).",
        "parvis-dask sift --local 2 -o features/ --list images.txt")
    sift.add_argument("inputs", nargs="*", metavar="IMAGE", help="images")
    _add_settings(sift, "sift")
    _common(sift)

    phase = _command(
        commands, "phase", "phase-correlate images or volumes with a reference",
        "a reference and moving images (PGM/PPM/PNG/PFM) or volumes (NIfTI-1, raw float32 "
        "with --size, .npy) of its shape.",
        "MOVING.shift.json per input: {\"shift\": [x, y(, z)], \"peak\": p, \"flags\": f}, "
        "the shift that moves the reference onto the moving input.",
        "parvis-dask phase --local 2 -o shifts/ --upsample 20 reference.pgm moving*.pgm")
    phase.add_argument("reference", help="reference image or volume (read once, sent to "
                                         "every worker)")
    phase.add_argument("inputs", nargs="*", metavar="MOVING",
                       help="images or volumes of the reference's shape")
    _volume_size(phase)
    _add_settings(phase, "phase")
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


def _sgm_settings(args: argparse.Namespace) -> Dict[str, Any]:
    """Context.stereo_sgm's keywords from the stereo command's SGM settings."""
    width, height = (int(n) for n in args.census.split("x"))
    return {"census": (width, height), "census_symmetric": not args.census_plain,
            "p1": args.p1, "p2": args.p2, "p2_adaptive": args.p2_adaptive, "paths": args.paths,
            "uniqueness": args.uniqueness, "lr_check": not args.no_lr_check,
            "lr_max_diff": args.lr_max_diff, "subpixel": not args.no_subpixel,
            "median": args.median}


def _run(args: argparse.Namespace, paths: List[str], client: distributed.Client,
         progress: Optional[ProgressBar]) -> Any:
    """The batch call of args.command (a BatchResult: the command waits)."""
    common: Dict[str, Any] = {"output_dir": args.output_dir, "progress": progress,
                              "items_per_task": args.items_per_task}
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
        elif args.method == "sgm":
            params.update(_sgm_settings(args))
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
    if args.items_per_task is not None and args.items_per_task < 1:
        parser.error("--items-per-task must be at least 1")
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

