"""The local server in-process over real TCP on 127.0.0.1 (ephemeral ports): games, admin, faults."""

from __future__ import annotations

import asyncio
import re

from blokus.ai.interface import fallback_move
from blokus.model import convert
from blokus.model import messages as M
from blokus.model.framing import parse_stream
from blokus.model.moverecords import read_records
from blokus.model.moves import MoveMistake, SetMove, SkipMove
from blokus.model.pieces import Color, Rotation, Shape, Team
from blokus.model.record import MoveEvent
from blokus.model.replay import dump_replay, read_game
from blokus.model.season import SEASON_2021
from blokus.net.connection import Closed, Connection, Joined, Left, MoveRequested, ServerError, StateChanged, Welcome
from blokus.net.rooms import Timeouts
from tests.helpers import (
    RawClient,
    admin_with_prepared_game,
    is_room,
    move_xml,
    play_client,
    raw_pair,
    running_server,
    wait_until,
)

# 21.3.3's fixed reasons (docs/spec/rules.md §12), as the gen-21.3.3 result fixtures carry them
REASON_SOFT_TIMEOUT = "Der Spieler hat innerhalb von 2 Sekunden nach Aufforderung keinen Zug gesendet"
REASON_HARD_TIMEOUT = "Der Spieler hat innerhalb von 10 Sekunden nach Aufforderung keinen Zug gesendet"
REASON_LEFT = "Der Spieler hat das Spiel verlassen"


async def test_two_clients_play_a_complete_game():
    async with running_server(start_piece=Shape.PENTO_L, seed=1) as server:
        one = asyncio.create_task(play_client(server.port, seed=1))
        await asyncio.sleep(0)  # let ONE join first
        two = asyncio.create_task(play_client(server.port, seed=2))
        log1, log2 = await asyncio.wait_for(asyncio.gather(one, two), 60)
    for log, team in ((log1, Team.ONE), (log2, Team.TWO)):
        assert log.of(Joined) and log.of(Welcome)[0].team is team
        assert log.of(Left) and not log.closed.error
        states = [e.state for e in log.of(StateChanged)]
        assert states[0].turn == 0 and states[0].start_piece is Shape.PENTO_L
        assert states[-1].is_over
        # every move request came for our team
        assert all(e.state.team is team for e in log.of(MoveRequested))
    result = log1.result
    final = log1.of(StateChanged)[-1].state
    assert [p.points for p in result.players] == [final.team_points(Team.ONE), final.team_points(Team.TWO)]
    assert result.regular and all(p.cause == "REGULAR" for p in result.players)
    assert log2.result == result
    (record,) = server.records
    assert record.result is not None and record.moves == len(log1.of(StateChanged)) - 1
    assert "REGULAR" in record.summary()


async def test_many_rooms_at_once_and_replays(tmp_path):
    # states serialized in a worker process (as `blokus serve` does by default)
    async with running_server(seed=5, replay_dir=tmp_path, encode_workers=1) as server:
        tasks = []
        for i in range(4):
            tasks.append(asyncio.create_task(play_client(server.port, seed=i)))
            await asyncio.sleep(0.01)
        logs = await asyncio.wait_for(asyncio.gather(*tasks), 60)
    assert len(server.records) == 2
    assert all(log.result is not None and not log.closed.error for log in logs)
    files = sorted(p for p in tmp_path.iterdir() if p.suffix == ".xml")
    assert len(files) == 2 and len(list(tmp_path.iterdir())) == 4
    for path in files:
        # beside each replay the moves' times as the server measured them: one record a move the game kept
        records = read_records(path)
        assert records is not None
        made = [e.turn for e in read_game(path).events if isinstance(e, MoveEvent)]
        assert [r.turn for r in records.records] == made and made
        assert all(r.source == "client" and 0 <= r.seconds < 60 for r in records.records)
        # unnamed players are their teams in the name (the pattern of every writer, model.replay)
        assert re.fullmatch(r"replay_swc_2021_blokus_\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d_ONE_TWO(_2)?\.xml", path.name)
        parsed = parse_stream(path.read_bytes())
        messages = [convert.parse_message(e) for e in parsed.messages]
        states = [convert.state_from_message(m) for m in messages[:-1]]
        assert states[0].turn == 0 and states[-1].is_over
        assert isinstance(messages[-1].data, M.ResultData)
        # the moves are the states' lastMove: replaying them reproduces every state
        game = states[0].copy()
        for state in states[1:]:
            game.play(state.last_move)
            assert game.key() == state.key()
        assert path.read_text().startswith("<protocol>\n<room ")
        # byte-identical to the project's replay writer
        room_id = messages[0].room_id
        expected = dump_replay(states, messages[-1], room_id=room_id, names=("Unknown", "Unknown"))
        assert path.read_bytes() == expected


