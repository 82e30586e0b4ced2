"""Context.set_progress: the callable sees a call's progress from 0 to its
total, an exception it raises cancels the call and comes back out of it,
and the context stays usable; the configuration in python -m parvis."""
from __future__ import annotations

from typing import List, Tuple

import numpy as np
import pytest

import parvis
from parvis.__main__ import report

from conftest import BACKENDS


def _pair() -> Tuple[np.ndarray, np.ndarray]:
    right = (np.random.default_rng(5).random((32, 48)) * 255).astype(np.uint8)
    return np.roll(right, 3, axis=1), right


@pytest.mark.parametrize("backend", BACKENDS)
def test_progress_reaches_the_total(backend):
    left, right = _pair()
    seen: List[Tuple[str, float, float]] = []
    with parvis.Context(backend) as ctx:
        ctx.set_progress(lambda op, done, total: seen.append((op, done, total)))
        ctx.stereo_bp(left, right, ndisp=8, levels=3, iterations=4)
    assert seen[0] == ("stereo_bp", 0.0, 12.0)       # levels x iterations, one tile
    assert seen[-1] == ("stereo_bp", 12.0, 12.0)
    dones = [done for _, done, _ in seen]
    assert dones == sorted(dones)


class Stop(Exception):
    pass


@pytest.mark.parametrize("backend", BACKENDS)
def test_exception_cancels_and_is_raised(backend):
    left, right = _pair()
    calls = []

    def stop_at_second(op: str, done: float, total: float) -> None:
        calls.append(done)
        if len(calls) == 2:
            raise Stop(op)

    with parvis.Context(backend) as ctx:
        ctx.set_progress(stop_at_second)
        with pytest.raises(Stop) as raised:
            ctx.stereo_bp(left, right, ndisp=8, levels=3, iterations=4)
        assert isinstance(raised.value.__cause__, parvis.Cancelled)
        assert len(calls) == 2
        ctx.set_progress(None)
        out = ctx.stereo_bp(left, right, ndisp=8, levels=3, iterations=4)  # still usable
        assert out.shape == left.shape and len(calls) == 2


def test_sgm_batch_counts_pairs(cpu):
    left, right = _pair()
    seen: List[float] = []
    cpu.set_progress(lambda op, done, total: seen.append(done))
    try:
        cpu.stereo_sgm_batch([left] * 3, [right] * 3, ndisp=16)
    finally:
        cpu.set_progress(None)
    assert seen == [0.0, 1.0, 2.0, 3.0]


def test_bad_callable_refused(cpu):
    with pytest.raises(TypeError):
        cpu.set_progress(42)


def test_report_lists_the_configuration(monkeypatch):
    monkeypatch.setenv("PARVIS_MEMORY_LIMIT", "3G")
    text = report()
    assert "  PARVIS_MEMORY_LIMIT=3G" in text
    assert "  PARVIS_KERNEL_TIMING (unset: runs)" in text
