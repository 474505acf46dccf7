"""End-of-game texts for every kind of result (fixtures of the official 21.3.3 server)."""

from __future__ import annotations

import pytest

from blokus.model.convert import parse_xml, result_from_message
from blokus.model.moves import SetMove
from blokus.model.pieces import Color, Shape, Team
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState
from blokus.tui.replays import result_texts
from tests.helpers import fixture_path

NAMES = {Team.ONE: "alice", Team.TWO: "bob"}


def _state_after(plies: int) -> GameState:
    st = GameState.new(SEASON_2021, Shape.PENTO_L)
    for _ in range(plies):
        st.play(st.legal_moves()[0])
    return st


@pytest.mark.parametrize(
    "name, title, expected",
    [
        (
            "rule-violation-DUPLICATE_SHAPE",
            "team ONE (BLUE+RED, alice) wins 15 : 10",
            ["team TWO (bob, YELLOW to move) broke a rule", "DUPLICATE_SHAPE: this piece has already been placed"],
        ),
        (
            "rule-violation-OBSTRUCTED",
            "team TWO (YELLOW+GREEN, bob) wins 15 : 15",
            [
                "team ONE (alice) broke a rule",
                "OBSTRUCTED: the piece would cover a field that is already taken (move RED PENTO_I @ (19,17))",
            ],
        ),
        (
            "soft-timeout",
            "team ONE (BLUE+RED, alice) wins 15 : 10",
            ["did not move within 2 seconds (soft timeout)"],
        ),
        ("hard-timeout", "team ONE (BLUE+RED, alice) wins 15 : 10", ["did not move within 10 seconds (hard timeout)"]),
        ("left", "team ONE (BLUE+RED, alice) wins 15 : 10", ["team TWO (bob, YELLOW to move) left the game"]),
        ("example-draw", "draw, 10 : 10", ["Score: ONE (BLUE+RED) ", "Win points (2 win, 1 draw): ONE 1 : 1 TWO"]),
    ],
)
def test_result_texts(name, title, expected):
    result = result_from_message(parse_xml(fixture_path(f"sc2021/gen-21.3.3-s2c-result-{name}.xml").read_bytes()))
    got_title, lines = result_texts(result, _state_after(5), NAMES)
    assert got_title == f"Game over — {title}"
    text = "\n".join(lines)
    for part in expected:
        assert part in text
    assert "Der Spieler" not in text and "Setze" not in text  # said once, in English (issue 45)


def test_result_text_without_result_message():
    st = GameState.new(SEASON_2021, Shape.PENTO_L)
    st.play(SetMove(Color.BLUE, Shape.PENTO_L, x=0, y=0))
    title, lines = result_texts(None, st, NAMES)
    assert title == "Game not finished"


def test_a_session_tells_its_end_from_one_result():
    from blokus.model.moves import SkipMove
    from blokus.model.result import Cause, end_texts, irregular_result
    from blokus.tui.session import Aborted, GameSession

    s = GameSession.new_local(Shape.PENTO_L, human=None, seed=1, season=SEASON_2021)
    assert s.end_texts() is None and s.final_result() is None  # the game runs
    while not s.state.is_over:
        moves = s.state.legal_moves()
        s.apply(moves[0] if len(moves) else SkipMove(s.state.color))
    result = s.final_result()
    one, two = result.points(Team.ONE), result.points(Team.TWO)
    assert result.regular and (one, two) == s.state.outcome().points
    texts = s.end_texts()
    assert texts == end_texts(result, s.state, s.names)
    winner = "draw" if result.winner is None else f"{result.winner.name} wins"
    assert texts.short == f"Game over — {winner} {one} : {two}" and texts.summary.endswith("cause REGULAR")
    # a server's result is the session's end, whatever the board says
    s.end = irregular_result(
        Team.TWO, Cause.LEFT, "Der Spieler hat das Spiel verlassen", (one, two), ("a", "b"), season=SEASON_2021
    )
    assert s.final_result() is s.end and (
        "Irregular end: team TWO (AI) left the game (disconnected)." in s.end_texts().lines
    )
    why = "The connection ended before a result: reset"
    s.end = Aborted("Game aborted", why)
    assert s.final_result() is None and s.ended
    assert (s.end_texts().title, s.end_texts().lines) == ("Game aborted", (why,))


@pytest.mark.parametrize("season_name", ["2021", "2027"])
@pytest.mark.parametrize("cause_name", ["SOFT_TIMEOUT", "HARD_TIMEOUT"])
def test_a_timeout_end_gives_one_cause(season_name, cause_name):
    """2027's hard timeout reason names the soft limit ("… within 2 seconds …" after 10 s) and a player name of the
    server's ("ONE"): the end text gives the cause once, not a second, contradicting time (issue 64)."""
    from blokus.model.result import Cause, end_texts, irregular_result
    from blokus.model.season import season_named

    season = season_named(season_name)
    cause = Cause(cause_name)
    reason = season.irregular_reason(cause_name, "ONE")
    result = irregular_result(Team.ONE, cause, reason, (0, 0), ("", ""), season)
    state = GameState.new(season, Shape[season.start_pieces[0]])
    text = "\n".join(end_texts(result, state, NAMES).lines)
    seconds = (season.soft_timeout_ms if cause is Cause.SOFT_TIMEOUT else season.hard_timeout_ms) // 1000
    assert f"did not move within {seconds} seconds" in text
    assert "Reason" not in text and "sent no move" not in text and "longer than" not in text