async def test_disconnect_mid_game_is_left():
    async with running_server() as server:
        one = asyncio.create_task(play_client(server.port, seed=1, stop_after=3))
        await asyncio.sleep(0)
        two = asyncio.create_task(play_client(server.port, seed=2))
        log1, log2 = await asyncio.wait_for(asyncio.gather(one, two), 30)
    result = log2.result
    assert result.winner is Team.TWO
    leaver = result.player(Team.ONE)
    assert (leaver.cause, leaver.reason, leaver.winner_part) == ("LEFT", REASON_LEFT, 0)
    assert result.player(Team.TWO).cause == "REGULAR" and result.player(Team.TWO).winner_part == 2
    assert log2.of(Left)
    assert server.records[0].result.cause.value == "LEFT"


async def test_garbage_closes_only_that_connection_and_other_rooms_go_on():
    async with running_server() as server:
        game = asyncio.gather(play_client(server.port, seed=3), play_client(server.port, seed=4))
        await wait_until(lambda: any(r.started for r in server.lobby.rooms.values()))
        one, two, room_id, _ = await raw_pair(server)
        await one.write(b"<room roomId='x'><data class=<<<garbage>>> &&& </oops>\n")
        rest = await one.read_to_end()
        assert one.ended and any(isinstance(m, M.CloseConnection) for m in rest)
        result = await two.read_until(is_room(M.ResultData))
        res = convert.result_from_message(result)
        assert res.player(Team.ONE).cause == "LEFT" and res.winner is Team.TWO
        assert await two.read_until(lambda m: isinstance(m, M.Left))
        logs = await asyncio.wait_for(game, 60)
        assert all(log.result is not None and log.result.regular for log in logs)


async def test_illegal_move_rule_violation():
    async with running_server(start_piece=Shape.PENTO_V) as server:
        one, two, room_id, state = await raw_pair(server)
        bad = SetMove(Color.BLUE, Shape.PENTO_V, Rotation.NONE, False, 5, 5)  # not in a corner
        assert state.validate(bad) is MoveMistake.NOT_IN_CORNER
        await one.write(move_xml(bad, room_id))
        error = await one.read_until(is_room(M.ErrorData))
        assert error.data.message == (
            "Ungueltiger Zug von 'Unknown'.\nInvalidMoveException(mistake=Der erste Zug muss auf eine freie Ecke "
            "gesetzt werden, move=Setze PENTO_V(Farbe Blau)[5,5])"
        )
        assert convert.move_from_message(error.data.original) == bad
        for client in (one, two):
            res = convert.result_from_message(await client.read_until(is_room(M.ResultData)))
            violator = res.player(Team.ONE)
            assert violator.cause == "RULE_VIOLATION"
            assert violator.reason == SEASON_2021.violation_text(MoveMistake.NOT_IN_CORNER, bad)
            assert violator.parts == (0, 0) and res.player(Team.TWO).parts == (2, 0)
            assert res.winner is Team.TWO
            assert await client.read_until(lambda m: isinstance(m, M.Left))
        await one.read_to_end()
        assert one.ended  # the violator is disconnected


async def test_wrong_shape_error_has_no_original_request_and_result_matches_fixture_form():
    async with running_server(start_piece=Shape.PENTO_V) as server:
        one, two, room_id, state = await raw_pair(server)
        bad = SetMove(Color.BLUE, Shape.MONO, Rotation.NONE, False, 0, 0)
        await one.write(move_xml(bad, room_id))
        error = await one.read_until(is_room(M.ErrorData))
        assert error.data.original is None
        assert error.data.message.endswith(f"mistake={MoveMistake.WRONG_SHAPE.german}, move=null)")
        result = await two.read_until(is_room(M.ResultData))
        assert [f.name for f in result.data.definition.fragments] == ["Gewinner", "\u2205 Punkte"]
        assert [(s.cause, s.reason) for s in result.data.scores] == [
            ("RULE_VIOLATION", MoveMistake.WRONG_SHAPE.german),
            ("REGULAR", ""),
        ]
        assert [w.team for w in result.data.winners] == [Team.TWO]


