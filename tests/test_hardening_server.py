"""Server limits (issue 9): oversized and malicious messages, idle and surplus connections, one slot per
connection, disconnect after <left>, moves judged by arrival time, shutdown. Attack inputs are
generated here; no test measures time."""

from __future__ import annotations

import asyncio
import socket

from ai.base import fallback_move
from model import convert
from model import messages as M
from model.pieces import Shape, Team
from model.season import SEASON_2021, SEASON_2027
from net.connection import Closed, Connection
from net.guard import ConnectionCounter, ConnectionLimits
from net.rooms import Room, Slot, Timeouts
from tests.helpers import (
    RawClient,
    admin_with_prepared_game,
    is_room,
    move_xml,
    play_client,
    raw_pair,
    running_server,
    start_server,
    wait_until,
)


def attribute_bomb(count: int) -> bytes:
    return b"<pause " + b" ".join(b'a%d="x"' % i for i in range(count)) + b"/>"


async def assert_dropped(client: RawClient) -> None:
    rest = await client.read_to_end()
    assert client.ended and any(isinstance(m, M.CloseConnection) for m in rest)


async def left_result(client: RawClient) -> convert.GameResult:
    return convert.result_from_message(await client.read_until(is_room(M.ResultData)))


async def test_bombs_and_floods_from_a_player_end_only_its_game_with_left():
    async with running_server() as server:
        game = asyncio.gather(play_client(server.port, seed=3), play_client(server.port, seed=4))
        await wait_until(lambda: any(r.started for r in server.lobby.rooms.values()))
        attacks = [
            attribute_bomb(90_000),  # 880 KiB: over the 64 KiB a client may send in one message
            b"<room roomId='r'>" + attribute_bomb(6_000) + b"</room>",  # under 64 KiB, too many attributes
            b" " * 200_000,  # text between messages beyond the cap
            b"<room roomId='r'>" + b"<a>" * 100 + b"</room>",  # too deep
        ]
        for attack in attacks:
            one, two, _, _ = await raw_pair(server)
            await one.write(attack)
            await assert_dropped(one)
            result = await left_result(two)
            assert result.player(Team.ONE).cause == "LEFT" and result.winner is Team.TWO
        logs = await asyncio.wait_for(game, 60)  # the honest game in another room finished regularly
        assert all(log.result is not None and log.result.regular for log in logs)


async def test_unauthenticated_admin_requests_and_endless_wrong_reservations_are_dropped():
    async with running_server(password="secret") as server:
        pauser = await RawClient().connect(server.port)
        await pauser.write('<protocol><pause roomId="x" pause="true"/>')
        await assert_dropped(pauser)
        guesser = await RawClient().connect(server.port)
        await guesser.write("<protocol>" + '<joinPrepared reservationCode="guess"/>' * 50)
        await assert_dropped(guesser)
        errors = [m for m in guesser.messages if isinstance(m, M.LobbyError)]
        assert len(errors) == ConnectionLimits().max_refusals


async def test_idle_connections_are_closed_and_joined_ones_are_not():
    async with running_server(connections=ConnectionLimits(idle_timeout=0.05)) as server:
        silent = await RawClient().connect(server.port)
        await silent.write("<protocol>")
        await assert_dropped(silent)
        mute = await RawClient().connect(server.port)  # not even <protocol>
        await assert_dropped(mute)
        logs = await asyncio.wait_for(
            asyncio.gather(play_client(server.port, seed=1), play_client(server.port, seed=2)), 60
        )
        assert all(log.result is not None and log.result.regular for log in logs)  # longer than 0.05 s


def test_connection_counter() -> None:
    counter = ConnectionCounter(ConnectionLimits(max_connections=3, max_per_address=2))
    assert counter.admit("a") is None and counter.admit("a") is None
    assert "from a" in counter.admit("a")
    assert counter.admit("b") is None
    assert "too many connections (at most 3)" in counter.admit("c")
    counter.release("a")
    assert counter.admit("c") is None and counter.total == 3


