"""Playing strengths a human can beat: ``level 1`` (a beginner's opponent) to ``level 5`` (the full AI).

Each level is one of the engines, weakened where needed; every level beats the one below in the arena
(tuning/RESULTS.md, §6). ``make_level(n)`` builds the player (``make_player('level3')`` too); the TUI's
``--level`` passes the number.

1. ``greedy`` with noise: the one-ply evaluation plus a random term of about the value of a few squares,
   so it often misses the best move.
2. ``greedy``: the best one-ply evaluation.
3. ``mcts`` with at most 200 simulations per move.
4. ``mcts`` with the full thinking time.
5. ``lookahead`` with the full thinking time (the default AI of the bot and the TUI).
"""

from __future__ import annotations

from collections.abc import Callable

from ai.base import Engine
from ai.greedy import GreedyPlayer
from ai.search import LookaheadPlayer


def _mcts(seed: int | None, max_simulations: int | None = None) -> Engine:
    from ai.mcts import MctsPlayer  # imports numba only for the levels that use it

    return MctsPlayer(seed, max_simulations=max_simulations)

LEVELS = (1, 2, 3, 4, 5)
DEFAULT_LEVEL = 5


def make_level(level: int, seed: int | None = None) -> Engine:
    """The player of strength ``level`` (1..5)."""
    builders: dict[int, Callable[[], Engine]] = {
        1: lambda: GreedyPlayer(seed, noise=6.0),
        2: lambda: GreedyPlayer(seed),
        3: lambda: _mcts(seed, max_simulations=200),
        4: lambda: _mcts(seed),
        5: lambda: LookaheadPlayer(seed),
    }
    if level not in builders:
        raise ValueError(f"level must be one of {', '.join(map(str, LEVELS))}, not {level!r}")
    player = builders[level]()
    player.name = f"level{level}"
    return player
