"""ai/arena/verdict.py: a hosted game judged from what its host saw (no server, no program here): the kind and
line of a forfeit, and the games that are void (a side that never joined, our own side's failure)."""

from __future__ import annotations

from blokus.ai.arena.game import ForfeitKind
from blokus.ai.arena.verdict import ArrivedMove, Hosted, HostedSide, judge_hosted
from blokus.model.exits import EXIT_FALLBACK
from blokus.model.moves import parse_move
from blokus.model.pieces import Shape, Team
from blokus.model.result import Cause, irregular_result, regular_result
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState

NAMES = ("prog", "bot")
THEIRS, OURS = HostedSide("prog", program=True, exit_code=0), HostedSide("bot", ours=True, program=True, exit_code=0)


def hosted(result, *, seats=(THEIRS, OURS), state=None, **kw) -> Hosted:
    state = state or GameState.new(SEASON_2021, Shape.PENTO_L)
    return Hosted(seats, SEASON_2021, result, state, **kw)


def lost(team: Team, cause: Cause):
    return irregular_result(team, cause, "", (3, 4), NAMES, SEASON_2021)


def test_each_forfeit_has_its_kind_and_line():
    assert judge_hosted(hosted(lost(Team.ONE, Cause.HARD_TIMEOUT), hard_timeout=2.0)).forfeit == (
        "timeout: no move within 2000 ms at turn 0"
    )
    late = ArrivedMove(Team.ONE, 0, None, None, 2.5)
    soft = judge_hosted(hosted(lost(Team.ONE, Cause.SOFT_TIMEOUT), moves=[late]))
    assert (soft.forfeit_class, soft.forfeit, soft.offender) == (
        ForfeitKind.TIMEOUT,
        "timeout: 2500 ms at turn 0",
        Team.ONE,
    )
    move = parse_move("BLUE PENTO_L NONE false 5 5")  # not in a corner at the first move
    illegal = judge_hosted(
        hosted(lost(Team.ONE, Cause.RULE_VIOLATION), moves=[ArrivedMove(Team.ONE, 0, move, None, 0.1)])
    )
    assert illegal.forfeit_class is ForfeitKind.ILLEGAL_MOVE and illegal.forfeit.startswith(
        f"illegal move at turn 0: {move} ("
    )
    crashed = HostedSide("prog", program=True, exit_code=3, said=": boom", traceback="Traceback …")
    crash = judge_hosted(hosted(lost(Team.ONE, Cause.LEFT), seats=(crashed, OURS)))
    assert (crash.forfeit_class, crash.forfeit, crash.traceback) == (
        ForfeitKind.CRASHED,
        "crashed (exit 3) at turn 0: boom",
        "Traceback …",
    )
    left = judge_hosted(hosted(lost(Team.ONE, Cause.LEFT)))
    assert (left.forfeit_class, left.forfeit, left.traceback, left.void) == (
        ForfeitKind.LEFT,
        "left the game at turn 0",
        "",
        "",
    )
    protocol = judge_hosted(hosted(lost(Team.ONE, Cause.PROCESS_VIOLATION)))
    assert protocol.forfeit_class is ForfeitKind.PROTOCOL


def test_a_side_that_never_joined_or_our_sides_failure_is_void():
    never = judge_hosted(hosted(None, no_join=(Team.ONE, "did not join within 3 s")))
    assert never.forfeit_class is ForfeitKind.DID_NOT_JOIN and never.void == "prog did not join within 3 s"
    ours = judge_hosted(hosted(lost(Team.TWO, Cause.LEFT)))
    assert ours.forfeit_class is ForfeitKind.LEFT and ours.void.startswith("our side bot left the game at turn 0 (")
    played = regular_result((5, 4), NAMES, SEASON_2021)
    assert judge_hosted(hosted(played)).void == "" and judge_hosted(hosted(played)).result is played
    fallback = HostedSide("bot", ours=True, program=True, exit_code=EXIT_FALLBACK)
    assert "did not play every move itself" in judge_hosted(hosted(played, seats=(THEIRS, fallback))).void
    stuck = HostedSide("bot", ours=True, program=True, exit_code=None)
    assert "did not end by itself within 5 s" in judge_hosted(hosted(played, seats=(THEIRS, stuck))).void
    hurt = judge_hosted(hosted(played, hurt=(Team.TWO, "was stopped by a signal (seen at turn 3)")))
    assert hurt.void.startswith("our side bot was stopped by a signal (seen at turn 3) (")
