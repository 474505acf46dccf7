"""What the server's rooms send is byte-for-byte the official 21.3.3 serialization (gen-21.3.3 fixtures)."""

from __future__ import annotations

import pytest

from model.moves import MoveMistake, SetMove
from model.pieces import Color, Rotation, Shape, Team
from net import wire
from net.rooms import REASON_HARD_TIMEOUT, REASON_LEFT, REASON_SOFT_TIMEOUT, Cause, Room, Slot
from tests.conftest import fixture_path

ROOM_ID = "11111111-2222-4333-8444-555555555555"
OBSTRUCTING = SetMove(Color.RED, Shape.PENTO_I, Rotation.NONE, False, 19, 17)


class Recorder:
    def __init__(self, name: str) -> None:
        self.name = name
        self.sent: list[str] = []
        self.closed = False

    def send(self, xml: str) -> None:
        self.sent.append(xml)

    def close(self, reason: str = "") -> None:
        self.closed = True


def _room(points: tuple[int, int]) -> tuple[Room, Recorder, Recorder]:
    alice, bob = Recorder("alice"), Recorder("bob")
    room = Room(wire, room_id=ROOM_ID, prepared=True,
                slots=[Slot(Team.ONE, "alice", peer=alice), Slot(Team.TWO, "bob", peer=bob)])
    room._points = lambda: points  # the points of the fixtures' short openings
    return room, alice, bob


def _fixture(name: str) -> str:
    return fixture_path(f"sc2021/{name}").read_text(encoding="utf-8")


@pytest.mark.parametrize("fixture,offender,cause,reason,points", [
    ("gen-21.3.3-s2c-result-left.xml", Team.TWO, Cause.LEFT, REASON_LEFT, (15, 10)),
    ("gen-21.3.3-s2c-result-soft-timeout.xml", Team.TWO, Cause.SOFT_TIMEOUT, REASON_SOFT_TIMEOUT, (15, 10)),
    ("gen-21.3.3-s2c-result-hard-timeout.xml", Team.TWO, Cause.HARD_TIMEOUT, REASON_HARD_TIMEOUT, (15, 10)),
    ("gen-21.3.3-s2c-result-rule-violation-OBSTRUCTED.xml", Team.ONE, Cause.RULE_VIOLATION,
     MoveMistake.OBSTRUCTED.violation_text(OBSTRUCTING), (15, 15)),
    ("gen-21.3.3-s2c-result-rule-violation-DUPLICATE_SHAPE.xml", Team.TWO, Cause.RULE_VIOLATION,
     MoveMistake.DUPLICATE_SHAPE.violation_text(None), (15, 10)),
])
def test_irregular_results_are_the_official_bytes(fixture, offender, cause, reason, points):
    room, alice, bob = _room(points)
    room._end_irregular(offender, cause, reason)
    result, left = alice.sent
    assert result + "\n" == _fixture(fixture)
    assert left + "\n" == _fixture("gen-21.3.3-s2c-left.xml").replace(
        "cb3bc426-5c70-48b9-9307-943bc328b503", ROOM_ID)
    assert bob.sent == alice.sent


@pytest.mark.parametrize("fixture,team,move,mistake", [
    ("gen-21.3.3-s2c-error-invalid-move-OBSTRUCTED.xml", Team.ONE, OBSTRUCTING, MoveMistake.OBSTRUCTED),
    ("gen-21.3.3-s2c-error-invalid-move-DUPLICATE_SHAPE.xml", Team.TWO,
     SetMove(Color.YELLOW, Shape.MONO, Rotation.NONE, False, 0, 0), MoveMistake.DUPLICATE_SHAPE),
])
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
    draw = _fixture("gen-21.3.3-s2c-result-example-draw.xml").replace(
        "cb3bc426-5c70-48b9-9307-943bc328b503", ROOM_ID)
    assert alice.sent[0] + "\n" == draw.replace('"One"', '"alice"').replace('"Two"', '"bob"')
    rid = "cb3bc426-5c70-48b9-9307-943bc328b503"
    for name, xml in [("joined", wire.joined(rid)), ("moverequest", wire.move_request(rid)),
                      ("welcomeMessage-ONE", wire.welcome(rid, Team.ONE)),
                      ("welcomeMessage-TWO", wire.welcome(rid, Team.TWO))]:
        assert xml + "\n" == _fixture(f"gen-21.3.3-s2c-{name}.xml")
    assert wire.prepared(rid, ["RC1", "RC2"]) + "\n" == _fixture("gen-21.3.3-admin-prepared.xml")
    assert wire.observed(rid) + "\n" == _fixture("gen-21.3.3-admin-observed.xml")
    assert wire.lobby_error("Couldn't find a reservation for the provided token.",
                            wire.M.OriginalRequest(cls="joinPrepared", reservation_code="wrong")) + "\n" == \
        _fixture("gen-21.3.3-s2c-error-lobby-example.xml")
    assert wire.close() + "\n" == _fixture("gen-21.3.3-both-closeconnection.xml")
