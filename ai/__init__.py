"""Computer players. ``make_player(name)`` builds one by name (used by bot, TUI and arena).

Public API:

* ``Player.choose_move(state, deadline) -> Move`` (async; ``deadline`` is a ``time.monotonic()`` value)
  and ``Player.cancel()`` — the one interface behind every player.
* ``Engine`` (a Player that thinks in a worker thread): ``think(state, deadline, stop)`` (sync),
  ``choose_move_sync(state, deadline=None, move_time=1.0)``, ``last_info`` (depth, nodes, ... of the
  last think).
* Players: ``random`` (``RandomPlayer``), ``greedy`` (``ai.greedy.GreedyPlayer``: best one-ply
  evaluation), ``lookahead`` (``ai.search.LookaheadPlayer``: the default, ``DEFAULT_AI``).
* ``ai.evaluate``: ``evaluate(state, weights)``, ``Weights``; ``ai.arena``: ``blokus arena``.
"""

from __future__ import annotations

from ai.base import Engine, Player, RandomPlayer
from ai.greedy import GreedyPlayer
from ai.search import LookaheadPlayer


def player_names() -> list[str]:
    return sorted(_registry())


def _registry() -> dict[str, type[Engine]]:
    from ai.mcts import MctsPlayer

    return {"random": RandomPlayer, "greedy": GreedyPlayer, "lookahead": LookaheadPlayer, "mcts": MctsPlayer}


DEFAULT_AI = "lookahead"


def make_player(name: str = DEFAULT_AI, seed: int | None = None) -> Engine:
    if name.startswith("gtp:"):  # an external GTP engine, for measuring: gtp:PATH:LEVEL
        from ai.gtp import GtpPlayer

        path, _, level = name[4:].rpartition(":")
        if not path or not level.isdigit():
            raise ValueError(f"{name!r}: write gtp:PATH:LEVEL, e.g. gtp:/opt/pentobi/pentobi-gtp:5")
        return GtpPlayer(path, int(level), seed=seed)
    registry = _registry()
    if name not in registry:
        raise ValueError(f"unknown AI {name!r}; choose one of {', '.join(sorted(registry))}")
    return registry[name](seed=seed)


def compile_ahead(name: str) -> None:
    """Make sure the compiled kernels a player needs are in numba's on-disk cache (the first start
    compiles them, tens of seconds; later starts find them). Blocking: call it before connecting."""
    if name == "mcts":
        from ai.mcts import compile_cache

        compile_cache()


__all__ = ["Engine", "Player", "RandomPlayer", "GreedyPlayer", "LookaheadPlayer", "make_player", "player_names",
           "DEFAULT_AI", "compile_ahead"]
