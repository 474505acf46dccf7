"""Computer players. ``make_player(name)`` builds one by name (used by bot, TUI and arena)."""

from __future__ import annotations

from ai.base import Engine, Player, RandomPlayer


def player_names() -> list[str]:
    return sorted(_registry())


def _registry() -> dict[str, type[Engine]]:
    players: dict[str, type[Engine]] = {"random": RandomPlayer}
    try:  # the stronger players live in their own modules
        from ai.greedy import GreedyPlayer

        players["greedy"] = GreedyPlayer
    except ImportError:
        pass
    try:
        from ai.search import LookaheadPlayer

        players["lookahead"] = LookaheadPlayer
    except ImportError:
        pass
    return players


DEFAULT_AI = "lookahead"


def make_player(name: str = DEFAULT_AI, seed: int | None = None) -> Engine:
    registry = _registry()
    if name not in registry:
        raise ValueError(f"unknown AI {name!r}; choose one of {', '.join(sorted(registry))}")
    return registry[name](seed=seed)


__all__ = ["Engine", "Player", "RandomPlayer", "make_player", "player_names", "DEFAULT_AI"]
