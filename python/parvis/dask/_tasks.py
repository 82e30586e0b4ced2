"""Functions that run on the workers: one task per group of batch items.

Each task reads its items' inputs (files are read here, on the worker),
takes the worker's context (and a cached plan where the operation has one),
runs the operation on each item, and either returns the results (in a
compact form, see :mod:`._compact`) or writes each atomically to its output
file and returns that file's path.  Reading ahead and writing behind run on
the worker's I/O threads, beside the device work.

Device failures (an OpenCL error, a lost device, a context closed under
the task) make the worker drop its plans and context and try the item once
more on a fresh context; a second failure raises :class:`DeviceFailure`,
which names the worker so that the client can send the item elsewhere.
Other errors (an unreadable file, a bad argument) are raised as they are:
they would fail the same way on any worker.
"""

from __future__ import annotations

from concurrent.futures import Future, wait
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

import distributed

import parvis

from . import _compact, _inputs, _outputs
from ._inputs import InputError
from ._plugin import PLUGIN_NAME, WorkerState, is_device_failure, worker_state


class ItemError(RuntimeError):
    """An operation failed on an item (a bad argument, a shape that does not
    fit the plan ...).  ``args``: (the library's exception type name, its
    message); carried this way because it must cross to the client."""

    def __str__(self) -> str:
        return f"{self.args[0]}: {self.args[1]}"


class DeviceFailure(RuntimeError):
    """An item failed twice on one worker's device (the context was rebuilt
    in between).  ``args``: (worker address, message)."""

    @property
    def worker(self) -> str:
        return str(self.args[0])

    def __str__(self) -> str:
        return f"device failure on worker {self.args[0]}: {self.args[1]}"


#: A plan cached per worker: (cache key, the array it is built from, or
#: None for plans that depend on the shape only, and build parameters).
PlanSpec = Tuple[str, Optional[np.ndarray], Dict[str, Any]]


def _octreg(state: WorkerState, ctx: parvis.Context, arrays: Sequence[np.ndarray],
            plan: PlanSpec, params: Dict[str, Any]) -> Any:
    key, reference, options = plan
    octreg_plan = state.plan("octreg", key, lambda c: c.octreg_plan(reference, **options))
    return octreg_plan.register(arrays[0], **params)


def _phase(state: WorkerState, ctx: parvis.Context, arrays: Sequence[np.ndarray],
           plan: PlanSpec, params: Dict[str, Any]) -> Any:
    key, reference, options = plan
    phase_plan = state.plan("phase_correlate", key,
                            lambda c: c.phasecorr_plan(reference, **options))
    return phase_plan.correlate(arrays[0])


def _sift(state: WorkerState, ctx: parvis.Context, arrays: Sequence[np.ndarray],
          plan: PlanSpec, params: Dict[str, Any]) -> Any:
    image = arrays[0]
    prefix, _, options = plan
    key = f"{prefix}-{image.shape[0]}x{image.shape[1]}"
    sift_plan = state.plan("sift", key, lambda c: c.sift_plan(image.shape, **options))
    return sift_plan.detect(image, **params)


def _flow3d(state: WorkerState, ctx: parvis.Context, arrays: Sequence[np.ndarray],
            plan: PlanSpec, params: Dict[str, Any]) -> Any:
    fixed, moving = arrays
    prefix, _, options = plan
    key = f"{prefix}-{'x'.join(str(n) for n in fixed.shape)}"
    flow_plan = state.plan("flow3d", key, lambda c: c.flow_plan(fixed.shape, **options))
    return flow_plan.run(fixed, moving)


def _stereo(state: WorkerState, ctx: parvis.Context, arrays: Sequence[np.ndarray],
            plan: PlanSpec, params: Dict[str, Any]) -> Any:
    left, right = arrays
    method = params.get("method", "sad")
    options = {k: v for k, v in params.items() if k != "method"}
    if method == "bp":
        return ctx.stereo_bp(left, right, **options)
    if method == "sgm":
        return ctx.stereo_sgm(left, right, **options)
    return ctx.stereo_sad(left, right, **options)


