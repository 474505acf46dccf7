"""Players by name: the one parser of player names and the registry it knows (levels, built-ins, the
compiled search each one needs). Every command parses its names here (bot ``--ai``/``--player``, play
``--opponent``/``--ai``, arena ``A B``, analyse and watch ``--ai``, bundle); below ``cli/`` only the
:class:`PlayerSpec` travels, never the name.

Accepted forms (:func:`accepted`):

* ``level1`` .. ``level5`` — strengths for beginners up to the default AI (:data:`LEVELS`);
* ``random``, ``greedy``, ``lookahead``, ``lookahead-py``, ``mcts`` — the built-in players (:data:`BUILTINS`);
* ``mcts:KEY=VALUE,...`` — the default search with other settings (``ai.search.mcts.MctsParams``);
* ``gtp:PATH:LEVEL`` — an external GTP engine such as Pentobi, played in-process (``ai.players.gtp``);
* ``cmd:COMMAND`` — a program of one's own, started per game with ``-h HOST -p PORT -r CODE`` (``net.external``);
* ``py:PATH[:CLASS]`` — a team's Python player on ``blokus.player`` (``ai.players.pyplayer``), always in a process
  of its own;
* ``human`` — a person at the terminal (``blokus play --opponent human``: hotseat).

``parse_player(text)`` returns a :class:`PlayerSpec` (frozen, picklable) whose fields are everything a layer
needs (the program's argv, the file and class, the GTP engine and level, the search settings) or raises
:class:`PlayerNameError` (a ValueError) with one line that lists every accepted form. ``spec.build(seed)``
makes an in-process player; a new kind of player is one :class:`PlayerKind` value and one branch here.

The levels (every level beats the one below in the arena, tuning/RESULTS.md §6):

1. ``greedy`` with much noise: the one-ply evaluation plus a random term worth up to four pentominoes.
2. ``greedy`` with some noise (up to about one pentomino), so it often misses the best move.
3. ``greedy``: the best one-ply evaluation.
4. ``lookahead-py`` (the search in Python, with the first weights) with at most 0.4 s per move.
5. ``mcts``: the default AI of the bot and the TUI, with the full thinking time.
"""

from __future__ import annotations

import importlib
import keyword
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import partial
from typing import Any

from blokus.ai.interface import Engine, RandomPlayer
from blokus.ai.players.levels import CappedTime
from blokus.ai.search.compiled import LazyCompiledPlayer
from blokus.ai.search.cores import MAX_THREADS, search_threads
from blokus.ai.search.greedy import GreedyPlayer
from blokus.ai.search.lookahead import LookaheadPlayer

DEFAULT_AI = "mcts"  # the bot's, the TUI's and level 5's player
ANALYSIS_AI = "lookahead"  # game analyses: deterministic, so the same game always gets the same verdicts


class PlayerKind(Enum):
    LEVEL = "level"  # level1 .. level5
    BUILTIN = "builtin"  # random, greedy, lookahead, lookahead-py, mcts
    MCTS = "mcts"  # mcts:KEY=VALUE,...
    GTP = "gtp"  # gtp:PATH:LEVEL
    CMD = "cmd"  # cmd:COMMAND
    PY = "py"  # py:PATH[:CLASS]
    HUMAN = "human"  # a person at the terminal


class PlayerNameError(ValueError):
    """A player name that is none of the accepted forms: one line."""


class PlayerUnavailable(ValueError):
    """A player that is named correctly but cannot be built here: one line."""


# --- the registry ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Registered:
    """A player of ours: how it is built and the module whose compiled kernels (``KERNELS``) it needs
    (made ready before a clock runs: ``compile_ahead``), None for a Python player."""

    build: Callable[..., Engine]  # (seed) -> the player
    kernels: str | None = None


def _compiled_mcts(seed: int | None, clock: Callable[[], float] | None, settings: dict | None = None) -> Engine:
    from blokus.ai.search.mcts import MctsParams, MctsPlayer

    return MctsPlayer(seed=seed, clock=clock, params=MctsParams(**settings) if settings else None)


