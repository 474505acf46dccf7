"""Running an engine in its own process, so that the bot's event loop keeps its timing under load.

With the engine in a worker *thread* the event loop (socket reader, watchdog) competes with the search
for the GIL; on a machine with many more busy threads than cores (20 games on two cores) the thread
holding the GIL is often descheduled and the loop wakes up hundreds of milliseconds late. In a
separate process the bot's loop is a mostly idle process that the OS scheduler wakes promptly; the
hard cut-off of ``ai.players.controller`` then holds even when the engine itself is starved. The worker also
lowers its own scheduling priority (``nice`` 10): on a dedicated machine (a contest container) that
changes nothing, on a shared one it keeps the I/O loops and a local game server responsive.

``ProcessPlayer`` implements the ``ai.interface.Player`` interface: ``choose_move`` sends the state and the
deadline to the worker (``Engine.think`` with a shared stop flag), ``cancel`` sets the flag. Answers
to abandoned requests are discarded by request id.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import multiprocessing.connection
import os
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.sharedctypes import RawValue

from blokus.ai import processes
from blokus.ai.interface import Engine, EngineError, Player
from blokus.ai.players.registry import PlayerSpec, kernels_of
from blokus.ai.search.compiled import fallback_label
from blokus.model.moves import Move
from blokus.model.state import GameState

log = logging.getLogger(__name__)


class SharedFlag:
    """A lock-free stop flag shared with the worker (``threading.Event``-like: is_set/set/clear/wait)."""

    def __init__(self, ctx) -> None:
        self._value = RawValue("b", 0) if ctx is None else ctx.RawValue("b", 0)

    def is_set(self) -> bool:
        return bool(self._value.value)

    def set(self) -> None:
        self._value.value = 1

    def clear(self) -> None:
        self._value.value = 0

    def wait(self, timeout: float | None = None) -> bool:
        end = None if timeout is None else time.monotonic() + timeout
        while not self.is_set():
            if end is not None and time.monotonic() >= end:
                return False
            time.sleep(0.001)
        return True


def _worker(
    spec: PlayerSpec,
    seed: int | None,
    conn: multiprocessing.connection.Connection,
    stop: SharedFlag,
    nice: int,
    parent: int,
) -> None:
    # ends with the bot (also after kill -9) and holds none of its standard streams: a harness that waits
    # for the bot's output is not kept waiting by its engine
    processes.die_with_parent(parent)

    if nice:
        with contextlib.suppress(OSError, AttributeError):
            os.nice(nice)  # the search yields the CPU to the bot's I/O loop and to the game server

    lock = threading.Lock()  # the preparing thread reports beside the answers

    def send(message: tuple) -> None:
        with lock, contextlib.suppress(OSError, ValueError):
            conn.send(message)

    engine = spec.build(seed)
    # compile (first start) or load the compiled search beside the requests: until it is ready the engine
    # answers with its Python search, so the bot can join at once
    threading.Thread(target=_prepare, args=(spec, send), name="prepare", daemon=True).start()
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if request is None:
            return
        rid, state, deadline = request
        if rid == PONDER:  # think on the opponent's time until the next request (or a stop, or the engine's limit)
            try:
                engine.ponder(state, _UntilNextRequest(conn, stop))
            except KeyboardInterrupt:
                return
            except Exception:  # pondering is a bonus: the next request is answered afresh
                log.debug("pondering failed", exc_info=True)
            continue
        try:
            move = engine.think(state, deadline, stop)
            send((rid, move, None, dict(engine.last_info)))
        except KeyboardInterrupt:
            return
        except Exception as exc:  # reported to the bot, which falls back
            send((rid, None, f"{type(exc).__name__}: {exc}", {}))


def _prepare(spec: PlayerSpec, send: Callable[[tuple], None]) -> None:
    """Make the player's compiled search ready; report its state (STATUS on each change, READY at the end)."""
    try:
        kernels = kernels_of(spec)
        if kernels is not None:
            kernels.prepare(wait=0)
            last = ""
            while not kernels.ready.wait(0.1):
                if (status := kernels.status()) != last:
                    send((STATUS, None, None, {"status": status}))
                    last = status
        status = "ready" if kernels is None else kernels.status()
    except Exception as exc:  # numba cannot even be imported: the Python search plays every move
        status = f"failed: {type(exc).__name__}: {exc}"
    send((READY, None, None, {"status": status}))


READY = 0  # the worker's compiled search is loaded, or failed (its info's "status": "ready" or "failed: ...")
STATUS = -2  # the worker's compiled search is being prepared (info "status": "compiling" or "loading")
PONDER = -1  # the request id of "think on the opponent's time about this state" (no answer)


class _UntilNextRequest:
    """The stop flag of pondering in the worker: set by ``cancel`` or by the next request's arrival."""

    def __init__(self, conn: multiprocessing.connection.Connection, stop: SharedFlag) -> None:
        self._conn = conn
        self._stop = stop

    def is_set(self) -> bool:
        try:
            return self._stop.is_set() or self._conn.poll()
        except (EOFError, OSError):
            return True


