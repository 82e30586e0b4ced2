"""The examples run (as a user would, in a subprocess) on small inputs,
write valid PNG files and print what they promise."""
from __future__ import annotations

import re
import subprocess
import sys
import zlib

import pytest

from conftest import BACKENDS, REPO

EXAMPLES = REPO / "python" / "examples"


def run(script, *args):
    done = subprocess.run([sys.executable, str(EXAMPLES / script), *map(str, args)],
                          capture_output=True, text=True, cwd=str(EXAMPLES), timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    idat = data.index(b"IDAT")
    length = int.from_bytes(data[idat - 4:idat], "big")
    raw = zlib.decompress(data[idat + 4:idat + 4 + length])
    channels = 3 if data[25] == 2 else 1
    assert len(raw) == height * (1 + width * channels)
    return width, height


@pytest.mark.parametrize("backend", BACKENDS)
def test_stereo_png(tmp_path, backend):
    out = tmp_path / "d.png"
    text = run("stereo_png.py", "--scene", "tsukuba", "--crop", 96, "--ndisp", 8,
               "--backend", backend, "-o", out)
    assert f"on {backend}" in text
    assert png_size(out) == (96, 96)


def test_stereo_png_bp_with_ground_truth(tmp_path):
    out = tmp_path / "bp.png"
    text = run("stereo_png.py", "--scene", "tsukuba", "--method", "bp", "--ndisp", 16,
               "--backend", "cpu", "-o", out)
    bad = float(re.search(r"bad pixels \(> 1 px\): ([0-9.]+)%", text).group(1))
    assert bad < 10
    assert png_size(out) == (384, 288)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sift_matches_png(tmp_path, backend):
    out = tmp_path / "m.png"
    left = REPO / "tests" / "data" / "stereo" / "tsukuba" / "left.pgm"
    right = REPO / "tests" / "data" / "stereo" / "tsukuba" / "right.pgm"
    text = run("sift_matches_png.py", left, right, "--max-keypoints", 100, "--mutual",
               "--backend", backend, "-o", out)
    matches = int(re.search(r"(\d+) matches", text).group(1))
    assert matches > 20
    assert png_size(out) == (2 * 384, 288)


@pytest.mark.parametrize("backend", BACKENDS)
def test_register_shift(backend):
    text = run("register_shift.py", "--size", 32, "--shift", 2, -3, 1, "--upsample", 10,
               "--backend", backend)
    got = re.search(r"3D recovered dx ([-+0-9.]+) dy ([-+0-9.]+) dz ([-+0-9.]+)", text)
    assert [float(v) for v in got.groups()] == [2.0, -3.0, 1.0]
    got2 = re.search(r"2D recovered dx ([-+0-9.]+) dy ([-+0-9.]+)", text)
    assert abs(float(got2.group(1)) - 2) <= 0.2 and abs(float(got2.group(2)) + 3) <= 0.2
