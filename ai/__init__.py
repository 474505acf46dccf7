"""Computer players. ``make_player(name)`` builds one by name (used by bot, TUI and arena).

Public API:

* ``Player.choose_move(state, deadline) -> Move`` (async; ``deadline`` is a ``time.monotonic()`` value)
  and ``Player.cancel()`` — the one interface behind every player.
* ``Engine`` (a Player that thinks in a worker thread): ``think(state, deadline, stop)`` (sync),
  ``choose_move_sync(state, deadline=None, move_time=1.0)``, ``last_info`` (depth, nodes, ... of the
  last think).
* Players: ``random`` (``RandomPlayer``), ``greedy`` (``ai.greedy.GreedyPlayer``: best one-ply
  evaluation), ``lookahead`` (``ai.search.LookaheadPlayer``: the default, ``DEFAULT_AI``).
* ``ai.controller``: ``decide(player, state, received_at, think_ms=, hard_ms=)`` — any player's move
  under a clock (stop signal, hard cut-off, rule check, one fallback); used by the bot and the TUI.
* ``ai.evaluate``: ``evaluate(state, weights)``, ``Weights``; ``ai.arena``: ``blokus arena``.
"""

from __future__ import annotations

from ai.base import Engine, Player, RandomPlayer
from ai.greedy import GreedyPlayer
from ai.search import LookaheadPlayer


def player_names() -> list[str]:
    return sorted(_registry())


def _registry() -> dict[str, type[Engine]]:
    return {"random": RandomPlayer, "greedy": GreedyPlayer, "lookahead": LookaheadPlayer}


DEFAULT_AI = "lookahead"


def make_player(name: str = DEFAULT_AI, seed: int | None = None) -> Engine:
    registry = _registry()
    if name not in registry:
        raise ValueError(f"unknown AI {name!r}; choose one of {', '.join(sorted(registry))}")
    return registry[name](seed=seed)


__all__ = ["Engine", "Player", "RandomPlayer", "GreedyPlayer", "LookaheadPlayer", "make_player", "player_names",
           "DEFAULT_AI"]
