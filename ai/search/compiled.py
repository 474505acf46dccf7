"""Compiled (numba) players, made ready without blocking the program that uses them.

numba compiles a module's kernels on the first start (seconds, tens of seconds on a slow machine) and
caches them on disk; later starts load them in about a second. ``Kernels(module).prepare()`` compiles in
a child process when the cache is cold (a compile holds the GIL for seconds: the TUI would freeze), then
loads the kernels here through the module's ``warm_up()``. ``LazyCompiledPlayer`` is a player by name
that imports its compiled module only when a move is first asked for, off the caller's thread, and
answers with a pure-Python engine until the kernels are ready.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import threading
import time
from collections.abc import Callable

from blokus.ai import processes
from blokus.ai.interface import Engine, StopFlag
from blokus.model.moves import Move
from blokus.model.state import GameState

_CHILD = "BLOKUS_COMPILE_CHILD"  # set in the compiling child process


# --- "the compiled search is not ready": the one place that says so --------------------------------------


def not_ready_word(status: str) -> str:
    """Why the Python search answers instead of the compiled one, in a word or three (for move tallies:
    ``lookahead (compiling)``): ``compiling``, ``loading``, ``engine process ended``, ``compiled engine
    failed``. ``status`` as :meth:`Kernels.status` gives it (``failed: REASON``; ``starting``: loading)."""
    if status.startswith("failed"):
        return "engine process ended" if "engine process ended" in status else "compiled engine failed"
    return "compiling" if status == "compiling" else "loading"


def fallback_label(fallback: str, status: str) -> str:
    """The ``fallback`` entry of a move's ``last_info`` while the compiled search is not ready."""
    return f"{fallback} ({not_ready_word(status)})"


def preparing_text(status: str) -> str:
    """A spinner's text while the compiled search is made ready and nothing answers meanwhile."""
    return "preparing the engine (first start only)" if status == "compiling" else "loading the engine"


def not_ready_line(status: str) -> str:
    """The one sentence for a user: the compiled search is not ready, and what plays meanwhile."""
    if status.startswith("failed"):
        return f"the compiled search failed ({status.removeprefix('failed: ')}); the Python lookahead plays every move"
    doing = "is being compiled (first start only)" if status == "compiling" else f"is not ready yet ({status})"
    return f"the compiled search {doing}; the Python lookahead plays until it is ready"


class Kernels:
    """The compiled kernels of one module (which has a ``warm_up()`` that runs every kernel once)."""

    def __init__(self, module: str, *depends_on: str) -> None:
        self.module = module
        self.depends_on = depends_on  # modules with kernels this one calls (compiled with it, one cache stamp)
        self.ready = threading.Event()  # set when done: the kernels are loaded, or ``error`` says why not
        self.error: str | None = None
        self.compiling = False  # the cache was cold: compiling (not just loading)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def cache_is_warm(self) -> bool:
        """Whether a numba cache holds a complete warm-up of the module for these sources (``model.numba_cache``)."""
        from blokus.model import numba_cache

        return numba_cache.is_warm([self.module])

    def compile_in_child(self, timeout: float = 600.0) -> bool:
        """Compile the kernels into the on-disk cache in a child process; True if that worked."""
        if os.environ.get(_CHILD):  # never a chain of children (a warm_up that asks for a compile itself)
            return False
        marks = [self.module, *self.depends_on]
        code = (
            f"import {self.module} as m; m.warm_up(); from blokus.model import numba_cache as c; c.mark_warm({marks})"
        )
        try:
            done = processes.run([sys.executable, "-c", code], timeout=timeout, env={**os.environ, _CHILD: "1"})
        except OSError:
            return False
        return done == 0

    def _prepare(self) -> None:
        try:
            from blokus.model import numba_cache

            warm = numba_cache.is_warm([self.module])
            self.compiling = not warm
            # a compile holds the GIL for seconds: in a child, when its result can be cached for us to load
            if not warm and numba_cache.writable_location(self.module) is not None:
                self.compile_in_child()
            importlib.import_module(self.module).warm_up()  # loads from the cache (or compiles, if the child failed)
            if not warm:
                numba_cache.mark_warm([self.module, *self.depends_on])
        except Exception as exc:  # numba missing or failing: the players answer with their Python search
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.ready.set()

    def prepare(self, wait: float | None = 0.0) -> bool:
        """Start making the kernels ready (once per process); wait up to ``wait`` seconds (None: until
        ready or failed). Returns whether they are ready."""
        if not self.ready.is_set():
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._prepare, name=f"compile-{self.module}", daemon=True)
                    self._thread.start()
            self.ready.wait(wait)
        return self.is_ready()

    def is_ready(self) -> bool:
        return self.ready.is_set() and self.error is None

    def status(self) -> str:
        """``ready``, ``compiling`` (first start), ``loading`` or ``failed: REASON``."""
        if self.ready.is_set():
            return "ready" if self.error is None else f"failed: {self.error}"
        return "compiling" if self.compiling else "loading"


