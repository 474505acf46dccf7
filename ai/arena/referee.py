"""The one referee of a game in progress: each move judged against the clock and the rules, and the line that
says a forfeit — for the arena's in-process games (``ai.arena.match``), the server's rooms (``net.rooms.Room``) and the
games of programs it hosts (``net.external.HostedGame``).

The clock is the caller's: it passes the seconds a move took (from the request to its arrival, as the
official server counts them), so the referee reads no clock itself and tests need not wait. What happens
next (an error message to the client, the result, a replay) stays with the caller: the referee says *what*
the move is worth and *why*, in one text everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from blokus.ai.arena.game import ForfeitKind
from blokus.model.moves import Move, MoveMistake
from blokus.model.result import Cause
from blokus.model.state import GameState


@dataclass(frozen=True)
class Ruling:
    """What a move is worth: ``cause`` REGULAR (accepted, played), SOFT_TIMEOUT (too late: the game is lost)
    or RULE_VIOLATION (``mistake``: the game is lost). ``turn``: the turn the move was made at."""

    cause: Cause
    turn: int
    elapsed: float
    move: Move | None = None
    mistake: MoveMistake | None = None
    rule: str = ""  # the rule and the fields it is about, in English (a rule violation)

    @property
    def accepted(self) -> bool:
        return self.cause is Cause.REGULAR

    @property
    def kind(self) -> ForfeitKind | Literal[""]:
        """The kind of a forfeit ("" when accepted)."""
        return _KINDS.get(self.cause, "")

    @property
    def line(self) -> str:
        """The forfeit in one line (``illegal move at turn 12: BLUE … (the piece touches …)``, ``timeout:
        2512 ms at turn 3``); "" when accepted."""
        if self.cause is Cause.SOFT_TIMEOUT:
            return timeout_line(self.elapsed, self.turn)
        if self.cause is Cause.RULE_VIOLATION:
            return illegal_line(self.move, self.rule or (self.mistake.english if self.mistake else ""), self.turn)
        return ""


_KINDS = {Cause.SOFT_TIMEOUT: ForfeitKind.TIMEOUT, Cause.RULE_VIOLATION: ForfeitKind.ILLEGAL_MOVE}


def timeout_line(elapsed: float, turn: int) -> str:
    return f"timeout: {elapsed * 1000:.0f} ms at turn {turn}"


def hard_timeout_line(hard: float, turn: int) -> str:
    return f"timeout: no move within {hard * 1000:.0f} ms at turn {turn}"


def illegal_line(move: Move | None, rule: str, turn: int) -> str:
    rule = rule or "refused by the rules"
    what = f"{move} ({rule})" if move is not None else rule
    return f"illegal move at turn {turn}: {what}"


class Referee:
    """Judges the moves of one game on ``state`` (which it plays the accepted moves on). ``soft_timeout``:
    seconds after the request beyond which a move loses (None: untimed)."""

    def __init__(self, state: GameState, soft_timeout: float | None) -> None:
        self.state = state
        self.soft_timeout = soft_timeout

    def judge(
        self, move: Move | None, elapsed: float, *, can_timeout: bool = True, mistake: MoveMistake | None = None
    ) -> Ruling:
        """The ruling on ``move`` of the colour to move, ``elapsed`` seconds after its request; an accepted
        move is played. ``mistake``: a move already wrong by its form (``move`` may then be None);
        ``can_timeout`` False: a seat the clock does not judge (an external engine keeping its own clock)."""
        turn = self.state.turn
        if can_timeout and self.soft_timeout is not None and elapsed > self.soft_timeout:
            return Ruling(Cause.SOFT_TIMEOUT, turn, elapsed, move)
        if mistake is None:
            if move is None:
                raise ValueError("judge needs a move or the mistake of one")
            mistake = self.state.validate(move)
        if mistake is not None:
            rule = self.state.refusal_text(move, mistake) if move is not None else mistake.english
            return Ruling(Cause.RULE_VIOLATION, turn, elapsed, move, mistake, rule)
        assert move is not None
        self.state.push(move)
        return Ruling(Cause.REGULAR, turn, elapsed, move)
