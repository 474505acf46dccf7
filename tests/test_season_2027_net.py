"""Season 2027 over the wire: ``blokus serve --season 2027`` with bots, rooms in the 2027 dialect.

The room error, the irregular results and ``errorpacket`` are DERIVED forms (docs/spec/season-2027.md §3.5–§3.7: no
verbatim 2027 capture exists); the regular result, the move request and the mementos are checked
against captured fixtures in tests/test_season_2027.py.
"""

from __future__ import annotations

import asyncio
import re
import signal
import sys

import pytest

from blokus.cli.bot import bot_lines, parse_options
from blokus.model import convert
from blokus.model import messages as M
from blokus.model.moves import SetMove
from blokus.model.pieces import Color, Rotation, Shape, Team
from blokus.model.replay import load_replay
from blokus.model.result import Cause
from blokus.model.season import SEASON_2021, SEASON_2027
from blokus.net import connection as connection_module
from blokus.net.bot import Bot, BotEnd
from blokus.net.connection import Closed, Connection, GameOver, MoveRequested, Prepared, StateChanged
from blokus.net.rooms import Room, RoomSeat, Timeouts
from blokus.net.wire import SeasonWire
from tests.helpers import (
    HOST,
    Recorder,
    canonical,
    fixture_path,
    play_client,
    running_server,
    spawn,
    wait_until,
)

ROOM_ID = "11111111-2222-4333-8444-555555555555"


def _room_2027() -> tuple[Room, Recorder, Recorder]:
    alice, bob = Recorder("alice"), Recorder("bob")
    room = Room(
        SeasonWire(SEASON_2027),
        room_id=ROOM_ID,
        prepared=True,
        start_piece=Shape.PENTO_L,
        timeouts=Timeouts(None, None),
        slots=[RoomSeat(Team.ONE, "alice"), RoomSeat(Team.TWO, "bob")],
    )
    room.add_player(alice, room.slots[0])
    room.add_player(bob, room.slots[1])
    return room, alice, bob


def test_a_2027_room_speaks_2027():
    room, alice, bob = _room_2027()
    assert room.state.season is SEASON_2027
    joined, welcome, memento, request = alice.sent
    assert 'class="moveRequest"' in request
    assert '<state class="state" startTeam="ONE" turn="0" startPiece="PENTO_L" round="1">' in memento
    assert "<first" not in memento and "<startTeam" not in memento
    move = SetMove(Color.BLUE, Shape.PENTO_L, Rotation.NONE, False, 6, 0)  # a border cell, no corner
    room.on_move(alice, move)
    assert '<lastMove class="sc.plugin2027.SetMove">' in bob.sent[-2] and "moveRequest" in bob.sent[-1]
    assert room.record.move_before(1) == move and room.state.turn == 1


def test_a_first_move_off_the_border_is_a_rule_violation_with_the_2027_texts():
    """DERIVED forms: the room error with ``originalMessage``, the irregular 2027 result."""
    room, alice, bob = _room_2027()
    move = SetMove(Color.BLUE, Shape.PENTO_L, Rotation.NONE, False, 6, 6)
    room.on_move(alice, move)
    error, result, left = alice.sent[-3:]
    assert "Der erste Zug muss an den Rand gesetzt werden" in error
    assert '<originalMessage class="sc.plugin2027.SetMove">' in error and "originalRequest" not in error
    assert not any('data class="error"' in x for x in bob.sent)  # the opponent gets no error
    read = convert.result_from_message(convert.parse_xml(result))
    assert (read.winner, read.regular, read.cause, read.offender) == (Team.TWO, False, Cause.RULE_VIOLATION, Team.ONE)
    assert read.player(Team.ONE).parts == (0, 0) and read.player(Team.TWO).victory_points == 2
    assert read.reason == (
        "Regelverletzung von alice: Der erste Zug muss an den Rand gesetzt werden bei 'Setze PENTO_L(Farbe Blau)[6,6]'"
    )
    assert 'name="alice"' in result and "<scores>" in result and 'fragment name="Siegpunkte"' in result
    assert left.startswith("<left")


