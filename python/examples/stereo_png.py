#!/usr/bin/env python3
"""Disparity of a stereo pair, saved as a colour-mapped PNG.

    python stereo_png.py [--scene venus] [--method sad|bp] [--ndisp N]
                         [--backend auto|cpu|opencl] [-o disparity.png]

Reads the bundled Middlebury pair tests/data/stereo/SCENE (or --left/--right),
prints the backend, the time and, with ground truth, the share of bad pixels.
Invalid pixels (SAD's checks) are black."""
from __future__ import annotations

import argparse
import pathlib

import parvis
from _png import colour_map, write_png

DATA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "stereo"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", default="venus", help="a folder of tests/data/stereo")
    ap.add_argument("--left")
    ap.add_argument("--right")
    ap.add_argument("--method", choices=["sad", "bp"], default="sad")
    ap.add_argument("--ndisp", type=int, default=20)
    ap.add_argument("--window", type=int, default=7)
    ap.add_argument("--crop", type=int, default=0, help="use only the top-left NxN pixels")
    ap.add_argument("--backend", choices=["auto", "cpu", "opencl"], default="auto")
    ap.add_argument("-o", "--output", default="disparity.png")
    args = ap.parse_args()

    left_path = pathlib.Path(args.left or DATA / args.scene / "left.pgm")
    right_path = pathlib.Path(args.right or DATA / args.scene / "right.pgm")
    left, right = parvis.imread(left_path), parvis.imread(right_path)
    if args.crop:
        left, right = left[:args.crop, :args.crop], right[:args.crop, :args.crop]
    with parvis.Context(args.backend) as ctx:
        if args.method == "sad":
            disparity = ctx.stereo_sad(left, right, args.ndisp, window=args.window,
                                       subpixel=True, lr_check=True)
        else:
            disparity = ctx.stereo_bp(left, right, args.ndisp)
        print(f"{args.method} on {ctx.backend} ({ctx.device_name}): "
              f"{ctx.last_timing['total']:.2f} ms")
    gt_path = left_path.parent / "gt.pgm"
    if gt_path.exists() and not args.left and not args.crop:
        scale = {"tsukuba": 16, "venus": 8, "cones-quarter": 4}.get(args.scene, 8)
        bad = parvis.disparity_error(disparity, parvis.imread(gt_path), gt_scale=scale,
                                     threshold=1, border=10)
        print(f"bad pixels (> 1 px): {100 * bad:.2f}%")
    write_png(args.output, colour_map(disparity, 0, args.ndisp))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
