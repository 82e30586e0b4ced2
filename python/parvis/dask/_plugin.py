"""The worker side of :mod:`parvis.dask`: one parvis context per worker.

A :class:`ParvisWorkerPlugin` registered on a client is installed on every
worker, including workers that join or restart later.  Each worker then
owns one :class:`parvis.Context` on the device it was assigned, opened at
its first task and reused by every task after it, and a small cache of
plans (an OCT reference's pre-computation, a phase-correlation reference,
a SIFT plan for one image size) keyed by a content hash of what they were
built from, so a thousand targets of one reference share one
pre-computation.  The context and the plans are closed when the worker
shuts down.

A parvis context serves one thread at a time, so every use of it goes
through the state's lock: a worker with several threads overlaps its
tasks' file reading and writing, not their device work.  One thread per
worker and one worker per device is the intended layout.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, Optional, Union

import distributed

import parvis

#: Name under which the plugin is registered on the workers.
PLUGIN_NAME = "parvis"

#: Threads per worker that read inputs and write results beside the device.
IO_THREADS = 2

#: A device as :class:`parvis.Context` takes it: an index, a name substring,
#: or None for the library's automatic choice.
Device = Optional[Union[int, str]]


def assigned_device(explicit: Device = None) -> Device:
    """The device a worker should open, from its argument or environment.

    Order: an explicit device; else ``PARVIS_DEVICE``; else None, the
    library's automatic choice (the first OpenCL GPU).  A worker started
    with ``CUDA_VISIBLE_DEVICES=3`` sees only GPU 3 through NVIDIA's OpenCL
    driver (ROCm does the same with ``ROCR_VISIBLE_DEVICES``), so the
    automatic choice is then the first id of that list; its index in the
    worker's device list is 0, not 3, which is why the variable is not
    turned into an index here.
    """
    if explicit is not None:
        return explicit
    named = os.environ.get("PARVIS_DEVICE", "").strip()
    if named:
        return int(named) if named.isdigit() else named
    return None


def worker_threads() -> int:
    """OpenMP threads for the worker's context: ``PARVIS_CPU_THREADS``, else
    ``OMP_NUM_THREADS`` as the worker's environment says now, else 0 (the
    OpenMP default).

    The variable is read again here because a Dask nanny starts its worker
    process with ``OMP_NUM_THREADS=1`` and only then applies the ``env`` it
    was given; the OpenMP runtime has read the first value by then, so
    ``LocalCluster(env={"OMP_NUM_THREADS": "8"})`` alone would leave every
    worker on one thread.
    """
    for name in ("PARVIS_CPU_THREADS", "OMP_NUM_THREADS"):
        text = os.environ.get(name, "").strip()
        if text.isdigit() and int(text) > 0:
            return int(text)
    return 0


def is_device_failure(error: BaseException) -> bool:
    """True for errors that say the worker's device or context is unusable.

    These are worth a fresh context (and a retry), unlike a bad input,
    which fails again wherever it runs.
    """
    return isinstance(error, (ContextLost, parvis.OpenCLError, parvis.NoDevice,
                              parvis.DeviceMemoryError, parvis.BuildError))


class ContextLost(RuntimeError):
    """The worker has no usable context: it was closed under a running task
    (a drill, or a teardown racing a task), or it could not be opened on the
    worker's device.  Either way the item is not at fault."""


class _ContextSettings:
    """What a worker's context is opened with: backend, device, crosscheck
    and the number of plans kept; checked once, here, for both the plugin
    and the worker state it makes."""

    def _keep_settings(self, backend: str, device: Device, crosscheck: bool,
                       max_plans: int) -> None:
        if backend not in ("auto", "cpu", "opencl"):
            raise ValueError(f"backend must be 'auto', 'cpu' or 'opencl', not {backend!r}")
        if max_plans < 1:
            raise ValueError("max_plans must be at least 1")
        self.backend = backend
        self.device = device
        self.crosscheck = crosscheck
        self.max_plans = max_plans


