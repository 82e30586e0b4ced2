#!/usr/bin/env python3
"""SIFT matches between two images, drawn side by side into a PNG.

    python sift_matches_png.py [IMAGE1 IMAGE2] [--ratio 0.8] [--mutual]
                               [--homography] [--ransac-threshold 2]
                               [--backend auto|cpu|opencl] [-o matches.png]

Without images it matches the bundled Venus pair.  Every match is drawn
unless --homography is given: then a homography is estimated by RANSAC
and only its inliers are drawn, with the first image's outline mapped
into the second as a white quadrilateral (as `parvis match --homography
H.txt --draw M.png` draws them)."""
from __future__ import annotations

import argparse
import pathlib
from typing import Optional, Tuple

import numpy as np

import parvis
from _png import draw_line, write_png

DATA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "stereo"
WHITE = (255, 255, 255)

Segment = Tuple[float, float, float, float]


def clip_segment(segment: Segment, width: int, height: int) -> Optional[Segment]:
    """The part of a segment inside [0, width-1] x [0, height-1]
    (Liang-Barsky), or None.  A homography can send a corner very far;
    clipping first keeps the drawing as cheap as the canvas."""
    x0, y0, x1, y1 = segment
    lo, hi = 0.0, 1.0
    for start, delta, limit in ((x0, x1 - x0, width - 1), (y0, y1 - y0, height - 1)):
        if delta == 0:
            if not 0 <= start <= limit:
                return None
            continue
        ta, tb = sorted(((0 - start) / delta, (limit - start) / delta))
        lo, hi = max(lo, ta), min(hi, tb)
        if lo > hi:
            return None
    return (x0 + lo * (x1 - x0), y0 + lo * (y1 - y0), x0 + hi * (x1 - x0), y0 + hi * (y1 - y0))


def outline_segments(h: np.ndarray, width: int, height: int,
                     offset: int) -> list[Segment]:
    """The edges of image 1's border (corner pixel centres) mapped by H,
    shifted into the second half of the canvas; none when a corner maps to
    infinity or behind the camera."""
    corners = np.array([[0, 0, 1], [width - 1, 0, 1], [width - 1, height - 1, 1],
                        [0, height - 1, 1]], np.float64)
    mapped = corners @ h.T
    if np.any(mapped[:, 2] <= 1e-12):
        return []
    xy = mapped[:, :2] / mapped[:, 2:]
    return [(xy[i, 0] + offset, xy[i, 1], xy[(i + 1) % 4, 0] + offset, xy[(i + 1) % 4, 1])
            for i in range(4)]


def draw(canvas: np.ndarray, segment: Segment, colour: tuple) -> None:
    """One segment, clipped to the canvas."""
    clipped = clip_segment(segment, canvas.shape[1], canvas.shape[0])
    if clipped is not None:
        draw_line(canvas, *clipped, colour)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("images", nargs="*", default=[DATA / "venus" / "left.pgm",
                                                   DATA / "venus" / "right.pgm"])
    ap.add_argument("--ratio", type=float, default=0.8)
    ap.add_argument("--mutual", action="store_true")
    ap.add_argument("--max-keypoints", type=int, default=0)
    ap.add_argument("--homography", action="store_true",
                    help="draw only a RANSAC homography's inliers, and image 1's outline")
    ap.add_argument("--ransac-threshold", type=float, default=2.0,
                    help="inlier distance of the homography, px")
    ap.add_argument("--backend", choices=["auto", "cpu", "opencl"], default="auto")
    ap.add_argument("-o", "--output", default="matches.png")
    args = ap.parse_args()
    if len(args.images) != 2:
        ap.error("give two images (or none)")

    a, b = (parvis.imread(p) for p in args.images)
    model = None
    with parvis.Context(args.backend) as ctx:
        kp1, d1 = ctx.sift(a, max_keypoints=args.max_keypoints)
        kp2, d2 = ctx.sift(b, max_keypoints=args.max_keypoints)
        matches = ctx.match(d1, d2, ratio=args.ratio, mutual=args.mutual)
        print(f"{len(kp1)} and {len(kp2)} keypoints, {len(matches.pairs)} matches "
              f"on {ctx.backend} ({ctx.device_name})")
        keep = np.ones(len(matches.pairs), bool)
        if args.homography:
            p1, p2 = parvis.matched_points(kp1, kp2, matches.pairs)
            try:
                result = parvis.find_homography(ctx, p1, p2, threshold=args.ransac_threshold)
            except parvis.InvalidArgument as error:
                print(f"no homography ({error}); drawing every match")
            else:
                model, keep = result.model, result.inliers
                print(f"homography: {result.inlier_count} inliers of {len(matches.pairs)}")

    h = max(a.shape[0], b.shape[0])
    canvas = np.zeros((h, a.shape[1] + b.shape[1], 3), np.uint8)
    canvas[:a.shape[0], :a.shape[1]] = a[..., None]
    canvas[:b.shape[0], a.shape[1]:] = b[..., None]
    rng = np.random.default_rng(0)
    for (q, t), kept in zip(matches.pairs, keep):
        colour = tuple(int(c) for c in rng.integers(64, 256, 3))
        if kept:
            draw(canvas, (kp1[q, 0], kp1[q, 1], kp2[t, 0] + a.shape[1], kp2[t, 1]), colour)
    if model is not None:
        for segment in outline_segments(model, a.shape[1], a.shape[0], a.shape[1]):
            draw(canvas, segment, WHITE)
    write_png(args.output, canvas)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
