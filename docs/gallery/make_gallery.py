#!/usr/bin/env python3
"""Regenerate the README's gallery (docs/gallery/*.png) from bundled data.

    python docs/gallery/make_gallery.py [--backend auto|cpu|opencl]
        [--only stereo,sift,oct,flow,speedup] [--bench-json FILE]
        [--parvis-cli PATH] [-o DIR]

Runs with the installed parvis package and numpy (after python/install.sh:
_build/venv/bin/python docs/gallery/make_gallery.py).  The pictures:

stereo.png   disparity of the bundled Middlebury 2014 Motorcycle pair
             (tests/data/stereo/motorcycle, quarter size) by SAD, BP and,
             where the package has Context.stereo_sgm, semi-global matching,
             beside the ground truth; each labelled with its share of known
             pixels off by more than 2 px (10 px border left out).
sift.png     SIFT matches between the two real views of the Motorcycle pair
             (two cameras), RANSAC's fundamental-matrix inliers in green, the
             outliers in red; the inliers are checked against the pair's
             ground-truth disparity (a rectified pair: a true match lies on
             the same row, the true disparity to the left).
oct.png      a synthesized AO-OCT volume pair (parvis.synthesize_oct: layers
             in depth, drift, tremor, saccades) seen along the slow scan
             (the A-lines averaged, so each column is one B-scan's depth
             profile): the reference, the target bent by the eye's motion,
             and the target after stripe-wise registration (Context.octreg);
             black columns are B-scans the registration left out.
flow.png     2D optical flow (Context.flow2d) on the Venus image warped by a
             known smooth field (`parvis synth-flow`, as docs/flow2d.md
             measures; a field of this script where the program is not
             found): the image, the true field and the estimate in colour.
speedup.png  CPU-vs-OpenCL speedups (kernel and end to end) from a bench
             record: --bench-json takes a parvis-bench --json file;
             the default is the quick suite measured on one H200
             (bench/results/h200-2026-11-28/parvis-quick-h200.json).

Every figure states the device it ran on or was measured on.  The pictures
are drawn with numpy only (gallery_draw.py), so that they look the same on a
machine without matplotlib.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import subprocess
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

import parvis
import gallery_draw as draw

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
STEREO = ROOT / "tests" / "data" / "stereo"
# The measured record the speedup chart is drawn from (one H200, parvis-bench --quick).
BENCH_RECORD = ROOT / "bench" / "results" / "h200-2026-11-28" / "parvis-quick-h200.json"
PANEL_SHRINK = 2          # the Motorcycle pair's panels at half size
STEREO_NDISP = 64         # Motorcycle (quarter size): disparities 0..63
BAD_THRESHOLD = 2.0       # Middlebury 2014's usual figure: bad > 2 px
BORDER = 10               # tests/data/stereo/README.md: 10 px left out


def device_label(ctx: parvis.Context) -> str:
    """The backend and device, as the pictures name them."""
    return f"{ctx.backend} ({ctx.device_name})"


def timed(call: Callable[[], Any]) -> Tuple[Any, float]:
    """call() and its wall time in ms."""
    start = time.perf_counter()
    result = call()
    return result, 1000 * (time.perf_counter() - start)


# ------------------------------------------------------------------ stereo
def stereo_methods(ctx: parvis.Context) -> List[Tuple[str, Callable[..., np.ndarray]]]:
    """The stereo methods to show: SAD, SGM when the package has it, BP."""
    methods: List[Tuple[str, Callable[..., np.ndarray]]] = [
        ("SAD 9X9", lambda l, r: ctx.stereo_sad(l, r, STEREO_NDISP, window=9, subpixel=True,
                                                lr_check=True))]
    if hasattr(ctx, "stereo_sgm"):   # semi-global matching, docs/stereo.md
        methods.append(("SGM", lambda l, r: ctx.stereo_sgm(l, r, ndisp=STEREO_NDISP, median=True)))
    methods.append(("BP", lambda l, r: ctx.stereo_bp(l, r, STEREO_NDISP)))
    return methods


def disparity_picture(disparity: np.ndarray) -> np.ndarray:
    """A disparity map in colour at the panels' size: whole pixels and every
    PANEL_SHRINK-th sample, so that the picture has one colour per
    disparity and stays small as a PNG (the error figures use the full map)."""
    s = PANEL_SHRINK
    return draw.rainbow(np.round(disparity[::s, ::s]), 0, STEREO_NDISP)


def stereo_figure(ctx: parvis.Context, out: pathlib.Path) -> None:
    """Disparity maps of the Motorcycle pair beside its ground truth."""
    scene = STEREO / "motorcycle"
    left, right = parvis.imread(scene / "left.pgm"), parvis.imread(scene / "right.pgm")
    truth = parvis.imread(scene / "gt.pfm", dtype=np.float32)
    truth = np.where(np.isfinite(truth) & (truth > 0), truth, np.nan)
    panels = [draw.titled(draw.backdrop(left, PANEL_SHRINK), "LEFT VIEW"),
              draw.titled(disparity_picture(truth), "GROUND TRUTH")]
    for name, method in stereo_methods(ctx):
        disparity, ms = timed(lambda: method(left, right))
        bad = parvis.disparity_error(disparity, np.nan_to_num(truth, nan=0.0), gt_scale=1.0,
                                     threshold=BAD_THRESHOLD, border=BORDER)
        print(f"stereo {name}: bad > 2 px {100 * bad:.2f} %, {ms:.0f} ms on "
              f"{device_label(ctx)}")
        panels.append(draw.titled(disparity_picture(disparity),
                                  f"{name}: {100 * bad:.1f}% BAD >2PX"))
    columns = 3 if len(panels) > 4 else 2
    figure = draw.grid(panels, columns)
    bar = draw.colour_bar(figure.shape[1] - 12, 12, 0, STEREO_NDISP,
                          "DISPARITY (PX); BLACK: INVALID OR UNKNOWN")
    footer = np.empty((bar.shape[0] + 6, figure.shape[1], 3), np.uint8)
    footer[:] = draw.BACKGROUND
    footer[:bar.shape[0], 6:6 + bar.shape[1]] = bar
    draw.save(out / "stereo.png", np.concatenate([figure, footer]),
              f"Motorcycle 741x500, {len(panels) - 2} methods")


# -------------------------------------------------------------------- sift
def disparity_check(truth: np.ndarray, p1: np.ndarray, p2: np.ndarray,
                    keep: np.ndarray) -> tuple[int, int]:
    """Of the kept matches with a known true disparity at their left point,
    (how many, how many within 1.5 px of it): in a rectified pair a right
    match lies at x - d on the same row."""
    x, y = np.rint(p1[:, 0]).astype(int), np.rint(p1[:, 1]).astype(int)
    d = truth[np.clip(y, 0, truth.shape[0] - 1), np.clip(x, 0, truth.shape[1] - 1)]
    known = keep & np.isfinite(d) & (d > 0)
    good = known & (np.abs((p1[:, 0] - p2[:, 0]) - d) <= 1.5) & (np.abs(p1[:, 1] - p2[:, 1]) <= 1.5)
    return int(known.sum()), int(good.sum())


def sift_figure(ctx: parvis.Context, out: pathlib.Path) -> None:
    """SIFT matches between the two real views of the Motorcycle pair, with
    RANSAC's fundamental-matrix inliers, checked against the ground truth."""
    scene = STEREO / "motorcycle"
    left, right = parvis.imread(scene / "left.pgm"), parvis.imread(scene / "right.pgm")
    truth = parvis.imread(scene / "gt.pfm", dtype=np.float32)
    rows, cols = left.shape
    f1, f2 = ctx.sift(left, max_keypoints=1500), ctx.sift(right, max_keypoints=1500)
    matches = ctx.match(f1.descriptors, f2.descriptors, ratio=0.8, mutual=True)
    p1, p2 = parvis.matched_points(f1.keypoints, f2.keypoints, matches.pairs)
    found = parvis.find_fundamental(ctx, p1, p2, threshold=1.0)
    inliers = np.asarray(found.inliers, bool)
    known, good = disparity_check(truth, p1, p2, inliers)
    print(f"sift: {len(f1.keypoints)} and {len(f2.keypoints)} keypoints, {len(p1)} matches, "
          f"{found.inlier_count} fundamental-matrix inliers; {good} of the {known} inliers "
          f"with a known true disparity agree with it within 1.5 px, on {device_label(ctx)}")
    s = PANEL_SHRINK
    canvas = np.concatenate([draw.backdrop(left, s), draw.backdrop(right, s)], axis=1)
    offset = cols // s
    order = np.argsort(inliers, kind="stable")          # outliers first, inliers on top
    for i in order[::6]:                                # every sixth match keeps it legible
        colour = (60, 230, 90) if inliers[i] else (235, 60, 50)
        draw.thick_line(canvas, (p1[i, 0] / s, p1[i, 1] / s),
                        (p2[i, 0] / s + offset, p2[i, 1] / s), colour, 1)
    title = f"{found.inlier_count}/{len(p1)} INLIERS (F); {good}/{known} ON TRUE DISPARITY"
    draw.save(out / "sift.png", draw.titled(canvas, title),
              f"Motorcycle left and right views, {rows} rows")


