"""Lifetimes of the C objects behind Context, DeviceGroup and the plans.

Three rules hold here, whatever thread or finaliser runs:

* Every entry into C on a context or group holds its lock and finds it open
  (``_Handle._entered``): a context closed by another thread raises
  :class:`ClosedError` instead of reaching freed memory.
* A finaliser (``__del__``, which the cyclic garbage collector may run in
  the middle of a call that holds the very lock it needs) never waits for a
  lock: it tries it once and, when it is taken, leaves the release to the
  next call that holds it, or to the context's close().
* After ``fork`` the child's copies of the parent's contexts are unusable:
  the OpenMP thread pool and the OpenCL driver's threads are not copied,
  and any call would wait on them for ever.  They raise :class:`ForkedError`
  instead, and close without calling C (the parent still owns the objects).
"""
from __future__ import annotations

import os
import threading
import weakref
from contextlib import contextmanager
from typing import Any, Callable, Iterator, List, Optional, Set, TypeVar

from ._errors import ClosedError, ForkedError
from ._native import lib

_FORK_ADVICE = ("the OpenMP and OpenCL threads it relies on do not survive fork; start "
                "worker processes with multiprocessing's 'spawn' or 'forkserver' method "
                "(multiprocessing.get_context('spawn')) instead")

# Every live handle of this process, so that a forked child can mark them.
_HANDLES: "weakref.WeakSet[_Handle]" = weakref.WeakSet()
# Whether this process has made a context or group (started OpenMP or the
# OpenCL driver), and whether it is a fork child of one that had.
_runtime = {"started": False, "inherited": False}
# Releases of unreachable contexts and groups whose lock was taken when
# their finaliser ran; retried by the next entry into any handle.
_ORPHANS: List["_Handle"] = []


def _after_fork_in_child() -> None:
    """Mark every handle inherited through fork as unusable."""
    for handle in list(_HANDLES):
        handle._forked = True
    _ORPHANS.clear()
    _runtime["inherited"] = _runtime["started"]


os.register_at_fork(after_in_child=_after_fork_in_child)


def forked_error(what: str) -> ForkedError:
    return ForkedError(lib.PV_ERR_UNSUPPORTED,
                       f"{what} was inherited through fork and cannot be used in this "
                       f"process: {_FORK_ADVICE}")


def check_can_start(what: str) -> None:
    """Refuse a call that starts the library's threads (a new context or
    group, the device list, which starts the OpenCL driver, an OpenMP
    helper) in a fork child of a process that had started them: they would
    hang.  Otherwise note that this process starts them."""
    if _runtime["inherited"]:
        raise ForkedError(lib.PV_ERR_UNSUPPORTED,
                          f"{what}: this process was forked from one that had already "
                          f"used parvis; {_FORK_ADVICE}")
    _runtime["started"] = True


class CObject:
    """One C object and the call that frees it, released once.

    A plan's context keeps these (not the plan objects) so that it can free
    every plan before itself, whatever order the garbage collector finalises
    a plan and its context in."""

    __slots__ = ("ptr", "_free")

    def __init__(self, ptr: Any, free: Callable[[Any], None]) -> None:
        self.ptr = ptr
        self._free = free

    def release(self) -> None:
        """Free the C object (idempotent); the caller holds its context's lock."""
        ptr, self.ptr = self.ptr, None
        if ptr is not None:
            self._free(ptr)

    def abandon(self) -> None:
        """Forget the object without freeing it (a fork child's copy)."""
        self.ptr = None


_H = TypeVar("_H", bound="_Handle")


