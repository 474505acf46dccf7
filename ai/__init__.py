"""Computer players. ``make_player(name)`` builds one by name (used by bot, TUI and arena).

Public API:

* ``Player.choose_move(state, deadline) -> Move`` (async; ``deadline`` is a ``time.monotonic()`` value)
  and ``Player.cancel()`` — the one interface behind every player.
* ``Engine`` (a Player that thinks in a worker thread): ``think(state, deadline, stop)`` (sync),
  ``choose_move_sync(state, deadline=None, move_time=1.0)``, ``last_info`` (depth, nodes, ... of the
  last think).
* Players: ``random`` (``RandomPlayer``), ``greedy`` (``ai.greedy.GreedyPlayer``: best one-ply
  evaluation), ``lookahead`` (``ai.fastsearch.FastLookaheadPlayer``: the pruned alpha-beta search in
  compiled code with the outcome-fitted weights; ``ANALYSIS_AI``, the engine of game analyses: fast and
  deterministic), ``lookahead-py`` (``ai.search.LookaheadPlayer``: the same search in Python, the
  reference and the fallback while compiling).
* ``mcts`` (``ai.mcts.MctsPlayer``): the default, ``DEFAULT_AI``, the strongest: Monte-Carlo tree search
  with RAVE over the compiled engine, guided by a move model fitted to Pentobi's choices.
* The compiled players are loaded on the first move by ``ai.compiled.LazyCompiledPlayer`` (numba is
  not imported before) and compiled in a child process on the first start (``ai.compiled.Kernels``).
* ``level1`` .. ``level5`` (``ai.levels``): strengths for beginners up to the default AI.
* ``gtp:PATH:LEVEL`` (``ai.gtp``): an external GTP engine such as Pentobi, for measuring.
* ``mcts:KEY=VALUE,...``: the default search with other settings (``ai.mcts.MctsParams``), for measuring a
  variant against the default in ``blokus arena`` (e.g. ``mcts:root_eval=0,prune=0.05``).
* ``ai.controller``: ``decide(player, state, received_at, think_ms=, hard_ms=)`` — any player's move
  under a clock (stop signal, hard cut-off, rule check, one fallback); used by the bot and the TUI.
* ``ai.engine_process``: ``ProcessPlayer``, any of these thinking in a worker process (the bot's default).
* ``ai.processes``: the one way to start and stop a process (its own session, ask/terminate/kill/reap,
  capped logs, detached descendants found) and to keep helper processes from outliving their parent.
* ``ai.evaluate``: ``evaluate(state, weights)``, ``Weights``; ``ai.arena``: the games and table of ``blokus arena``
  (``cli.arena``). Player names are parsed once, by ``cli.players``; ``make_player`` builds the in-process ones.
"""

from __future__ import annotations

from collections.abc import Callable

from ai.base import Engine, Player, RandomPlayer
from ai.builtin import lookahead_player, mcts_player, mcts_settings, mcts_variant
from ai.compiled import LazyCompiledPlayer
from ai.greedy import GreedyPlayer
from ai.search import LookaheadPlayer


def player_names() -> list[str]:
    return sorted(_registry())


def _python_lookahead(seed: int | None = None) -> Engine:
    player = LookaheadPlayer(seed)
    player.name = "lookahead-py"
    return player


def _registry() -> dict[str, Callable[..., Engine]]:
    return {
        "random": RandomPlayer,
        "greedy": GreedyPlayer,
        "lookahead": lookahead_player,
        "lookahead-py": _python_lookahead,
        "mcts": mcts_player,
    }


DEFAULT_AI = "mcts"  # the bot's, the TUI's and level 5's player
ANALYSIS_AI = "lookahead"  # game analyses: deterministic, so the same game always gets the same verdicts


def make_player(name: str = DEFAULT_AI, seed: int | None = None) -> Engine:
    if name.startswith("gtp:"):  # an external GTP engine, for measuring: gtp:PATH:LEVEL
        from ai.gtp import GtpPlayer

        path, _, level = name[4:].rpartition(":")
        if not path or not level.isdigit():
            raise ValueError(f"{name!r}: write gtp:PATH:LEVEL, e.g. gtp:/opt/pentobi/pentobi-gtp:5")
        return GtpPlayer(path, int(level), seed=seed)
    if name.startswith("mcts:"):  # the default search with other settings, for measuring: mcts:KEY=VALUE,...
        return mcts_variant(name[5:], seed)
    if name.startswith("py:"):  # a team's player on blokus.player: py:PATH[:CLASS] (PlayerLoadError: one line)
        from ai.pyplayer import PyPlayer

        return PyPlayer(name, seed=seed)
    if name.startswith("level") and name[5:].isdigit():  # level1 .. level5 (ai.levels)
        from ai.levels import make_level

        return make_level(int(name[5:]), seed)
    registry = _registry()
    if name not in registry:
        raise ValueError(f"unknown AI {name!r}; choose one of {', '.join(sorted(registry))}")
    return registry[name](seed=seed)


def kernels_of(name: str):
    """The compiled kernels (``ai.compiled.Kernels``) a player needs, or None (a Python player). Imports numba."""
    if name in ("mcts", "level5") or name.startswith("mcts:"):
        from ai.mcts import KERNELS
    elif name == "lookahead":
        from ai.fastsearch import KERNELS
    else:
        return None
    return KERNELS


def compile_ahead(name: str, wait: float | None = None) -> bool:
    """Make the compiled search a player needs ready (the first start compiles it into numba's on-disk
    cache, tens of seconds; later starts load it in about a second), waiting up to ``wait`` seconds (None:
    until done). Returns whether it is ready (True for a player without one); ``Kernels.error`` says why not."""
    kernels = kernels_of(name)
    return True if kernels is None else kernels.prepare(wait=wait)


__all__ = [
    "Engine",
    "Player",
    "RandomPlayer",
    "GreedyPlayer",
    "LookaheadPlayer",
    "LazyCompiledPlayer",
    "make_player",
    "player_names",
    "DEFAULT_AI",
    "ANALYSIS_AI",
    "compile_ahead",
    "kernels_of",
    "mcts_settings",
]