def _imported(name: str) -> bool:
    """Whether a module is imported completely (not still being imported by another thread: using it would
    wait for that import, seconds)."""
    module = sys.modules.get(name)
    return module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False)


class LazyCompiledPlayer(Engine):
    """A compiled player built on first use: importing its module (numba) costs 1-2 s, which must not delay
    a program's start (the TUI's first frame). The first move asked for starts the import in a background
    thread; until the player exists (and its kernels are ready) ``fallback`` answers."""

    def __init__(
        self,
        name: str,
        module: str,
        factory: Callable[..., Engine],
        fallback: Engine,
        seed: int | None = None,
        *,
        clock: Callable[[], float] | None = None,
    ) -> None:
        super().__init__(seed, clock=clock)
        self.name = name
        self.module = module
        self.factory = factory  # (seed, clock) -> the compiled player; imports ``module``
        self.seed = seed
        self._player: Engine | None = None
        self._loader: threading.Thread | None = None
        self._lock = threading.Lock()
        self._fallback = fallback
        self.error: str | None = None  # why the compiled player could not be built

    def _load(self) -> None:
        try:
            player = self.factory(self.seed, self.clock)  # imports numba: seconds, off the caller's thread
        except Exception as exc:  # numba missing or broken: the fallback plays on, and says why
            self.error = f"{type(exc).__name__}: {exc}"
            return
        with self._lock:
            self._player = player

    def _ready_player(self) -> Engine | None:
        with self._lock:
            if self._player is None and self._loader is None:
                if _imported(self.module):  # already imported (compile_ahead, tests): building is cheap
                    self._loader = threading.current_thread()
                else:
                    self._loader = threading.Thread(target=self._load, name=f"load-{self.name}", daemon=True)
                    self._loader.start()
                    return None
            else:
                return self._player
        self._load()
        return self._player

    def think(self, state: GameState, deadline: float, stop: StopFlag) -> Move:
        player = self._ready_player()
        if player is None:  # still importing, or failed
            self._fallback.clock, self._fallback.cpu_clock = self.clock, self.cpu_clock
            move = self._fallback.think(state, deadline, stop)
            label = fallback_label(self._fallback.name, self.status())
            self.last_info = {**self._fallback.last_info, "fallback": label}
            return move
        player.clock = self.clock  # injectable, as on every engine
        if self.cpu_clock is not time.thread_time:  # injected (tests); else the player's own choice stays
            player.cpu_clock = self.cpu_clock
        move = player.think(state, deadline, stop)
        self.last_info = player.last_info
        kernels = getattr(sys.modules.get(self.module), "KERNELS", None)
        if kernels is not None and kernels.error is not None and "fallback" in self.last_info:
            self.last_info = {**self.last_info, "fallback": fallback_label(self._fallback.name, kernels.status())}
        return move

    def status(self) -> str:
        """The compiled engine's state: ``ready``, ``loading``, ``compiling`` or ``failed: REASON``."""
        if self.error is not None:
            return f"failed: {self.error}"
        kernels = getattr(sys.modules.get(self.module), "KERNELS", None)
        return "loading" if kernels is None else kernels.status()

    # pondering is the compiled player's own (its ``think`` stops it); before it exists there is none
    def _built(self) -> Engine | None:
        """The compiled player if it exists (never starts loading it)."""
        with self._lock:
            return self._player

    def ponder(self, state: GameState, stop: StopFlag) -> None:
        if (player := self._built()) is not None:
            player.ponder(state, stop)

    def start_pondering(self, state: GameState) -> None:
        if (player := self._built()) is not None:
            player.start_pondering(state)

    def stop_pondering(self) -> None:
        if (player := self._built()) is not None:
            player.stop_pondering()

    def cancel(self) -> None:
        super().cancel()
        if (player := self._built()) is not None:
            player.cancel()
