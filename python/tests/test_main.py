"""python -m parvis: the report, and the self-test's checks and verdicts."""
from __future__ import annotations

import io
import subprocess
import sys

import pytest

import parvis
from parvis import _selftest
from parvis.__main__ import main, report

PRESENT = [(name, check) for name, check, present in _selftest.CHECKS if present]


def test_report_names_version_backends_and_library():
    text = report()
    assert text.startswith(f"parvis {parvis.version()}")
    assert "backends: cpu" in text
    assert "libparvis: " in text and "libparvis: unknown" not in text
    assert f"OpenCL devices: {len(parvis.devices())}" in text


def test_report_lists_parvis_variables(monkeypatch):
    monkeypatch.setenv("PARVIS_LOG", "0")
    assert "  PARVIS_LOG=0" in report()


def test_module_runs_and_refuses_unknown_options():
    done = subprocess.run([sys.executable, "-m", "parvis"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("parvis ")
    bad = subprocess.run([sys.executable, "-m", "parvis", "--no-such-option"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "unrecognized arguments" in bad.stderr


@pytest.mark.parametrize("name,check", PRESENT, ids=[n for n, _ in PRESENT])
def test_each_check_passes_on_the_cpu(cpu, name, check):
    assert check(cpu)          # a description of the known answer met


def test_selftest_counts_a_wrong_answer_and_exits_1(monkeypatch):
    def wrong(ctx):
        raise _selftest.CheckFailed("deliberately wrong")

    def refused(ctx):
        return ctx.gaussian_blur([[1.0, 2.0]], -1.0)   # InvalidArgument: sigma < 0

    monkeypatch.setattr(_selftest, "CHECKS", [("good", _selftest.check_colour, True),
                                              ("wrong", wrong, True),
                                              ("refused", refused, True),
                                              ("absent", wrong, False)])
    monkeypatch.setattr(_selftest, "_targets", lambda: [("cpu", lambda: parvis.Context("cpu"))])
    out = io.StringIO()
    assert _selftest.run(out) == 2
    lines = out.getvalue().splitlines()
    assert lines[-1] == "selftest: 1 passed, 2 failed"
    assert any(line.split()[:2] == ["FAIL", "wrong"] and "deliberately wrong" in line
               for line in lines)
    assert any(line.split()[:2] == ["FAIL", "refused"] and "InvalidArgument" in line
               for line in lines)
    assert any(line.split()[:2] == ["skip", "absent"] for line in lines)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert main(["--selftest"]) == 1
