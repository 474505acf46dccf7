from __future__ import annotations

import compileall
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
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
COMPILE_LOCK_ENV = "BLOKUS_TEST_COMPILE_LOCK"  # held by the session's compile until its kernels are in the cache

# Test modules that never load a compiled kernel: each passes with an empty numba cache and leaves it empty
# (BLOKUS_NUMBA_CACHE=<empty folder> python -m pytest -n 0 tests/test_X.py). They run first, beside the
# session's compile of the AI's kernels; every other test waits for that compile (one process, one core, the
# kernels the two searches share compiled once). A module listed here by mistake only compiles for itself.
COMPILE_FREE = frozenset(
    f"tests/test_{name}.py"
    for name in (
        "tui_app xmlcodec tui_items tui_snapshots tui_board framing framing_limits messages replay placements "
        "engine_properties official_games rules net_wire net_server net_server_limits referee verdict "
        "tui_structure spec_references protocol_doc server_texts tui_errors tui_results tui_session options_once "
        "season_2027_room_ends one_place product_structure"
    ).split()
)


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

        cold = [name for name in ("mcts", "lookahead") if not numba_cache.is_warm([_KERNEL_MODULES[name]])]
        if cold:
            start_compile(config, cold)


def start_compile(config: pytest.Config, searches: list[str]) -> None:
    """Compile the searches' kernels into the session's cache in one process beside the workers (~42 s of
    one core, cold). The process holds an exclusive lock on a file until it ends; a test outside
    ``COMPILE_FREE`` waits for it (``pytest_runtest_setup``)."""
    lock_path = Path(tempfile.mkdtemp(prefix="blokus-compile-")) / "lock"
    lock = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)  # the lock belongs to the open file, which the process inherits
    code = "import sys; from blokus.ai import compile_ahead as c, parse_player as p; [c(p(n)) for n in sys.argv[1:]]"
    process = subprocess.Popen([sys.executable, "-c", code, *searches], pass_fds=(lock,))
    os.close(lock)
    os.environ[COMPILE_LOCK_ENV] = str(lock_path)

    def stop() -> None:  # a session that ends early (-x) does not wait for the compile
        process.terminate()  # numba's cache writes are atomic: a file is replaced, never left half written
        process.wait()
        shutil.rmtree(lock_path.parent, ignore_errors=True)

    config.add_cleanup(stop)


def _compile_free(item: pytest.Item) -> bool:
    return item.nodeid.split("::")[0] in COMPILE_FREE


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not _compile_free(item))  # stable: the files' order kept


_compiled = False


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    global _compiled
    if _compiled or _compile_free(item) or COMPILE_LOCK_ENV not in os.environ:
        return
    lock = os.open(os.environ[COMPILE_LOCK_ENV], os.O_RDONLY)
    try:
        fcntl.flock(lock, fcntl.LOCK_SH)  # free once the compile has ended
    finally:
        os.close(lock)
    _compiled = True


def compile_project() -> None:
    """The project's bytecode, written before the workers start. Processes read it even where the environment
    forbids writing bytecode (PYTHONDONTWRITEBYTECODE, which some sandboxes set): else each of the hundreds of
    processes the suite starts would compile the project's modules from source, ~0.15 s of CPU apiece. Only
    our sources: a team's files in the temporary folder are rewritten in place by tests, never cached."""
    compileall.compile_dir(Path(__file__).parents[1] / "blokus", quiet=1)


def pytest_collection_finish(session: pytest.Session) -> None:
    sys.dont_write_bytecode = WRITES_NO_BYTECODE  # from here on tests import files they rewrite in place


LARGE_FILE_BYTES = 256 * 1024  # replays of whole games, filled logs, bombs: ~33 MB a run in all
_passed = pytest.StashKey[bool]()  # the test's call passed


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    report = yield
    if report.when == "call":
        item.stash[_passed] = report.passed
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """A passed test's large files are removed once its fixtures are torn down, its folder and small files
    kept (the folder's name is not given to another test; pytest keeps the last run's folders). A failed
    test keeps everything."""
    try:
        return (yield)
    finally:
        folder = (getattr(item, "funcargs", None) or {}).get("tmp_path")
        if isinstance(folder, Path) and item.stash.get(_passed, False):
            for path in folder.rglob("*"):
                try:
                    if path.is_file() and not path.is_symlink() and path.stat().st_size >= LARGE_FILE_BYTES:
                        path.unlink()
                except OSError:  # gone already, or made unreadable by the test
                    pass


def pytest_unconfigure(config: pytest.Config) -> None:
    # A worker ends with about a million objects alive (bounded caches: Textual's rendering, the engine's
    # moves). pytest then collects garbage five times to find unraisable exceptions, ~1 s each, and
    # pytest-xdist interrupts a worker still busy after 5 s. Frozen objects are left out of those collections.
    import gc

    gc.freeze()
