"""Lines to stdout/stderr that can never block the event loop (issue 46.4).

A program reading our output may stop reading (a pipe nobody reads, a terminal paused with Ctrl-S): a
``print`` in the event loop then blocks the loop, and with it every game of a server. :class:`LineWriter`
puts a line into a bounded queue and returns at once; a thread of its own writes the lines out (and is the
only one that waits). When the queue is full the line is dropped and counted; :meth:`LineWriter.close`
waits a bounded time for the rest and says in one line how many were dropped.

:func:`log_to` is ``logging.basicConfig`` through such a writer (the server's and the bot's ``-v``).
"""

from __future__ import annotations

import logging
import queue
import sys
import threading
from typing import TextIO

CAPACITY = 10_000  # lines waiting to be written; beyond it they are dropped (and counted)
CLOSE_WAIT_S = 2.0  # at the end: time for the writer to write what is left


class LineWriter:
    """Writes lines to ``stream`` from its own thread; :meth:`write` never blocks."""

    def __init__(self, stream: TextIO | None = None, *, capacity: int = CAPACITY, name: str = "stdout") -> None:
        self.stream = stream if stream is not None else sys.stdout
        self.name = name
        self.dropped = 0
        self.written = 0
        self._queue: queue.Queue[str | None] = queue.Queue(capacity)
        self._thread = threading.Thread(target=self._run, name=f"lines-{name}", daemon=True)
        self._thread.start()
        self._closed = False

    def write(self, line: str) -> None:
        """Queue ``line`` (a newline is added); dropped and counted if the queue is full or closed."""
        if self._closed:
            self.dropped += 1
            return
        try:
            self._queue.put_nowait(line)
        except queue.Full:
            self.dropped += 1

    def _run(self) -> None:
        while (line := self._queue.get()) is not None:
            try:
                self.stream.write(line + "\n")
                if self._queue.empty():
                    self.stream.flush()
                self.written += 1
            except (OSError, ValueError):  # closed: the rest is dropped
                self.dropped += 1

    def close(self, wait: float = CLOSE_WAIT_S) -> int:
        """Write what is left (at most ``wait`` seconds; the rest is dropped) and stop. The number of lines
        dropped in all."""
        if not self._closed:
            self._closed = True
            try:
                self._queue.put(None, timeout=wait)
            except queue.Full:
                pass
            self._thread.join(wait)
            if self._thread.is_alive():  # still blocked on the stream: what is queued is lost
                self.dropped += self._queue.qsize()
        return self.dropped


class LineHandler(logging.Handler):
    """A logging handler writing through a :class:`LineWriter`."""

    def __init__(self, writer: LineWriter) -> None:
        super().__init__()
        self.writer = writer

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.writer.write(self.format(record))
        except Exception:  # a broken formatter must not end the program
            self.handleError(record)


def log_to(writer: LineWriter, level: int, fmt: str) -> None:
    """``logging.basicConfig(level, format)`` with the lines going through ``writer``."""
    handler = LineHandler(writer)
    handler.setFormatter(logging.Formatter(fmt))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