async def test_skip_without_colour_is_wrong_color_and_hint_child_is_left():
    async with running_server() as server:
        one, two, room_id, _ = await raw_pair(server)
        await one.write(f'<room roomId="{room_id}"><data class="sc.plugin2021.SkipMove"/></room>')
        res = convert.result_from_message(await two.read_until(is_room(M.ResultData)))
        assert res.player(Team.ONE).cause == "RULE_VIOLATION"
        assert res.player(Team.ONE).reason == MoveMistake.WRONG_COLOR.german

        one, two, room_id, state = await raw_pair(server)
        move = fallback_move(state)
        xml = move_xml(move, room_id).replace("</data>", '<hint content="x"/></data>')
        await one.write(xml)
        res = convert.result_from_message(await two.read_until(is_room(M.ResultData)))
        assert res.player(Team.ONE).cause == "LEFT"


async def test_move_not_requested_is_answered_with_error_and_disconnect():
    async with running_server(start_piece=Shape.PENTO_V) as server:
        one, two, room_id, state = await raw_pair(server)
        await two.write(move_xml(SkipMove(Color.YELLOW), room_id))
        error = await two.read_until(is_room(M.ErrorData))
        assert error.data.message == "We didn't request a move from you yet."
        res = convert.result_from_message(await one.read_until(is_room(M.ResultData)))
        assert res.player(Team.TWO).cause == "LEFT"


async def test_late_move_is_soft_timeout_with_injected_clock():
    now = [1000.0]
    async with running_server(timeouts=Timeouts(soft=2.0, hard=None), clock=lambda: now[0]) as server:
        one, two, room_id, state = await raw_pair(server)
        now[0] += 2.5  # the answer arrives 2.5 s after the request
        await one.write(move_xml(fallback_move(state), room_id))
        res = convert.result_from_message(await two.read_until(is_room(M.ResultData)))
        late = res.player(Team.ONE)
        assert (late.cause, late.reason, late.winner_part) == ("SOFT_TIMEOUT", REASON_SOFT_TIMEOUT, 0)
        assert res.winner is Team.TWO
        # the late move was discarded: no state after it
        assert not [m for m in two.messages if is_room(M.Memento)(m) and m.data.state.turn > 0]


async def test_no_answer_is_hard_timeout():
    async with running_server(timeouts=Timeouts(soft=2.0, hard=0.05)) as server:
        one, two, room_id, _ = await raw_pair(server)
        res = convert.result_from_message(await two.read_until(is_room(M.ResultData)))
        assert (res.player(Team.ONE).cause, res.player(Team.ONE).reason) == ("HARD_TIMEOUT", REASON_HARD_TIMEOUT)
        assert await one.read_until(lambda m: isinstance(m, M.Left))


async def test_admin_prepare_observe_pause_step_and_reservations():
    async with running_server(password="secret", start_piece=Shape.PENTO_L) as server:
        admin, prepared = await admin_with_prepared_game(server.port, "secret")
        assert len(prepared.reservations) == 2
        await admin.send(M.Observe(room_id=prepared.room_id))
        assert await admin.read_until(lambda m: isinstance(m, M.Observed))

        bad = await RawClient().connect(server.port)
        await bad.write('<protocol><joinPrepared reservationCode="wrong"/>')
        err = await bad.read_until(lambda m: isinstance(m, M.LobbyError))
        assert err.message == "Couldn't find a reservation for the provided token."
        assert err.original_request.reservation_code == "wrong"

        c1, c2 = (
            Connection("127.0.0.1", server.port, season=SEASON_2021),
            Connection("127.0.0.1", server.port, season=SEASON_2021),
        )
        await c1.open()
        await c2.open()
        p1 = asyncio.create_task(play_client(server.port, reservation=prepared.reservations[0], connection=c1))
        p2 = asyncio.create_task(play_client(server.port, reservation=prepared.reservations[1], connection=c2))
        # paused: the observer sees the initial state; nobody is asked to move until step
        first = await admin.read_until(is_room(M.Memento))
        assert first.data.state.turn == 0 and first.data.state.first.display_name == "alice"
        await admin.send(M.Step(room_id=prepared.room_id))
        second = await admin.read_until(is_room(M.Memento))
        assert second.data.state.turn == 1
        await admin.send(M.Pause(room_id=prepared.room_id, pause=False))
        logs = await asyncio.wait_for(asyncio.gather(p1, p2), 60)
        res = await admin.read_until(is_room(M.ResultData))
        assert await admin.read_until(lambda m: isinstance(m, M.Left))
        assert convert.result_from_message(res).regular
        assert logs[0].result is not None and logs[0].of(Welcome)[0].team is Team.ONE
        assert logs[0].of(StateChanged)[0].names == ("alice", "bob")
        assert logs[1].of(Welcome)[0].team is Team.TWO


