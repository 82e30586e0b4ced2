"""The Python result equals the command-line tool's on the bundled data
(the same library underneath: identical numbers, up to the CLI's printed
precision)."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

import parvis
from conftest import CLI, STEREO

pytestmark = pytest.mark.skipif(not CLI.exists(), reason=f"no CLI at {CLI}")


def run_cli(*args):
    done = subprocess.run([str(CLI), *map(str, args), "--backend", "cpu"], check=True,
                          capture_output=True, text=True)
    return done.stdout


def numeric_rows(path):
    return np.array([[float(v) for v in line.split()] for line in open(path)
                     if line.strip() and not line.startswith("#")])


@pytest.mark.parametrize("scene", ["tsukuba", "venus"])
def test_stereo_sad_equals_cli(cpu, tmp_path, scene):
    left, right = STEREO / scene / "left.pgm", STEREO / scene / "right.pgm"
    out = tmp_path / "sad.pfm"
    run_cli("stereo", left, right, "-o", out, "--method", "sad", "--ndisp", 20,
            "--window", 7, "--subpixel", "--lr-check")
    ours = cpu.stereo_sad(parvis.imread(left), parvis.imread(right), 20, window=7,
                          subpixel=True, lr_check=True)
    np.testing.assert_array_equal(ours, parvis.imread(out, np.float32))


@pytest.mark.parametrize("update,precision", [("serial", "f32"), ("cooperative", "f32"),
                                              ("cooperative", "f16")])
def test_stereo_bp_equals_cli(cpu, tmp_path, update, precision):
    left, right = STEREO / "tsukuba" / "left.pgm", STEREO / "tsukuba" / "right.pgm"
    out = tmp_path / "bp.pfm"
    run_cli("stereo", left, right, "-o", out, "--method", "bp", "--ndisp", 16,
            "--iterations", 5, "--levels", 4, "--message-update", update,
            "--message-precision", precision)
    ours = cpu.stereo_bp(parvis.imread(left), parvis.imread(right), 16, iterations=5, levels=4,
                         message_update=update, message_precision=precision)
    np.testing.assert_array_equal(ours, parvis.imread(out, np.float32))


def test_sift_equals_cli(cpu, tmp_path):
    image = STEREO / "venus" / "left.pgm"
    out = tmp_path / "keys.txt"
    run_cli("sift", image, "-o", out, "--max-keypoints", 200)
    rows = numeric_rows(out)
    kp, desc = cpu.sift(parvis.imread(image), max_keypoints=200)
    assert kp.shape[0] == rows.shape[0] == 200
    np.testing.assert_allclose(kp[:, :3], rows[:, :3], atol=1e-4)
    np.testing.assert_allclose(kp[:, 3], rows[:, 3], atol=1e-6)
    np.testing.assert_array_equal(desc, rows[:, 4:].astype(np.uint8))


def test_match_equals_cli(cpu, tmp_path):
    a, b = STEREO / "tsukuba" / "left.pgm", STEREO / "tsukuba" / "right.pgm"
    out = tmp_path / "matches.txt"
    run_cli("match", a, b, "-o", out)
    rows = numeric_rows(out)
    kp1, d1 = cpu.sift(parvis.imread(a), descriptor_dtype=np.float32)
    kp2, d2 = cpu.sift(parvis.imread(b), descriptor_dtype=np.float32)
    m = cpu.match(d1, d2)
    assert len(m.pairs) == len(rows)
    np.testing.assert_allclose(kp1[m.pairs[:, 0], :2], rows[:, 0:2], atol=1e-4)
    np.testing.assert_allclose(kp2[m.pairs[:, 1], :2], rows[:, 2:4], atol=1e-4)
    np.testing.assert_allclose(m.distances, rows[:, 4], atol=1e-5)


def test_phasecorr_equals_cli(cpu):
    a, b = STEREO / "venus" / "left.pgm", STEREO / "venus" / "right.pgm"
    printed = [float(v) for v in run_cli("phasecorr", a, b, "--upsample", 20).split()]
    r = cpu.phase_correlate(parvis.imread(a), parvis.imread(b), upsample=20)
    np.testing.assert_allclose(r.shift, printed[:2], atol=1e-4)
    assert r.peak == pytest.approx(printed[2], abs=1e-5)


def test_ncc_equals_cli(cpu, tmp_path):
    image = parvis.imread(STEREO / "tsukuba" / "left.pgm")
    templ = tmp_path / "templ.pgm"
    parvis.imwrite(templ, image[100:132, 150:190])
    out = tmp_path / "map.pfm"
    printed = run_cli("ncc", templ, STEREO / "tsukuba" / "left.pgm", "-o", out,
                      "--min-overlap", 100).split()
    r = cpu.ncc(parvis.imread(templ), image, min_overlap=100)
    assert (r.x, r.y) == (int(printed[0]), int(printed[1])) == (150, 100)
    # The FFT plans FFTW measures may differ between processes: rounding
    # only, within the maps' documented 1e-4.
    np.testing.assert_allclose(r.map, parvis.imread(out, np.float32), atol=1e-4)
