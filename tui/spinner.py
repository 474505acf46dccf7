"""A spinner on the terminal while the compiled search is loaded or compiled (analysis, ``blokus moves``)."""

from __future__ import annotations

import sys
import threading


class Spinner:
    """``| TEXT`` turning on a terminal while something slow runs (the first start's compile of the engine);
    nothing when the stream is not a terminal (a pipe, a log) or ``enabled`` is false."""

    FRAMES = "|/-\\"

    def __init__(self, text: str, stream=None, *, enabled: bool = True) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.text = text
        isatty = getattr(self.stream, "isatty", None)
        self.on = enabled and callable(isatty) and isatty()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Spinner:
        if self.on:
            self._thread = threading.Thread(target=self._spin, name="spinner", daemon=True)
            self._thread.start()
        return self

    def _spin(self) -> None:
        frame = 0
        while True:
            self.stream.write(f"\r{self.FRAMES[frame % len(self.FRAMES)]} {self.text}\x1b[K")
            self.stream.flush()
            frame += 1
            if self._stop.wait(0.1):
                return

    def __exit__(self, *exc) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self.stream.write("\r\x1b[K")
            self.stream.flush()
