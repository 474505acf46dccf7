"""One arena game: what is asked (``GameSpec``: its start, seats, seeds and clock) and what it reports
(``ArenaGame``: from A's point of view, with every move it was played with, ``move_code``). The arena
(``ai.arena.match``) plays them; ``ai.arena.audit`` judges a report by its moves before it counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from blokus.model.moves import Move, SkipMove
from blokus.model.result import GameResult
from blokus.model.season import DEFAULT_SEASON
from blokus.model.state import placement_of


class ForfeitKind(StrEnum):
    """Why a side lost by a forfeit, as the arena's tables, ``--json`` and the tournament's journal name it: a
    ``str`` whose text is the value, so every file and line reads as before."""

    ILLEGAL_MOVE = "illegal move"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    DID_NOT_JOIN = "did not join"
    LEFT = "left"
    PROTOCOL = "protocol"


@dataclass
class GameSpec:
    index: int
    start_piece: str
    a_team: int  # 0: A plays team ONE (BLUE+RED), 1: A plays team TWO
    seed: int
    move_time: float
    season: str = DEFAULT_SEASON.name
    replay_dir: str | None = None  # write the game there as a replay (the season's form)
    opening_turns: int = 0  # turns at the start played by the arena (random placements, the same for both seats)
    ponder: tuple[bool, bool] = (False, False)  # A, B think on the opponent's time
    timed: bool = True  # False: no time limit per move (players with a count budget; measuring only)
    opening: tuple[str, ...] = ()  # an opening's moves (``str(move)``), made for both games of the pair first
    adjudicate: bool = True  # end the game once its winner can no longer change (``ai.arena.adjudication``)
    # whose moves the arena draws in the opening turns, A's and B's: both (the pair's games start alike), or only
    # a GTP engine's (it does not know the start piece), the other side then making its own first moves
    opening_sides: tuple[bool, bool] = (True, True)

    def arena_moves(self, state_turn: int, a_moves: bool) -> bool:
        """Whether the arena draws the move at ``state_turn`` of the side to move (A's if ``a_moves``)."""
        return state_turn < self.opening_turns and self.opening_sides[0 if a_moves else 1]


@dataclass
class ArenaGame:
    """One arena game from A's point of view (``result``: the game's result, team ONE first)."""

    index: int
    start_piece: str
    a_team: int
    a_points: int
    b_points: int
    score: float  # for A: 1 win, 0.5 draw, 0 loss
    turns: int
    a_times: list[float] = field(default_factory=list)
    b_times: list[float] = field(default_factory=list)
    forfeit: str = ""  # why a side lost by a rule violation / timeout / crash, if it did: "B timeout: …"
    result: GameResult | None = None
    substitutes: int = 0  # moves an external engine did not find (it passed with placements left): greedy's
    forfeit_side: str = ""  # "A" or "B": who lost by the forfeit
    forfeit_class: ForfeitKind | Literal[""] = ""  # "": no forfeit
    replay: str = ""  # the replay file, with --save-replay
    logs: list[str] = field(default_factory=list)  # log files of cmd: programs (stdout, stderr)
    # not a result: why (a side never joined or could not start, our side was hurt by the program under test);
    # a void game gives no point to anyone and is counted in its own column
    void: str = ""
    worker: str = ""  # the cluster worker that played it (``net.cluster``); "" on this machine
    traceback: str = ""  # a program that crashed: the last frames of the Python traceback on its stderr
    a_cores: list[int] = field(default_factory=list)  # the cores each side had of its own ([]: not pinned)
    b_cores: list[int] = field(default_factory=list)
    adjudicated: str = ""  # ended early, its winner decided: the rule and the points then ("" if played out)
    # every move played, in order, from the start piece (opening turns included): ``move_code``; what the
    # game is judged by before it counts (``ai.arena.audit``)
    moves: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.forfeit_class:  # a report read back (its text) is the member again
            self.forfeit_class = ForfeitKind(self.forfeit_class)


SKIP = -1  # a pass in ``ArenaGame.moves``


def move_code(move: Move) -> int:
    """A move as ``ArenaGame.moves`` keeps it: the placement id of a piece (in the colour to move), SKIP for a pass."""
    if isinstance(move, SkipMove):
        return SKIP
    code = placement_of(move)
    if code is None:
        raise ValueError(f"{move} is off the board")
    return code
