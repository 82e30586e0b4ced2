#!/usr/bin/env python3
"""Correct SIFT matches of parvis, VLFeat and OpenCV under known homographies.

Each real photo (the bundled Middlebury left views) is warped by a known
homography H (rotation and scale, a ~40 degree viewpoint change, zoom,
blur, contrast change) into a second image.  Every detector runs with its
own defaults on both images, then the same matcher pairs them: brute-force
L2 nearest neighbour of each descriptor of image 1 among those of image 2,
kept when it passes Lowe's ratio test (d1 < 0.8 d2).  A match is correct
when H maps its point in image 1 to within 3 px of its point in image 2.

Detectors (rows of the table):
  parvis             `parvis sift` with its defaults (the reference preset)
  parvis fast        `parvis sift --preset fast`
  VLFeat sift        vl_sift with the defaults of VLFeat's `sift` program
                     (first octave -1, peak threshold 0, edge threshold 10)
  VLFeat vl_sift     vl_sift with the defaults of its MATLAB vl_sift
                     (first octave 0, otherwise the same)
  OpenCV             cv2.SIFT_create() defaults

VLFeat runs through bench/peers/vlfeat_sift_peer --features (built by make
when VLFeat is installed); OpenCV through the cv2 module.  A detector that
is missing is left out of the table and named on stderr.

Usage (from the build tree or with --build):
  /usr/bin/python3 bench/peers/sift_accuracy.py [--build _build]
      [--data tests/data/stereo] [--photos tsukuba,venus] [--check]
      [--parvis-options "--peak-thresh 0"]...
      [--markdown docs/sift.md] [--json out.json]

--markdown replaces the text between the markers
  <!-- sift-accuracy:begin --> and <!-- sift-accuracy:end -->
of that file with the table (the markers must be there).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

try:
    import cv2  # type: ignore
except ImportError:  # OpenCV's row is then left out
    cv2 = None

RATIO = 0.8            # Lowe's ratio test, the same for every detector
CORRECT_PX = 3.0       # reprojection error under H that counts as correct
PHOTOS = ("tsukuba", "venus", "cones-quarter")
BEGIN = "<!-- sift-accuracy:begin -->"
END = "<!-- sift-accuracy:end -->"


@dataclass
class Features:
    """Keypoint positions (N, 2) in pixels, origin at the centre of the
    top-left pixel, and their descriptors (N, 128) as float32."""
    points: np.ndarray
    descriptors: np.ndarray


@dataclass
class Transform:
    """How image 2 is made from image 1: a homography (image 1 pixels to
    image 2 pixels) and an optional change of the pixel values."""
    name: str
    homography: Callable[[int, int], np.ndarray]
    values: Optional[Callable[[np.ndarray], np.ndarray]] = None


def about_centre(width: int, height: int, linear: np.ndarray) -> np.ndarray:
    """The homography that applies `linear` (3x3) about the image centre."""
    cx, cy = (width - 1) / 2.0, (height - 1) / 2.0
    to_centre = np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1]], float)
    back = np.array([[1, 0, cx], [0, 1, cy], [0, 0, 1]], float)
    return back @ linear @ to_centre


def rotation_scale(degrees: float, scale: float) -> Callable[[int, int], np.ndarray]:
    """Rotation by `degrees` and isotropic scaling about the centre."""
    def make(width: int, height: int) -> np.ndarray:
        a = np.radians(degrees)
        c, s = scale * np.cos(a), scale * np.sin(a)
        return about_centre(width, height, np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]], float))
    return make


def viewpoint(degrees: float) -> Callable[[int, int], np.ndarray]:
    """The image of a plane turned by `degrees` about its vertical axis,
    seen by a pinhole camera (focal length = the image's larger side) that
    first saw it face on from the distance where one plane unit is one
    pixel: H = K [r1 r2 t] (K [e1 e2 t])^-1 with plane coordinates about
    the image centre."""
    def make(width: int, height: int) -> np.ndarray:
        f = float(max(width, height))
        a = np.radians(degrees)
        rotation = np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])
        t = np.array([0.0, 0.0, f])
        k = np.array([[f, 0, 0], [0, f, 0], [0, 0, 1]])
        turned = k @ np.column_stack([rotation[:, 0], rotation[:, 1], t])
        face_on = k @ np.column_stack([[1.0, 0, 0], [0, 1.0, 0], t])
        linear = turned @ np.linalg.inv(face_on)
        return about_centre(width, height, linear / linear[2, 2])
    return make


def identity(width: int, height: int) -> np.ndarray:
    """No geometric change."""
    return np.eye(3)


def gaussian_blur(sigma: float) -> Callable[[np.ndarray], np.ndarray]:
    """Blur of the given sigma (pixels)."""
    def apply(image: np.ndarray) -> np.ndarray:
        return cv2.GaussianBlur(image, (0, 0), sigma, borderType=cv2.BORDER_REFLECT)
    return apply


def contrast(gain: float, offset: float, gamma: float) -> Callable[[np.ndarray], np.ndarray]:
    """v -> 255 (gain (v / 255)^gamma) + offset, rounded and clipped to u8."""
    def apply(image: np.ndarray) -> np.ndarray:
        v = 255.0 * gain * (image.astype(np.float64) / 255.0) ** gamma + offset
        return np.clip(np.rint(v), 0, 255).astype(np.uint8)
    return apply


TRANSFORMS: Sequence[Transform] = (
    Transform("rotation 30 deg, scale 0.8", rotation_scale(30.0, 0.8)),
    Transform("viewpoint 40 deg", viewpoint(40.0)),
    Transform("zoom 1.5", rotation_scale(0.0, 1.5)),
    Transform("rotation 10 deg + blur sigma 2", rotation_scale(10.0, 1.0), gaussian_blur(2.0)),
    Transform("contrast 0.5, gamma 1.5, +40", identity, contrast(0.5, 40.0, 1.5)),
    Transform("rotation 45 deg, scale 0.6", rotation_scale(45.0, 0.6)),
)


def warp(image: np.ndarray, transform: Transform) -> Tuple[np.ndarray, np.ndarray]:
    """Image 2 (same size as image 1, black outside the warped photo) and H."""
    height, width = image.shape
    h = transform.homography(width, height)
    warped = cv2.warpPerspective(image, h, (width, height), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    if transform.values is not None:
        warped = transform.values(warped)
    return warped, h


def read_parvis_keys(path: str) -> Features:
    """The `parvis sift -o` text format: x y sigma angle d0 .. d127."""
    rows = np.loadtxt(path, comments="#", dtype=np.float64, ndmin=2)
    if rows.size == 0:
        return Features(np.zeros((0, 2)), np.zeros((0, 128), np.float32))
    return Features(rows[:, 0:2].copy(), rows[:, 4:132].astype(np.float32))


def parvis_detector(binary: str, extra: Sequence[str], backend: str) -> Callable[[str], Features]:
    """`parvis sift IMAGE -o KEYS.txt` with the given extra options."""
    def detect(image_path: str) -> Features:
        keys = image_path + ".parvis.txt"
        env = dict(os.environ, PARVIS_BACKEND=backend)
        subprocess.run([binary, "sift", image_path, "-o", keys, *extra], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        return read_parvis_keys(keys)
    return detect


def vlfeat_detector(binary: str, first_octave: int) -> Callable[[str], Features]:
    """vlfeat_sift_peer --features: records of 132 float32 (x y sigma angle d)."""
    def detect(image_path: str) -> Features:
        out = image_path + ".vlfeat.f32"
        subprocess.run([binary, "--image", image_path, "--first-octave", str(first_octave),
                        "--peak-thresh", "0", "--features", out], check=True,
                       stdout=subprocess.DEVNULL)
        rows = np.fromfile(out, dtype=np.float32).reshape(-1, 132)
        return Features(rows[:, 0:2].astype(np.float64), rows[:, 4:132].copy())
    return detect


def opencv_detector(image_path: str) -> Features:
    """cv2.SIFT_create() with its defaults on the 8-bit image."""
    image = cv2.imread(image_path, cv2.IMREAD_GRAYSCALE)
    keypoints, descriptors = cv2.SIFT_create().detectAndCompute(image, None)
    if descriptors is None:
        return Features(np.zeros((0, 2)), np.zeros((0, 128), np.float32))
    points = np.array([k.pt for k in keypoints], np.float64).reshape(-1, 2)
    return Features(points, descriptors.astype(np.float32))


def ratio_matches(a: np.ndarray, b: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Indices (i, j): j is the L2-nearest row of b to row i of a, kept when
    the nearest distance is below RATIO times the second nearest.  The
    ratio test does not depend on the descriptors' scale, so each
    detector's own descriptor units are used."""
    if len(a) == 0 or len(b) < 2:
        return np.zeros(0, int), np.zeros(0, int)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    squared = (a64 ** 2).sum(1)[:, None] + (b64 ** 2).sum(1)[None, :] - 2.0 * a64 @ b64.T
    np.maximum(squared, 0.0, out=squared)
    order = np.argsort(squared, axis=1)[:, :2]
    rows = np.arange(len(a))
    nearest, second = squared[rows, order[:, 0]], squared[rows, order[:, 1]]
    keep = nearest < (RATIO ** 2) * second
    return rows[keep], order[keep, 0]


def project(h: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Points (N, 2) mapped by the homography h."""
    homogeneous = np.column_stack([points, np.ones(len(points))]) @ h.T
    return homogeneous[:, :2] / homogeneous[:, 2:3]


def evaluate(first: Features, second: Features, h: np.ndarray) -> Dict[str, int]:
    """Matches, correct matches and keypoint counts of one pair."""
    i, j = ratio_matches(first.descriptors, second.descriptors)
    error = np.linalg.norm(project(h, first.points[i]) - second.points[j], axis=1)
    return {"matches": int(len(i)), "correct": int((error < CORRECT_PX).sum()),
            "keypoints1": int(len(first.points)), "keypoints2": int(len(second.points))}


def find_program(build: str, relative: str) -> Optional[str]:
    """An executable in the build tree, or None."""
    path = os.path.join(build, relative)
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def detectors(build: str, backend: str,
              variants: Sequence[str]) -> Dict[str, Callable[[str], Features]]:
    """The detectors that are available here, in table order; `variants`:
    extra parvis rows, each a string of `parvis sift` options."""
    found: Dict[str, Callable[[str], Features]] = {}
    parvis = find_program(build, "parvis")
    if parvis:
        found["parvis (defaults)"] = parvis_detector(parvis, [], backend)
        found["parvis --preset fast"] = parvis_detector(parvis, ["--preset", "fast"], backend)
        for options in variants:
            found["parvis " + options] = parvis_detector(parvis, options.split(), backend)
    else:
        print("sift_accuracy: no parvis program under %s" % build, file=sys.stderr)
    vlfeat = find_program(build, "bench/peers/vlfeat_sift_peer")
    if vlfeat:
        found["VLFeat (sift program defaults)"] = vlfeat_detector(vlfeat, -1)
        found["VLFeat (vl_sift defaults)"] = vlfeat_detector(vlfeat, 0)
    else:
        print("sift_accuracy: no bench/peers/vlfeat_sift_peer under %s" % build, file=sys.stderr)
    if cv2 is not None:
        found["OpenCV %s" % cv2.__version__] = opencv_detector
    else:
        print("sift_accuracy: no OpenCV (cv2) in this Python", file=sys.stderr)
    return found


def run(build: str, data: str, backend: str, variants: Sequence[str], photos: Sequence[str],
        workdir: str) -> Dict[str, object]:
    """Every pair through every detector: {"pairs": [...], "results": {...}}."""
    found = detectors(build, backend, variants)
    pairs: List[str] = []
    results: Dict[str, List[Dict[str, int]]] = {name: [] for name in found}
    for photo in photos:
        source = os.path.join(data, photo, "left.pgm")
        image = cv2.imread(source, cv2.IMREAD_GRAYSCALE)
        if image is None:
            raise SystemExit("sift_accuracy: cannot read %s" % source)
        first_path = os.path.join(workdir, photo + "-0.pgm")
        cv2.imwrite(first_path, image)
        first = {name: detect(first_path) for name, detect in found.items()}
        for number, transform in enumerate(TRANSFORMS, 1):
            warped, h = warp(image, transform)
            second_path = os.path.join(workdir, "%s-%d.pgm" % (photo, number))
            cv2.imwrite(second_path, warped)
            pairs.append("%s, %s" % (photo, transform.name))
            for name, detect in found.items():
                results[name].append(evaluate(first[name], detect(second_path), h))
            print("%-45s %s" % (pairs[-1], "  ".join(
                "%d/%d" % (results[n][-1]["correct"], results[n][-1]["matches"]) for n in found)),
                file=sys.stderr)
    return {"pairs": pairs, "results": results, "ratio": RATIO, "correct_px": CORRECT_PX}


def markdown(report: Dict[str, object]) -> str:
    """One row per pair, one column per detector: correct / all matches."""
    pairs: List[str] = report["pairs"]  # type: ignore[assignment]
    results: Dict[str, List[Dict[str, int]]] = report["results"]  # type: ignore[assignment]
    names = list(results)
    lines = ["| pair | " + " | ".join(names) + " |",
             "|---|" + "---:|" * len(names)]
    for p, pair in enumerate(pairs):
        best = max(results[n][p]["correct"] for n in names)
        cells = []
        for n in names:
            r = results[n][p]
            cell = "%d / %d" % (r["correct"], r["matches"])
            cells.append("**%s**" % cell if r["correct"] == best else cell)
        lines.append("| %s | %s |" % (pair, " | ".join(cells)))
    totals = []
    for n in names:
        correct = sum(r["correct"] for r in results[n])
        matches = sum(r["matches"] for r in results[n])
        totals.append("%d / %d (%.0f %%)" % (correct, matches, 100.0 * correct / max(matches, 1)))
    lines.append("| **all pairs** | " + " | ".join(totals) + " |")
    keys = ["%s %d" % (n, results[n][0]["keypoints1"]) for n in names] if pairs else []
    lines.append("")
    lines.append("Cells: correct matches / all matches after the ratio test (%.1f); correct: "
                 "reprojection error under the known homography below %g px; bold: the most "
                 "correct matches of the row.  Keypoints (oriented) on the first Tsukuba "
                 "image: %s." % (report["ratio"], report["correct_px"], ", ".join(keys)))
    return "\n".join(lines) + "\n"


# --check: parvis's defaults must keep up with each peer on every pair.
# OpenCV and VLFeat's vl_sift defaults: at least as many correct matches.
# VLFeat's sift program runs the same algorithm at the same settings and
# differs on about 1 % of keypoints: at least 98 % of its correct matches.
CHECK_SHARE = {"VLFeat (sift program defaults)": 0.98}


def check(report: Dict[str, object]) -> List[str]:
    """The pairs where parvis's defaults fall behind a peer (see CHECK_SHARE)."""
    results: Dict[str, List[Dict[str, int]]] = report["results"]  # type: ignore[assignment]
    pairs: List[str] = report["pairs"]  # type: ignore[assignment]
    ours = results.get("parvis (defaults)")
    if ours is None:
        return ["parvis did not run"]
    problems = []
    for name, theirs in results.items():
        if not (name.startswith("VLFeat") or name.startswith("OpenCV")):
            continue
        share = CHECK_SHARE.get(name, 1.0)
        for pair, a, b in zip(pairs, ours, theirs):
            if a["correct"] < share * b["correct"]:
                problems.append("%s: parvis %d correct matches, %s %d (at least %.0f %% wanted)"
                                % (pair, a["correct"], name, b["correct"], 100 * share))
    return problems


def replace_section(path: str, table: str) -> None:
    """Put the table between the markers of the markdown file."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit("sift_accuracy: %s has no %s ... %s markers" % (path, BEGIN, END))
    text = text[:start + len(BEGIN)] + "\n" + table + text[end:]
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line: run every pair, print the table, optionally store it."""
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(os.path.dirname(here))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.path.join(top, "_build"),
                   help="the build tree holding parvis and the VLFeat peer")
    p.add_argument("--data", default=os.path.join(top, "tests", "data", "stereo"),
                   help="folder with tsukuba/, venus/, cones-quarter/ (left.pgm each)")
    p.add_argument("--backend", default="cpu", choices=("cpu", "opencl", "auto"),
                   help="PARVIS_BACKEND for parvis (the counts do not depend on it)")
    p.add_argument("--parvis-options", metavar="OPTIONS", action="append", default=[],
                   help="an extra parvis row with these `parvis sift` options (repeatable)")
    p.add_argument("--photos", default=",".join(PHOTOS),
                   help="comma-separated sets under --data (default: %(default)s)")
    p.add_argument("--check", action="store_true",
                   help="exit 1 when parvis's defaults fall behind a peer on a pair")
    p.add_argument("--markdown", metavar="FILE", help="replace the marked table in FILE")
    p.add_argument("--json", metavar="FILE", help="write the counts as JSON")
    args = p.parse_args(argv)
    if cv2 is None:
        print("sift_accuracy: needs OpenCV (cv2) to make the warped images", file=sys.stderr)
        return 77
    with tempfile.TemporaryDirectory(prefix="sift-accuracy-") as workdir:
        report = run(args.build, args.data, args.backend, args.parvis_options,
                     [p for p in args.photos.split(",") if p], workdir)
    table = markdown(report)
    print(table)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    if args.markdown:
        replace_section(args.markdown, table)
    if args.check:
        problems = check(report)
        for problem in problems:
            print("sift_accuracy: behind: " + problem, file=sys.stderr)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
