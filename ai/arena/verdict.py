"""The verdict of a hosted game (``net.external.HostedGame``: programs on an embedded server): what happened there
(:class:`Hosted`, as the host saw it) judged into a :class:`HostedOutcome`: the server's result, the side that
lost irregularly with its :class:`~ai.arena.game.ForfeitKind` and one line, or why the game is void.

The lines of a lost game (``ai.arena.referee`` words the first two, for every game alike):

* ``illegal move at turn N: <move> (<rule>)``
* ``timeout: <ms> ms at turn N`` (a move later than the soft limit) or ``timeout: no move within <ms> ms
  at turn N`` (the hard limit)
* ``crashed (exit 3) at turn N: <last stderr line>`` (the process ended with an error or a signal)
* ``did not join within 30 s``
* ``left the game at turn N`` (closed its connection, or exited with 0, during the game)

A game is void (no result, no point to anyone) when a side never joined, or when our own side (``ours``: a
``blokus bot`` against the program under test) failed in any way: one of the lines above, a stop by a signal,
its seat taken, a fallback move or an unclean end, told by its exit code. The program under test runs as the
same user and could have caused it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from blokus.ai.arena.game import ArenaGame, ForfeitKind, GameSpec
from blokus.ai.arena.referee import hard_timeout_line, illegal_line, timeout_line
from blokus.ai.processes import describe_exit
from blokus.model.exits import EXIT_FALLBACK
from blokus.model.moves import Move, MoveMistake
from blokus.model.pieces import Team
from blokus.model.result import Cause, GameResult, irregular_result
from blokus.model.season import Season
from blokus.model.state import GameState


@dataclass(frozen=True)
class ArrivedMove:
    team: Team
    turn: int
    move: Move | None
    mistake: MoveMistake | None
    latency: float | None  # seconds from the move request; None: not counted by the room (not requested)


@dataclass
class HostedOutcome:
    """The judged game. ``forfeit``: the one line of the side that lost irregularly ("" otherwise)."""

    result: GameResult | None  # None: cancelled (stopped early)
    forfeit: str = ""
    forfeit_class: ForfeitKind | Literal[""] = ""
    offender: Team | None = None
    turn: int = 0
    times: dict[Team, list[float]] = field(default_factory=dict)  # seconds per move, as the server measured
    replay: bytes | None = None  # the official replay (None: the game never started)
    logs: dict[Team, tuple[Path, Path]] = field(default_factory=dict)  # stdout and stderr log per program
    # not a result: a side never joined (could not start, crashed before joining) or our side was hurt in a
    # way the program under test could have caused; the reason in one line ("" for a real result)
    void: str = ""
    traceback: str = ""  # a side that crashed: the last frames of the Python traceback on its stderr, if any
    adjudicated: str = ""  # ended early, its winner decided (``ai.arena.adjudication``): why


@dataclass(frozen=True)
class HostedSide:
    """One seat at the end of a hosted game."""

    name: str
    ours: bool = False  # a player of this project (``net.external.HostedSeat.ours``)
    program: bool = False  # a program was started for it (else the caller joined: the TUI, a test)
    exit_code: int | None = None  # its program's, before it was stopped (None: it was still running)
    said: str = ""  # ``: <its last stderr line>`` (``net.external``), "" if it said nothing
    traceback: str = ""  # the last Python traceback on its stderr


@dataclass
class Hosted:
    """What happened in a hosted game, as its host saw it (nothing judged yet)."""

    seats: tuple[HostedSide, HostedSide]  # team ONE's, team TWO's
    season: Season
    result: GameResult | None  # the server's (None: the game did not end)
    state: GameState | None  # the room's position at the end (None: the game never started)
    adjudicated: str = ""  # the room's: why it ended early
    moves: list[ArrivedMove] = field(default_factory=list)  # every move that arrived, in order
    times: dict[Team, list[float]] = field(default_factory=dict)
    replay: bytes | None = None
    logs: dict[Team, tuple[Path, Path]] = field(default_factory=dict)
    no_join: tuple[Team, str] | None = None  # a side that never joined, and how (``did not join …``, ``crashed …``)
    hurt: tuple[Team, str] | None = None  # our side hurt (stopped by a signal, its seat taken), and how
    hard_timeout: float = 60.0  # seconds: the hard limit the server kept
    exit_grace: float = 5.0  # seconds our side had to end by itself after the game


def judge_hosted(hosted: Hosted) -> HostedOutcome:
    """The verdict of ``hosted``: its result, the forfeit (kind, line, offender) or why it is void."""
    times, replay, logs = hosted.times, hosted.replay, hosted.logs
    turn = hosted.state.turn if hosted.state is not None else 0
    names = (hosted.seats[0].name, hosted.seats[1].name)
    if hosted.no_join is not None:
        team, line = hosted.no_join
        kind = ForfeitKind.CRASHED if line.startswith("crashed") else ForfeitKind.DID_NOT_JOIN
        left = irregular_result(team, Cause.LEFT, line, (0, 0), names, hosted.season)
        void = f"{names[team]} {line}"  # a game that never started is no result for anyone
        trace = hosted.seats[team].traceback
        return HostedOutcome(left, line, kind, team, 0, times, replay, logs, void=void, traceback=trace)
    result = hosted.result
    void = ""
    if hosted.hurt is not None:  # before the result: a stopped side also times out
        team, line = hosted.hurt
        void = _ours_void(names[team], line)
    if result is None or result.regular or result.offender is None:
        void = void or (_our_end(hosted) if result is not None else "")
        adjudicated = hosted.adjudicated if result is not None and result.regular else ""
        return HostedOutcome(result, "", "", None, turn, times, replay, logs, void=void, adjudicated=adjudicated)
    team = result.offender
    kind, line = _forfeit_line(hosted, team, result.cause, turn)
    if hosted.seats[team].ours and not void:  # our side's failure is never a result, whatever caused it
        void = _ours_void(names[team], line)
    void = void or _our_end(hosted)
    trace = hosted.seats[team].traceback if kind is ForfeitKind.CRASHED else ""
    return HostedOutcome(result, line, kind, team, turn, times, replay, logs, void=void, traceback=trace)


def _ours_void(name: str, line: str) -> str:
    return f"our side {name} {line} (the program under test could have caused it)"


def _our_end(hosted: Hosted) -> str:
    """Why our side's end after a played game voids it ("" if it ended well: exit 0). Its exit code is
    the kernel's word, which the program under test cannot forge: a bot of ours that played a fallback
    move ends with EXIT_FALLBACK; one that did not end by itself was stuck (a stopped engine, say)."""
    for side in hosted.seats:
        if not (side.program and side.ours) or side.exit_code == 0:
            continue
        if side.exit_code is None:
            why = f"did not end by itself within {hosted.exit_grace:g} s after the game"
        elif side.exit_code == EXIT_FALLBACK:
            why = "did not play every move itself (a fallback move: its engine did not answer in time)"
        else:
            why = f"ended with {describe_exit(side.exit_code)} after the game"
        return _ours_void(side.name, why)
    return ""


def _forfeit_line(hosted: Hosted, team: Team, cause: Cause, turn: int) -> tuple[ForfeitKind, str]:
    last = next((m for m in reversed(hosted.moves) if m.team == team), None)
    state = hosted.state  # the position the last move was refused in
    if cause is Cause.RULE_VIOLATION:
        mistake = last.mistake if last is not None else None
        move = last.move if last is not None else None
        if mistake is None and move is not None and state is not None:
            mistake = state.validate(move)
        if mistake is not None and move is not None and state is not None:
            rule = state.refusal_text(move, mistake)  # the rule and the fields, as the TUI says it
        else:
            rule = mistake.english if mistake is not None else ""
        return ForfeitKind.ILLEGAL_MOVE, illegal_line(move, rule, last.turn if last is not None else turn)
    if cause is Cause.SOFT_TIMEOUT:
        return ForfeitKind.TIMEOUT, timeout_line((last.latency or 0.0) if last is not None else 0.0, turn)
    if cause is Cause.HARD_TIMEOUT:
        return ForfeitKind.TIMEOUT, hard_timeout_line(hosted.hard_timeout, turn)
    if cause is Cause.PROCESS_VIOLATION:
        return ForfeitKind.PROTOCOL, f"protocol violation at turn {turn}: a move that was not requested"
    side = hosted.seats[team]
    if cause is Cause.LEFT and side.program and side.exit_code is not None and side.exit_code != 0:
        return ForfeitKind.CRASHED, f"crashed ({describe_exit(side.exit_code)}) at turn {turn}{side.said}"
    return ForfeitKind.LEFT, f"left the game at turn {turn}"


def arena_game(spec: GameSpec, outcome: HostedOutcome | None, moves: list[int], failure: str = "") -> ArenaGame:
    """The arena's game (A's view, ``ai.arena.game``) of a hosted game's ``outcome`` (None: none came), every
    move from the start piece in ``moves`` (``move_code``): void, with the reason, without a result or with
    a void verdict (``failure``: why the host could not play it, if it could not)."""
    a_team = Team(spec.a_team)
    result = outcome.result if outcome is not None else None
    arena = ArenaGame(spec.index, spec.start_piece, spec.a_team, 0, 0, 0.5, 0, result=result)
    arena.traceback = outcome.traceback if outcome is not None else ""
    arena.logs = [str(path) for paths in (outcome.logs if outcome else {}).values() for path in paths]
    if outcome is None or result is None or outcome.void:
        # no result, and no point to anyone: a side that never played, or our side hurt by the program
        arena.void = (outcome.void if outcome is not None else "") or failure or "the game was cancelled"
        return arena
    arena.a_points = result.points(a_team) or 0
    arena.b_points = result.points(a_team.opponent) or 0
    arena.score = 0.5 if result.winner is None else 1.0 if result.winner == a_team else 0.0
    arena.turns = outcome.turn
    arena.adjudicated = outcome.adjudicated
    arena.moves = moves
    arena.a_times, arena.b_times = outcome.times.get(a_team, []), outcome.times.get(a_team.opponent, [])
    if outcome.forfeit and outcome.offender is not None:
        arena.forfeit_side = "A" if outcome.offender == a_team else "B"
        arena.forfeit = f"{arena.forfeit_side} {outcome.forfeit}"
        arena.forfeit_class = outcome.forfeit_class
    return arena
