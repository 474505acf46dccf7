"""The official server's texts in English (issue 45 point 1): the fixtures' real texts, our own server's
texts of both seasons, unknown texts verbatim, and every place that shows them."""

from __future__ import annotations

import html
import re

import pytest

from blokus.model.moves import MoveMistake, SetMove, SkipMove
from blokus.model.pieces import Color, Rotation, Shape, Team
from blokus.model.result import Cause, end_texts, irregular_result
from blokus.model.season import SEASON_2021, SEASON_2027, SEASONS
from blokus.model.server_texts import UNKNOWN_PREFIX, english, english_move, shown
from tests.helpers import fixture_path

GERMAN = re.compile(r"Spieler|Setze|Farbe|Zug|verlassen|Sekunden|Stein|Regelverletzung|Ungueltig|überlagern")


def _attributes(name: str, attribute: str) -> list[str]:
    text = fixture_path(name).read_text(encoding="utf-8")
    return [html.unescape(v) for v in re.findall(rf'{attribute}="([^"]*)"', text)]


@pytest.mark.parametrize(
    "fixture, expected",
    [
        (
            "sc2021/gen-21.3.3-s2c-error-invalid-move-OBSTRUCTED.xml",
            "invalid move by alice: OBSTRUCTED: the piece would cover a field that is already taken "
            "(move RED PENTO_I @ (19,17))",
        ),
        (
            "sc2021/gen-21.3.3-s2c-error-invalid-move-DUPLICATE_SHAPE.xml",
            "invalid move by bob: DUPLICATE_SHAPE: this piece has already been placed",
        ),
        ("sc2021/gen-21.3.3-s2c-error-lobby-example.xml", "the server knows no reservation with this code"),
    ],
)
def test_the_error_messages_of_the_fixtures_in_english(fixture, expected):
    (message,) = _attributes(fixture, "message")
    assert shown(message, SEASON_2021) == expected


@pytest.mark.parametrize(
    "fixture, expected",
    [
        ("sc2021/gen-21.3.3-s2c-result-left.xml", "the player left the game"),
        ("sc2021/gen-21.3.3-s2c-result-soft-timeout.xml", "the player sent no move within 2 seconds of the request"),
        ("sc2021/gen-21.3.3-s2c-result-hard-timeout.xml", "the player sent no move within 10 seconds of the request"),
        (
            "sc2021/gen-21.3.3-s2c-result-rule-violation-OBSTRUCTED.xml",
            "OBSTRUCTED: the piece would cover a field that is already taken (move RED PENTO_I @ (19,17))",
        ),
        ("sc2027/docs-27-xml-s2c-result-ONE-wins-137-74.xml", "Spieler 1 scored the most points"),
        ("sc2027/docs-27-xml-s2c-result-tie-winner-element.xml", "both players have the same points"),
    ],
)
def test_the_result_reasons_of_the_fixtures_in_english(fixture, expected):
    reasons = [r for r in _attributes(fixture, "reason") if r]
    assert expected in [shown(r) for r in reasons]


def test_a_violation_names_its_rule_with_every_field():
    move = SetMove(Color.YELLOW, Shape.PENTO_S, Rotation.LEFT, True, 10, 3)
    for season in SEASONS.values():
        text = season.violation_text(MoveMistake.NO_SHARED_CORNER, move)
        assert english(text, season) == (
            "NO_SHARED_CORNER: the piece must touch a piece of its own colour at a corner "
            "(move YELLOW PENTO_S 270° flipped @ (10,3))"
        )
        error = season.invalid_move_error("alice", MoveMistake.OBSTRUCTED, SkipMove(Color.RED))
        assert english(error, season) == (
            "invalid move by alice: OBSTRUCTED: the piece would cover a field that is already taken (move RED passed)"
        )


@pytest.mark.parametrize("season", list(SEASONS.values()), ids=lambda s: s.name)
@pytest.mark.parametrize("mistake", list(MoveMistake), ids=lambda m: m.name)
def test_every_mistake_of_both_seasons_is_known(season, mistake):
    move = SetMove(Color.RED, Shape.TRIO_L, Rotation.RIGHT, False, 4, 5)
    reason = season.irregular_reason("RULE_VIOLATION", "bob", season.violation_text(mistake, move))
    told = english(reason, season)
    assert told is not None and mistake.english in told and not GERMAN.search(told)
    assert ("RED TRIO_L 90° @ (4,5)" in told) is mistake.carries_move