async def test_a_2027_server_refuses_in_the_2027_form():
    """Over the limit, a 2027 server answers with 2027's <errorpacket> (2021's is <error>), then closes."""
    async with running_server(season=SEASON_2027, connections=ConnectionLimits(max_connections=1)) as server:
        first = await RawClient().connect(server.port)
        await wait_until(lambda: server.connections.total >= 1)
        second = await RawClient().connect(server.port)
        rest = await second.read_to_end()
        assert second.ended and isinstance(rest[0], M.ErrorPacket)
        assert "too many connections" in rest[0].message and server.refused == 1
        await first.close()


async def test_connection_limits_per_address_and_in_total():
    async with running_server(connections=ConnectionLimits(max_connections=3, max_per_address=2)) as server:
        first = [await RawClient().connect(server.port) for _ in range(2)]
        await wait_until(lambda: server.connections.total >= 2)
        third = await RawClient().connect(server.port)  # a third one from 127.0.0.1
        rest = await third.read_to_end()
        assert third.ended and isinstance(rest[0], M.LobbyError)  # 2021's form
        assert "too many connections from 127.0.0.1" in rest[0].message
        other = RawClient()
        other.reader, other.writer = await asyncio.open_connection(
            "127.0.0.1", server.port, local_addr=("127.0.0.2", 0)
        )
        await wait_until(lambda: server.connections.total >= 3)
        fourth = RawClient()
        fourth.reader, fourth.writer = await asyncio.open_connection(
            "127.0.0.1", server.port, local_addr=("127.0.0.3", 0)
        )
        rest = await fourth.read_to_end()
        assert "too many connections (at most 3)" in rest[0].message
        await first[0].close()
        await wait_until(lambda: server.connections.total <= 2)
        again = await RawClient().connect(server.port)
        await again.write('<protocol><join gameType="swc_2021_blokus"/>')
        assert await again.read_until(lambda m: isinstance(m, M.Joined))
        assert server.refused == 2


async def test_one_slot_per_connection():
    async with running_server(password="pw") as server:
        client = await RawClient().connect(server.port)
        await client.write('<protocol><join gameType="swc_2021_blokus"/>')
        joined = await client.read_until(lambda m: isinstance(m, M.Joined))
        await client.write(f'<joinRoom roomId="{joined.room_id}"/>')  # the other seat of its own room
        await assert_dropped(client)
        await wait_until(lambda: not server.lobby.rooms)  # the room it waited in is given up

        admin = await RawClient().connect(server.port)
        await admin.write('<protocol><authenticate password="pw"/>')
        await admin.send(M.Prepare(slots=[M.Slot(), M.Slot()]))
        prepared = await admin.read_until(lambda m: isinstance(m, M.Prepared))
        both = await RawClient().connect(server.port)
        codes = prepared.reservations
        await both.write(
            f'<protocol><joinPrepared reservationCode="{codes[0]}"/><joinPrepared reservationCode="{codes[1]}"/>'
        )
        await assert_dropped(both)
        room = server.lobby.rooms[prepared.room_id]
        assert not room.started and all(slot.peer is None for slot in room.slots)


async def test_players_are_disconnected_after_left():
    async with running_server() as server:
        conns = [Connection("127.0.0.1", server.port, close_on_left=False) for _ in range(2)]
        for conn in conns:
            await conn.open()
        logs = await asyncio.wait_for(
            asyncio.gather(*(play_client(server.port, seed=i, connection=conn) for i, conn in enumerate(conns))), 60
        )
        for log in logs:  # the clients did not leave by themselves: the server closed the connection
            assert log.result is not None
            assert isinstance(log.events[-1], Closed) and not log.events[-1].error
            assert "server" in log.events[-1].reason


