"""Asynchronous calls on a context (the C library's parvis/async.h, in
Python's form): a method queued on the context returns a
:class:`concurrent.futures.Future` at once and runs on the context's own
worker thread, one call after another in the order they were queued.

The C calls release the GIL while they work, so the calling thread goes on
(reading the next frame, feeding another context) while parvis computes.
Two contexts on one device each have their worker: calls spread over them
overlap one call's upload, kernels and download with the other's, which is
how a stream of independent frames keeps an OpenCL device busy
(docs/async.md).  The arrays passed in are borrowed until the future is
done: do not write to the inputs, nor read ``out`` arrays, before then.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Optional, Union

from ._native import lib


class _AsyncOps:
    """Mixin: the queued forms of a context's methods."""

    _executor: Optional[ThreadPoolExecutor] = None
    _executor_lock = threading.Lock()

    def _worker(self) -> ThreadPoolExecutor:
        """The context's worker thread, made on first use."""
        with _AsyncOps._executor_lock:
            if self._executor is None:
                self._live()  # type: ignore[attr-defined]  # a closed context raises here
                self._executor = ThreadPoolExecutor(max_workers=1,
                                                    thread_name_prefix="parvis-worker")
            return self._executor

    def submit(self, method: Union[str, Callable[..., Any]], *args: Any,
               **kwargs: Any) -> "Future[Any]":
        """Queue ``method(*args, **kwargs)`` on this context's worker and
        return its Future (``result()`` gives the method's return value or
        raises its exception).

        method: the name of one of this context's methods (``"stereo_sgm"``)
        or any callable (it then runs on the worker as it is, in order with
        the other queued calls).  The arguments are borrowed until the
        future is done."""
        fn = getattr(self, method) if isinstance(method, str) else method
        if not callable(fn):
            raise TypeError(f"submit: {method!r} is not callable")
        return self._worker().submit(fn, *args, **kwargs)

    def stereo_sad_async(self, left: Any, right: Any, *args: Any,
                         **kwargs: Any) -> "Future[Any]":
        """stereo_sad queued (same arguments); a Future of the disparity."""
        return self.submit("stereo_sad", left, right, *args, **kwargs)

    def stereo_sgm_async(self, left: Any, right: Any, *args: Any,
                         **kwargs: Any) -> "Future[Any]":
        """stereo_sgm queued (same arguments); a Future of its result."""
        return self.submit("stereo_sgm", left, right, *args, **kwargs)

    def stereo_bp_async(self, left: Any, right: Any, *args: Any,
                        **kwargs: Any) -> "Future[Any]":
        """stereo_bp queued (same arguments); a Future of the disparity."""
        return self.submit("stereo_bp", left, right, *args, **kwargs)

    def phase_correlate_async(self, reference: Any, moving: Any, *args: Any,
                              **kwargs: Any) -> "Future[Any]":
        """phase_correlate queued (same arguments); a Future of the
        PhaseCorrelation."""
        return self.submit("phase_correlate", reference, moving, *args, **kwargs)

    def flow3d_async(self, fixed: Any, moving: Any, *args: Any,
                             **kwargs: Any) -> "Future[Any]":
        """flow3d queued (same arguments); a Future of the Flow."""
        return self.submit("flow3d", fixed, moving, *args, **kwargs)

    def wait(self) -> None:
        """Wait until every call queued on this context is done: the
        futures of submit and the *_async methods, and on OpenCL the
        device-buffer calls (pv_wait); last_timing then covers the last
        call whole.  A queued call's failure is raised by its future, not
        here."""
        executor = self._executor
        if executor is not None:
            executor.submit(lambda: None).result()  # every earlier call is done
        self._call(lib.pv_wait)  # type: ignore[attr-defined]

    def _stop_worker(self) -> None:
        """Let the queued calls finish and end the worker (close() calls it
        before it releases the C context)."""
        with _AsyncOps._executor_lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
