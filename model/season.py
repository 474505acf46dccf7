"""Everything that is specific to one season of Software-Challenge Blokus, in one place.

The 2021 game (``swc_2021_blokus``, official server 21.3.3/21.4.0) is the only season implemented.
The 2026/27 game changes the start rules, the turn limit and the class names: a second ``Season``
instance will hold those values, and the rest of the code reads them from here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Season:
    game_type: str
    plugin_package: str  # Java package of the move classes, e.g. "sc.plugin2021"
    board_size: int
    round_limit: int  # the game ends when round > round_limit
    start_pieces: tuple[str, ...]  # shape names the start piece is drawn from
    soft_timeout_ms: int
    hard_timeout_ms: int

    @property
    def set_move_class(self) -> str:
        return f"{self.plugin_package}.SetMove"

    @property
    def skip_move_class(self) -> str:
        return f"{self.plugin_package}.SkipMove"

    @property
    def turn_limit(self) -> int:
        """The first turn number at which the game is over by the round limit."""
        return 4 * self.round_limit


SEASON_2021 = Season(
    game_type="swc_2021_blokus",
    plugin_package="sc.plugin2021",
    board_size=20,
    round_limit=25,
    # rules.md §6.1: every pentomino except PENTO_X.
    start_pieces=(
        "PENTO_L", "PENTO_T", "PENTO_V", "PENTO_S", "PENTO_Z", "PENTO_I",
        "PENTO_P", "PENTO_W", "PENTO_U", "PENTO_R", "PENTO_Y",
    ),
    soft_timeout_ms=2000,
    hard_timeout_ms=10000,
)

SEASON = SEASON_2021

GAME_TYPE = SEASON.game_type
BOARD_SIZE = SEASON.board_size
ROUND_LIMIT = SEASON.round_limit
MOVE_REQUEST_CLASS = "sc.framework.plugins.protocol.MoveRequest"
MOVE_REQUEST_CLASS_NEW = "moveRequest"  # later seasons
CLOSE_CONNECTION_21_3 = "sc.protocol.responses.CloseConnection"
CLOSE_CONNECTION_21_4 = "sc.protocol.CloseConnection"
DEFAULT_PORT = 13050