# --------------------------------------------------------------------- oct
def slow_section(volume: np.ndarray) -> np.ndarray:
    """A (B-scans, A-lines, depth) volume averaged over its A-lines, as a
    (depth, B-scans) picture: the retina-like layers run left to right
    along the slow scan, so the eye's motion in depth bends them."""
    return volume.mean(axis=1).T


def oct_figure(ctx: parvis.Context, out: pathlib.Path) -> None:
    """A synthesized AO-OCT pair before and after registration."""
    pair = parvis.synthesize_oct((160, 128, 64), seed=3, drift=(4.0, 2.0, 4.0), saccades=2,
                                 saccade_size=6.0)
    result, ms = timed(lambda: ctx.octreg(pair.reference, pair.target, registered=True,
                                            subpixel=True))
    registered = np.where(np.isfinite(result.registered), result.registered, 0.0)
    views = [slow_section(v) for v in (pair.reference, pair.target, registered)]
    lo, hi = 0.0, float(np.percentile(views[0], 99.5))
    error = np.abs(result.shifts[result.valid] - pair.shifts[result.valid])
    print(f"oct: {int(result.valid.sum())} of {len(result.valid)} B-scans registered, "
          f"median error {np.median(error):.2f} voxels, {ms:.0f} ms on {device_label(ctx)}")
    titles = ["REFERENCE", "TARGET, WITH EYE MOTION",
              f"TARGET REGISTERED ({int(result.valid.sum())} OF {len(result.valid)} B-SCANS)"]
    panels = [draw.titled(draw.nearest_resize(draw.grey(v, lo, hi), 3 * v.shape[0],
                                              3 * v.shape[1]), t)
              for v, t in zip(views, titles)]
    draw.save(out / "oct.png", draw.grid(panels, 1),
              "slow-axis sections (A-lines averaged), 160 B-scans x 64 depth")


