"""ai/workers.py: the one pool of worker processes (the arena's games, the analysis's positions): workers that
ignore Ctrl-C and run their initializer first, known to the pool, ended at once by ``stop``."""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures import CancelledError
from concurrent.futures.process import BrokenProcessPool

import pytest

from blokus.ai.workers import WorkerPool

_mark = ""


def _init(mark: str) -> None:
    global _mark
    _mark = mark


def _state() -> tuple[str, bool, int]:
    return _mark, signal.getsignal(signal.SIGINT) is signal.SIG_IGN, os.getpid()


def _forever() -> None:
    while True:  # a game that never ends: only ``stop`` ends its worker
        time.sleep(1)


def test_workers_run_their_initializer_ignore_ctrl_c_and_are_known_to_the_pool():
    pool = WorkerPool(2, _init, ("ready",))
    try:
        answers = [f.result(timeout=60) for f in pool.submit_all(_state, [(), (), ()])]
    finally:
        pool.close()
    assert {(mark, ignored) for mark, ignored, _ in answers} == {("ready", True)}
    assert {pid for *_, pid in answers} <= {w.pid for w in pool.workers} and len(pool.workers) <= 2
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the parent's handler is back


def test_stop_ends_every_worker_and_the_calls_not_done():
    pool = WorkerPool(2, _init, ("x",))
    futures = pool.submit_all(_forever, [(), (), ()])
    deadline = time.monotonic() + 60
    while not all(f.running() for f in futures[:2]) and time.monotonic() < deadline:
        time.sleep(0.05)  # waiting for the workers to take their calls (not a timing assert)
    assert len(pool.workers) == 2 and all(w.is_alive() for w in pool.workers)
    pool.stop(term_grace=1.0)
    assert not any(w.is_alive() for w in pool.workers)
    for future in futures:
        with pytest.raises((CancelledError, BrokenProcessPool)):
            future.result(timeout=10)