def _compiled_lookahead(seed: int | None, clock: Callable[[], float] | None) -> Engine:
    from blokus.ai.search.fastsearch import FastLookaheadPlayer

    return FastLookaheadPlayer(seed=seed, clock=clock)


def _mcts(seed: int | None = None, settings: tuple[tuple[str, Any], ...] = (), name: str = "mcts") -> Engine:
    factory = partial(_compiled_mcts, settings=dict(settings)) if settings else _compiled_mcts
    return LazyCompiledPlayer(name, "blokus.ai.search.mcts", factory, LookaheadPlayer(seed), seed)


def _lookahead(seed: int | None = None) -> Engine:
    return LazyCompiledPlayer(
        "lookahead", "blokus.ai.search.fastsearch", _compiled_lookahead, LookaheadPlayer(seed), seed
    )


def _python_lookahead(seed: int | None = None) -> Engine:
    player = LookaheadPlayer(seed)
    player.name = "lookahead-py"
    return player


BUILTINS: dict[str, Registered] = {
    "random": Registered(RandomPlayer),
    "greedy": Registered(GreedyPlayer),
    "lookahead": Registered(_lookahead, "blokus.ai.search.fastsearch"),
    "lookahead-py": Registered(_python_lookahead),
    DEFAULT_AI: Registered(_mcts, "blokus.ai.search.mcts"),
}

LEVELS: dict[int, Registered] = {
    1: Registered(partial(GreedyPlayer, noise=20.0)),
    2: Registered(partial(GreedyPlayer, noise=6.0)),
    3: Registered(GreedyPlayer),
    4: Registered(lambda seed=None: CappedTime(LookaheadPlayer(seed), 0.4)),
    5: BUILTINS[DEFAULT_AI],  # the full AI
}


def accepted() -> str:
    """Every accepted form of a player name, for help texts and errors."""
    return (
        f"level{min(LEVELS)}..level{max(LEVELS)}, {', '.join(sorted(BUILTINS))}, mcts:KEY=VALUE,..., "
        "gtp:PATH:LEVEL, cmd:COMMAND or py:PATH[:CLASS]"
    )


def mcts_settings(text: str) -> tuple[tuple[str, float | int | bool], ...]:
    """``KEY=VALUE,...`` as settings of ``ai.search.mcts.MctsParams`` (checked against its fields; ValueError)."""
    from blokus.ai.search.mcts import MctsParams  # imports numba: only for these names, which are for measuring
    from blokus.model.season import DEFAULT_SEASON

    # a field left to the season (None by default) takes the type of its seasons' values
    kinds = {name: type(value) for name, value in vars(MctsParams().for_season(DEFAULT_SEASON)).items()}
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
    try:
        MctsParams(**settings)  # type: ignore[arg-type]  # (its own checks: a value in range)
    except ValueError as exc:
        raise ValueError(f"mcts:{text}: {exc}") from None
    return tuple(settings.items())


# --- the spec ------------------------------------------------------------------------------------------------

_INTERPRETERS = {"python", "python3", "java", "node", "sh", "bash", "ruby", "perl", "dotnet", "kotlin", "env"}


