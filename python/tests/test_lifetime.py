"""Lifetimes of contexts and plans under the garbage collector, threads
and fork.

A failure here used to be a hang, so every scenario that could hang runs
in a child process with a time limit: a child still running at the limit
is killed and the test fails.  The limits (60 s) are far above the
seconds each scenario takes on PoCL.
"""
from __future__ import annotations

import multiprocessing
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import parvis
from conftest import BACKENDS

LIMIT_S = 60


def run_python(code: str) -> subprocess.CompletedProcess:
    """Run code in a fresh interpreter; a hang fails the test."""
    try:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                              capture_output=True, text=True, timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child process hung for {LIMIT_S} s (killed)")


# ------------------------------------------------------ 1. finalisers and GC
def test_plan_collected_inside_a_call_does_not_deadlock():
    # Plans in reference cycles become garbage with the collector paused;
    # its threshold is then set so many allocations ahead that, over the
    # sweep of offsets, it runs at every point of SiftPlan.detect and
    # detect_batch, inside the context's lock among them (the collector's
    # callback counts those), and finalises the plans there.
    done = run_python("""
        import gc
        import numpy as np
        import parvis
        rng = np.random.default_rng(0)
        images = [rng.random((32, 32)).astype(np.float32) for _ in range(2)]
        under_lock = []
        with parvis.Context("cpu", cpu_threads=1) as ctx:
            plan = ctx.sift_plan((32, 32))
            want = plan.detect(images[0])
            def note(phase, info):
                if phase == "start" and ctx._lock.locked():
                    under_lock.append(info["generation"])
            gc.callbacks.append(note)
            for offset in range(24):
                gc.disable()
                for _ in range(2):
                    orphan = ctx.phasecorr_plan(images[0][:16, :16])
                    orphan.cycle = orphan
                    del orphan
                gc.set_threshold(gc.get_count()[0] + offset, 10, 10)
                gc.enable()
                got = plan.detect(images[0])
                plan.detect_batch(images)
                assert np.array_equal(got.keypoints, want.keypoints)
            gc.callbacks.remove(note)
            gc.set_threshold(700, 10, 10)
            gc.collect()
            plan.detect(images[0])  # frees whatever the collector left behind
            left = len(ctx._owned)
        print("owned", left, "collections_under_lock", len(under_lock) > 0)
    """)
    assert done.returncode == 0, done.stderr
    # Only the SIFT plan is left: every orphan was freed, during the calls
    # or by the call after them; and the collector did run under the lock.
    assert done.stdout.split() == ["owned", "1", "collections_under_lock", "True"]