class WorkerState(_ContextSettings):
    """One worker's parvis context, plan cache and counters.

    Counters (:meth:`stats`): ``context_builds`` (contexts opened, 1 unless
    a device failure forced a rebuild), ``plan_builds`` and ``plan_hits``
    (plan cache misses and hits, also per plan kind as
    ``plan_builds:octreg`` ...), ``tasks`` (items run), ``device_failures``
    (failures that rebuilt the context).
    """

    def __init__(self, backend: str = "auto", device: Device = None, crosscheck: bool = False,
                 max_plans: int = 4) -> None:
        self._keep_settings(backend, device, crosscheck, max_plans)
        self._lock = threading.RLock()
        self._context: Optional[parvis.Context] = None
        self._plans: "OrderedDict[str, Any]" = OrderedDict()
        self._counters: Dict[str, int] = {}
        self._closed = False
        self._io: Optional[ThreadPoolExecutor] = None

    # -------------------------------------------------------------- context
    def _count(self, name: str, amount: int = 1) -> None:
        self._counters[name] = self._counters.get(name, 0) + amount

    def _open(self) -> parvis.Context:
        if self._closed:
            raise ContextLost("the worker's parvis context was closed")
        if self._context is None:
            try:
                self._context = parvis.Context(backend=self.backend, device=self.device,
                                               crosscheck=self.crosscheck,
                                               cpu_threads=worker_threads())
            except parvis.Error as error:
                raise ContextLost(f"no {self.backend} context on device {self.device!r}: "
                                  f"{error}") from None
            self._count("context_builds")
        return self._context

    @contextmanager
    def session(self) -> Iterator[parvis.Context]:
        """Hold the context for one task: ``with state.session() as ctx:``."""
        with self._lock:
            yield self._open()

    def plan(self, kind: str, key: str, build: Callable[[parvis.Context], Any]) -> Any:
        """The cached plan for ``key``, built with ``build(context)`` on a miss.

        Call inside :meth:`session`.  The cache keeps the ``max_plans`` most
        recently used plans and closes the one it drops.
        """
        with self._lock:
            cached = self._plans.get(key)
            if cached is not None:
                self._plans.move_to_end(key)
                self._count("plan_hits")
                self._count("plan_hits:" + kind)
                return cached
            plan = build(self._open())
            self._count("plan_builds")
            self._count("plan_builds:" + kind)
            self._plans[key] = plan
            while len(self._plans) > self.max_plans:
                _, dropped = self._plans.popitem(last=False)
                _close_quietly(dropped)
            return plan

    def io_pool(self) -> ThreadPoolExecutor:
        """The worker's threads for reading inputs and writing results beside
        the device work (made at first use, kept until :meth:`stop`)."""
        with self._lock:
            if self._io is None:
                self._io = ThreadPoolExecutor(max_workers=IO_THREADS,
                                              thread_name_prefix="parvis-io")
            return self._io

    def stop(self) -> None:
        """Close everything and end the I/O threads (worker teardown)."""
        self.close()
        with self._lock:
            pool, self._io = self._io, None
        if pool is not None:
            pool.shutdown(wait=True)

    def count_task(self) -> None:
        with self._lock:
            self._count("tasks")

    def rebuild(self) -> None:
        """Drop the plans and the context after a device failure; the next
        task opens a fresh context on the same device."""
        with self._lock:
            self._count("device_failures")
            self._drop_all()
            self._closed = False

    def _drop_all(self) -> None:
        while self._plans:
            _, plan = self._plans.popitem(last=False)
            _close_quietly(plan)
        if self._context is not None:
            _close_quietly(self._context)
            self._context = None

    def close(self) -> None:
        """Close plans, then the context (a plan belongs to its context)."""
        with self._lock:
            self._drop_all()
            self._closed = True

    def lose_context(self) -> None:
        """Close the context as a failing device would leave it: the next task
        fails with :class:`ContextLost`, rebuilds the context and runs again.
        For drills and tests."""
        self.close()

    def stats(self) -> Dict[str, Any]:
        """Counters and the context's description (a copy)."""
        with self._lock:
            out: Dict[str, Any] = dict(self._counters)
            for name in ("context_builds", "plan_builds", "plan_hits", "tasks", "device_failures"):
                out.setdefault(name, 0)
            out["cached_plans"] = len(self._plans)
            if self._context is not None:
                out["backend"] = str(self._context.backend)
                out["device_name"] = str(self._context.device_name)
            return out

    def reset_stats(self) -> None:
        with self._lock:
            self._counters.clear()


def _close_quietly(thing: Any) -> None:
    close = getattr(thing, "close", None)
    if close is not None:
        try:
            close()
        except Exception:  # a teardown must go on past one failing close
            pass