# -------------------------------------------------------------------- flow
def find_cli(given: Optional[str]) -> Optional[str]:
    """The parvis program: --parvis-cli, else the quick start's install
    (_build/_prefix/bin), else PATH."""
    for candidate in (given, str(ROOT / "_build" / "_prefix" / "bin" / "parvis")):
        if candidate and pathlib.Path(candidate).is_file():
            return candidate
    return shutil.which("parvis")


def own_field(ctx: parvis.Context, image: np.ndarray) -> Tuple[np.ndarray, np.ndarray,
                                                                 np.ndarray, np.ndarray]:
    """Without the parvis program: a smooth rotation and zoom about the
    centre (at most about 4 px), moving = image, fixed sampled from it at
    x + flow(x) as `parvis synth-flow` does.  Returns fixed, moving, u, v."""
    rows, cols = image.shape
    ys, xs = np.mgrid[0:rows, 0:cols].astype(np.float32)
    cx, cy, r = cols / 2, rows / 2, max(rows, cols) / 2
    u = (4.0 * (-(ys - cy) * 0.6 + (xs - cx) * 0.4) / r).astype(np.float32)
    v = (4.0 * ((xs - cx) * 0.6 + (ys - cy) * 0.4) / r).astype(np.float32)
    moving = image.astype(np.float32)
    fixed = ctx.flow_warp(moving, (u, v, np.zeros_like(u)))
    return fixed, moving, u, v


def synth_flow(ctx: parvis.Context, cli: Optional[str], source: pathlib.Path
               ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str]:
    """A pair with known flow: fixed, moving (0..255), u, v and where it came from."""
    if cli is None:
        image = parvis.imread(source, dtype=np.float32)
        return (*own_field(ctx, image), "this script's field")
    with tempfile.TemporaryDirectory() as tmp:
        t = pathlib.Path(tmp)
        subprocess.run([cli, "synth-flow", str(source), str(t / "fixed.pfm"),
                        str(t / "moving.pfm"), str(t / "truth.flo"), "--magnitude", "4"],
                       check=True, capture_output=True)
        fixed = parvis.imread(t / "fixed.pfm", dtype=np.float32)
        moving = parvis.imread(t / "moving.pfm", dtype=np.float32)
        truth = parvis.read_flo(t / "truth.flo")
    return fixed, moving, truth.u, truth.v, "parvis synth-flow --magnitude 4"


