"""Write your own Blokus player in Python, on this project's exact and compiled rule engine.

    from blokus.player import GameState, Move, Player

    class MyPlayer(Player):
        def calculate_move(self) -> Move:
            state = self.game_state
            return max(state.legal_moves(), key=lambda move: move.shape.size)

Run it: ``blokus arena py:my_player.py level2``, ``blokus bot --player my_player.py`` (a contest client),
``blokus --opponent py:my_player.py`` (play against it). ``blokus new-player DIR`` writes a complete
start (player, tests, README). The reference of every name: ``docs/player-api.md``.

The names (all documented with ``help(name)``):

* ``Player`` — the base class of your player (``calculate_move``, ``on_update``, ``on_game_over``,
  ``time_left``), shaped like the official ``socha`` client's ``IClientHandler``.
* ``GameState`` — a position: ``color``/``team`` to move, ``legal_moves(color)``, ``legal_move_count(color)``
  and ``corners(color)`` of any colour, ``key()`` (a Zobrist key; ``==`` and ``hash`` agree with it),
  ``push``/``pop``/``play``, ``copy()``, ``points``/``team_points``/``winner()``, ``pieces_left``,
  ``board()`` (numpy), ``turn``, ``round``, ``season``, ``is_over``.
* ``Move`` (``SetMove`` | ``SkipMove``) — printed by ``str(move)`` and read back by ``parse_move``:
  ``BLUE PENTO_L RIGHT false 3 0`` / ``BLUE SKIP``.
* ``Color``, ``Team``, ``Shape``, ``Rotation`` — the enums; ``Result`` — what ``on_game_over`` gets.
"""

from __future__ import annotations

from ai.player_api import GameState, Player, move_of_text
from model.moves import Move, SetMove, SkipMove
from model.pieces import Color, Rotation, Shape, Team
from model.result import GameResult as Result

parse_move = move_of_text

__all__ = [
    "Color",
    "GameState",
    "Move",
    "Player",
    "Result",
    "Rotation",
    "SetMove",
    "Shape",
    "SkipMove",
    "Team",
    "parse_move",
]
