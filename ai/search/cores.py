"""The cores a search may use: a search's threads (``mcts:threads=N``, ``blokus bot --threads N``) default to
the cores this process may run on. Light (no numba): the bot says its threads before its engine loads."""

from __future__ import annotations

import os

MAX_THREADS = 64  # a search's threads at most (a tree each)


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity; the CPU count where the system has none)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity on this system (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def search_threads(threads: int) -> int:
    """The threads a search set to ``threads`` runs: that many, or all available cores for 0."""
    return min(MAX_THREADS, threads if threads > 0 else available_cores())
