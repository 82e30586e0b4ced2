"""Progress of a context's long calls, and their cancellation.

``Context.set_progress(callable)`` has ``callable(op, done, total)`` called
as the long operations of that context advance: belief propagation
(``stereo_bp``), SGM and SIFT batches, optical flow, OCT registration,
phase-correlation batches and the tuner (a DeviceGroup's calls report on
its first context, which Python does not expose yet).  ``op`` names the operation,
``done`` of ``total`` units of its work are done (the units differ between
operations; only their ratio is comparable): a call reports ``done == 0``
first and ``done == total`` last when it succeeds, and ``done`` never goes
back within a call.  The callable's return value is ignored.

An exception raised by the callable (``KeyboardInterrupt`` included, so
Ctrl-C stops a long call cleanly) cancels the call at once: the C library
stops with ``PV_ERR_CANCELLED``, frees what the call made, and the
exception is re-raised from the method that made the call, with a
``parvis.Cancelled`` as its cause.  The context stays usable.

The callable runs on the thread that made the call, while the context is
busy: it must not use the same context (that would wait forever).

A tqdm progress bar (tqdm is not a dependency of parvis)::

    from tqdm import tqdm

    bars = {}

    def show(op, done, total):
        bar = bars.get(op)
        if bar is None or done == 0:       # a new call
            if bar is not None:
                bar.close()
            bar = bars[op] = tqdm(total=total, desc=op)
        bar.update(done - bar.n)

    with parvis.Context() as ctx:
        ctx.set_progress(show)
        disparity = ctx.stereo_bp(left, right, ndisp=64)
"""
from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Dict, Optional

from ._native import ffi, lib

#: What a progress callable looks like: (op, done, total), result ignored.
ProgressCallable = Callable[[str, float, float], Any]


class _Listener:
    """A context's callable, its cffi handle, and the exception it raised
    during the call in progress (taken by take_raised)."""

    __slots__ = ("callable", "raised", "handle", "__weakref__")

    def __init__(self, callback: ProgressCallable) -> None:
        self.callable = callback
        self.raised: Optional[BaseException] = None
        self.handle = ffi.new_handle(self)


#: The listener of each C context, by the pv_context's address.
_LISTENERS: Dict[int, _Listener] = {}
_LOCK = threading.Lock()


def _address(ptr: Any) -> int:
    return int(ffi.cast("uintptr_t", ptr))


@ffi.def_extern()
def _parvis_progress(user: Any, op: Any, done: float, total: float) -> int:
    """The C callback: the listener's callable, 1 (cancel) when it raised."""
    listener = ffi.from_handle(user)
    try:
        listener.callable(ffi.string(op).decode(errors="replace"), done, total)
    except BaseException as raised:  # noqa: B036 -- Ctrl-C must cancel too
        listener.raised = raised
        return 1
    return 0


def _forget(key: int, listener: _Listener) -> None:
    """Drop the context's entry, unless a newer context at the same address
    put its own there."""
    with _LOCK:
        if _LISTENERS.get(key) is listener:
            del _LISTENERS[key]


def set_progress(ctx: Any, callback: Optional[ProgressCallable]) -> None:
    """Call ``callback(op, done, total)`` as this context's long calls
    advance; an exception it raises cancels the call and is re-raised
    (module parvis._progress for the details and a tqdm example).
    ``None`` removes it."""
    if callback is not None and not callable(callback):
        raise TypeError(f"set_progress: {type(callback).__name__} is not callable")
    listener = _Listener(callback) if callback is not None else None
    with ctx._entered() as ptr:
        key = _address(ptr)
        if listener is None:
            lib.pv_context_set_progress(ptr, ffi.NULL, ffi.NULL)
        else:
            lib.pv_context_set_progress(ptr, lib._parvis_progress, listener.handle)
        with _LOCK:
            if listener is None:
                _LISTENERS.pop(key, None)
            else:
                _LISTENERS[key] = listener
    if listener is not None:
        weakref.finalize(ctx, _forget, key, listener)


def take_raised(ctx_ptr: Any) -> Optional[BaseException]:
    """The exception the context's callable raised in the call that just
    failed with PV_ERR_CANCELLED (cleared), or None."""
    with _LOCK:
        listener = _LISTENERS.get(_address(ctx_ptr))
    if listener is None:
        return None
    raised, listener.raised = listener.raised, None
    return raised