def flow_figure(ctx: parvis.Context, cli: Optional[str], out: pathlib.Path) -> None:
    """The true and the estimated 2D flow of a warped real image, in colour."""
    fixed, moving, u, v, origin = synth_flow(ctx, cli, STEREO / "venus" / "left.pgm")
    flow, ms = timed(lambda: ctx.flow2d(fixed / 255.0, moving / 255.0))
    inner = (slice(8, -8), slice(8, -8))   # borders, where the warp clamps, left out
    epe = np.hypot(flow.u - u, flow.v - v)[inner]
    scale = float(np.hypot(u, v).max())
    print(f"flow ({origin}): mean end-point error {epe.mean():.3f} px, largest motion "
          f"{scale:.2f} px, {ms:.0f} ms on {device_label(ctx)}")
    s = PANEL_SHRINK
    panels = [draw.titled(draw.shrink(draw.grey(fixed), s), "VENUS, WARPED"),
              draw.titled(draw.shrink(draw.flow_colours(u, v, scale), s), "TRUE FLOW"),
              draw.titled(draw.shrink(draw.flow_colours(flow.u, flow.v, scale), s),
                          f"ESTIMATE: EPE {epe.mean():.2f} PX")]
    draw.save(out / "flow.png", draw.grid(panels, 3), origin)


# ----------------------------------------------------------------- speedup
def read_bench(path: pathlib.Path) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """A bench record's header and its rows that have CPU and OpenCL times."""
    record = json.loads(path.read_text())
    rows = [r for r in record.get("results", [])
            if r.get("cpu_ms") and r.get("opencl_kernel_ms") and r.get("opencl_total_ms")]
    if "fixture" in record:
        raise SystemExit(f"{path} is a test fixture of made-up numbers, not a measurement")
    if not rows:
        raise SystemExit(f"{path}: no row with CPU and OpenCL times")
    return record, rows


def device_of(record: Dict[str, Any]) -> str:
    """The OpenCL device a record names (parvis-bench's nested or flat field)."""
    nested = record.get("opencl") or {}
    return str(nested.get("device") or record.get("opencl_device") or "unknown device")


def speedup_figure(path: pathlib.Path, out: pathlib.Path) -> None:
    """CPU time over OpenCL kernel and end-to-end time, per row of a record."""
    record, rows = read_bench(path)
    labels = [f"{r['op']} {r.get('label') or r['case']}" for r in rows]
    kernel = [r["cpu_ms"] / r["opencl_kernel_ms"] for r in rows]
    total = [r["cpu_ms"] / r["opencl_total_ms"] for r in rows]
    cpu = record.get("cpu") or (record.get("cpu_backend") or {}).get("device", "CPU backend")
    driver = record.get("driver") or (record.get("opencl") or {}).get("driver_version") or ""

    subtitle = f"CPU BACKEND: {cpu}" + (f"; {driver}" if driver else "")
    figure = draw.bar_chart(labels, [("KERNELS", (255, 170, 45), kernel),
                                     ("END TO END", (70, 150, 240), total)],
                            f"SPEEDUP OVER THE CPU BACKEND ON {device_of(record)}", subtitle,
                            decades=(0, 3))
    draw.save(out / "speedup.png", figure, f"{len(rows)} rows of {path.name}")


FIGURES = ("stereo", "sift", "oct", "flow", "speedup")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=["auto", "cpu", "opencl"], default="auto")
    ap.add_argument("--only", default=",".join(FIGURES),
                    help="comma-separated figures to make (default: all)")
    ap.add_argument("--bench-json", type=pathlib.Path, default=BENCH_RECORD,
                    help="a parvis-bench --json record for speedup.png")
    ap.add_argument("--parvis-cli", help="the parvis program, for synth-flow")
    ap.add_argument("-o", "--output", type=pathlib.Path, default=HERE)
    args = ap.parse_args()
    wanted = [f for f in args.only.split(",") if f]
    unknown = sorted(set(wanted) - set(FIGURES))
    if unknown:
        ap.error(f"--only: unknown figures {unknown}; choose from {list(FIGURES)}")
    args.output.mkdir(parents=True, exist_ok=True)
    if "speedup" in wanted:
        speedup_figure(args.bench_json, args.output)
    if set(wanted) - {"speedup"}:
        with parvis.Context(args.backend) as ctx:
            print(f"running on {device_label(ctx)}")
            if "stereo" in wanted:
                stereo_figure(ctx, args.output)
            if "sift" in wanted:
                sift_figure(ctx, args.output)
            if "oct" in wanted:
                oct_figure(ctx, args.output)
            if "flow" in wanted:
                flow_figure(ctx, find_cli(args.parvis_cli), args.output)


if __name__ == "__main__":
    main()