def test_a_move_that_was_not_requested_is_a_process_violation_in_2027():
    room, alice, bob = _room_2027()
    room.on_move(bob, SetMove(Color.YELLOW, Shape.PENTO_L, Rotation.NONE, False, 6, 0))
    result = convert.result_from_message(convert.parse_xml(bob.sent[-2]))
    assert (result.cause, result.offender, result.winner) == (Cause.PROCESS_VIOLATION, Team.TWO, Team.ONE)
    assert result.reason.startswith("Missachtung des Spielablaufs von bob")


async def test_a_2021_class_on_a_2027_server_is_dropped_and_loses():
    async with running_server(season=SEASON_2027, start_piece=Shape.PENTO_L) as server:
        first = Connection(HOST, server.port, season=SEASON_2027)
        await first.open()
        good = asyncio.create_task(play_client(server.port, seed=1, connection=first))
        await wait_until(lambda: server.lobby.rooms)
        # asks for 2021 and gets the open room (its type is not checked)
        conn = Connection(HOST, server.port, season=SEASON_2021)
        await conn.open()
        await conn.join()
        events = []
        async for event in conn:
            events.append(event)
            if isinstance(event, MoveRequested):
                assert conn.season is SEASON_2027 and event.state.season is SEASON_2027
                move = SetMove(
                    event.state.color,
                    Shape.PENTO_L,
                    Rotation.NONE,
                    False,
                    6,
                    0 if event.state.color is Color.BLUE else 19,
                )
                await conn.send_message(convert.move_to_message(move, conn.room_id, SEASON_2021))
        assert isinstance(events[-1], Closed)
        log = await asyncio.wait_for(good, 20)
        assert log.result is not None and log.result.cause is Cause.LEFT and not log.result.regular
        assert log.result.reason.endswith("hat das Spiel verlassen: LOST_CONNECTION")


async def test_unknown_reservation_is_an_errorpacket_in_2027():
    """DERIVED: ``<errorpacket message><originalRequest class="joinPrepared" .../></errorpacket>``."""
    async with running_server(season=SEASON_2027) as server:
        conn = Connection(HOST, server.port, season=SEASON_2027)
        await conn.open()
        raw: list[str] = []
        conn.on_traffic = lambda direction, text: raw.append(text) if direction == "in" else None
        await conn.join(reservation="wrong")
        while True:
            event = await asyncio.wait_for(conn.next_event(), 10)
            if type(event).__name__ == "ServerError":
                break
        assert any(r.startswith("<errorpacket") and 'reservationCode="wrong"' in r for r in raw)
        await conn.close()


