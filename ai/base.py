"""The one Player interface behind the bot, the TUI and the arena.

A player is asked for a move with a copy of the game state and a deadline (a ``time.monotonic()``
value). Engines think synchronously in a worker thread (``think``), so that callers on an asyncio loop
(the bot reading its socket, the TUI handling keys) never block; ``cancel`` stops the thinking early.
Human and remote players implement ``choose_move`` directly.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable

from model.moves import Move, SkipMove
from model.state import GameState, move_of_placement


class Player(ABC):
    name: str = "player"

    @abstractmethod
    async def choose_move(self, state: GameState, deadline: float) -> Move:
        """Return a legal move for ``state.current_color`` before ``deadline`` (monotonic seconds)."""

    def cancel(self) -> None:  # noqa: B027 - optional hook, a no-op for players that do not think
        """Stop thinking as soon as possible (the answer is no longer wanted)."""


class Engine(Player):
    """A computer player. Subclasses implement ``think``; it runs in a worker thread.

    ``think`` must return a legal move, should return before ``deadline`` and must return promptly
    once ``stop`` is set (with the best move found so far).
    """

    def __init__(self, seed: int | None = None, *, clock: Callable[[], float] | None = None) -> None:
        self.rng = random.Random(seed)
        self.clock: Callable[[], float] = clock or time.monotonic  # injectable for tests
        self._stop = threading.Event()
        self.last_info: dict = {}  # statistics of the last think (depth, nodes, ...), for logs and the UI

    @abstractmethod
    def think(self, state: GameState, deadline: float, stop: threading.Event) -> Move: ...

    async def choose_move(self, state: GameState, deadline: float) -> Move:
        self._stop = stop = threading.Event()
        return await asyncio.to_thread(self.think, state.copy(), deadline, stop)

    def choose_move_sync(self, state: GameState, deadline: float | None = None,
                         move_time: float = 1.0) -> Move:
        """Blocking variant for scripts and the arena."""
        self._stop = stop = threading.Event()
        return self.think(state.copy(), deadline or self.clock() + move_time, stop)

    def cancel(self) -> None:
        self._stop.set()


def stop_time(now: float, deadline: float) -> float:
    """When an engine should stop thinking: before ``deadline`` with a margin for returning the move
    (and for a loaded machine), proportional to the budget but at most 200 ms."""
    budget = max(0.0, deadline - now)
    return now + budget - min(0.2, 0.15 * budget)


def fallback_move(state: GameState, rng: random.Random | None = None) -> Move:
    """Any legal move: a random placement, or a skip when none exists."""
    ids = state.legal_placements()
    if len(ids):
        pid = int(ids[(rng or random).randrange(len(ids))])
        return move_of_placement(state.current_color, pid)
    return SkipMove(state.current_color)


class RandomPlayer(Engine):
    """Plays a uniformly random legal placement (skips only when it cannot place)."""

    name = "random"

    def think(self, state: GameState, deadline: float, stop: threading.Event) -> Move:
        return fallback_move(state, self.rng)
