"""Computer players, from the bottom up: ``ai.interface`` (the one ``Player`` interface, ``Engine``, the clock a
search reads), ``ai.processes`` (the one way to start and stop a process), ``ai.search`` (how our engines think:
evaluation, greedy, lookahead, move model, MCTS, their compiled kernels), ``ai.players`` (who plays: the name
parser and registry, levels, programs and a team's code in processes of their own, the clock of a move),
``ai.arena`` (games between players and their verdicts: matches, the referee, SPRT, tournaments) and
``ai.analysis`` (a game's analysis). Each imports only those before it.
``parse_player(name)`` (``ai.players.registry``) gives a player's spec, ``spec.build(seed)`` the player.

Public API:

* ``Player.choose_move(state, deadline) -> Move`` (async; ``deadline`` is a ``time.monotonic()`` value)
  and ``Player.cancel()`` — the one interface behind every player.
* ``Engine`` (a Player that thinks in a worker thread): ``think(state, deadline, stop)`` (sync),
  ``choose_move_sync(state, deadline=None, move_time=1.0)``, ``last_info`` (depth, nodes, ... of the
  last think).
* Players: ``random`` (``RandomPlayer``), ``greedy`` (``ai.search.greedy.GreedyPlayer``: best one-ply
  evaluation), ``lookahead`` (``ai.search.fastsearch.FastLookaheadPlayer``: the pruned alpha-beta search in
  compiled code with the outcome-fitted weights; ``ANALYSIS_AI``, the engine of game analyses: fast and
  deterministic), ``lookahead-py`` (``ai.search.lookahead.LookaheadPlayer``: the same search in Python, the
  reference and the fallback while compiling).
* ``mcts`` (``ai.search.mcts.MctsPlayer``): the default, ``DEFAULT_AI``, the strongest: Monte-Carlo tree search
  with RAVE over the compiled engine, guided by a move model fitted to Pentobi's choices; its first moves come
  from our opening book (``ai.search.book``, built by ``tuning/build_book.py``) while the position is in it.
* The compiled players are loaded on the first move by ``ai.search.compiled.LazyCompiledPlayer`` (numba is
  not imported before) and compiled in a child process on the first start (``ai.search.compiled.Kernels``).
* ``level1`` .. ``level5`` (``ai.players.registry.LEVELS``): strengths for beginners up to the default AI.
* ``gtp:PATH:LEVEL`` (``ai.players.gtp``): an external GTP engine such as Pentobi, for measuring.
* ``mcts:KEY=VALUE,...``: the default search with other settings (``ai.search.mcts.MctsParams``), for measuring a
  variant against the default in ``blokus arena`` (e.g. ``mcts:root_eval=0,prune=0.05``).
* ``ai.players.controller``: ``decide(player, state, received_at, think_ms=, hard_ms=)`` — any player's move
  under a clock (stop signal, hard cut-off, rule check, one fallback); used by the bot and the TUI.
* ``ai.players.engine_process``: ``ProcessPlayer``, any of these thinking in a worker process (the bot's default).
* ``ai.processes``: the one way to start and stop a process (its own session, ask/terminate/kill/reap,
  capped logs, detached descendants found) and to keep helper processes from outliving their parent.
* ``ai.search.evaluate``: ``evaluate(state, weights)``, ``Weights``; ``ai.arena.match``: the games and table of
  ``blokus arena`` (``cli.arena``). Player names are parsed once, by ``ai.players.registry`` (``parse_player`` ->
  ``PlayerSpec``), the registry of levels, built-ins and their compiled kernels (``compile_ahead(spec)``); below
  ``cli/`` only specs travel (``make_player(name)``, parse and build in one, is for tests and scripts).
"""

from __future__ import annotations

from blokus.ai.interface import Engine, Player, RandomPlayer
from blokus.ai.players.registry import (
    ANALYSIS_AI,
    DEFAULT_AI,
    PlayerKind,
    PlayerSpec,
    compile_ahead,
    kernels_of,
    make_player,
    mcts_settings,
    parse_player,
)
from blokus.ai.search.compiled import LazyCompiledPlayer
from blokus.ai.search.greedy import GreedyPlayer
from blokus.ai.search.lookahead import LookaheadPlayer

__all__ = [
    "Engine",
    "Player",
    "RandomPlayer",
    "GreedyPlayer",
    "LookaheadPlayer",
    "LazyCompiledPlayer",
    "PlayerKind",
    "PlayerSpec",
    "make_player",
    "parse_player",
    "DEFAULT_AI",
    "ANALYSIS_AI",
    "compile_ahead",
    "kernels_of",
    "mcts_settings",
]
