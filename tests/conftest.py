from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

# Data captured from the official server and clients, kept in the repository (origin and licence: SOURCES.md).
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixture_path(relative: str) -> Path:
    path = FIXTURES / relative
    if not path.is_file():
        raise FileNotFoundError(f"fixture missing from tests/fixtures: {relative}")
    return path


def pytest_configure(config: pytest.Config) -> None:
    """One numba cache for the whole session (``model.numba_cache``): the workers and the processes the tests
    start share it, and the AI's kernels are compiled once, before the workers start (two workers would
    each compile them). It lives in pytest's cache folder: a later session (CI: the next job) loads them."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller prepared it
        return
    if not os.environ.get("BLOKUS_NUMBA_CACHE"):
        cache = getattr(config, "cache", None)
        folder = cache.mkdir("numba") if cache is not None else Path(tempfile.mkdtemp(prefix="blokus-numba-"))
        os.environ["BLOKUS_NUMBA_CACHE"] = str(folder)
    if config.getoption("numprocesses", None):
        from model import numba_cache

        if not numba_cache.is_warm(["ai.mcts", "ai.fastsearch"]):
            code = "from ai import compile_ahead; compile_ahead('mcts'); compile_ahead('lookahead')"
            subprocess.run([sys.executable, "-c", code], check=False, timeout=1800)


def pytest_unconfigure(config: pytest.Config) -> None:
    # A worker ends with about a million objects alive (bounded caches: Textual's rendering, the engine's
    # moves). pytest then collects garbage five times to find unraisable exceptions, ~1 s each, and
    # pytest-xdist interrupts a worker still busy after 5 s. Frozen objects are left out of those collections.
    import gc

    gc.freeze()