@dataclass(frozen=True)
class PlayerSpec:
    """A parsed player name. ``name`` is the name as written (what a table shows, what a command line of
    ours is handed); the other fields are the parts of its kind."""

    kind: PlayerKind
    name: str
    level: int = 0  # LEVEL: 1..5; GTP: the engine's level
    path: str = ""  # GTP: the engine program; PY: the Python file
    class_name: str = ""  # PY: the class in the file ("" = the module's only player)
    argv: tuple[str, ...] = ()  # CMD: the program's command line, split as a shell does
    settings: tuple[tuple[str, float | int | bool], ...] = ()  # MCTS: checked ``MctsParams`` fields

    @property
    def external(self) -> bool:
        """Whether the player is a program that plays through a server (not an in-process ``Engine``)."""
        return self.kind in (PlayerKind.CMD, PlayerKind.PY)

    @property
    def in_process(self) -> bool:
        """Whether :meth:`build` makes it (ours, or a GTP engine we drive)."""
        return self.kind not in (PlayerKind.CMD, PlayerKind.PY, PlayerKind.HUMAN)

    @property
    def registered(self) -> Registered | None:
        """Its entry in the registry (a level, a built-in, an mcts variant), None for the others."""
        if self.kind is PlayerKind.LEVEL:
            return LEVELS[self.level]
        if self.kind is PlayerKind.BUILTIN:
            return BUILTINS[self.name]
        if self.kind is PlayerKind.MCTS:
            return BUILTINS[DEFAULT_AI]
        return None

    @property
    def kernels_module(self) -> str | None:
        """The module whose compiled kernels the player needs (None: none)."""
        entry = self.registered
        return entry.kernels if entry is not None else None

    @property
    def label(self) -> str:
        """A short name for tables, status lines and file names: ``cmd:python3 -u bots/client.py --x`` →
        ``client.py``; ``cmd:java -jar player.jar`` → ``player.jar``; ``cmd:./start.sh`` → ``start.sh``;
        ``py:team/player.py`` → ``player.py``; our players by their name."""
        if self.kind is PlayerKind.PY:
            return os.path.basename(self.path) + (f":{self.class_name}" if self.class_name else "")
        if self.kind is not PlayerKind.CMD:
            return self.name
        label = os.path.basename(self.argv[0])
        if label.rstrip("0123456789.") in _INTERPRETERS:
            rest = [a for a in self.argv[1:] if not a.startswith("-")]
            if rest:
                label = os.path.basename(rest[0])
        return label or self.name

    def build(self, seed: int | None = None) -> Engine:
        """The in-process player (ValueError with one line if it cannot be built)."""
        if self.kind is PlayerKind.GTP:
            from blokus.ai.players.gtp import GtpPlayer

            return GtpPlayer(self.path, self.level, seed=seed)
        if self.kind is PlayerKind.MCTS:
            return _mcts(seed, self.settings, self.name)
        entry = self.registered
        if entry is None:
            raise PlayerUnavailable(f"{self.name!r} is {_NOT_IN_PROCESS[self.kind]}")
        player = entry.build(seed=seed)
        if self.kind is PlayerKind.LEVEL:
            player.name = self.name
        return player


_NOT_IN_PROCESS = {
    PlayerKind.CMD: "a program: it plays on a server (blokus arena, blokus play)",
    PlayerKind.PY: "a team's player: it plays in a process of its own (blokus bot --player, blokus arena, blokus play)",
    PlayerKind.HUMAN: "a person at the terminal (blokus play --opponent human)",
}


def default_player() -> PlayerSpec:
    """The default AI (the bot's, the TUI's)."""
    return PlayerSpec(PlayerKind.BUILTIN, DEFAULT_AI)


def analysis_player() -> PlayerSpec:
    """The engine of game analyses (deterministic)."""
    return PlayerSpec(PlayerKind.BUILTIN, ANALYSIS_AI)


def parse_player(text: str, what: str = "player") -> PlayerSpec:
    """``text`` as a :class:`PlayerSpec`; :class:`PlayerNameError` (one line) if it is no player name.
    ``what`` names the option in the error (``AI``, ``opponent``)."""
    name = text.strip()
    head, sep, rest = name.partition(":")
    if sep and head == "cmd":
        try:
            argv = tuple(shlex.split(rest))
        except ValueError as exc:
            raise PlayerNameError(f"{name!r}: {exc}") from None
        if not argv:
            raise PlayerNameError(f"{name!r}: no command after cmd:")
        return PlayerSpec(PlayerKind.CMD, name, argv=argv)
    if sep and head == "py":
        return parse_python_player(rest)
    if sep and head == "gtp":
        path, _, level = rest.rpartition(":")
        if not path or not level.isdigit():
            raise PlayerNameError(f"{name!r}: write gtp:PATH:LEVEL, e.g. gtp:/opt/pentobi/pentobi-gtp:5")
        return PlayerSpec(PlayerKind.GTP, name, level=int(level), path=path)
    if sep and head == "mcts":
        try:
            settings = mcts_settings(rest)  # imports numba: only for these names, which are for measuring
        except ValueError as exc:
            raise PlayerNameError(str(exc)) from None
        return PlayerSpec(PlayerKind.MCTS, name, settings=settings)
    if name.startswith("level") and name[5:].isdigit():
        return level_player(name[5:])
    if name in BUILTINS:
        return PlayerSpec(PlayerKind.BUILTIN, name)
    if name.lower() == PlayerKind.HUMAN.value:
        return PlayerSpec(PlayerKind.HUMAN, PlayerKind.HUMAN.value)
    raise PlayerNameError(f"unknown {what} {text!r}; choose {accepted()}")