Operation = Callable[[WorkerState, parvis.Context, Sequence[np.ndarray], PlanSpec,
                      Dict[str, Any]], Any]

OPERATIONS: Dict[str, Operation] = {
    "octreg": _octreg,
    "phase_correlate": _phase,
    "sift": _sift,
    "flow3d": _flow3d,
    "stereo": _stereo,
}


#: One item of a task: its index in the batch, its staged inputs and its
#: output path (None: the result goes back in memory).
TaskItem = Tuple[int, Sequence[Any], Optional[str]]
#: What a task returns per item: (True, entry) or (False, the exception).
Outcome = Tuple[bool, Any]

#: Inputs read ahead of the device: one item computing, this many waiting.
READ_AHEAD = 2


def run_items(kind: str, items: Sequence[TaskItem], plan: PlanSpec, params: Dict[str, Any],
              volume_shape: Optional[_inputs.Shape3]) -> List[Outcome]:
    """Run several batch items on the calling worker (the batch functions
    submit this), one outcome per item, in order.

    The items go through a pipeline: the worker's I/O threads read the next
    items' inputs while the device computes the current one, and encode and
    write (or compact) each result while the device computes the next, so
    the device waits neither for files nor for serialisation.  An item whose
    input cannot be read or whose call fails gets (False, error) and the
    others go on; a device that fails twice raises :class:`DeviceFailure`
    for the whole task, which the client then sends to other workers.
    """
    if kind == "stereo" and params.get("method") == "sgm" and len(items) > 1:
        return _run_sgm_items(items, plan, params, volume_shape)
    operation = OPERATIONS[kind]
    state = worker_state()
    pool = state.io_pool()
    # Reads not yet consumed, by position: a consumed one is dropped at once
    # so that the task holds at most READ_AHEAD + 1 items' inputs.
    reads: Dict[int, "Future[List[np.ndarray]]"] = {}
    finishing: List["Future[Any]"] = []
    submitted = 0

    try:
        for position, (_, _, output) in enumerate(items):
            while submitted < len(items) and submitted <= position + READ_AHEAD:
                reads[submitted] = pool.submit(_load_all, items[submitted][1], volume_shape)
                submitted += 1
            try:
                arrays = reads.pop(position).result()
                result = _run_on_device(state, operation, arrays, plan, params)
            except (InputError, parvis.Error) as error:
                finishing.append(_failed(error))
                continue
            del arrays
            state.count_task()
            finishing.append(pool.submit(_finish, kind, output, result))
        return [_outcome(future) for future in finishing]
    finally:
        # A task that stops early (a device failure) leaves no reader or
        # writer behind.
        pending = list(reads.values()) + finishing
        for future in pending:
            future.cancel()
        wait(pending)


#: Pairs per Context.stereo_sgm_batch call in an SGM task: the pairs of one
#: call stream through one plan, their transfers hidden behind the kernels.
SGM_GROUP = 8


def _sgm_batch(state: WorkerState, ctx: parvis.Context, arrays: Sequence[np.ndarray],
               plan: PlanSpec, params: Dict[str, Any]) -> Any:
    """An Operation over several pairs: arrays holds left, right, left, ..."""
    return list(ctx.stereo_sgm_batch(arrays[0::2], arrays[1::2], **params))


