"""Batch functions: many inputs, one call, spread over a Dask cluster.

Every function takes a ``distributed.Client`` and a list of inputs (numpy
arrays, dask arrays or file paths; or one stacked array, items along its
first axis), submits tasks of a few items each (``items_per_task``; by
default about four tasks per worker, at most 16 items each) and returns, by
default, a :class:`BatchResult` whose entries follow the input order.  A
worker reads the next items of its task while its device computes the
current one, and writes (or packs for the trip back) each result while the
device computes the next.  Each entry
equals what the same call gives in one process on a context of the same
backend (``parvis.Context(...).octreg(reference, target)`` and so on).

With ``output_dir``, each item's result is written to a file named after
its input (``scan07.nii`` -> ``scan07.octreg.csv``; array items
``octreg-000007.octreg.csv``), atomically, and the entry is that file's
path.  Items whose output already exists and is complete are not run again
(counted in :attr:`BatchResult.skipped`).

With ``wait=False`` the function returns the list of futures at once, in
input order; each resolves to the entry (or raises the item's error).

An item that fails (a file that cannot be read, a bad argument) becomes an
:class:`ItemFailure` in :attr:`BatchResult.failures` and its entry is None;
the other items complete.  A worker lost mid-batch has its tasks rerun
elsewhere by the scheduler.  A task whose item fails twice on one worker's
device is sent once more to the other workers.
"""

from __future__ import annotations

import os
import time
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Literal, Optional, Tuple, Union, overload

import numpy as np

import distributed

from . import _inputs, _outputs
from ._plugin import Device, register
from ._compact import expand
from ._tasks import DeviceFailure, ItemError, Outcome, PlanSpec, run_items

#: Called after each finished item with (done, total, failed).
ProgressCallback = Callable[[int, int, int], None]
PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class ItemFailure:
    """One item that did not complete: its position in the input, how it is
    named (its path, or ``#index``) and the error (``Type: message``)."""
    index: int
    source: str
    error: str


@dataclass
class BatchResult:
    """The outcome of a batch, in input order.

    ``results[i]`` is item i's result (or its output path with
    ``output_dir``), None where it failed.  Iterating, indexing and len()
    act on ``results``.
    """
    results: List[Any]
    failures: List[ItemFailure] = field(default_factory=list)
    skipped: int = 0
    elapsed: float = 0.0

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, index: int) -> Any:
        return self.results[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.results)

    @property
    def ok(self) -> bool:
        """True when every item completed."""
        return not self.failures

    def raise_on_failure(self) -> "BatchResult":
        """Raise RuntimeError listing the failures, if any; else return self."""
        if self.failures:
            lines = "\n".join(f"  {f.source}: {f.error}" for f in self.failures)
            raise RuntimeError(f"{len(self.failures)} of {len(self.results)} items failed:\n"
                               f"{lines}")
        return self


@dataclass
class _Job:
    """Everything needed to (re)submit one item."""
    index: int
    source: str
    payloads: Tuple[Any, ...]
    output: Optional[str]


@dataclass
class _Task:
    """Items sent to a worker together (see :func:`task_size`)."""
    jobs: List[_Job]
    number: int
    retried: bool = False  # sent once to the other workers after a device failure


#: Items per task is chosen so that each worker gets about this many tasks.
TASKS_PER_WORKER = 4
#: ... and no task holds more items than this (progress, memory, balance).
MAX_ITEMS_PER_TASK = 16


