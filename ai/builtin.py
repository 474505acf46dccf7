"""The built-in players by name (``random``, ``greedy``, ``lookahead``, ``lookahead-py``, ``mcts``) and the
``mcts:KEY=VALUE`` variants. The compiled ones are loaded lazily with the Python lookahead answering meanwhile
(``ai.compiled.LazyCompiledPlayer``). Used by the one parser of player names (``ai.players``) and by
``ai.levels`` (level 5 is ``mcts``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ai.base import Engine, RandomPlayer
from ai.compiled import LazyCompiledPlayer
from ai.greedy import GreedyPlayer
from ai.search import LookaheadPlayer


def _compiled_mcts(seed: int | None, clock: Callable[[], float] | None, settings: dict | None = None) -> Engine:
    from ai.mcts import MctsParams, MctsPlayer

    return MctsPlayer(seed=seed, clock=clock, params=MctsParams(**settings) if settings else None)


def _compiled_lookahead(seed: int | None, clock: Callable[[], float] | None) -> Engine:
    from ai.fastsearch import FastLookaheadPlayer

    return FastLookaheadPlayer(seed=seed, clock=clock)


def mcts_player(seed: int | None = None) -> Engine:
    return LazyCompiledPlayer("mcts", "ai.mcts", _compiled_mcts, LookaheadPlayer(seed), seed)


def mcts_settings(text: str) -> dict[str, float | int | bool]:
    """``KEY=VALUE,...`` as settings of ``ai.mcts.MctsParams`` (checked against its fields; ValueError)."""
    from ai.mcts import MctsParams  # imports numba: only for these names, which are for measuring

    kinds = {name: type(value) for name, value in vars(MctsParams()).items()}
    settings: dict[str, float | int | bool] = {}
    for item in filter(None, text.split(",")):
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip().lower()
        if not sep or key not in kinds:
            raise ValueError(f"mcts:{text}: {item.strip()!r} is not KEY=VALUE with KEY one of {', '.join(kinds)}")
        try:
            if kinds[key] is bool:
                if value not in ("0", "1", "true", "false"):
                    raise ValueError(value)
                settings[key] = value in ("1", "true")
            else:
                settings[key] = int(value) if kinds[key] is int else float(value)
        except ValueError:
            wanted = {bool: "0 or 1", int: "a whole number"}.get(kinds[key], "a number")
            raise ValueError(f"mcts:{text}: {key} needs {wanted}, not {value!r}") from None
    return settings


def mcts_variant(settings: str, seed: int | None = None) -> Engine:
    factory = partial(_compiled_mcts, settings=mcts_settings(settings))
    return LazyCompiledPlayer(f"mcts:{settings}", "ai.mcts", factory, LookaheadPlayer(seed), seed)


def lookahead_player(seed: int | None = None) -> Engine:
    return LazyCompiledPlayer("lookahead", "ai.fastsearch", _compiled_lookahead, LookaheadPlayer(seed), seed)


def _python_lookahead(seed: int | None = None) -> Engine:
    player = LookaheadPlayer(seed)
    player.name = "lookahead-py"
    return player


_BUILTIN: dict[str, Callable[..., Engine]] = {
    "random": RandomPlayer,
    "greedy": GreedyPlayer,
    "lookahead": lookahead_player,
    "lookahead-py": _python_lookahead,
    "mcts": mcts_player,
}


def builtin_names() -> list[str]:
    return sorted(_BUILTIN)


def builtin_player(name: str, seed: int | None = None) -> Engine:
    """A built-in player by its plain name (KeyError for another name: ``ai.players`` parses names)."""
    return _BUILTIN[name](seed=seed)