async def test_a_move_is_judged_by_its_arrival_not_by_when_it_is_handled():
    now = [100.0]

    class Peer:
        name = "peer"

        def __init__(self) -> None:
            self.sent: list[str] = []

        def send(self, xml: str) -> None:
            self.sent.append(xml)

        def close(self, reason: str = "") -> None:
            pass

    from net.wire import SeasonWire

    one, two = Peer(), Peer()
    room = Room(
        SeasonWire(SEASON_2021),
        timeouts=Timeouts(soft=2.0, hard=None),
        start_piece=Shape.PENTO_L,
        clock=lambda: now[0],
        slots=[Slot(Team.ONE), Slot(Team.TWO)],
    )
    room.add_player(one, room.slots[0])
    room.add_player(two, room.slots[1])
    move = fallback_move(room.state)
    now[0] += 30.0  # the loop was busy for 30 s after the move had arrived 0.5 s after the request
    room.on_move(one, move, at=100.5)
    assert not room.finished and room.moves == 1 and room.latencies == [0.5]
    room.on_move(two, fallback_move(room.state), at=now[0] + 2.5)  # really late: soft timeout
    assert room.finished and room.result.scores[1].cause.value == "SOFT_TIMEOUT"


async def test_stopping_the_server_cancels_running_games_instead_of_reporting_left(capsys):
    server = await start_server()
    one, two, room_id, state = await raw_pair(server)
    await one.write(move_xml(fallback_move(state), room_id))
    await two.read_until(is_room(M.MoveRequest))
    await server.close()
    record = server.records[-1]
    assert record.cancelled and record.result is None and record.moves == 1
    assert "cancelled after 1 moves" in capsys.readouterr().out


async def test_a_move_read_in_the_same_loop_turn_as_the_hard_timeout_counts():
    from net.wire import SeasonWire

    class Peer:
        name = "peer"

        def send(self, xml: str) -> None:
            pass

        def close(self, reason: str = "") -> None:
            pass

    def room_waiting_for_one() -> tuple[Room, Peer]:
        one = Peer()
        room = Room(
            SeasonWire(SEASON_2021),
            timeouts=Timeouts(soft=None, hard=10.0),
            start_piece=Shape.PENTO_L,
            slots=[Slot(Team.ONE), Slot(Team.TWO)],
        )
        room.add_player(one, room.slots[0])
        room.add_player(Peer(), room.slots[1])
        return room, one

    room, one = room_waiting_for_one()
    room._hard_timeout(Team.ONE)  # the timer fires; the move's read was already due in this loop turn
    room.on_move(one, fallback_move(room.state))
    await asyncio.sleep(0)
    assert not room.finished and room.moves == 1
    room.cancel()

    room, _ = room_waiting_for_one()
    room._hard_timeout(Team.ONE)  # no move: the hard timeout holds one loop turn later
    assert not room.finished
    await asyncio.sleep(0)
    assert room.finished and room.result.scores[0].cause.value == "HARD_TIMEOUT"


async def test_an_observer_that_stops_reading_is_dropped_and_the_game_goes_on():
    # the observer's receive window is tiny and it never reads: the server's output for it piles up
    # until the bound, then the connection is cut; the players never wait for it
    limits = ConnectionLimits(max_unsent=2048)
    async with running_server(password="secret", connections=limits) as server:
        _admin, prepared = await admin_with_prepared_game(server.port, "secret", pause=False)

        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        raw.setblocking(False)
        await asyncio.get_running_loop().sock_connect(raw, ("127.0.0.1", server.port))
        mute_reader, mute_writer = await asyncio.open_connection(sock=raw)
        mute_writer.write(
            b'<protocol><authenticate password="secret"/>' + M.to_xml(M.Observe(room_id=prepared.room_id)).encode()
        )
        await mute_writer.drain()
        await wait_until(lambda: any(c.observing for c in server.clients))
        room = server.lobby.rooms[prepared.room_id]
        assert len(room.observers) == 1

        logs = await asyncio.wait_for(
            asyncio.gather(
                play_client(server.port, reservation=prepared.reservations[0]),
                play_client(server.port, reservation=prepared.reservations[1]),
            ),
            60,
        )
        assert all(log.result is not None and log.result.regular for log in logs)
        assert not room.observers  # cut off during the game, not at its end
        assert not any(c.observing for c in server.clients)
        mute_writer.close()