class _Died(RuntimeError):
    """The worker process ended."""


class ProcessPlayer(Player):
    """An ``ai`` engine of a spec, thinking in a worker process. ``last_info``: the engine's statistics of
    the last answer (simulations, depth, a fallback's name ...)."""

    def __init__(self, spec: PlayerSpec, seed: int | None = None, *, nice: int = 10) -> None:
        self.name = spec.name
        # a literal name per call: typeshed then knows the context's type (a computed one gives BaseContext)
        on_linux = sys.platform.startswith("linux")
        ctx = multiprocessing.get_context("fork") if on_linux else multiprocessing.get_context("spawn")
        self._stop = SharedFlag(ctx)
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(
            target=_worker,
            args=(spec, seed, child, self._stop, nice, os.getpid()),
            daemon=True,
            name=f"blokus-engine-{spec.name}",
        )
        self._proc.start()
        child.close()
        self._next_id = 0
        self._pending: dict[int, asyncio.Future] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._dead: str | None = None
        self.status = "starting"  # of the compiled search: starting, loading, compiling, ready, failed: ...
        self.last_info: dict = {}
        self._fallback: Engine | None = None  # the Python search in this process, once the worker has died

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until the worker has its compiled search loaded, or it failed (at most ``timeout`` seconds;
        call it before the first ``choose_move``, from a thread). Returns whether it is ready; ``status``
        says what it is doing or why it failed."""
        end = None if timeout is None else time.monotonic() + timeout
        while self.status not in ("ready",) and not self.status.startswith("failed"):
            left = None if end is None else max(0.0, end - time.monotonic())
            try:
                if not self._conn.poll(left):
                    break
                rid, _, _, info = self._conn.recv()
            except (EOFError, OSError):
                self._died()
                break
            if rid in (READY, STATUS):
                self.status = info.get("status", self.status)
        return self.status == "ready"

    def _died(self) -> None:
        code = self._proc.exitcode if not self._proc.is_alive() else None
        self._dead = f"engine process ended (exit code {code})" if code is not None else "engine process ended"
        self.status = f"failed: {self._dead}"

    async def choose_move(self, state: GameState, deadline: float) -> Move:
        self._attach(asyncio.get_running_loop())
        if self._dead is None and self.status == "ready":
            try:
                return await self._ask(state, deadline)
            except _Died:
                pass
        # until the worker's compiled search is ready (or if it failed, or the worker died) the Python search
        # answers here: the worker, busy loading or compiling, could answer late
        if self._fallback is None:
            from blokus.ai.search.lookahead import LookaheadPlayer

            self._fallback = LookaheadPlayer()
        move = await self._fallback.choose_move(state, deadline)
        self.last_info = {**self._fallback.last_info, "fallback": fallback_label(self._fallback.name, self.status)}
        return move

    def _attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Read the worker's messages in this event loop (and those that arrived before it)."""
        if self._loop is loop or self._dead is not None:
            return
        if self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_reader(self._conn.fileno())
        self._loop = loop
        loop.add_reader(self._conn.fileno(), self._on_readable)
        self._on_readable()

    async def _ask(self, state: GameState, deadline: float) -> Move:
        loop = asyncio.get_running_loop()
        self._next_id += 1
        rid = self._next_id
        future = loop.create_future()
        self._pending[rid] = future
        self._stop.clear()
        try:
            try:
                self._conn.send((rid, state, deadline))
            except (OSError, ValueError) as exc:
                self._pending.pop(rid, None)
                future.cancel()
                self._on_readable()  # reads the end of the pipe: marks the worker dead
                raise _Died(self._dead) from exc
            move, error, info = await future
        finally:
            self._pending.pop(rid, None)
        if error is not None:
            raise EngineError(error)
        self.last_info = info
        return move

    def _on_readable(self) -> None:
        try:
            while self._conn.poll():
                rid, move, error, info = self._conn.recv()
                if rid in (READY, STATUS):
                    self.status = info.get("status", self.status)
                    continue
                future = self._pending.pop(rid, None)
                if future is not None and not future.done():
                    future.set_result((move, error, info))
        except (EOFError, OSError):
            self._died()
            if self._loop is not None:
                with contextlib.suppress(Exception):
                    self._loop.remove_reader(self._conn.fileno())
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(_Died(self._dead))
            self._pending.clear()

    def cancel(self) -> None:
        self._stop.set()
        if self._fallback is not None:
            self._fallback.cancel()

    def start_pondering(self, state: GameState) -> None:
        """The worker thinks about ``state`` until the next request (``choose_move``), ``cancel`` or ``close``."""
        if self._dead is not None or self.status != "ready":
            return
        self._stop.clear()
        with contextlib.suppress(OSError, ValueError):
            self._conn.send((PONDER, state, None))

    def close(self) -> None:
        self._stop.set()
        if self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_reader(self._conn.fileno())
        processes.stop_worker(self._proc, lambda: self._conn.send(None), ask_grace=0.5, term_grace=0.5)
        with contextlib.suppress(Exception):
            self._conn.close()
