#!/usr/bin/env python3
"""SIFT matches between two images, drawn side by side into a PNG.

    python sift_matches_png.py [IMAGE1 IMAGE2] [--ratio 0.8] [--mutual]
                               [--backend auto|cpu|opencl] [-o matches.png]

Without images it matches the bundled Venus pair."""
from __future__ import annotations

import argparse
import pathlib

import numpy as np

import parvis
from _png import draw_line, write_png

DATA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "stereo"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("images", nargs="*", default=[DATA / "venus" / "left.pgm",
                                                   DATA / "venus" / "right.pgm"])
    ap.add_argument("--ratio", type=float, default=0.8)
    ap.add_argument("--mutual", action="store_true")
    ap.add_argument("--max-keypoints", type=int, default=0)
    ap.add_argument("--backend", choices=["auto", "cpu", "opencl"], default="auto")
    ap.add_argument("-o", "--output", default="matches.png")
    args = ap.parse_args()
    if len(args.images) != 2:
        ap.error("give two images (or none)")

    a, b = (parvis.imread(p) for p in args.images)
    with parvis.Context(args.backend) as ctx:
        kp1, d1 = ctx.sift(a, max_keypoints=args.max_keypoints)
        kp2, d2 = ctx.sift(b, max_keypoints=args.max_keypoints)
        matches = ctx.match(d1, d2, ratio=args.ratio, mutual=args.mutual)
        print(f"{len(kp1)} and {len(kp2)} keypoints, {len(matches.pairs)} matches "
              f"on {ctx.backend} ({ctx.device_name})")

    h = max(a.shape[0], b.shape[0])
    canvas = np.zeros((h, a.shape[1] + b.shape[1], 3), np.uint8)
    canvas[:a.shape[0], :a.shape[1]] = a[..., None]
    canvas[:b.shape[0], a.shape[1]:] = b[..., None]
    rng = np.random.default_rng(0)
    for q, t in matches.pairs:
        colour = tuple(int(c) for c in rng.integers(64, 256, 3))
        draw_line(canvas, kp1[q, 0], kp1[q, 1], kp2[t, 0] + a.shape[1], kp2[t, 1], colour)
    write_png(args.output, canvas)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
