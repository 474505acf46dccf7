"""What the server's rooms send is byte-for-byte the official 21.3.3 serialization (gen-21.3.3 fixtures)."""

from __future__ import annotations

import pytest

from blokus.model import messages as M
from blokus.model.moves import MoveMistake, SetMove
from blokus.model.pieces import Color, Rotation, Shape, Team
from blokus.model.season import SEASON_2021
from blokus.net.rooms import Cause, Room, RoomSeat
from blokus.net.wire import SeasonWire
from tests.helpers import Recorder, fixture_path

wire = SeasonWire(SEASON_2021)  # the 2021 season's forms

# 21.3.3's fixed reasons (docs/spec/rules.md §12), as the gen-21.3.3 result fixtures carry them
REASON_SOFT_TIMEOUT = "Der Spieler hat innerhalb von 2 Sekunden nach Aufforderung keinen Zug gesendet"
REASON_HARD_TIMEOUT = "Der Spieler hat innerhalb von 10 Sekunden nach Aufforderung keinen Zug gesendet"
REASON_LEFT = "Der Spieler hat das Spiel verlassen"

ROOM_ID = "11111111-2222-4333-8444-555555555555"
OBSTRUCTING = SetMove(Color.RED, Shape.PENTO_I, Rotation.NONE, False, 19, 17)


def _room(points: tuple[int, int]) -> tuple[Room, Recorder, Recorder]:
    alice, bob = Recorder("alice"), Recorder("bob")
    room = Room(
        wire,
        room_id=ROOM_ID,
        prepared=True,
        slots=[RoomSeat(Team.ONE, "alice", peer=alice), RoomSeat(Team.TWO, "bob", peer=bob)],
    )
    room._points = lambda: points  # the points of the fixtures' short openings
    return room, alice, bob


def _fixture(name: str) -> str:
    return fixture_path(f"sc2021/{name}").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "fixture,offender,cause,reason,points",
    [
        ("gen-21.3.3-s2c-result-left.xml", Team.TWO, Cause.LEFT, REASON_LEFT, (15, 10)),
        ("gen-21.3.3-s2c-result-soft-timeout.xml", Team.TWO, Cause.SOFT_TIMEOUT, REASON_SOFT_TIMEOUT, (15, 10)),
        ("gen-21.3.3-s2c-result-hard-timeout.xml", Team.TWO, Cause.HARD_TIMEOUT, REASON_HARD_TIMEOUT, (15, 10)),
        (
            "gen-21.3.3-s2c-result-rule-violation-OBSTRUCTED.xml",
            Team.ONE,
            Cause.RULE_VIOLATION,
            SEASON_2021.violation_text(MoveMistake.OBSTRUCTED, OBSTRUCTING),
            (15, 15),
        ),
        (
            "gen-21.3.3-s2c-result-rule-violation-DUPLICATE_SHAPE.xml",
            Team.TWO,
            Cause.RULE_VIOLATION,
            SEASON_2021.violation_text(MoveMistake.DUPLICATE_SHAPE, None),
            (15, 10),
        ),
    ],
)
def test_irregular_results_are_the_official_bytes(fixture, offender, cause, reason, points):
    room, alice, bob = _room(points)
    room._end_irregular(offender, cause, reason)
    result, left = alice.sent
    assert result + "\n" == _fixture(fixture)
    assert left + "\n" == _fixture("gen-21.3.3-s2c-left.xml").replace("cb3bc426-5c70-48b9-9307-943bc328b503", ROOM_ID)
    assert bob.sent == alice.sent


@pytest.mark.parametrize(
    "fixture,team,move,mistake",
    [
        ("gen-21.3.3-s2c-error-invalid-move-OBSTRUCTED.xml", Team.ONE, OBSTRUCTING, MoveMistake.OBSTRUCTED),
        (
            "gen-21.3.3-s2c-error-invalid-move-DUPLICATE_SHAPE.xml",
            Team.TWO,
            SetMove(Color.YELLOW, Shape.MONO, Rotation.NONE, False, 0, 0),
            MoveMistake.DUPLICATE_SHAPE,
        ),
    ],
)
def test_invalid_move_error_is_the_official_bytes(fixture, team, move, mistake):
    room, alice, bob = _room((15, 15) if team is Team.ONE else (15, 10))
    violator = (alice, bob)[team]
    room._rule_violation(room.slots[team], move, mistake)
    assert violator.sent[0] + "\n" == _fixture(fixture)
    assert violator.closed
    other = (alice, bob)[1 - team]
    assert not other.closed and len(other.sent) == 2  # result and left, no error


