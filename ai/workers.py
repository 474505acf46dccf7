"""One pool of worker processes for the arena's games (``ai.arena.match``) and the analysis's positions
(``ai.analysis``): spawned (no fork of a process with threads), started with Ctrl-C ignored (inherited through
exec, so also before their initializer runs: the parent handles Ctrl-C and stops them), and known to the pool
by its own context, so that :meth:`WorkerPool.stop` ends each of them at once.

An executor, not a ``multiprocessing.Pool``: a worker that dies (a crash in compiled code, the OOM killer)
breaks the pool's futures with an error instead of leaving the caller waiting for ever.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing.context import SpawnContext, SpawnProcess
from multiprocessing.process import BaseProcess
from typing import Any

from blokus.ai import processes


class WorkerContext(SpawnContext):
    """The spawn context, recording every process it makes (the pool's workers: :attr:`started`). Its Event,
    Queue … are the spawn context's, for what the workers share with the parent."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[BaseProcess] = []

    def Process(self, *args: Any, **kwargs: Any) -> SpawnProcess:  # type: ignore[override]  # noqa: N802
        process = SpawnProcess(*args, **kwargs)
        self.started.append(process)
        return process


@contextlib.contextmanager
def _interrupts_ignored() -> Iterator[None]:
    previous = (
        signal.signal(signal.SIGINT, signal.SIG_IGN) if threading.current_thread() is threading.main_thread() else None
    )
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _begin(initializer: Callable[..., object], initargs: tuple) -> None:
    """A worker's start: Ctrl-C is the parent's to handle (it stops the pool), the worker ends with the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    processes.die_with_parent(release_streams=False)
    initializer(*initargs)


class WorkerPool:
    """``size`` worker processes, each ending with this process and running ``initializer(*initargs)`` first.
    Submit with :meth:`submit_all`; :meth:`close` at the end, or :meth:`stop` on an error or Ctrl-C (the workers
    end now)."""

    def __init__(
        self,
        size: int,
        initializer: Callable[..., object],
        initargs: tuple = (),
        context: WorkerContext | None = None,
    ) -> None:
        self.context = context or WorkerContext()
        self._executor = ProcessPoolExecutor(
            size, mp_context=self.context, initializer=_begin, initargs=(initializer, initargs)
        )

    def submit_all(self, call: Callable[..., Any], args: Iterable[tuple]) -> list[Future]:
        """``call(*a)`` for each of ``args``, in that order; the workers start here, with Ctrl-C ignored."""
        with _interrupts_ignored():
            return [self._executor.submit(call, *a) for a in args]

    @property
    def workers(self) -> list[BaseProcess]:
        """The worker processes started so far (alive or not)."""
        return list(self.context.started)

    def stop(self, term_grace: float = processes.TERM_GRACE_S) -> None:
        """End every worker (SIGTERM, then SIGKILL after ``term_grace``) and the pool: the calls not done fail
        or are cancelled (not cancelled before: the pool marks them broken when its workers end, and
        cancelling them first makes its manager thread fail on them: CPython 3.11)."""
        for worker in self.workers:
            processes.stop_worker(worker, term_grace=term_grace)
        self._executor.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        """Wait for the calls and let the workers go."""
        self._executor.shutdown(wait=True)
