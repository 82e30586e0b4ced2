"""A text progress bar for batches: done/total, throughput, time left."""

from __future__ import annotations

import sys
import time
from typing import Optional, TextIO


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


class ProgressBar:
    """Callable as a batch's ``progress`` callback.

    On a terminal the bar is redrawn in place; elsewhere (a log file, CI) a
    line is printed at most every ``interval`` seconds and at the end, so
    logs stay short.  Throughput counts the items finished in this run
    (items skipped because their output was complete are left out of it).
    """

    def __init__(self, label: str, stream: Optional[TextIO] = None, width: int = 30,
                 interval: float = 5.0) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.interval = interval
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self._start = time.perf_counter()
        self._first_done: Optional[int] = None
        self._last_print = 0.0

    def line(self, done: int, total: int, failed: int) -> str:
        """The bar's text for this state (no line ending)."""
        elapsed = time.perf_counter() - self._start
        if self._first_done is None:
            self._first_done = done
        ran = done - self._first_done
        rate = ran / elapsed if elapsed > 0 and ran > 0 else 0.0
        filled = self.width * done // total if total else self.width
        bar = "#" * filled + "." * (self.width - filled)
        left = _clock((total - done) / rate) if rate > 0 else "?"
        text = (f"{self.label}: {done}/{total} [{bar}] {rate:.2f}/s, "
                f"{_clock(elapsed)} elapsed, {left} left")
        if failed:
            text += f", {failed} failed"
        return text

    def __call__(self, done: int, total: int, failed: int) -> None:
        text = self.line(done, total, failed)
        finished = done >= total
        now = time.perf_counter()
        if self.live:
            self.stream.write("\r" + text + ("\n" if finished else ""))
        elif finished or now - self._last_print >= self.interval or self._last_print == 0.0:
            self.stream.write(text + "\n")
            self._last_print = now
        self.stream.flush()