def test_regular_result_and_other_messages():
    room, alice, _ = _room((64, 51))
    room._finish(room._regular_result())
    text = _fixture("gen-21.3.3-s2c-result-example-win.xml").replace("cb3bc426-5c70-48b9-9307-943bc328b503", ROOM_ID)
    assert alice.sent[0] + "\n" == text.replace('displayName="One"', 'displayName="alice"')
    room, alice, _ = _room((10, 10))
    room._finish(room._regular_result())
    draw = _fixture("gen-21.3.3-s2c-result-example-draw.xml").replace("cb3bc426-5c70-48b9-9307-943bc328b503", ROOM_ID)
    assert alice.sent[0] + "\n" == draw.replace('"One"', '"alice"').replace('"Two"', '"bob"')
    rid = "cb3bc426-5c70-48b9-9307-943bc328b503"
    for name, xml in [
        ("joined", wire.joined(rid)),
        ("moverequest", wire.move_request(rid)),
        ("welcomeMessage-ONE", wire.welcome(rid, Team.ONE)),
        ("welcomeMessage-TWO", wire.welcome(rid, Team.TWO)),
    ]:
        assert xml + "\n" == _fixture(f"gen-21.3.3-s2c-{name}.xml")
    assert wire.prepared(rid, ["RC1", "RC2"]) + "\n" == _fixture("gen-21.3.3-admin-prepared.xml")
    assert wire.observed(rid) + "\n" == _fixture("gen-21.3.3-admin-observed.xml")
    assert wire.lobby_error(
        "Couldn't find a reservation for the provided token.",
        M.OriginalRequest(cls="joinPrepared", reservation_code="wrong"),
    ) + "\n" == _fixture("gen-21.3.3-s2c-error-lobby-example.xml")
    assert wire.close() + "\n" == _fixture("gen-21.3.3-both-closeconnection.xml")


def _normalized(element) -> str:
    from lxml import etree

    for el in element.iter():
        el.tail = None
        if el.text is not None and not el.text.strip():
            el.text = None
    return etree.tostring(element, encoding="unicode")


async def test_a_whole_game_reproduces_the_official_stream_to_player_one():
    """Official game 1 played through a room: player ONE receives exactly the 97 messages of the
    recorded 21.3.3 stream (joined, welcome, 62 mementos, 31 move requests, result, left)."""
    from blokus.model.framing import parse_document, parse_stream
    from blokus.model.moves import parse_move
    from blokus.net.rooms import Timeouts

    expected = parse_stream(fixture_path("sc2021/gen-21.3.3-game1-wire-stream-to-player-one.xml").read_bytes())
    alice, bob = Recorder("alice"), Recorder("bob")
    room = Room(
        wire,
        room_id="00000000-0000-4000-8000-000000000000",
        start_piece=Shape.PENTO_L,
        timeouts=Timeouts(None, None),
        slots=[RoomSeat(Team.ONE, "alice"), RoomSeat(Team.TWO, "bob")],
    )
    room.add_player(alice, room.slots[0])
    room.add_player(bob, room.slots[1])
    for line in fixture_path("sc2021/gen-21.3.3-game1-moves.tsv").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        move = parse_move(line.split("\t")[5].replace(",", " "))
        room.on_move((alice, bob)[move.color.team], move)
    assert room.finished and room.result.scores[0].parts == (2, 122)
    got = [_normalized(parse_document(x.encode("utf-8"))) for x in alice.sent]
    want = [_normalized(e) for e in expected.messages]
    assert len(got) == len(want) == 97
    for index, (a, b) in enumerate(zip(got, want, strict=True)):
        assert a == b, f"message {index} differs"