@pytest.mark.parametrize("season", list(SEASONS.values()), ids=lambda s: s.name)
@pytest.mark.parametrize("cause", ["SOFT_TIMEOUT", "HARD_TIMEOUT", "LEFT", "PROCESS_VIOLATION"])
def test_every_irregular_reason_of_both_seasons_is_known(season, cause):
    reason = season.irregular_reason(cause, "carol", "We didn't request a move from you yet.")
    told = english(reason, season)
    assert told is not None and not GERMAN.search(told), (reason, told)
    if "{player}" in dict(season.irregular_reasons).get(cause, ""):
        assert told.startswith("carol ")


def test_details_and_english_texts():
    assert shown("alice hat das Spiel verlassen: PROTOCOL_ERROR") == (
        "alice left the game: it sent a message the server could not read"
    )
    assert shown("alice hat das Spiel verlassen: SOMETHING_NEW") == "alice left the game: SOMETHING_NEW"
    unknown_reservation = (
        "sc.server.gaming.UnknownReservationException: Couldn't find a reservation for the provided token."
    )
    assert shown(unknown_reservation) == "the server knows no reservation with this code"
    turn = "It's not your turn yet; expected: ONE, got TWO (msg was SetMove)."
    assert shown(turn) == turn
    assert shown("Ungueltiger Zug von 'Unknown'.\nCan't Skip on first round; move was YELLOW skipped") == (
        "invalid move by Unknown: SKIP_FIRST_TURN: a colour's first move must place a piece; it cannot pass "
        "(move YELLOW passed)"
    )
    assert english_move("Setze PENTO_L(Farbe Rot, gedreht um 180°)[19,17]") == "RED PENTO_L 180° @ (19,17)"
    assert english_move("Setze PENTO_I(Farbe Rot, gedreht um 180°)[19,17]") == "RED PENTO_I @ (19,17)"
    assert english_move("Setze PENTO_I(Farbe Lila)[19,17]") is None


@pytest.mark.parametrize(
    "text", ["rad hat gewonnän", "Regelverletzung von rad: kalkül bei 'TestZug'", "Etwas ganz Neues", "Game over?"]
)
def test_an_unknown_text_is_shown_verbatim(text):
    assert english(text) is None
    assert shown(text) == f"{UNKNOWN_PREFIX}{text}"


def test_end_texts_and_the_summary_are_english():
    violation = SEASON_2021.violation_text(MoveMistake.NO_SHARED_CORNER, SetMove(Color.YELLOW, Shape.MONO, x=10, y=10))
    for cause, reason in [(Cause.LEFT, "Der Spieler hat das Spiel verlassen"), (Cause.RULE_VIOLATION, violation)]:
        result = irregular_result(Team.ONE, cause, reason, (10, 12), ("a", "b"), SEASON_2021)
        texts = end_texts(result, None, ("a", "b"), Team.TWO)
        for line in (texts.title, texts.short, *texts.lines, texts.summary):
            assert not GERMAN.search(line), line
    assert texts.summary.endswith(
        "cause RULE_VIOLATION by ONE: NO_SHARED_CORNER: the piece must touch a piece of its own colour at a corner "
        "(move YELLOW MONO @ (10,10))"
    )
    assert "Reason: NO_SHARED_CORNER: the piece must touch" in "\n".join(texts.lines)
    left = irregular_result(
        Team.ONE, Cause.LEFT, "Der Spieler hat das Spiel verlassen", (1, 2), ("a", "b"), season=SEASON_2021
    )
    assert end_texts(left).summary.endswith("cause LEFT by ONE: the player left the game")
    odd = irregular_result(Team.TWO, Cause.LEFT, "rad hat gewonnän", (1, 2), ("a", "b"), SEASON_2027)
    assert "Reason: server says: rad hat gewonnän" in end_texts(odd).lines
