"""Queued calls (Context.submit and the *_async methods): each future's
result is exactly the synchronous call's, calls run in the order queued,
failures are raised by their future, close() and wait() let queued calls
finish, and two contexts work side by side.  On both backends."""
from __future__ import annotations

import threading
from concurrent.futures import Future

import numpy as np
import pytest

import parvis

from conftest import BACKENDS


def pair(seed: int, shape=(48, 64)) -> tuple:
    rng = np.random.default_rng(seed)
    left = rng.integers(0, 256, shape, dtype=np.uint8)
    return left, np.roll(left, -3, axis=1)


@pytest.fixture(params=BACKENDS)
def ctx(request):
    with parvis.Context(request.param) as context:
        yield context


def test_stereo_futures_equal_sync(ctx):
    pairs = [pair(i) for i in range(4)]
    sync = [ctx.stereo_sad(l, r, 16) for l, r in pairs]
    futures = [ctx.stereo_sad_async(l, r, 16) for l, r in pairs]
    assert all(isinstance(f, Future) for f in futures)
    for expected, future in zip(sync, futures):
        np.testing.assert_array_equal(future.result(), expected)
    left, right = pairs[0]
    np.testing.assert_array_equal(ctx.stereo_sgm_async(left, right, ndisp=16).result(),
                                  ctx.stereo_sgm(left, right, ndisp=16))
    np.testing.assert_array_equal(ctx.stereo_bp_async(left, right, 16).result(),
                                  ctx.stereo_bp(left, right, 16))


def test_phase_correlation_and_flow_futures(ctx):
    rng = np.random.default_rng(3)
    ref = rng.random((32, 32), dtype=np.float32)
    moving = np.roll(ref, (2, -5), axis=(0, 1))
    result = ctx.phase_correlate_async(ref, moving).result()
    np.testing.assert_allclose(result.shift, [-5, 2], atol=1e-6)
    fixed = rng.random((16, 16, 16), dtype=np.float32)
    moved = np.roll(fixed, 1, axis=2)
    expected = ctx.flow3d(fixed, moved, warps=1, iterations=3)
    got = ctx.flow3d_async(fixed, moved, warps=1, iterations=3).result()
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


def test_calls_run_in_order_and_wait(ctx):
    seen = []
    for i in range(20):
        ctx.submit(seen.append, i)
    ctx.wait()
    assert seen == list(range(20))


def test_failure_is_raised_by_its_future(ctx):
    left, right = pair(1)
    with pytest.raises(parvis.Error) as sync_error:
        ctx.stereo_sad(left, right, 16, window=4)
    future = ctx.stereo_sad_async(left, right, 16, window=4)
    with pytest.raises(type(sync_error.value)):
        future.result()
    ctx.wait()  # the failure belongs to the future alone
    np.testing.assert_array_equal(ctx.stereo_sad_async(left, right, 16).result(),
                                  ctx.stereo_sad(left, right, 16))


def test_close_lets_queued_calls_finish():
    context = parvis.Context("cpu")
    left, right = pair(2)
    gate = threading.Event()
    context.submit(gate.wait)
    futures = [context.stereo_sad_async(left, right, 16) for _ in range(3)]
    gate.set()
    context.close()
    assert all(f.done() for f in futures)
    assert all(f.result().shape == left.shape for f in futures)
    with pytest.raises(parvis.ClosedError):
        context.submit("stereo_sad", left, right, 16)


def test_two_contexts_side_by_side():
    backend = BACKENDS[-1]
    with parvis.Context(backend) as first, parvis.Context(backend) as second:
        pairs = [pair(10 + i) for i in range(4)]
        futures = [(first if i % 2 else second).stereo_sgm_async(l, r, ndisp=16)
                   for i, (l, r) in enumerate(pairs)]
        for (l, r), future in zip(pairs, futures):
            np.testing.assert_array_equal(future.result(), first.stereo_sgm(l, r, ndisp=16))


def test_misuse(ctx):
    with pytest.raises(AttributeError):
        ctx.submit("no_such_method")
    with pytest.raises(TypeError):
        ctx.submit("backend")  # a property, not a method
