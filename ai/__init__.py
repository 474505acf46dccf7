"""Computer players. ``make_player(name)`` builds one by name (used by bot, TUI and arena).

Public API:

* ``Player.choose_move(state, deadline) -> Move`` (async; ``deadline`` is a ``time.monotonic()`` value)
  and ``Player.cancel()`` — the one interface behind every player.
* ``Engine`` (a Player that thinks in a worker thread): ``think(state, deadline, stop)`` (sync),
  ``choose_move_sync(state, deadline=None, move_time=1.0)``, ``last_info`` (depth, nodes, ... of the
  last think).
* Players: ``random`` (``RandomPlayer``), ``greedy`` (``ai.greedy.GreedyPlayer``: best one-ply
  evaluation), ``lookahead`` (``ai.search.LookaheadPlayer``: the default, ``DEFAULT_AI``).
* ``mcts`` (``ai.mcts.MctsPlayer``, loaded on the first move by ``LazyMctsPlayer``): Monte-Carlo tree
  search with RAVE over the compiled engine.
* ``level1`` .. ``level5`` (``ai.levels``): strengths for beginners up to the default AI.
* ``gtp:PATH:LEVEL`` (``ai.gtp``): an external GTP engine such as Pentobi, for measuring.
* ``ai.controller``: ``decide(player, state, received_at, think_ms=, hard_ms=)`` — any player's move
  under a clock (stop signal, hard cut-off, rule check, one fallback); used by the bot and the TUI.
* ``ai.evaluate``: ``evaluate(state, weights)``, ``Weights``; ``ai.arena``: ``blokus arena``.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

from ai.base import Engine, Player, RandomPlayer
from ai.greedy import GreedyPlayer
from ai.search import LookaheadPlayer
from model.moves import Move
from model.state import GameState


def player_names() -> list[str]:
    return sorted(_registry())


class LazyMctsPlayer(Engine):
    """The ``mcts`` player (``ai.mcts.MctsPlayer``), built on first use: importing its compiled module
    (numba) costs 1-2 s, which must not delay a program's start (the TUI's first frame). The first move
    asked for starts the import in a background thread; until the search is ready the lookahead search
    answers, as ``MctsPlayer`` itself does while its kernels compile."""

    name = "mcts"

    def __init__(self, seed: int | None = None, *, clock: Callable[[], float] | None = None) -> None:
        super().__init__(seed, clock=clock)
        self.seed = seed
        self._player: Engine | None = None
        self._loader: threading.Thread | None = None
        self._lock = threading.Lock()
        self._fallback = LookaheadPlayer(seed, clock=clock)

    def _load(self) -> None:
        from ai.mcts import MctsPlayer  # numba: seconds, off the caller's thread

        player = MctsPlayer(seed=self.seed, clock=self.clock)  # starts making the kernels ready
        with self._lock:
            self._player = player

    def _ready_player(self) -> Engine | None:
        with self._lock:
            if self._player is None and self._loader is None:
                if "ai.mcts" in sys.modules:  # already imported (compile_ahead, tests): building is cheap
                    self._loader = threading.current_thread()
                else:
                    self._loader = threading.Thread(target=self._load, name="blokus-mcts-load", daemon=True)
                    self._loader.start()
                    return None
            else:
                return self._player
        self._load()
        return self._player

    def think(self, state: GameState, deadline: float, stop: threading.Event) -> Move:
        player = self._ready_player()
        if player is None:  # still importing
            self._fallback.clock, self._fallback.cpu_clock = self.clock, self.cpu_clock
            move = self._fallback.think(state, deadline, stop)
            self.last_info = {**self._fallback.last_info, "fallback": "lookahead (loading)"}
            return move
        player.clock, player.cpu_clock = self.clock, self.cpu_clock  # injectable, as on every engine
        move = player.think(state, deadline, stop)
        self.last_info = player.last_info
        return move


def _mcts(seed: int | None = None) -> Engine:
    return LazyMctsPlayer(seed=seed)


def _fast_lookahead(seed: int | None = None) -> Engine:
    from ai.fastsearch import FastLookaheadPlayer

    return FastLookaheadPlayer(seed=seed)


def _registry() -> dict[str, Callable[..., Engine]]:
    return {"random": RandomPlayer, "greedy": GreedyPlayer, "lookahead": LookaheadPlayer, "mcts": _mcts,
            "fastlookahead": _fast_lookahead}


DEFAULT_AI = "lookahead"


def make_player(name: str = DEFAULT_AI, seed: int | None = None) -> Engine:
    if name.startswith("gtp:"):  # an external GTP engine, for measuring: gtp:PATH:LEVEL
        from ai.gtp import GtpPlayer

        path, _, level = name[4:].rpartition(":")
        if not path or not level.isdigit():
            raise ValueError(f"{name!r}: write gtp:PATH:LEVEL, e.g. gtp:/opt/pentobi/pentobi-gtp:5")
        return GtpPlayer(path, int(level), seed=seed)
    if name.startswith("level") and name[5:].isdigit():  # level1 .. level5 (ai.levels)
        from ai.levels import make_level

        return make_level(int(name[5:]), seed)
    registry = _registry()
    if name not in registry:
        raise ValueError(f"unknown AI {name!r}; choose one of {', '.join(sorted(registry))}")
    return registry[name](seed=seed)


def compile_ahead(name: str) -> None:
    """Make the compiled search a player needs ready (the first start compiles it into numba's on-disk
    cache, tens of seconds; later starts load it in about a second). Blocking: call it before connecting
    or before a match, so that no move is played by the fallback."""
    if name == "mcts":
        from ai.mcts import prepare

        prepare(wait=None)
    if name == "fastlookahead":
        from ai.fastsearch import warm_up

        warm_up()


__all__ = ["Engine", "Player", "RandomPlayer", "GreedyPlayer", "LookaheadPlayer", "LazyMctsPlayer", "make_player",
           "player_names", "DEFAULT_AI", "compile_ahead"]
