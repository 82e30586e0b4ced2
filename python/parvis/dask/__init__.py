"""parvis on Dask distributed: batches of inputs over a cluster of workers.

    from distributed import Client
    import parvis.dask as pvd

    client = Client("tcp://scheduler:8786")          # or Client(LocalCluster(...))
    pvd.register(client, backend="auto")             # one parvis context per worker
    result = pvd.octreg(client, "ref.nii", ["t01.nii", "t02.nii"], output_dir="out")
    for failure in result.failures:
        print(failure.source, failure.error)

Each worker holds one :class:`parvis.Context` on the device it was assigned
(``PARVIS_DEVICE``, or the GPU its ``CUDA_VISIBLE_DEVICES`` leaves visible),
created at its first task and reused by every task, plus a cache of plans
keyed by a hash of what they are built from, so one reference's
pre-computation serves every target a worker registers.  Batch functions:
:func:`octreg`, :func:`stereo`, :func:`flow3d_sequence`, :func:`sift`,
:func:`phase_correlate`.  The command ``parvis-dask`` (or ``python -m
parvis.dask``) runs them on files.  See docs/dask.md.

Requires the ``dask`` extra (``pip install parvis[dask]``).
"""

from ._batch import (BatchResult, ItemFailure, ProgressCallback, flow3d_sequence, octreg,
                     phase_correlate, sift, stereo)
from ._inputs import InputError
from ._outputs import atomic_write, is_complete, read_result, remove_stale_parts
from ._progress import ProgressBar
from ._plugin import (PLUGIN_NAME, ContextLost, ParvisWorkerPlugin, WorkerState,
                      assigned_device, register, reset_stats, worker_stats)
from ._tasks import DeviceFailure, ItemError, lose_context

__all__ = [
    "octreg", "stereo", "flow3d_sequence", "sift", "phase_correlate",
    "BatchResult", "ItemFailure", "ProgressCallback", "ProgressBar", "InputError", "ItemError",
    "DeviceFailure",
    "ContextLost", "ParvisWorkerPlugin", "WorkerState", "PLUGIN_NAME", "register",
    "worker_stats", "reset_stats", "assigned_device", "lose_context",
    "atomic_write", "is_complete", "read_result", "remove_stale_parts",
]
