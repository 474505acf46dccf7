"""The compiled players by name: ``mcts`` (and its ``mcts:KEY=VALUE`` variants) and ``lookahead``, each loaded
lazily with the Python lookahead answering meanwhile (``ai.compiled.LazyCompiledPlayer``). Used by the
registry in ``ai`` and by ``ai.levels`` (level 5 is ``mcts``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ai.base import Engine
from ai.compiled import LazyCompiledPlayer
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