def task_size(items: int, workers: int, requested: Optional[int] = None) -> int:
    """How many items one task carries.

    A task costs the scheduler and the worker about a millisecond, and its
    first input is read before the device can start; grouping items spreads
    both over the group, and inside a task the worker reads ahead and writes
    behind.  The default gives each worker about ``TASKS_PER_WORKER`` tasks
    (so that a lost worker or a slow one holds up little), at most
    ``MAX_ITEMS_PER_TASK`` items each.  ``requested``: the caller's choice.
    """
    if requested is not None:
        if int(requested) < 1:
            raise ValueError(f"items_per_task must be at least 1, not {requested}")
        return int(requested)
    share = -(-items // max(1, workers * TASKS_PER_WORKER))
    return max(1, min(MAX_ITEMS_PER_TASK, share))


def _client_setup(client: distributed.Client, backend: Optional[str],
                  device: Device) -> None:
    # A backend or device named in the call installs the plugin with them
    # where a worker has other settings; otherwise workers keep what they
    # have, and workers without a plugin get the automatic choice.
    if backend is not None or device is not None:
        register(client, backend=backend or "auto", device=device)
    else:
        register(client, keep_settings=True)


@dataclass
class _Batch:
    """What every task of one batch shares."""
    client: distributed.Client
    kind: str
    plan: PlanSpec
    params: Dict[str, Any]
    volume_shape: Optional[_inputs.Shape3]
    tag: str  # keeps this batch's task keys apart from others'

    def submit(self, task: _Task, workers: Optional[List[str]] = None) -> distributed.Future:
        key = f"parvis-{self.kind}-{self.tag}-{task.number}"
        placement: Dict[str, Any] = {}
        if workers is not None:
            key += "-retry"
            placement = {"workers": workers, "allow_other_workers": False}
        items = [(job.index, list(job.payloads), job.output) for job in task.jobs]
        with warnings.catch_warnings():
            # numpy inputs ride inside their task on purpose (see _inputs).
            warnings.filterwarnings("ignore", message="Large object")         # distributed < 2023
            warnings.filterwarnings("ignore", message="Sending large graph")  # later versions
            return self.client.submit(run_items, self.kind, items, self.plan, self.params,
                                      self.volume_shape, key=key, pure=False, **placement)


def _run_batch(client: distributed.Client, kind: str, sources: List[Tuple[Any, ...]],
               labels: List[str], names: List[str], plan: PlanSpec,
               params: Dict[str, Any], output_dir: Optional[PathLike],
               volume_shape: Optional[_inputs.Shape3], wait: bool,
               progress: Optional[ProgressCallback],
               per_task: Optional[int]) -> Union[BatchResult, List[Any]]:
    start = time.perf_counter()
    _inputs.check_unique(names, kind)
    outputs = _inputs.output_paths(output_dir, names, _outputs.output_suffix(kind))
    if output_dir is not None:
        _outputs.remove_stale_parts([p for p in outputs if p is not None])
    batch = _Batch(client, kind, plan, params, volume_shape, f"{time.time_ns():x}")
    results: List[Any] = [None] * len(sources)
    jobs: List[_Job] = []
    skipped = 0
    staged: Dict[int, Any] = {}
    for index, (items, source, output) in enumerate(zip(sources, labels, outputs)):
        if output is not None and _outputs.is_complete(kind, output):
            results[index] = output
            skipped += 1
            continue
        payloads = tuple(_stage_once(client, item, staged) for item in items)
        jobs.append(_Job(index, source, payloads, output))

    size = task_size(len(jobs), len(client.scheduler_info()["workers"]), per_task)
    tasks = [_Task(jobs[i:i + size], i // size) for i in range(0, len(jobs), size)]
    futures = [batch.submit(task) for task in tasks]
    if not wait:
        return _item_futures(client, kind, batch.tag, tasks, futures, results)

    failures = _collect(batch, tasks, futures, results, progress, skipped)
    if output_dir is not None:
        _outputs.remove_stale_parts([p for p in outputs if p is not None])
    return BatchResult(results, sorted(failures, key=lambda f: f.index), skipped,
                       time.perf_counter() - start)


def _entry(outcomes: List[Outcome], position: int) -> Any:
    """Item ``position`` of a task's outcomes: its entry, or its error raised."""
    ok, value = outcomes[position]
    if not ok:
        raise value
    return expand(value)


def _item_futures(client: distributed.Client, kind: str, tag: str, tasks: List[_Task],
                  futures: List[distributed.Future], results: List[Any]) -> List[Any]:
    """One future per input, in input order, for ``wait=False``."""
    by_index: Dict[int, Any] = {}
    for task, future in zip(tasks, futures):
        for position, job in enumerate(task.jobs):
            by_index[job.index] = client.submit(_entry, future, position, pure=False,
                                                key=f"parvis-{kind}-{tag}-item-{job.index}")
    # Skipped items get a future too, holding their output path.
    return [by_index[i] if i in by_index else client.scatter(results[i], hash=False)
            for i in range(len(results))]


def _stage_once(client: distributed.Client, item: Any, staged: Dict[int, Any]) -> Any:
    # One dask array used by two tasks (a frame of a flow sequence) is
    # computed once.
    if _inputs.is_dask_array(item):
        if id(item) not in staged:
            staged[id(item)] = _inputs.stage(client, item)
        return staged[id(item)]
    return _inputs.stage(client, item)


def _collect(batch: _Batch, tasks: List[_Task], futures: List[distributed.Future],
             results: List[Any], progress: Optional[ProgressCallback],
             skipped: int) -> List[ItemFailure]:
    """Fill ``results`` as tasks finish (each task's results are fetched
    while the workers compute the next ones); returns the failures."""
    by_key = {future.key: task for task, future in zip(tasks, futures)}
    failures: List[ItemFailure] = []
    done = skipped
    total = len(results)
    if progress is not None:
        progress(done, total, 0)
    pending = distributed.as_completed(futures)
    for future in pending:
        task = by_key[future.key]
        if future.status == "finished":
            for job, (ok, value) in zip(task.jobs, future.result()):
                if ok:
                    results[job.index] = expand(value)
                else:
                    failures.append(ItemFailure(job.index, job.source, _describe(value)))
        else:
            error = future.exception()
            retry = _retry_elsewhere(batch, task, error)
            if retry is not None:
                by_key[retry.key] = task
                pending.add(retry)
                future.release()
                continue
            failures.extend(ItemFailure(job.index, job.source, _describe(error))
                            for job in task.jobs)
        future.release()
        done += len(task.jobs)
        if progress is not None:
            progress(done, total, len(failures))
    return failures


def _describe(error: BaseException) -> str:
    if isinstance(error, ItemError):  # already "LibraryType: message"
        return str(error)
    return f"{type(error).__name__}: {error}"


def _retry_elsewhere(batch: _Batch, task: _Task,
                     error: BaseException) -> Optional[distributed.Future]:
    """A second chance, on the other workers, for a task whose device
    failed twice on one worker; None when that does not apply."""
    if not isinstance(error, DeviceFailure):
        return None
    others = [w for w in batch.client.scheduler_info()["workers"] if w != error.worker]
    if not others or task.retried:
        return None
    task.retried = True
    return batch.submit(task, workers=others)


def _scatter_reference(client: distributed.Client, key: str, array: np.ndarray) -> Any:
    """The reference on every worker, once (workers that join later fetch it
    from a peer)."""
    # Not the plan key itself: a task argument equal to a key in the graph
    # would be replaced by that key's data.  A name of its own for every
    # call: two calls with the same reference would otherwise share one
    # name, and the scheduler could take the first call's release of it,
    # arriving after the second call's scatter, for the second's, forget
    # the data and cancel every task that needs it.
    name = f"parvis-reference-{key}-{uuid.uuid4().hex}"
    return client.scatter({name: array}, broadcast=True)[name]


# ============================================================== public API
@overload
def octreg(client: distributed.Client, reference: _inputs.Source, targets: Any, *,
           wait: Literal[True] = ...,
           **kwargs: Any) -> BatchResult: ...


@overload
def octreg(client: distributed.Client, reference: _inputs.Source, targets: Any, *,
           wait: Literal[False],
           **kwargs: Any) -> List[distributed.Future]: ...


def octreg(client: distributed.Client, reference: _inputs.Source, targets: Any, *,
           output_dir: Optional[PathLike] = None, volume_shape: Optional[_inputs.Shape3] = None,
           registered: bool = False, gap_value: float = 0.0, backend: Optional[str] = None,
           device: Device = None, wait: bool = True,
           progress: Optional[ProgressCallback] = None,
           items_per_task: Optional[int] = None,
           **options: Any) -> Union[BatchResult, List[distributed.Future]]:
    """Register many AO-OCT target volumes to one reference.

    reference: volume (B-scans, A-lines, depth) as an array or file;
    targets: volumes of the same shape.  Each worker builds the reference's
    plan once (``Context.octreg_plan(reference, **options)``, cached under
    a hash of the reference and options) and registers every target it
    gets with it.  Each entry equals ``Context.octreg(reference, target,
    registered=..., gap_value=..., **options)``: a ``parvis.OctregResult``
    (CSV file with ``output_dir``; the ``registered`` volume is returned in
    memory only).  volume_shape (z, y, x): the shape of raw float32 files.
    backend/device: install the worker plugin with these (see
    :func:`parvis.dask.register`).  items_per_task: targets per task (see
    the module's notes; with ``registered`` each result holds a volume, so
    keep it small).  options: those of ``Context.octreg_plan``.
    """
    _client_setup(client, backend, device)
    ref = _inputs.materialise(reference, volume_shape)
    if ref.dtype != np.uint16:   # uint16 is scattered and uploaded as 16 bits
        ref = ref.astype(np.float32, copy=False)
    key = _inputs.content_key("octreg", ref, options)
    plan: PlanSpec = (key, _scatter_reference(client, key, ref), dict(options))
    items = _inputs.split_items(targets, 3, "targets")
    return _run_batch(client, "octreg", [(t,) for t in items],
                      [_inputs.label(t, i) for i, t in enumerate(items)],
                      _inputs.stems(items, "octreg"), plan,
                      {"registered": registered, "gap_value": gap_value}, output_dir,
                      volume_shape, wait, progress,
                      items_per_task)


@overload
def phase_correlate(client: distributed.Client, reference: _inputs.Source, movings: Any, *,
                    wait: Literal[True] = ...,
                    **kwargs: Any) -> BatchResult: ...


@overload
def phase_correlate(client: distributed.Client, reference: _inputs.Source, movings: Any, *,
                    wait: Literal[False],
                    **kwargs: Any) -> List[distributed.Future]: ...


def phase_correlate(client: distributed.Client, reference: _inputs.Source, movings: Any, *,
                    upsample: int = 1, output_dir: Optional[PathLike] = None,
                    volume_shape: Optional[_inputs.Shape3] = None,
                    backend: Optional[str] = None, device: Device = None, wait: bool = True,
                    progress: Optional[ProgressCallback] = None,
                    items_per_task: Optional[int] = None,
                    **options: Any) -> Union[BatchResult, List[distributed.Future]]:
    """Phase-correlate many images (or volumes) with one reference.

    Each worker caches one ``Context.phasecorr_plan(reference, upsample,
    **options)`` (the reference's spectrum).  Entries: ``parvis.PhaseCorrelation``
    as ``Context.phase_correlate(reference, moving, upsample, **options)``
    (JSON file with ``output_dir``).  options: subpixel, pad, window.
    """
    _client_setup(client, backend, device)
    ref = _inputs.materialise(reference, volume_shape)
    build = {"upsample": upsample, **options}
    key = _inputs.content_key("phase_correlate", ref, build)
    plan: PlanSpec = (key, _scatter_reference(client, key, ref), build)
    items = _inputs.split_items(movings, ref.ndim, "movings")
    return _run_batch(client, "phase_correlate", [(m,) for m in items],
                      [_inputs.label(m, i) for i, m in enumerate(items)],
                      _inputs.stems(items, "phase"), plan, {}, output_dir, volume_shape, wait,
                      progress,
                      items_per_task)


@overload
def sift(client: distributed.Client, images: Any, *,
         wait: Literal[True] = ...,
         **kwargs: Any) -> BatchResult: ...


@overload
def sift(client: distributed.Client, images: Any, *,
         wait: Literal[False],
         **kwargs: Any) -> List[distributed.Future]: ...


def sift(client: distributed.Client, images: Any, *, output_dir: Optional[PathLike] = None,
         descriptor_dtype: Any = np.uint8, backend: Optional[str] = None, device: Device = None,
         wait: bool = True, progress: Optional[ProgressCallback] = None,
         items_per_task: Optional[int] = None,
         **params: Any) -> Union[BatchResult, List[distributed.Future]]:
    """SIFT keypoints and descriptors of many images.

    Each worker keeps one ``Context.sift_plan(shape, **params)`` per image
    size.  Entries: ``parvis.SiftFeatures`` as ``Context.sift(image,
    descriptor_dtype=..., **params)`` (``.npz`` with ``keypoints`` and
    ``descriptors`` with ``output_dir``).
    """
    _client_setup(client, backend, device)
    prefix = _inputs.content_key("sift", np.zeros(0, np.uint8), params)
    plan: PlanSpec = (prefix, None, dict(params))
    items = _inputs.split_items(images, 2, "images")
    return _run_batch(client, "sift", [(m,) for m in items],
                      [_inputs.label(m, i) for i, m in enumerate(items)],
                      _inputs.stems(items, "sift"), plan,
                      {"descriptor_dtype": np.dtype(descriptor_dtype).str}, output_dir, None,
                      wait, progress,
                      items_per_task)


@overload
def stereo(client: distributed.Client, pairs: Any, *,
           wait: Literal[True] = ...,
           **kwargs: Any) -> BatchResult: ...


@overload
def stereo(client: distributed.Client, pairs: Any, *,
           wait: Literal[False],
           **kwargs: Any) -> List[distributed.Future]: ...


def stereo(client: distributed.Client, pairs: Any, *,
           method: Literal["sad", "bp", "sgm"] = "sad",
           output_dir: Optional[PathLike] = None, backend: Optional[str] = None,
           device: Device = None, wait: bool = True,
           progress: Optional[ProgressCallback] = None,
           items_per_task: Optional[int] = None,
           **params: Any) -> Union[BatchResult, List[distributed.Future]]:
    """Disparity maps of many stereo pairs.

    pairs: a list of (left, right) pairs, or one array of shape
    (count, 2, rows, columns).  Entries: the float32 disparity of
    ``Context.stereo_sad(left, right, **params)`` (method "sad"),
    ``Context.stereo_bp`` ("bp") or ``Context.stereo_sgm`` ("sgm": census,
    p1, p2, paths, uniqueness, ... as its keywords; the confidence map is
    not collected, so ``confidence`` is refused); a PFM file named after
    the left image with ``output_dir``.  With "sgm", a task's pairs of one
    shape and dtype go through ``Context.stereo_sgm_batch`` a few at a time
    (the same bits as single calls, the transfers of one pair hidden behind
    the kernels of the next on OpenCL); a pair the library refuses fails
    alone.
    """
    if method not in ("sad", "bp", "sgm"):
        raise ValueError(f"method must be 'sad', 'bp' or 'sgm', not {method!r}")
    if method == "sgm" and params.get("confidence"):
        raise ValueError("confidence: the batch collects disparity maps only; call "
                         "Context.stereo_sgm(..., confidence=True) for the confidence")
    _client_setup(client, backend, device)
    if isinstance(pairs, np.ndarray) or _inputs.is_dask_array(pairs):
        if pairs.ndim != 4 or pairs.shape[1] != 2:
            raise ValueError("pairs: a stacked array must have shape (count, 2, rows, columns)")
        pair_list = [(pairs[i, 0], pairs[i, 1]) for i in range(pairs.shape[0])]
    else:
        pair_list = [tuple(p) for p in pairs]
    if any(len(p) != 2 for p in pair_list):
        raise ValueError("pairs: each entry must be a (left, right) pair")
    lefts = [p[0] for p in pair_list]
    return _run_batch(client, "stereo", pair_list,
                      [_inputs.label(p[0], i) for i, p in enumerate(pair_list)],
                      _inputs.stems(lefts, "stereo"), ("stereo", None, {}),
                      {"method": method, **params}, output_dir, None, wait, progress,
                      items_per_task)


@overload
def flow3d_sequence(client: distributed.Client, volumes: Any, *,
                    wait: Literal[True] = ...,
                    **kwargs: Any) -> BatchResult: ...


@overload
def flow3d_sequence(client: distributed.Client, volumes: Any, *,
                    wait: Literal[False],
                    **kwargs: Any) -> List[distributed.Future]: ...


def flow3d_sequence(client: distributed.Client, volumes: Any, *,
                    against: Literal["previous", "first"] = "previous",
                    output_dir: Optional[PathLike] = None,
                    volume_shape: Optional[_inputs.Shape3] = None, backend: Optional[str] = None,
                    device: Device = None, wait: bool = True,
                    progress: Optional[ProgressCallback] = None,
                    items_per_task: Optional[int] = None,
                    **params: Any) -> Union[BatchResult, List[distributed.Future]]:
    """3D optical flow along a sequence of volumes.

    Entry i is the flow from volume i (fixed) to volume i + 1 (moving) with
    ``against="previous"`` (as the C library's pv_flow3d_sequence), or from
    volume 0 to volume i + 1 with ``against="first"``: a ``parvis.Flow``
    equal to ``Context.flow3d(fixed, moving, **params)`` (``.npz`` named
    after the moving volume with ``output_dir``).  Each worker keeps one
    flow plan per volume shape.
    """
    if against not in ("previous", "first"):
        raise ValueError(f"against must be 'previous' or 'first', not {against!r}")
    _client_setup(client, backend, device)
    frames = _inputs.split_items(volumes, 3, "volumes")
    if len(frames) < 2:
        raise ValueError("volumes: a sequence needs at least two volumes")
    fixed = [frames[0] if against == "first" else frames[i] for i in range(len(frames) - 1)]
    pairs = list(zip(fixed, frames[1:]))
    prefix = _inputs.content_key("flow3d", np.zeros(0, np.uint8), params)
    return _run_batch(client, "flow3d", pairs,
                      [_inputs.label(p[1], i + 1) for i, p in enumerate(pairs)],
                      _inputs.stems(frames, "flow3d")[1:], (prefix, None, dict(params)), {},
                      output_dir, volume_shape, wait, progress,
                      items_per_task)
