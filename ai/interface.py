"""The one Player interface behind the bot, the TUI and the arena.

A player is asked for a move with a copy of the game state and a deadline (a ``time.monotonic()``
value). Engines think synchronously in a worker thread (``think``), so that callers on an asyncio loop
(the bot reading its socket, the TUI handling keys) never block; ``cancel`` stops the thinking early.
Human and remote players implement ``choose_move`` directly.

Pondering: after its move an engine may go on thinking while the opponent thinks (``start_pondering`` with
the position after its move); its next ``think`` stops that first and uses what it found. Engines that cannot
keep their search between moves ignore it.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from blokus.model.moves import Move, SkipMove
from blokus.model.state import GameState, move_of_placement

if TYPE_CHECKING:
    from blokus.model.result import GameResult


class StopFlag(Protocol):
    """What an engine reads of its stop signal: a ``threading.Event``, or a flag another process sets
    (``ai.players.engine_process``)."""

    def is_set(self) -> bool: ...


class EngineError(RuntimeError):
    """A player could not answer; ``str()`` says why in one line (the controller's fallback detail)."""


class Player(ABC):
    name: str = "player"

    @abstractmethod
    async def choose_move(self, state: GameState, deadline: float) -> Move:
        """Return a legal move for ``state.color`` before ``deadline`` (monotonic seconds)."""

    def cancel(self) -> None:  # noqa: B027 - optional hook, a no-op for players that do not think
        """Stop thinking as soon as possible (the answer is no longer wanted)."""

    def start_pondering(self, state: GameState) -> None:  # noqa: B027 - optional hook
        """Think on the opponent's time: ``state`` is the position after this player's move. Stopped by the
        next ``choose_move``, by ``cancel`` and by ``stop_pondering``."""

    def stop_pondering(self) -> None:  # noqa: B027 - optional hook
        """Stop pondering (returns once it has stopped)."""

    def joined(self, room_id: str) -> None:  # noqa: B027 - optional hook
        """The game is joined (a team's player hears of it: ``on_game_joined``)."""

    def server_error(self, message: str) -> None:  # noqa: B027 - optional hook
        """The server sent an error (a team's player hears of it: ``on_error``)."""

    @property
    def thinks_while_waiting(self) -> bool:
        """Whether it wants :meth:`start_pondering` after each of its moves even without ``--ponder`` (a
        team's player with ``while_waiting``)."""
        return False

    def game_over(self, result: GameResult) -> None:  # noqa: B027 - optional hook
        """The game has ended with ``result`` (a team's ``py:`` player hears of it)."""


class Engine(Player):
    """A computer player. Subclasses implement ``think``; it runs in a worker thread.

    ``think`` must return a legal move, should return before ``deadline`` and must return promptly
    once ``stop`` is set (with the best move found so far).
    """

    def __init__(self, seed: int | None = None, *, clock: Callable[[], float] | None = None) -> None:
        self.rng = random.Random(seed)
        self.clock: Callable[[], float] = clock or time.monotonic  # injectable for tests
        self.cpu_clock: Callable[[], float] = time.thread_time  # CPU time of the thinking thread
        self._stop = threading.Event()
        self.last_info: dict = {}  # statistics of the last think (depth, nodes, ...), for logs and the UI
        self._ponder_stop = threading.Event()
        self._ponder_thread: threading.Thread | None = None

    @abstractmethod
    def think(self, state: GameState, deadline: float, stop: StopFlag) -> Move: ...

    def ponder(self, state: GameState, stop: StopFlag) -> None:  # noqa: B027 - optional hook
        """Think about ``state`` (the opponent to move) until ``stop`` is set or there is nothing more to gain,
        so that the next ``think`` finds a grown tree. Synchronous; ``start_pondering`` runs it in a thread.
        An engine that ponders calls ``stop_pondering`` first thing in ``think``."""

    def start_pondering(self, state: GameState) -> None:
        self.stop_pondering()
        if type(self).ponder is Engine.ponder:  # this engine does not ponder
            return
        self._ponder_stop = stop = threading.Event()
        self._ponder_thread = threading.Thread(
            target=self.ponder, args=(state.copy(), stop), daemon=True, name=f"ponder-{self.name}"
        )
        self._ponder_thread.start()

    def stop_pondering(self) -> None:
        self._ponder_stop.set()
        thread, self._ponder_thread = self._ponder_thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    async def choose_move(self, state: GameState, deadline: float) -> Move:
        self._stop = stop = threading.Event()
        return await asyncio.to_thread(self.think, state.copy(), deadline, stop)

    def choose_move_sync(self, state: GameState, deadline: float | None = None, move_time: float = 1.0) -> Move:
        """Blocking variant for scripts and the arena."""
        self._stop = stop = threading.Event()
        return self.think(state.copy(), deadline or self.clock() + move_time, stop)

    def cancel(self) -> None:
        self._stop.set()
        self._ponder_stop.set()


class TimeKeeper:
    """Decides when a think must end: ``stop`` set, or the stop time before the deadline reached.

    On a starved machine (the thinking thread got a small share of the CPU so far: heavy load, or a
    busy GIL) the remaining work and the way back to the caller are slow too, so the reserve before the
    deadline grows in proportion (up to half the budget): a late move loses the game, a shallower
    search does not.
    """

    def __init__(
        self,
        clock: Callable[[], float],
        deadline: float,
        stop: StopFlag,
        cpu_clock: Callable[[], float] = time.thread_time,
        reserve: float = 0.2,
    ) -> None:
        self.clock = clock
        self.cpu_clock = cpu_clock
        self.stop = stop
        self.deadline = deadline
        self.start = clock()
        self.cpu_start = cpu_clock()
        self.budget = max(0.0, deadline - self.start)
        # stop this long before the deadline: the engine's longest step between two clock checks plus
        # the way back (``reserve``, seconds), at most 15 % of the budget
        self.base_reserve = min(reserve, 0.15 * self.budget)
        self.stop_at = self.start + self.budget - self.base_reserve
        self.share = 1.0

    def expired(self) -> bool:
        if self.stop.is_set():
            return True
        now = self.clock()
        if now >= self.stop_at:
            return True
        elapsed = now - self.start
        if elapsed > 0.05:
            self.share = share = min(1.0, (self.cpu_clock() - self.cpu_start) / elapsed)
            if share < 0.7:
                reserve = min(0.5 * self.budget, self.base_reserve / max(share, 0.05))
                if now >= self.deadline - reserve:
                    return True
        return False

    def elapsed(self) -> float:
        return self.clock() - self.start


def fallback_move(state: GameState, rng: random.Random | None = None) -> Move:
    """Any legal move: a random placement, or a skip when none exists."""
    ids = state.legal_placements()
    if len(ids):
        pid = int(ids[(rng or random).randrange(len(ids))])
        return move_of_placement(state.color, pid)
    return SkipMove(state.color)


class RandomPlayer(Engine):
    """Plays a uniformly random legal placement (skips only when it cannot place)."""

    name = "random"

    def think(self, state: GameState, deadline: float, stop: StopFlag) -> Move:
        return fallback_move(state, self.rng)
