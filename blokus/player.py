"""Write your own Blokus player in Python, on this project's exact and compiled rule engine.

    from blokus.player import GameState, Move, Player

    class MyPlayer(Player):
        def calculate_move(self) -> Move:
            state = self.game_state
            return max(state.legal_moves(), key=lambda move: move.shape.size)

Run it: ``blokus arena py:my_player.py level2``, ``blokus bot --player my_player.py`` or ``python my_player.py -h
HOST -p PORT -r CODE`` with ``run(__file__)`` at its end (a contest client),
``blokus --opponent py:my_player.py`` (play against it). ``blokus new-player DIR`` writes a complete
start (player, tests, README). The reference of every name: ``docs/player-api.md``.

The names (all documented with ``help(name)``):

* ``Player`` — the base class of your player (``calculate_move``, ``on_update``, ``on_game_over``,
  ``time_left``; optional hooks ``while_waiting(stop)``, ``on_game_joined(room_id)``, ``on_error(message)``),
  shaped like the official ``socha`` client's ``IClientHandler``.
* ``run(__file__)`` — at the end of your file, ``python player.py -h HOST -p PORT -r CODE`` plays a game (as
  socha's ``Starter``), exactly as ``blokus bot --player player.py``.
* ``GameState`` — a position (the project's one class, ``blokus.model.state.GameState``): ``color``/``team`` to
  move, ``legal_moves(color)``, ``legal_move_count(color)`` and ``corners(color)`` of any colour, ``key()`` (a
  Zobrist key; ``==`` and ``hash`` agree with it), ``push``/``pop``/``play``, ``copy()``,
  ``points``/``team_points``/``winner()``, ``pieces_left``, ``board()`` (numpy), ``turn``, ``round``, ``season``,
  ``is_over``.
* ``Move`` (``SetMove`` | ``SkipMove``) — printed by ``str(move)`` and read back by ``parse_move``:
  ``BLUE PENTO_L RIGHT false 3 0`` / ``BLUE SKIP``.
* ``Color``, ``Team``, ``Shape``, ``Rotation`` — the enums; ``Result`` — what ``on_game_over`` gets.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from typing import NoReturn

from blokus.ai.players.player_api import GameState, Player, StopSignal, move_of_text
from blokus.model.moves import IllegalMoveError, Move, SetMove, SkipMove
from blokus.model.pieces import Color, Rotation, Shape, Team
from blokus.model.result import GameResult as Result

parse_move = move_of_text


def run(player_file: str | os.PathLike[str], argv: Sequence[str] | None = None) -> NoReturn:
    """Play one game as a contest client, as ``blokus bot --player PLAYER_FILE`` does: end your player's file with

        if __name__ == "__main__":
            run(__file__)

    and ``python player.py -h HOST -p PORT -r CODE`` (also ``--host``, ``--port``, ``--reservation``, in any
    order; none: localhost:13050, any open game) plays. ``argv`` (default: the command line) may hold any other
    option of ``blokus bot`` (``-v``, ``--log FILE``, ``--strict``). This process becomes a fresh ``blokus bot``
    (your module's state is not kept): your player then runs in a process of its own, as in the contest bot.
    Exits with the bot's exit code.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    command = [sys.executable, "-P", "-m", "blokus", "bot", "--player", os.path.abspath(player_file), *args]
    sys.stdout.flush()
    sys.stderr.flush()
    if hasattr(os, "execv") and os.name == "posix":
        os.execv(sys.executable, command)  # -P: a module of the player's folder never hides one of ours
    raise SystemExit(subprocess.call(command))


__all__ = [
    "Color",
    "GameState",
    "IllegalMoveError",
    "Move",
    "Player",
    "Result",
    "Rotation",
    "SetMove",
    "Shape",
    "SkipMove",
    "StopSignal",
    "Team",
    "parse_move",
    "run",
]