def level_player(level: int | str) -> PlayerSpec:
    """The player of strength ``level`` (``--level N``); PlayerNameError for a level that does not exist."""
    text = str(level).strip()
    if not (text.isdigit() and int(text) in LEVELS):
        raise PlayerNameError(f"level must be one of {', '.join(map(str, LEVELS))}, not {text!r}")
    return PlayerSpec(PlayerKind.LEVEL, f"level{int(text)}", level=int(text))


def parse_python_player(text: str) -> PlayerSpec:
    """``[py:]PATH[:CLASS]`` (``blokus bot --player``, ``blokus bundle --player``) as a ``py:`` spec. A last
    ``:NAME`` is the class when NAME is an identifier (a path may hold colons)."""
    body = text.strip().removeprefix("py:")
    path, sep, class_name = body.rpartition(":")
    if not (sep and path and class_name.isidentifier() and not keyword.iskeyword(class_name)):
        path, class_name = body, ""
    if not path:
        raise PlayerNameError(f"{text!r}: write py:PATH[:CLASS], e.g. py:my_player.py:Logic")
    return PlayerSpec(PlayerKind.PY, f"py:{body}", path=path, class_name=class_name)


def make_player(name: str, seed: int | None = None) -> Engine:
    """The in-process player of a name (tests, benchmarks, tuning scripts): :func:`parse_player` and
    :meth:`PlayerSpec.build` (one-line ValueError)."""
    return parse_player(name, "AI").build(seed)


def _searches(spec: PlayerSpec) -> bool:
    """Whether ``spec`` is our MCTS (the default AI, its level, ``mcts:...``): a search with threads."""
    return spec.registered is BUILTINS[DEFAULT_AI]


def search_threads_of(spec: PlayerSpec) -> int | None:
    """The threads the search of ``spec`` runs (None: not our MCTS). Light: no numba."""
    return search_threads(int(dict(spec.settings).get("threads", 0))) if _searches(spec) else None


def capped_threads(spec: PlayerSpec, threads: int) -> PlayerSpec:
    """``spec`` searching with at most ``threads`` threads (``blokus bot --threads``); PlayerNameError (one line)
    for a player that is not our MCTS, or ``threads`` out of 1..MAX_THREADS."""
    if not 1 <= threads <= MAX_THREADS:
        raise PlayerNameError(f"--threads needs 1 to {MAX_THREADS}, not {threads}")
    if not _searches(spec):
        raise PlayerNameError(f"--threads: {spec.name!r} is not our search ({DEFAULT_AI}): it runs as it does")
    settings = dict(spec.settings)
    settings["threads"] = min(threads, search_threads(int(settings.get("threads", 0))))
    text = ",".join(f"{key}={int(value) if isinstance(value, bool) else value}" for key, value in settings.items())
    name = f"{DEFAULT_AI}:{text}"
    return PlayerSpec(PlayerKind.MCTS, name, settings=tuple(settings.items()))


def kernels_of(spec: PlayerSpec):
    """The compiled kernels (``ai.search.compiled.Kernels``) a player needs, or None (a Python player).
    Imports numba."""
    module = spec.kernels_module
    return None if module is None else importlib.import_module(module).KERNELS


def compile_ahead(spec: PlayerSpec, wait: float | None = None) -> bool:
    """Make the compiled search a player needs ready (the first start compiles it into numba's on-disk
    cache, tens of seconds; later starts load it in about a second), waiting up to ``wait`` seconds (None:
    until done). Returns whether it is ready (True for a player without one); ``Kernels.error`` says why not."""
    kernels = kernels_of(spec)
    return True if kernels is None else kernels.prepare(wait=wait)