@pytest.mark.slow  # a whole game end to end
async def test_serve_2027_two_bots_one_by_reservation_play_a_regular_game(tmp_path):
    server = await spawn(
        sys.executable,
        "-m",
        "blokus",
        "serve",
        "--season",
        "2027",
        "-p",
        "0",
        "--seed",
        "5",
        "--password",
        "pw",
        "--save-replay",
        str(tmp_path),
    )
    try:
        banner = (await asyncio.wait_for(server.stdout.readline(), 30)).decode()
        match = re.search(r"listening on 127\.0\.0\.1:(\d+) \(swc_2027_blokus", banner)
        assert match, banner
        port = match.group(1)
        admin = Connection(HOST, int(port), season=SEASON_2021)
        await admin.open()
        await admin.send_message(M.Authenticate(password="pw"))
        await admin.send_message(
            M.Prepare(
                game_type=SEASON_2027.game_type,
                pause=False,
                slots=[M.Slot(display_name="alice", reserved=True), M.Slot(display_name="bob", reserved=False)],
            )
        )
        prepared = None
        while prepared is None:
            event = await asyncio.wait_for(admin.next_event(), 10)
            if isinstance(event, Prepared):
                prepared = event
        await admin.close()
        bot_args = ["-p", port, "--ai", "random", "--move-time", "50", "-v"]
        assert len(prepared.reservations) == 1  # seat TWO is not reserved: it is for joinRoom
        # seat ONE by reservation, without --season (the season comes from the stream)
        one = await spawn(
            sys.executable,
            "-m",
            "blokus",
            "bot",
            *bot_args,
            "-r",
            prepared.reservations[0],
            "--log",
            str(tmp_path / "one.log"),
        )
        two = await spawn(
            sys.executable,
            "-m",
            "blokus",
            "bot",
            *bot_args,
            "--room",
            prepared.room_id,
            "--season",
            "2027",
            "--save-replay",
            str(tmp_path / "bot"),
        )
        (out1, err1), (out2, err2) = await asyncio.wait_for(asyncio.gather(one.communicate(), two.communicate()), 90)
        assert one.returncode == 0, err1.decode()
        assert two.returncode == 0, err2.decode()
        line = out1.decode().strip()
        assert line.startswith("blokus bot: ONE (alice) [us]") and "cause REGULAR" in line, line
        assert "(fallback-" not in err1.decode() + err2.decode()
        game_line = (await asyncio.wait_for(server.stdout.readline(), 30)).decode()
        assert "REGULAR" in game_line and "alice (ONE) vs bob (TWO)" in game_line
        log_text = (tmp_path / "one.log").read_text()
        assert "sc.plugin2027.SetMove" in log_text and "sc.plugin2021" not in log_text
        assert 'class="moveRequest"' in log_text and ">> <close/>" in log_text  # 2027 clients say goodbye
    finally:
        if server.returncode is None:
            server.send_signal(signal.SIGTERM)
        await asyncio.wait_for(server.communicate(), 30)
    (path,) = tmp_path.glob("replay_swc_2027_blokus_*.xml")  # (beside it, the moves' records)
    replay = load_replay(path)
    assert replay.detected is SEASON_2027 and all(s.season is SEASON_2027 for s in replay.states)
    final = replay.states[-1]
    assert final.is_over and final.turn <= 96 and not replay.warnings
    result = replay.result
    assert result.regular and result.names == ("alice", "bob")
    assert (result.points(Team.ONE), result.points(Team.TWO)) == (
        final.team_points(Team.ONE),
        final.team_points(Team.TWO),
    )
    assert 'fragment name="Siegpunkte"' in path.read_text()
    (bot_replay,) = (tmp_path / "bot").glob("*.xml")
    # the server and the bot name their files alike: season, time, both players' names
    pattern = r"replay_swc_2027_blokus_\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d_alice_bob\.xml"
    assert re.fullmatch(pattern, bot_replay.name) and re.fullmatch(pattern, path.name), (bot_replay, path)
    assert load_replay(bot_replay).states == replay.states


async def test_connection_learns_the_season_before_the_first_request():
    async with running_server(season=SEASON_2027, start_piece=Shape.PENTO_X) as server:
        first = Connection(HOST, server.port, season=SEASON_2027)
        await first.open()
        one = asyncio.create_task(play_client(server.port, seed=1, connection=first))
        await wait_until(lambda: server.lobby.rooms)
        # the second asks for 2021 (play_client's season), joins the open room, learns 2027 from the stream
        logs = await asyncio.wait_for(asyncio.gather(one, play_client(server.port, seed=2)), 60)
        for log in logs:
            states = [e.state for e in log.of(StateChanged)]
            assert states and all(s.season is SEASON_2027 for s in states)
            assert all(e.state.season is SEASON_2027 for e in log.of(MoveRequested))
            over = log.of(GameOver)[-1].result
            assert over.regular and over.fragments == SEASON_2027.result_fragments
            assert over.names == ("", "")  # joined with <join>: no names, the reason uses the team
            assert over.reason in (
                "ONE hat am meisten Punkte erzielt.",
                "TWO hat am meisten Punkte erzielt.",
                "Beide Spieler sind gleichauf",
            )


