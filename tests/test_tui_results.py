"""End-of-game texts for every kind of result (fixtures of the official 21.3.3 server)."""

from __future__ import annotations

import pytest

from model.convert import parse_xml, result_from_message
from model.moves import SetMove
from model.pieces import Color, Shape, Team
from model.state import GameState
from tests.conftest import fixture_path
from tui.replays import result_texts

NAMES = {Team.ONE: "alice", Team.TWO: "bob"}


def _state_after(plies: int) -> GameState:
    st = GameState.new(Shape.PENTO_L)
    for _ in range(plies):
        st.play(st.legal_moves()[0])
    return st


@pytest.mark.parametrize("name, title, expected", [
    ("rule-violation-DUPLICATE_SHAPE", "team ONE (alice) wins",
     ["team TWO (bob, YELLOW to move) broke a rule", "DUPLICATE_SHAPE: this piece has already been placed"]),
    ("rule-violation-OBSTRUCTED", "team TWO (bob) wins",
     ["team ONE (alice) broke a rule", "OBSTRUCTED: the piece would cover a field that is already taken "
      "(move 'Setze PENTO_I(Farbe Rot)[19,17]')"]),
    ("soft-timeout", "team ONE (alice) wins", ["did not move within 2 seconds (soft timeout)",
                                               "Server: Der Spieler hat innerhalb von 2 Sekunden"]),
    ("hard-timeout", "team ONE (alice) wins", ["did not move within 10 seconds (hard timeout)"]),
    ("left", "team ONE (alice) wins", ["team TWO (bob, YELLOW to move) left the game"]),
    ("example-draw", "draw", ["Score: ONE (BLUE+RED) ",
                              "Win points (2 win, 1 draw): ONE 1 : 1 TWO"]),
])
def test_result_texts(name, title, expected):
    result = result_from_message(parse_xml(fixture_path(f"sc2021/gen-21.3.3-s2c-result-{name}.xml").read_bytes()))
    got_title, lines = result_texts(result, _state_after(5), NAMES)
    assert got_title == f"Game over — {title}"
    text = "\n".join(lines)
    for part in expected:
        assert part in text
    assert "Reason: Der Spieler" not in text  # a timeout or leave is said once, in English


def test_result_text_without_result_message():
    st = GameState.new(Shape.PENTO_L)
    st.play(SetMove(Color.BLUE, Shape.PENTO_L, x=0, y=0))
    title, lines = result_texts(None, st, NAMES)
    assert title == "Game not finished"