class _Handle:
    """What Context and DeviceGroup share: one C object behind a lock.

    ``with`` closes it, so does garbage collection, ``closed`` tells, and
    ``_entered()`` holds the lock and gives the live pointer.  A subclass
    sets ``_what`` ("the context"), ``_destroy`` (the C destructor) and
    calls ``_start(ptr)`` once the C object exists."""

    _what = "the object"
    _destroy: Any = None
    _ptr: Any = None
    _forked = False

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # C plans made on this handle, freed before it.
        self._owned: Set[CObject] = set()
        # Plans whose finaliser found the lock taken, freed by the next entry.
        self._deferred: List[CObject] = []

    def _start(self, ptr: Any) -> None:
        self._ptr = ptr
        _HANDLES.add(self)

    def __enter__(self: _H) -> _H:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def _live(self) -> Any:
        """The C pointer; raises when closed or inherited through fork."""
        if self._forked:
            raise forked_error(self._what)
        if self._ptr is None:
            raise ClosedError(lib.PV_ERR_INVALID, f"{self._what} is closed")
        return self._ptr

    @contextmanager
    def _entered(self) -> Iterator[Any]:
        """Hold the lock with the object open; yields its C pointer."""
        if self._forked:  # the lock may have been held at fork: never wait on it
            raise forked_error(self._what)
        if _ORPHANS:
            _retry_orphans()
        with self._lock:
            ptr = self._live()
            while self._deferred:
                self._disown(self._deferred.pop())
            yield ptr

    def _own(self, obj: CObject) -> None:
        self._owned.add(obj)

    def _disown(self, obj: CObject) -> None:
        """Free a plan's C object; the caller holds the lock."""
        self._owned.discard(obj)
        obj.release()

    def close(self) -> None:
        """Release the C object and every plan made on it (idempotent)."""
        if self._forked:
            self._abandon()
            return
        with self._lock:
            self._release_locked()

    def _release_locked(self) -> None:
        for obj in list(self._owned):
            obj.release()
        self._owned.clear()
        self._deferred.clear()
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            type(self)._destroy(ptr)

    def _abandon(self) -> None:
        """Forget a fork child's copies without calling C."""
        for obj in list(self._owned):
            obj.abandon()
        self._owned.clear()
        self._deferred.clear()
        self._ptr = None

    def _try_release(self) -> bool:
        """Release now if the lock is free; False when it is taken."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            self._release_locked()
        finally:
            self._lock.release()
        return True

    def __del__(self) -> None:
        try:
            if self._forked:
                self._abandon()
            elif self._ptr is not None and not self._try_release():
                _ORPHANS.append(self)
        except Exception:  # interpreter shutdown: the module may be gone
            pass


def _retry_orphans() -> None:
    """Free the orphaned handles whose lock is free now."""
    for _ in range(len(_ORPHANS)):
        try:
            handle = _ORPHANS.pop()
        except IndexError:
            return
        if not handle._try_release():
            _ORPHANS.append(handle)


class PlanHandle:
    """A C object made on a context (a plan): it shares the context's lock,
    and the context frees it at the latest when it closes."""

    _what = "the plan"
    _c: Optional[CObject] = None

    def __init__(self, owner: _Handle) -> None:
        self._ctx = owner

    def _adopt(self, obj: CObject) -> None:
        """Take the C object; the caller holds the context's lock."""
        self._c = obj
        self._ctx._own(obj)

    @property
    def _ptr(self) -> Any:
        return None if self._c is None else self._c.ptr

    @property
    def closed(self) -> bool:
        return self._ptr is None or self._ctx.closed

    def __enter__(self: Any) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @contextmanager
    def _entered(self) -> Iterator[Any]:
        """Hold the context's lock with both open; yields (context, plan)
        pointers."""
        with self._ctx._entered() as ctx:
            if self._ptr is None:
                raise ClosedError(lib.PV_ERR_INVALID, f"the {type(self).__name__} is closed")
            yield ctx, self._ptr

    def close(self) -> None:
        """Release the plan (idempotent)."""
        obj = self._c
        if obj is None or obj.ptr is None:
            return
        if self._ctx._forked:
            obj.abandon()
            return
        with self._ctx._lock:
            self._ctx._disown(obj)

    def __del__(self) -> None:
        try:
            obj, ctx = self._c, self._ctx
            if obj is None or obj.ptr is None:
                return
            if ctx._forked:
                obj.abandon()
            elif ctx._lock.acquire(blocking=False):
                try:
                    ctx._disown(obj)
                finally:
                    ctx._lock.release()
            else:  # a call holds the lock, perhaps this very thread's
                ctx._deferred.append(obj)
        except Exception:  # interpreter shutdown: the module may be gone
            pass