def _sgm_group(state: WorkerState, loaded: Sequence[Any], plan: PlanSpec,
               params: Dict[str, Any]) -> List[Any]:
    """Each loaded pair's disparity (or its error), the pairs of one shape
    and dtype together in one batch call.  A batch refused for one of its
    pairs (a bad argument) is run again pair by pair, so that only that
    pair fails, as it would in a loop of single calls; the results are the
    same bits either way."""
    results: List[Any] = list(loaded)
    options = {k: v for k, v in params.items() if k != "method"}
    runs: Dict[Tuple[Any, ...], List[int]] = {}
    for index, arrays in enumerate(loaded):
        if not isinstance(arrays, BaseException):
            key = tuple((np.shape(a), np.asarray(a).dtype.str) for a in arrays)
            runs.setdefault(key, []).append(index)
    for indices in runs.values():
        arrays = [a for i in indices for a in loaded[i]]
        try:
            maps = _run_on_device(state, _sgm_batch, arrays, plan, options) \
                if len(indices) > 1 else None
        except parvis.Error:
            maps = None
        for position, index in enumerate(indices):
            if maps is not None:
                results[index] = maps[position]
                continue
            try:
                results[index] = _run_on_device(state, _stereo, loaded[index], plan, params)
            except parvis.Error as error:
                results[index] = error
    return results


def _run_sgm_items(items: Sequence[TaskItem], plan: PlanSpec, params: Dict[str, Any],
                   volume_shape: Optional[_inputs.Shape3]) -> List[Outcome]:
    """run_items for method "sgm": the items in groups of SGM_GROUP, each
    group's pairs through Context.stereo_sgm_batch while the next group's
    inputs are read; results written behind as run_items does."""
    state = worker_state()
    pool = state.io_pool()
    groups = [items[i:i + SGM_GROUP] for i in range(0, len(items), SGM_GROUP)]
    finishing: List["Future[Any]"] = []
    upcoming = [pool.submit(_load_all, item[1], volume_shape) for item in groups[0]]
    try:
        for number, group in enumerate(groups):
            reads = upcoming
            upcoming = [pool.submit(_load_all, item[1], volume_shape)
                        for item in (groups[number + 1] if number + 1 < len(groups) else [])]
            loaded: List[Any] = []
            for future in reads:
                try:
                    loaded.append(future.result())
                except InputError as error:
                    loaded.append(error)
            for (_, _, output), result in zip(group, _sgm_group(state, loaded, plan, params)):
                if isinstance(result, BaseException):
                    finishing.append(_failed(result))
                    continue
                state.count_task()
                finishing.append(pool.submit(_finish, "stereo", output, result))
        return [_outcome(future) for future in finishing]
    finally:
        pending = upcoming + finishing
        for future in pending:
            future.cancel()
        wait(pending)


def _load_all(payloads: Sequence[Any], volume_shape: Optional[_inputs.Shape3]
              ) -> List[np.ndarray]:
    return [_inputs.load(p, volume_shape) for p in payloads]


def _finish(kind: str, output: Optional[str], result: Any) -> Any:
    """The entry of a computed item: its output path once written, or the
    result in its compact form for the trip to the client."""
    if output is None:
        return _compact.compact(result)
    _outputs.write_result(kind, output, result)
    return output


def _failed(error: BaseException) -> "Future[Any]":
    future: "Future[Any]" = Future()
    if isinstance(error, parvis.Error):
        # The library's exception type need not unpickle on the client.
        error = ItemError(type(error).__name__, str(error))
    future.set_exception(error)
    return future


def _outcome(future: "Future[Any]") -> Outcome:
    try:
        return True, future.result()
    except (InputError, ItemError, OSError, ValueError) as error:
        return False, error


def _run_on_device(state: WorkerState, operation: Operation, arrays: Sequence[np.ndarray],
                   plan: PlanSpec, params: Dict[str, Any]) -> Any:
    for attempt in (1, 2):
        try:
            with state.session() as ctx:
                return operation(state, ctx, arrays, plan, params)
        except Exception as error:
            if not is_device_failure(error):
                raise
            state.rebuild()
            if attempt == 2:
                raise DeviceFailure(distributed.get_worker().address, str(error)) from error
    raise AssertionError("unreachable")


def lose_context(dask_worker: distributed.Worker) -> None:
    """Close this worker's context as a failed device would (for tests and
    drills, through ``client.run(lose_context, workers=[...])``): the next
    task on it fails, rebuilds the context and runs again."""
    plugin = dask_worker.plugins.get(PLUGIN_NAME)
    state = getattr(plugin, "state", None)
    if state is not None:
        state.lose_context()