def test_plans_freed_before_their_context_in_one_cycle():
    done = run_python("""
        import gc
        import numpy as np
        import parvis
        ctx = parvis.Context("cpu", cpu_threads=1)
        plan = ctx.phasecorr_plan(np.ones((16, 16), np.float32))
        ctx.cycle, plan.cycle = plan, ctx
        owned = next(iter(ctx._owned))
        del ctx, plan
        gc.collect()
        print("freed", owned.ptr is None)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["freed", "True"]


# ----------------------------------------------- 2. getters hold the lock
GETTERS = ["backend", "device_name", "selection_note", "cpu_threads", "crosscheck",
           "kernel_timing", "last_timing", "fft_engine"]


@pytest.mark.parametrize("getter", GETTERS)
def test_getter_waits_for_the_lock_and_sees_the_close(getter):
    # A call on another thread holds the lock (taken here directly, as a
    # call does) and closes the context, as close() on another thread
    # would: the getter must wait and then raise ClosedError, never read
    # the freed context.
    ctx = parvis.Context("cpu")
    outcome = []

    def read():
        try:
            outcome.append(getattr(ctx, getter))
        except parvis.ClosedError as err:
            outcome.append(err)

    with ctx._lock:
        reader = threading.Thread(target=read)
        reader.start()
        reader.join(0.3)
        assert reader.is_alive(), f"{getter} entered C without the context's lock"
        ctx._release_locked()  # the close that another thread makes
    reader.join(LIMIT_S)
    assert not reader.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], parvis.ClosedError)


def test_getters_racing_close_never_touch_freed_memory():
    done = run_python("""
        import threading
        import parvis
        names = ["backend", "device_name", "selection_note", "cpu_threads",
                 "crosscheck", "kernel_timing"]
        bad = []
        for round in range(30):
            ctx = parvis.Context("cpu")
            def read():
                for _ in range(200):
                    for name in names:
                        try:
                            getattr(ctx, name)
                        except parvis.ClosedError:
                            return
                        except Exception as err:
                            bad.append(repr(err))
                            return
            readers = [threading.Thread(target=read) for _ in range(3)]
            for r in readers:
                r.start()
            ctx.close()
            for r in readers:
                r.join()
        print("bad", len(bad))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["bad", "0"]


def test_closed_context_and_plan_raise(cpu):
    ctx = parvis.Context("cpu")
    plan = ctx.phasecorr_plan(np.ones((16, 16), np.float32))
    ctx.close()
    assert plan.closed
    for name in GETTERS:
        with pytest.raises(parvis.ClosedError):
            getattr(ctx, name)
    with pytest.raises(parvis.ClosedError):
        plan.correlate(np.ones((16, 16), np.float32))
    with pytest.raises(parvis.ClosedError):
        plan.fft_size
    plan.close()
    ctx.close()


# ------------------------------------------------------------------ 3. fork
IMAGE = np.random.default_rng(1).random((24, 24)).astype(np.float32)


def use_inherited(ctx: parvis.Context) -> None:
    """In the fork child: the inherited context must refuse clearly."""
    try:
        ctx.gaussian_blur(IMAGE, 1.0)
    except parvis.ForkedError as err:
        advice = "spawn" in str(err) and "forkserver" in str(err)
        for name in ("device_name", "backend", "crosscheck"):
            try:
                getattr(ctx, name)
                sys.exit(3)
            except parvis.ForkedError:
                pass
        ctx.close()  # forgets it without calling C
        sys.exit(0 if advice and ctx.closed else 4)
    sys.exit(1)


def make_new(backend: str) -> None:
    """In the fork child: a new context either works or refuses clearly."""
    try:
        with parvis.Context(backend) as ctx:
            got = ctx.gaussian_blur(IMAGE, 1.0)
    except parvis.ForkedError as err:
        sys.exit(0 if "spawn" in str(err) else 4)
    with parvis.Context("cpu") as ref:
        want = ref.gaussian_blur(IMAGE, 1.0)
    sys.exit(0 if np.allclose(got, want, atol=1e-5) else 5)


def run_forked(target, *args) -> int:
    child = multiprocessing.get_context("fork").Process(target=target, args=args)
    child.start()
    child.join(LIMIT_S)
    if child.is_alive():
        child.kill()
        child.join()
        pytest.fail(f"the fork child hung for {LIMIT_S} s (killed)")
    return child.exitcode


@pytest.mark.parametrize("backend", BACKENDS)
def test_fork_child_refuses_inherited_context(backend):
    with parvis.Context(backend) as ctx:
        ctx.gaussian_blur(IMAGE, 1.0)  # OpenMP / the OpenCL driver started
        assert run_forked(use_inherited, ctx) == 0
        # The parent's context is untouched by the child.
        assert ctx.gaussian_blur(IMAGE, 1.0).shape == IMAGE.shape


@pytest.mark.parametrize("backend", BACKENDS)
def test_fork_child_new_context_works_or_refuses(backend):
    with parvis.Context(backend) as ctx:
        ctx.gaussian_blur(IMAGE, 1.0)
        assert run_forked(make_new, backend) == 0


def test_fork_child_inherited_plan_and_group():
    def child(plan, group):
        for use in (lambda: plan.correlate(IMAGE), lambda: group.size):
            try:
                use()
                sys.exit(1)
            except parvis.ForkedError:
                pass
        sys.exit(0)

    with parvis.Context("cpu") as ctx, parvis.DeviceGroup("cpu") as group:
        plan = ctx.phasecorr_plan(IMAGE)
        assert run_forked(child, plan, group) == 0
        assert plan.correlate(IMAGE).peak > 0


def module_calls_in_child(path: str) -> None:
    """In the fork child: helpers that start OpenMP or the OpenCL driver
    refuse; plain file reading still works."""
    for call in (lambda: parvis.synthesize_oct((8, 8, 8)), parvis.devices):
        try:
            call()
            sys.exit(1)
        except parvis.ForkedError:
            pass
    sys.exit(0 if parvis.imread(path).shape == IMAGE.shape else 2)


def test_fork_child_module_functions(tmp_path):
    parvis.imwrite(tmp_path / "a.pfm", IMAGE)
    parvis.synthesize_oct((8, 8, 8))  # its OpenMP threads started here
    assert run_forked(module_calls_in_child, str(tmp_path / "a.pfm")) == 0


def test_fork_child_of_unused_parvis_opens_its_own_context():
    # A parent that only imported parvis started no threads: its fork
    # children open and use contexts of their own.
    done = run_python("""
        import multiprocessing
        import numpy as np
        import parvis

        def child():
            image = np.ones((16, 16), np.float32)
            with parvis.Context("cpu", cpu_threads=1) as ctx:
                blurred = ctx.gaussian_blur(image, 1.0)
            raise SystemExit(0 if np.allclose(blurred, 1.0) else 1)

        if __name__ == "__main__":
            process = multiprocessing.get_context("fork").Process(target=child)
            process.start()
            process.join(30)
            if process.is_alive():
                process.kill()
            print("exit", process.exitcode)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["exit", "0"]
