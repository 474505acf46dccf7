"""A 2027 room ends every irregular game with the 27.x reason texts (sdk ``Violation.kt``,
docs/spec/season-2027.md §3.6).

The texts are DERIVED forms (no verbatim 2027 capture of an irregular end exists; the rule-violation layout
is the one of ``sc2027/test-27.0.4-sdk-gameresult-rule-violation-TWO.xml``). Each result is read back from
the XML the room sent, as a client would.
"""

from __future__ import annotations

import asyncio

from blokus.model import convert
from blokus.model.moves import SetMove
from blokus.model.pieces import Color, Rotation, Shape, Team
from blokus.model.result import Cause, GameResult
from blokus.model.season import SEASON_2027
from blokus.net.rooms import Room, RoomSeat, Timeouts
from blokus.net.wire import SeasonWire
from tests.helpers import Recorder

BORDER_MOVE = SetMove(Color.BLUE, Shape.PENTO_L, Rotation.NONE, False, 6, 0)  # legal: on the border
INNER_MOVE = SetMove(Color.BLUE, Shape.PENTO_L, Rotation.NONE, False, 6, 6)  # off the border


def _room(timeouts: Timeouts, clock=None) -> tuple[Room, Recorder]:
    alice, bob = Recorder("alice"), Recorder("bob")
    kwargs = {} if clock is None else {"clock": clock}
    room = Room(
        SeasonWire(SEASON_2027),
        prepared=True,
        start_piece=Shape.PENTO_L,
        timeouts=timeouts,
        slots=[RoomSeat(Team.ONE, "alice"), RoomSeat(Team.TWO, "bob")],
        **kwargs,
    )
    room.add_player(alice, room.slots[0])
    room.add_player(bob, room.slots[1])
    return room, bob


def _result_sent(to: Recorder) -> GameResult:
    xml = next(x for x in reversed(to.sent) if 'class="result"' in x)
    assert 'fragment name="Siegpunkte"' in xml and "<scores>" in xml and 'regular="false"' in xml
    return convert.result_from_message(convert.parse_xml(xml))


def _check(result: GameResult, cause: Cause, reason: str) -> None:
    assert (result.winner, result.regular, result.cause, result.offender) == (Team.TWO, False, cause, Team.ONE)
    assert result.player(Team.ONE).parts == (0, 0)  # a 2027 violator scores 0 in every part
    assert result.reason == reason


async def test_a_hard_timeout_has_the_27_text():
    room, bob = _room(Timeouts(soft=None, hard=0.0))  # the real timer, fired on the next loop turns
    for _ in range(1000):
        if room.finished:
            break
        await asyncio.sleep(0)
    # 27.x divides the soft limit here: the text really says 2 seconds (docs/spec/season-2027.md §3.6)
    _check(
        _result_sent(bob),
        Cause.HARD_TIMEOUT,
        "alice hat innerhalb von 2 Sekunden nach Aufforderung keinen Zug gesendet.",
    )


def test_a_soft_timeout_has_the_27_text():
    now = [100.0]
    room, bob = _room(Timeouts(soft=2.0, hard=None), clock=lambda: now[0])
    room.on_move(room.slots[0].peer, BORDER_MOVE, at=now[0] + 2.5)
    _check(
        _result_sent(bob),
        Cause.SOFT_TIMEOUT,
        "alice hat fuer die Antwort auf die Zugaufforderung laenger als 2 Sekunden gebraucht.",
    )


def test_a_rule_violation_has_the_27_text():
    room, bob = _room(Timeouts(soft=None, hard=None))
    room.on_move(room.slots[0].peer, INNER_MOVE)
    _check(
        _result_sent(bob),
        Cause.RULE_VIOLATION,
        "Regelverletzung von alice: Der erste Zug muss an den Rand gesetzt werden bei 'Setze PENTO_L(Farbe Blau)[6,6]'",
    )
