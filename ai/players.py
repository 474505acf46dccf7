"""The one parser of player names, used by every command (bot ``--ai``/``--player``, play
``--opponent``/``--ai``, arena ``A B``, analyse and watch ``--ai``) and by every layer that builds a player
from a name (``make_player``, the engine worker, the analysis).

Accepted forms (:func:`accepted`):

* ``level1`` .. ``level5`` — strengths for beginners up to the default AI (``ai.levels``);
* ``random``, ``greedy``, ``lookahead``, ``lookahead-py``, ``mcts`` — the built-in players (``ai.builtin``);
* ``mcts:KEY=VALUE,...`` — the default search with other settings (``ai.mcts.MctsParams``);
* ``gtp:PATH:LEVEL`` — an external GTP engine such as Pentobi, played in-process (``ai.gtp``);
* ``cmd:COMMAND`` — a program of one's own, started per game with ``-h HOST -p PORT -r CODE`` (``net.external``);
* ``py:PATH[:CLASS]`` — a team's Python player on ``blokus.player`` (``ai.pyplayer``): in-process for the bot
  (``blokus bot --player``), a ``blokus bot --player PATH --strict`` process per game in the arena and the TUI.

``parse_player(text)`` returns a :class:`PlayerSpec` (frozen, picklable) or raises :class:`PlayerNameError`
(a ValueError) with one line that lists every accepted form. ``spec.build(seed)`` makes the in-process player
from the spec's fields; ``spec.external`` says the player is a program that plays through a server
(``cmd:``, ``py:`` in the arena); how a program is started is ``net.external``'s business.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ai.base import Engine
from ai.builtin import builtin_names, builtin_player, mcts_settings, mcts_variant

LEVELS = range(1, 6)


class PlayerKind(Enum):
    LEVEL = "level"  # level1 .. level5
    BUILTIN = "builtin"  # random, greedy, lookahead, lookahead-py, mcts
    MCTS = "mcts"  # mcts:KEY=VALUE,...
    GTP = "gtp"  # gtp:PATH:LEVEL
    CMD = "cmd"  # cmd:COMMAND
    PY = "py"  # py:PATH[:CLASS]


class PlayerNameError(ValueError):
    """A player name that is none of the accepted forms: one line."""


class PlayerUnavailable(ValueError):
    """A player that is named correctly but cannot be built here: one line."""


def accepted() -> str:
    """Every accepted form of a player name, for help texts and errors."""
    return (
        f"level{LEVELS[0]}..level{LEVELS[-1]}, {', '.join(builtin_names())}, mcts:KEY=VALUE,..., "
        "gtp:PATH:LEVEL, cmd:COMMAND or py:PATH[:CLASS]"
    )


@dataclass(frozen=True)
class PlayerSpec:
    """A parsed player name. ``name`` is the name as written (what a table shows, what a child process is
    handed to parse again); the other fields are the parts of its kind."""

    kind: PlayerKind
    name: str
    level: int = 0  # LEVEL: 1..5; GTP: the engine's level
    path: str = ""  # GTP: the engine; PY: the Python file
    command: str = ""  # CMD: the command line (split by ``net.external.program_argv``)
    class_name: str = ""  # PY: the class in the file ("" = the module's only player)
    settings: str = ""  # MCTS: the KEY=VALUE,... part

    @property
    def external(self) -> bool:
        """Whether the player is a program that plays through a server (not an in-process ``Engine``)."""
        return self.kind in (PlayerKind.CMD, PlayerKind.PY)

    @property
    def is_gtp(self) -> bool:
        return self.kind is PlayerKind.GTP

    def build(self, seed: int | None = None) -> Engine:
        """The in-process player (ValueError with one line if it cannot be built)."""
        if self.kind is PlayerKind.LEVEL:
            from ai.levels import make_level

            return make_level(self.level, seed)
        if self.kind is PlayerKind.MCTS:
            return mcts_variant(self.settings, seed)
        if self.kind is PlayerKind.GTP:
            from ai.gtp import GtpPlayer

            return GtpPlayer(self.path, self.level, seed=seed)
        if self.kind is PlayerKind.PY:
            from ai.pyplayer import PyPlayer  # PlayerLoadError (a ValueError): one line

            return PyPlayer(self.name, seed=seed)
        if self.kind is PlayerKind.CMD:
            raise PlayerUnavailable(f"{self.name!r} is a program: it plays on a server (blokus arena, blokus play)")
        return builtin_player(self.name, seed)

    def load(self) -> None:
        """A ``py:`` player's file loaded and its class found (PlayerLoadError: one line), and the player
        API's compiled engine made ready here, before any clock runs. Nothing for the other kinds."""
        if self.kind is PlayerKind.PY:
            from ai.pyplayer import load_player_class
            from model.fast import warm_up

            load_player_class(self.name)
            warm_up()


def parse_player(text: str, what: str = "player") -> PlayerSpec:
    """``text`` as a :class:`PlayerSpec`; :class:`PlayerNameError` (one line) if it is no player name.
    ``what`` names the option in the error (``AI``, ``opponent``)."""
    name = text.strip()
    head, sep, rest = name.partition(":")
    if sep and head == "cmd":
        if not rest.strip():
            raise PlayerNameError(f"{name!r}: no command after cmd:")
        return PlayerSpec(PlayerKind.CMD, name, command=rest)
    if sep and head == "py":
        path, _, class_name = rest.partition(":")
        if not path:
            raise PlayerNameError(f"{name!r}: write py:PATH[:CLASS], e.g. py:my_player.py:Logic")
        return PlayerSpec(PlayerKind.PY, name, path=path, class_name=class_name)
    if sep and head == "gtp":
        path, _, level = rest.rpartition(":")
        if not path or not level.isdigit():
            raise PlayerNameError(f"{name!r}: write gtp:PATH:LEVEL, e.g. gtp:/opt/pentobi/pentobi-gtp:5")
        return PlayerSpec(PlayerKind.GTP, name, level=int(level), path=path)
    if sep and head == "mcts":
        try:
            mcts_settings(rest)  # imports numba: only for these names, which are for measuring
        except ValueError as exc:
            raise PlayerNameError(str(exc)) from None
        return PlayerSpec(PlayerKind.MCTS, name, settings=rest)
    if name.startswith("level") and name[5:].isdigit():
        if int(name[5:]) not in LEVELS:
            raise PlayerNameError(f"level must be one of {', '.join(map(str, LEVELS))}, not {name[5:]!r}")
        return PlayerSpec(PlayerKind.LEVEL, name, level=int(name[5:]))
    if name in builtin_names():
        return PlayerSpec(PlayerKind.BUILTIN, name)
    raise PlayerNameError(f"unknown {what} {text!r}; choose {accepted()}")


def make_player(name: str, seed: int | None = None) -> Engine:
    """The in-process player of a name: :func:`parse_player` and :meth:`PlayerSpec.build` (one-line ValueError)."""
    return parse_player(name, "AI").build(seed)
