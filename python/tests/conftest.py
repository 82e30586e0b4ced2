"""Shared fixtures: the repository's data, the build's CLI, contexts per backend."""
from __future__ import annotations

import os
import pathlib

import numpy as np
import pytest

import parvis

REPO = pathlib.Path(__file__).resolve().parents[2]
STEREO = REPO / "tests" / "data" / "stereo"
CLI = pathlib.Path(os.environ.get("PARVIS_CLI", REPO / "_build" / "parvis"))


def have_opencl() -> bool:
    if os.environ.get("PARVIS_TEST_SKIP_OPENCL") == "1":
        return False
    try:
        return len(parvis.devices()) > 0
    except parvis.Error:
        return False


BACKENDS = ["cpu"] + (["opencl"] if have_opencl() else [])


@pytest.fixture(scope="session")
def cpu():
    with parvis.Context("cpu") as ctx:
        yield ctx


@pytest.fixture(scope="session")
def opencl():
    if "opencl" not in BACKENDS:
        pytest.skip("no OpenCL device")
    with parvis.Context("opencl") as ctx:
        yield ctx


@pytest.fixture(scope="session", params=BACKENDS)
def ctx(request):
    """A context of each backend found (CPU always, OpenCL when a device exists)."""
    with parvis.Context(request.param) as c:
        yield c


@pytest.fixture(scope="session")
def tsukuba():
    return (parvis.imread(STEREO / "tsukuba" / "left.pgm"),
            parvis.imread(STEREO / "tsukuba" / "right.pgm"),
            parvis.imread(STEREO / "tsukuba" / "gt.pgm"))


def texture(shape, seed=0, smooth=1):
    """Random texture, optionally box-smoothed (sub-pixel fits need some)."""
    rng = np.random.default_rng(seed)
    a = rng.random(shape)
    for _ in range(smooth):
        for axis in range(a.ndim):
            a = (a + np.roll(a, 1, axis) + np.roll(a, -1, axis)) / 3.0
    a = (a - a.min()) / (a.max() - a.min())
    return a.astype(np.float32)


# -- pyopencl objects of the device-buffer (interop) tests ------------------
# pyopencl is imported when a fixture or helper runs, so that the other tests
# run without it (the interop modules skip themselves without it).


def cl_device(opencl):
    """The device parvis's OpenCL context runs on, as a pyopencl Device."""
    import pyopencl as cl

    context_handle, _ = opencl.cl_handles()
    return cl.Context.from_int_ptr(context_handle).devices[0]


def caller_queue(opencl):
    """A queue of a caller's own pyopencl context on parvis's device."""
    import pyopencl as cl

    return cl.CommandQueue(cl.Context([cl_device(opencl)]))


@pytest.fixture(scope="module")
def queue(opencl):
    """The caller's queue of one test module (see caller_queue)."""
    return caller_queue(opencl)


@pytest.fixture(scope="module")
def on_queue(queue):
    """A parvis context made on the caller's queue (Context.from_cl)."""
    with parvis.Context.from_cl(queue) as ctx:
        yield ctx
