"""Playing strengths a human can beat: ``level 1`` (a beginner's opponent) to ``level 5`` (the full AI).

Each level is one of the engines, weakened where needed; every level beats the one below in the arena
(tuning/RESULTS.md, §6). ``make_level(n)`` builds the player (``make_player('level3')`` too); the TUI's
``--level`` passes the number.

1. ``greedy`` with much noise: the one-ply evaluation plus a random term worth up to four pentominoes.
2. ``greedy`` with some noise (up to about one pentomino), so it often misses the best move.
3. ``greedy``: the best one-ply evaluation.
4. ``lookahead-py`` (the search in Python, with the first weights) with at most 0.4 s per move.
5. ``mcts``: the Monte-Carlo tree search guided by the move model, with the full thinking time (the
   default AI of the bot and the TUI).
"""

from __future__ import annotations

from collections.abc import Callable

from ai.base import Engine, StopFlag
from ai.builtin import mcts_player
from ai.greedy import GreedyPlayer
from ai.search import LookaheadPlayer
from model.moves import Move
from model.state import GameState

LEVELS = (1, 2, 3, 4, 5)


class CappedTime(Engine):
    """Another engine with at most ``seconds`` per move (a weaker level that also answers sooner)."""

    def __init__(self, inner: Engine, seconds: float) -> None:
        super().__init__(None, clock=inner.clock)
        self.inner = inner
        self.seconds = seconds

    def think(self, state: GameState, deadline: float, stop: StopFlag) -> Move:
        move = self.inner.think(state, min(deadline, self.inner.clock() + self.seconds), stop)
        self.last_info = self.inner.last_info
        return move


def make_level(level: int, seed: int | None = None) -> Engine:
    """The player of strength ``level`` (1..5)."""
    builders: dict[int, Callable[[], Engine]] = {
        1: lambda: GreedyPlayer(seed, noise=20.0),
        2: lambda: GreedyPlayer(seed, noise=6.0),
        3: lambda: GreedyPlayer(seed),
        4: lambda: CappedTime(LookaheadPlayer(seed), 0.4),
        5: lambda: mcts_player(seed),
    }
    if level not in builders:
        raise ValueError(f"level must be one of {', '.join(map(str, LEVELS))}, not {level!r}")
    player = builders[level]()
    player.name = f"level{level}"
    return player