async def test_admin_cancel_sends_left_without_result_and_wrong_password_closes():
    async with running_server(password="secret") as server:
        intruder = await RawClient().connect(server.port)
        await intruder.write('<protocol><authenticate password="nope"/>')
        await intruder.read_to_end()
        assert intruder.ended

        admin = await RawClient().connect(server.port)
        await admin.write('<protocol><authenticate password="secret"/>')
        one, two, room_id, _ = await raw_pair(server)
        await admin.send(M.Cancel(room_id=room_id))
        for client in (one, two):
            assert await client.read_until(lambda m: isinstance(m, M.Left))
            assert not [m for m in client.messages if is_room(M.ResultData)(m)]
        assert server.records[-1].cancelled


async def test_join_room_by_id_and_error_event_for_lobby():
    async with running_server(password="pw") as server:
        admin = await RawClient().connect(server.port)
        await admin.write('<protocol><authenticate password="pw"/>')
        # joinRoom takes only seats without a reservation (issue 39)
        await admin.send(
            M.Prepare(
                slots=[M.Slot(display_name="a", reserved=False), M.Slot(display_name="b", reserved=False)],
                game_type=SEASON_2021.game_type,
            )
        )
        prepared = await admin.read_until(lambda m: isinstance(m, M.Prepared))
        logs = await asyncio.wait_for(
            asyncio.gather(
                play_client(server.port, room=prepared.room_id), play_client(server.port, room=prepared.room_id)
            ),
            60,
        )
        assert all(log.result is not None for log in logs)

        conn = Connection("127.0.0.1", server.port, season=SEASON_2021)
        await conn.open()
        await conn.join(reservation="nope")
        event = None
        async for event in conn:
            if isinstance(event, ServerError):
                break
        assert isinstance(event, ServerError) and event.lobby and "reservation" in event.message
        await conn.close()


async def test_connection_refuses_to_send_unrequested_or_illegal_moves():
    async with running_server(start_piece=Shape.PENTO_V) as server:
        conn = Connection("127.0.0.1", server.port, season=SEASON_2021)
        await conn.open()
        await conn.join()
        move = SetMove(Color.BLUE, Shape.PENTO_V, Rotation.NONE, False, 0, 0)
        import pytest

        with pytest.raises(ValueError, match="no move request"):
            await conn.send_move(move)
        other = await RawClient().connect(server.port)
        await other.write('<protocol><join gameType="swc_2021_blokus"/>')
        async for event in conn:
            if isinstance(event, MoveRequested):
                break
        with pytest.raises(ValueError, match="WRONG_SHAPE"):
            await conn.send_move(SetMove(Color.BLUE, Shape.MONO, Rotation.NONE, False, 0, 0))
        assert conn.move_pending and conn.room_id and conn.team is Team.ONE
        await conn.close()
        res = convert.result_from_message(await other.read_until(is_room(M.ResultData)))
        assert res.player(Team.ONE).cause == "LEFT"


def test_serve_command_line():
    from blokus.cli.serve import build_parser, config_from_args

    config = config_from_args(
        build_parser().parse_args(
            ["-p", "0", "--no-timeout", "--start-piece", "pento_l", "--seed", "3", "--password", "pw"]
        )
    )
    assert (config.port, config.timeouts.soft, config.timeouts.hard) == (0, None, None)
    assert (config.start_piece, config.seed, config.password, config.host) == (Shape.PENTO_L, 3, "pw", "127.0.0.1")
    config = config_from_args(build_parser().parse_args(["--soft-timeout", "50", "--hard-timeout", "200"]))
    assert (config.port, config.timeouts.soft, config.timeouts.hard) == (13050, 0.05, 0.2)


async def test_closing_the_connection_yourself_is_no_error():
    async with running_server() as server:
        conn = Connection("127.0.0.1", server.port, season=SEASON_2021)
        await conn.open()
        await conn.join()
        await conn.close()
        events = [e async for e in conn]
        closed = [e for e in events if isinstance(e, Closed)]
        assert len(closed) == 1 and not closed[0].error and closed[0].reason == "connection closed by the client"