class ParvisWorkerPlugin(_ContextSettings, distributed.WorkerPlugin):
    """Gives each Dask worker one parvis context and a plan cache.

    Parameters
    ----------
    backend:
        ``"auto"``, ``"cpu"`` or ``"opencl"``, as :class:`parvis.Context`.
    device:
        Device for every worker (index or name substring); None (default):
        each worker's own ``PARVIS_DEVICE``, else the automatic choice,
        which under ``CUDA_VISIBLE_DEVICES`` is the first GPU listed there.
    crosscheck:
        Run every call on the CPU backend too and fail on disagreement.
    max_plans:
        Plans each worker keeps (least recently used dropped first).
    """

    name = PLUGIN_NAME

    def __init__(self, backend: str = "auto", device: Device = None, crosscheck: bool = False,
                 max_plans: int = 4) -> None:
        self._keep_settings(backend, device, crosscheck, max_plans)
        self.state: Optional[WorkerState] = None

    def settings(self) -> Dict[str, Any]:
        """The constructor's arguments (compared by :func:`register`)."""
        return {"backend": self.backend, "device": self.device, "crosscheck": self.crosscheck,
                "max_plans": self.max_plans}

    def setup(self, worker: distributed.Worker) -> None:
        # The context itself opens at the first task, on a task thread: an
        # OpenCL context and its program builds can take seconds, which
        # would stall the worker's event loop (and its heartbeats) here.
        self.state = WorkerState(self.backend, assigned_device(self.device), self.crosscheck,
                                 self.max_plans)

    def teardown(self, worker: distributed.Worker) -> None:
        if self.state is not None:
            self.state.stop()


def worker_state() -> WorkerState:
    """The calling task's worker state (installing a default plugin when the
    worker has none, e.g. a worker that raced the registration)."""
    worker = distributed.get_worker()
    plugin = worker.plugins.get(PLUGIN_NAME)
    if not isinstance(plugin, ParvisWorkerPlugin):
        plugin = ParvisWorkerPlugin()
        plugin.setup(worker)
        worker.plugins[PLUGIN_NAME] = plugin
    if plugin.state is None:
        plugin.setup(worker)
    assert plugin.state is not None
    return plugin.state


def register(client: distributed.Client, backend: str = "auto", device: Device = None,
             crosscheck: bool = False, max_plans: int = 4, replace: bool = False,
             keep_settings: bool = False) -> None:
    """Install :class:`ParvisWorkerPlugin` on the client's cluster.

    Workers whose plugin already has these settings keep it, with their
    context and cached plans; the plugin is replaced (contexts reopened)
    when a worker lacks it or has other settings, or when ``replace`` is
    true.  ``keep_settings``: accept whatever plugin the workers have and
    install one only where it is missing.  Workers that join later get the
    plugin from the scheduler.
    """
    plugin = ParvisWorkerPlugin(backend, device, crosscheck, max_plans)
    wanted = None if keep_settings else plugin.settings()
    if not replace and _plugin_everywhere(client, wanted):
        return
    register_plugin = getattr(client, "register_plugin", None)
    if register_plugin is not None:  # distributed >= 2023.9
        register_plugin(plugin, name=PLUGIN_NAME)
    else:
        client.register_worker_plugin(plugin, name=PLUGIN_NAME)


def _plugin_everywhere(client: distributed.Client, settings: Optional[Dict[str, Any]]) -> bool:
    def has_plugin(dask_worker: distributed.Worker) -> bool:
        plugin = dask_worker.plugins.get(PLUGIN_NAME)
        if not isinstance(plugin, ParvisWorkerPlugin):
            return False
        return settings is None or plugin.settings() == settings

    found = client.run(has_plugin)
    return bool(found) and all(found.values())


def worker_stats(client: distributed.Client) -> Dict[str, Dict[str, Any]]:
    """Counters of every worker, by worker address (see :class:`WorkerState`)."""

    def stats(dask_worker: distributed.Worker) -> Dict[str, Any]:
        plugin = dask_worker.plugins.get(PLUGIN_NAME)
        state = getattr(plugin, "state", None)
        return state.stats() if state is not None else {}

    return client.run(stats)


def reset_stats(client: distributed.Client) -> None:
    """Zero every worker's counters (the contexts and plans stay)."""

    def reset(dask_worker: distributed.Worker) -> None:
        plugin = dask_worker.plugins.get(PLUGIN_NAME)
        state = getattr(plugin, "state", None)
        if state is not None:
            state.reset_stats()

    client.run(reset)
