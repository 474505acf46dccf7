"""ai/arena/referee.py: the one referee of a game in progress (the arena's games, the server's rooms and hosted
program games use it): the clock is the caller's, the rules the engine's, the lines one text everywhere."""

from __future__ import annotations

import pytest

from blokus.ai.arena.game import ForfeitKind
from blokus.ai.arena.referee import Referee, hard_timeout_line
from blokus.model.moves import MoveMistake, SkipMove, parse_move
from blokus.model.pieces import Color, Shape
from blokus.model.result import Cause
from blokus.model.season import SEASON_2021, SEASON_2027
from blokus.model.state import GameState


@pytest.mark.parametrize("season", [SEASON_2021, SEASON_2027], ids=["2021", "2027"])
def test_a_legal_move_in_time_is_played_and_a_late_one_is_not(season) -> None:
    state = GameState.new(season, Shape.PENTO_L)
    referee = Referee(state, soft_timeout=season.soft_timeout_ms / 1000)
    move = state.legal_moves()[0]
    late = referee.judge(move, elapsed=2.001)
    assert late.cause is Cause.SOFT_TIMEOUT and not late.accepted and state.turn == 0  # not played
    assert late.kind is ForfeitKind.TIMEOUT and late.line == "timeout: 2001 ms at turn 0"
    untimed = referee.judge(move, elapsed=9.0, can_timeout=False)  # a seat the clock does not judge
    assert untimed.accepted and untimed.line == "" and state.turn == 1 and state.last_move == move


def test_an_illegal_move_names_its_rule_and_fields_and_is_not_played() -> None:
    state = GameState.new(SEASON_2021, Shape.PENTO_L)
    referee = Referee(state, soft_timeout=None)  # untimed: only the rules judge
    move = parse_move("BLUE PENTO_L NONE false 5 5")  # not in a corner at the first move
    ruling = referee.judge(move, elapsed=60.0)
    assert ruling.cause is Cause.RULE_VIOLATION and ruling.mistake is not None and state.turn == 0
    assert ruling.kind is ForfeitKind.ILLEGAL_MOVE
    assert ruling.line.startswith("illegal move at turn 0: BLUE PENTO_L NONE false 5 5 (")
    assert ruling.rule == state.refusal_text(move, ruling.mistake)  # the one text of the TUI and the server


def test_a_move_wrong_by_its_form_is_judged_by_its_mistake_and_the_clock_first() -> None:
    state = GameState.new(SEASON_2021, Shape.PENTO_L)
    referee = Referee(state, soft_timeout=2.0)
    wrong = referee.judge(None, elapsed=0.5, mistake=MoveMistake.WRONG_COLOR)
    assert wrong.mistake is MoveMistake.WRONG_COLOR and wrong.line.startswith("illegal move at turn 0: ")
    assert referee.judge(None, elapsed=2.5, mistake=MoveMistake.WRONG_COLOR).cause is Cause.SOFT_TIMEOUT
    with pytest.raises(ValueError):
        referee.judge(None, elapsed=0.1)


def test_a_skip_in_the_first_round_is_a_rule_violation_and_the_hard_line_names_the_limit() -> None:
    state = GameState.new(SEASON_2021, Shape.PENTO_L)
    ruling = Referee(state, soft_timeout=2.0).judge(SkipMove(Color.BLUE), elapsed=0.1)
    assert ruling.cause is Cause.RULE_VIOLATION and ruling.move == SkipMove(Color.BLUE)
    assert hard_timeout_line(2.0, 7) == "timeout: no move within 2000 ms at turn 7"