async def test_a_2027_server_drops_a_2021_join_that_would_open_a_room():
    async with running_server(season=SEASON_2027) as server:
        conn = Connection(HOST, server.port, season=SEASON_2021)  # joins swc_2021_blokus
        await conn.open()
        await conn.join()
        events = []
        async for event in conn:
            events.append(event)
        assert isinstance(events[-1], Closed) and not server.lobby.rooms
        ok = Connection(HOST, server.port, season=SEASON_2027)
        await ok.open()
        await ok.join()
        await wait_until(lambda: server.lobby.rooms)
        await ok.close()


def test_observers_of_a_2027_room_see_pauses():

    room, alice, bob = _room_2027()
    watcher = Recorder("admin")
    room.add_observer(watcher)
    room.set_paused(True)
    room.set_paused(False)
    paused, resumed = watcher.sent[-2:]
    fixture = fixture_path("sc2027/test-27.0.4-sdk-room-paused.xml").read_text().replace("12345", ROOM_ID)
    assert canonical(resumed) == canonical(fixture) and 'paused="true"' in paused
    assert not any("paused" in x for x in alice.sent)


def test_serve_options_of_2027():
    from blokus.cli.serve import build_parser, config_from_args

    config = config_from_args(build_parser().parse_args(["--season", "2027", "--start-piece", "PENTO_X"]))
    assert config.season is SEASON_2027 and config.start_piece is Shape.PENTO_X
    assert (config.timeouts.soft, config.timeouts.hard) == (2.0, 10.0)


@pytest.mark.parametrize("default", [SEASON_2027, SEASON_2021])
async def test_plain_bots_without_a_season_find_their_game_on_a_2027_server(caplog, monkeypatch, default):
    """A plain join asks for the default season's game type: 2027's joins a 27.x server at once. A 27.x server
    drops a 2021 join that would open a room (the default of old, and what another season's server could do);
    a bot that was not told the season then joins again with the 2027 game type, and the second bot joins the
    room the first one opened."""
    monkeypatch.setattr(connection_module, "DEFAULT_SEASON", default)  # what a Connection without a season asks
    retried = default is not SEASON_2027
    async with running_server(season=SEASON_2027, start_piece=Shape.PENTO_X) as server:
        bots = [
            Bot(
                parse_options(
                    [
                        "-h",
                        HOST,
                        "-p",
                        str(server.port),
                        "--ai",
                        "random",
                        "--move-time",
                        "20",
                        "--engine",
                        "thread",
                        "--seed",
                        str(seed),
                    ]
                ),
                lines=bot_lines(),
            )
            for seed in (1, 2)
        ]
        first = asyncio.create_task(bots[0].run())
        await wait_until(lambda: server.lobby.rooms)
        codes = await asyncio.wait_for(asyncio.gather(first, bots[1].run()), 60)
    assert codes == [BotEnd.PLAYED, BotEnd.PLAYED], caplog.text
    # a 2021 join: the first bot was dropped once and asked again for 2027; the second joined the open room at once
    assert caplog.text.count("trying season 2027") == int(retried)
    assert bots[0].conn.requested_season is (SEASON_2027 if retried else None)
    assert bots[1].conn.requested_season is None
    for bot in bots:
        assert bot.conn.season is SEASON_2027 and bot.result is not None and bot.result.regular
        assert bot.moves > 0 and all(s.season is SEASON_2027 for s in bot.record.states)
    # players without a display name (2027 writes none for <join/>) are named in the log by their connection
    (record,) = server.records
    assert record.names == ("", "") and all(re.fullmatch(r"127\.0\.0\.1:\d+", p) for p in record.peers)
    assert f" {record.peers[0]} (ONE) vs {record.peers[1]} (TWO): " in record.summary()
