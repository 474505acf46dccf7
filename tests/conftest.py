from __future__ import annotations

import compileall
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

# What the product and its libraries read from the environment, pinned for the session (and for the processes
# the tests start, which inherit it): the suite's results must not depend on the caller's terminal. A test
# that is about one of these sets it itself (monkeypatch.setenv), e.g. NO_COLOR or a narrow COLUMNS.
PINNED_ENV = {
    "TERM": "xterm-256color",  # Rich/Textual pick the colour system from it
    "TEXTUAL_COLOR_SYSTEM": None,
    "COLORTERM": None,
    "NO_COLOR": None,  # Textual: monochrome filter and the product's letters (tui.colors)
    "FORCE_COLOR": None,
    "TTY_COMPATIBLE": None,
    "TTY_INTERACTIVE": None,
    "COLUMNS": None,  # Rich's console width (the fatal error line, argparse's help)
    "LINES": None,
    "TEXTUAL": None,  # Textual's devtools and debug features
    "TEXTUAL_DEBUG": None,
    "TEXTUAL_FILTERS": None,
    "TEXTUAL_ANIMATIONS": None,
    "BLOKUS_LOG": None,  # the log file (tests that need one set it in tmp)
    "BLOKUS_MCTS_PARAMS": None,  # research switches of the searches
    "BLOKUS_FAST_PARAMS": None,
    "BLOKUS_FAST_WEIGHTS": None,
    # the AI's kernels compiled once a session, for the generic x86-64 CPU the contest upload ships: the upload's
    # build (test_bundle.py) then loads the session's kernels instead of compiling them a second time
    "NUMBA_CPU_NAME": "generic",
    "NUMBA_CPU_FEATURES": None,
}


WRITES_NO_BYTECODE = sys.dont_write_bytecode
_KERNEL_MODULES = {"mcts": "blokus.ai.search.mcts", "lookahead": "blokus.ai.search.fastsearch"}


def pin_environment() -> None:
    for name, value in PINNED_ENV.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def pytest_configure(config: pytest.Config) -> None:
    """One numba cache for the whole session (``model.numba_cache``): the workers and the processes the tests
    start share it, and the AI's kernels are compiled once, before the workers start (two workers would
    each compile them). It lives in pytest's cache folder: a later session (CI: the next job) loads them.
    The environment the product reads is pinned first (``PINNED_ENV``), in the workers too."""
    pin_environment()
    # the test modules' bytecode (rewritten by pytest for its asserts) kept for the next run and the other
    # worker, whatever the environment says: until collection ends only they and the project are imported
    sys.dont_write_bytecode = False
    if hasattr(config, "workerinput"):  # an xdist worker: the controller prepared it
        return
    compile_project()
    if not os.environ.get("BLOKUS_NUMBA_CACHE"):
        cache = getattr(config, "cache", None)
        folder = cache.mkdir("numba") if cache is not None else Path(tempfile.mkdtemp(prefix="blokus-numba-"))
        if cache is None:  # -p no:cacheprovider: a folder of this session only, removed at its end
            config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
        os.environ["BLOKUS_NUMBA_CACHE"] = str(folder)
    if config.getoption("numprocesses", None):
        from blokus.model import numba_cache

        # the two searches in two processes at once (~37 s instead of ~42 s on two cores): each compiles the
        # engine's kernels they share too, and numba's cache writes are atomic (a file is replaced, not edited)
        cold = [name for name in ("mcts", "lookahead") if not numba_cache.is_warm([_KERNEL_MODULES[name]])]
        code = "import sys; from blokus.ai import compile_ahead as c, parse_player as p; c(p(sys.argv[1]))"
        compiles = [subprocess.Popen([sys.executable, "-c", code, name]) for name in cold]
        for process in compiles:
            process.wait(timeout=1800)


def compile_project() -> None:
    """The project's bytecode, written before the workers start. Processes read it even where the environment
    forbids writing bytecode (PYTHONDONTWRITEBYTECODE, which some sandboxes set): else each of the hundreds of
    processes the suite starts would compile the project's modules from source, ~0.15 s of CPU apiece. Only
    our sources: a team's files in the temporary folder are rewritten in place by tests, never cached."""
    compileall.compile_dir(Path(__file__).parents[1] / "blokus", quiet=1)


def pytest_collection_finish(session: pytest.Session) -> None:
    sys.dont_write_bytecode = WRITES_NO_BYTECODE  # from here on tests import files they rewrite in place


def pytest_unconfigure(config: pytest.Config) -> None:
    # A worker ends with about a million objects alive (bounded caches: Textual's rendering, the engine's
    # moves). pytest then collects garbage five times to find unraisable exceptions, ~1 s each, and
    # pytest-xdist interrupts a worker still busy after 5 s. Frozen objects are left out of those collections.
    import gc

    gc.freeze()
