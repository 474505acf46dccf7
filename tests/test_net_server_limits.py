"""net/server.py and net/guard.py, limits and lifetimes: oversized and malicious messages, floods before
joining, fair work budgets, idle and surplus connections, one slot per connection, reserved seats,
disconnect after <left>, moves judged by arrival time, dropped connections, encoder workers, a bounded
history, shutdown and Ctrl-C. Attack inputs are generated here; loopback only; no test measures time."""

from __future__ import annotations

import asyncio
import signal
import socket
import sys

from blokus.ai.interface import fallback_move
from blokus.model import convert
from blokus.model import messages as M
from blokus.model.pieces import Shape, Team
from blokus.model.season import SEASON_2021, SEASON_2027
from blokus.net.connection import Closed, Connection
from blokus.net.guard import ConnectionCounter, ConnectionLimits, Rate, WorkBudget
from blokus.net.rooms import FinishedGame, Room, RoomSeat, Timeouts
from blokus.net.server import GameHistory, HistoryLimits
from tests.helpers import (
    HOST,
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
        await admin.send(M.Prepare(slots=[M.Slot(), M.Slot()], game_type=SEASON_2021.game_type))
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
        conns = [Connection("127.0.0.1", server.port, close_on_left=False, season=SEASON_2021) for _ in range(2)]
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

    from blokus.net.wire import SeasonWire

    one, two = Peer(), Peer()
    room = Room(
        SeasonWire(SEASON_2021),
        timeouts=Timeouts(soft=2.0, hard=None),
        start_piece=Shape.PENTO_L,
        clock=lambda: now[0],
        slots=[RoomSeat(Team.ONE), RoomSeat(Team.TWO)],
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
    from blokus.net.wire import SeasonWire

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
            slots=[RoomSeat(Team.ONE), RoomSeat(Team.TWO)],
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


def big_join() -> bytes:
    """A valid <join> of ~62 KB inside every bound of one client message: 256 elements, 31 attributes each."""
    child = b"<x " + b" ".join(b'a%d="v"' % i for i in range(31)) + b"/>"
    return b'<join gameType="swc_2021_blokus">' + child * 255 + b"</join>"


def _record(index: int, latencies: int = 10) -> FinishedGame:
    return FinishedGame(
        room_id=f"room{index}",
        start_piece=Shape.PENTO_L,
        names=("a", "b"),
        result=None,
        moves=0,
        final_turn=0,
        latencies=[0.1] * latencies,
        started=0.0,
        ended=1.0,
        cancelled=index % 2 == 0,
    )


async def test_a_big_join_before_joining_is_refused_and_never_seats_the_flooder():
    async with running_server() as server:
        flooders = [await RawClient().connect(server.port) for _ in range(5)]
        for flooder in flooders:
            await flooder.write(b"<protocol>" + big_join())
        for flooder in flooders:
            rest = await flooder.read_to_end()
            assert flooder.ended and not any(isinstance(m, M.Joined) for m in rest)
        assert not server.lobby.rooms and not server.records.total
        logs = await asyncio.wait_for(
            asyncio.gather(play_client(server.port, seed=1), play_client(server.port, seed=2)), 60
        )
        assert all(log.result is not None and log.result.regular for log in logs)  # small joins still work


def test_the_work_budget_refills_with_time_and_holds_one_second_at_most():
    now = [0.0]
    budget = WorkBudget(Rate(bytes=1000, elements=10), clock=lambda: now[0])
    assert budget.delay() == 0
    budget.charge(3000, 5)
    assert budget.delay() == 2.0  # 2000 bytes over, at 1000 a second
    now[0] += 1.0
    budget.charge(0, 25)
    assert budget.delay() == 1.5  # elements: 5 + 5 refilled (at most 10) - 25 = -15: 1.5 s (bytes: 1 s)
    now[0] += 100.0
    assert budget.delay() == 0
    budget.charge(1001, 0)  # a long pause does not save up more than one second's worth
    assert budget.delay() > 0
    budget.set_rate(Rate(bytes=1e6, elements=1e6))
    now[0] += 0.001
    assert budget.delay() < 0.01


async def test_join_room_never_takes_a_reserved_seat_and_the_code_holders_get_theirs():
    async with running_server(password="pw") as server:
        admin = await RawClient().connect(server.port)
        await admin.write('<protocol><authenticate password="pw"/>')
        await admin.send(
            M.Prepare(
                pause=False, slots=[M.Slot(display_name="a"), M.Slot(display_name="b")], game_type=SEASON_2021.game_type
            )
        )
        prepared = await admin.read_until(lambda m: isinstance(m, M.Prepared))
        assert len(prepared.reservations) == 2
        outsider = await RawClient().connect(server.port)
        await outsider.write(f'<protocol><joinRoom roomId="{prepared.room_id}"/>')
        error = await outsider.read_until(lambda m: isinstance(m, M.LobbyError))
        assert prepared.room_id in error.message and "reservation" in error.message
        room = server.lobby.rooms[prepared.room_id]
        assert all(slot.peer is None for slot in room.slots)
        logs = await asyncio.wait_for(
            asyncio.gather(
                *(play_client(server.port, seed=i, reservation=code) for i, code in enumerate(prepared.reservations))
            ),
            60,
        )
        assert all(log.result is not None and log.result.regular for log in logs)
        await outsider.close()


async def test_a_dropped_connection_whose_peer_does_not_read_is_closed_for_good():
    async with running_server(connections=ConnectionLimits(send_buffer=4096, close_grace=0.05)) as server:
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        raw.setblocking(False)
        await asyncio.get_running_loop().sock_connect(raw, (HOST, server.port))
        _, writer = await asyncio.open_connection(sock=raw)  # never reads
        await wait_until(lambda: server.clients)
        (client,) = server.clients
        sock = client.writer.get_extra_info("socket")
        for _ in range(100):  # ~1 MB of output that the peer never takes
            client.send(f"<error message='{'x' * 10_000}'/>")
        assert client.writer.transport.get_write_buffer_size() > 0
        client.drop("test: dropped while output is waiting")
        await wait_until(lambda: sock.fileno() == -1)  # the descriptor is released
        await wait_until(lambda: server.connections.total == 0)
        writer.close()


async def test_encoder_workers_hold_no_client_socket():
    async with running_server(encode_workers=1) as server:
        bystander = await RawClient().connect(server.port)  # open before the first move is encoded
        await bystander.write("<protocol>")
        await wait_until(lambda: len(server.clients) == 1)
        one = await RawClient().connect(server.port)
        await one.write('<protocol><join gameType="swc_2021_blokus"/>')
        two = await RawClient().connect(server.port)
        await two.write('<protocol><join gameType="swc_2021_blokus"/>')
        joined = await one.read_until(lambda m: isinstance(m, M.Joined))
        state = convert.state_from_message(await one.read_until(is_room(M.Memento)))
        await one.read_until(is_room(M.MoveRequest))
        await one.write(move_xml(fallback_move(state), joined.room_id))
        await two.read_until(is_room(M.MoveRequest))  # the state after the move came from the worker
        await bystander.write("<garbage")  # now the server drops it: the peer must see the end of the stream
        await bystander.write("&&&>")
        await bystander.read_to_end(timeout=30)
        assert bystander.ended  # </protocol>; then the socket itself must end (no worker holds it open)
        assert await asyncio.wait_for(bystander.reader.read(), 30) == b""


def test_the_history_of_finished_games_is_bounded_by_count_and_bytes():
    history = GameHistory(HistoryLimits(games=5, bytes=10**9))
    for i in range(1000):
        history.append(_record(i))
    assert len(history) == 5 and [r.room_id for r in history] == [f"room{i}" for i in range(995, 1000)]
    assert history[-1].room_id == "room999" and history.total == 1000 and history.cancelled == 500
    by_size = GameHistory(HistoryLimits(games=1000, bytes=20_000))
    for i in range(1000):
        by_size.append(_record(i, latencies=100))
    assert 0 < len(by_size) < 10 and by_size.bytes <= 20_000 and by_size.total == 1000


async def test_ctrl_c_stops_the_server_without_a_traceback():
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "blokus",
        "serve",
        "--season",
        "2021",  # play_client's season
        "-p",
        "0",
        "--encode-workers",
        "1",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        banner = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        port = int(banner.split("127.0.0.1:")[1].split()[0])
        logs = await asyncio.wait_for(
            asyncio.gather(play_client(port, seed=1, stop_after=3), play_client(port, seed=2)), 60
        )
        assert logs[1].result is not None  # the other one left after 3 moves
        for _ in range(20):  # clients still connected at Ctrl-C
            watcher = await RawClient().connect(port)
            await watcher.write("<protocol>")
        proc.send_signal(signal.SIGINT)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0 and b"stopped after" in out
    assert b"Traceback" not in err and b"Exception ignored" not in err, err.decode()
