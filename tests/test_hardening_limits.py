"""Hardening, second pass (issue 39), limits and lifetimes: in-bounds floods before joining, reserved
seats and joinRoom, the bot's idle timeout after a request it cannot answer, printable text from outside,
connections closed for good, encoder workers without client sockets, failed framers freed, a bounded game
history, Ctrl-C. Attack inputs are generated here; loopback only; events are awaited with generous caps, no
test measures time."""

from __future__ import annotations

import asyncio
import gc
import signal
import socket
import sys
import weakref

from ai.base import fallback_move
from model import convert
from model import messages as M
from model.framing import Limits, MessageTooLarge, StreamFramer
from model.pieces import Shape, Team
from model.result import Cause, irregular_result
from model.season import SEASON_2021
from model.state import GameState
from model.text import printable
from net.guard import ConnectionLimits, Rate, WorkBudget
from net.rooms import FinishedGame
from net.server import GameHistory, HistoryLimits
from net.wire import SeasonWire
from tests.helpers import (
    HOST,
    RawClient,
    is_room,
    move_xml,
    play_client,
    run_bot_against,
    running_server,
    wait_until,
)

wire = SeasonWire(SEASON_2021)  # the 2021 season's forms

ROOM = "r1"


def big_join() -> bytes:
    """A valid <join> of ~62 KB inside every bound of one client message: 256 elements, 31 attributes each."""
    child = b"<x " + b" ".join(b'a%d="v"' % i for i in range(31)) + b"/>"
    return b'<join gameType="swc_2021_blokus">' + child * 255 + b"</join>"


# --- 1. fair work -------------------------------------------------------------------------------------------


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


def test_the_framer_counts_elements_and_takes_new_limits_between_messages():
    framer = StreamFramer(limits=Limits(max_elements=2))
    assert len(framer.feed(b"<protocol><a><b/></a>")) == 1 and framer.elements_read == 2
    framer.set_limits(Limits(max_elements=4))
    assert len(framer.feed(b"<a><b/><b/><b/></a>")) == 1 and framer.elements_read == 6
    framer.set_limits(Limits(max_elements=1))
    try:
        framer.feed(b"<a><b/></a>")
        raise AssertionError("the tighter limit was not applied")
    except MessageTooLarge:
        pass


# --- 2. joinRoom and reserved seats -------------------------------------------------------------------------


async def test_join_room_never_takes_a_reserved_seat_and_the_code_holders_get_theirs():
    async with running_server(password="pw") as server:
        admin = await RawClient().connect(server.port)
        await admin.write('<protocol><authenticate password="pw"/>')
        await admin.send(M.Prepare(pause=False, slots=[M.Slot(display_name="a"), M.Slot(display_name="b")]))
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


# --- 3. the bot's idle timeout --------------------------------------------------------------------------------


async def test_the_bot_gives_up_after_a_request_it_cannot_answer_and_silence(capsys):
    over = GameState.new(Shape.PENTO_L)
    while not over.is_over:
        over.push(fallback_move(over))
    cases = {"no state before it": "", "the game in the last state is over": wire.memento(ROOM, over, ("a", "b"))}
    for reason, memento in cases.items():

        async def silent_after_request(reader, writer, memento=memento):
            await reader.read(1000)
            writer.write(
                (
                    "<protocol>" + wire.joined(ROOM) + wire.welcome(ROOM, Team.ONE) + memento + wire.move_request(ROOM)
                ).encode()
            )
            await writer.drain()
            await reader.read()  # silent until the bot goes

        code, _ = await run_bot_against(silent_after_request, "--idle-timeout", "0.3s")
        err = capsys.readouterr().err
        assert code == 1 and err.count("\n") == 1, err
        assert err.startswith(
            f"blokus bot: no message from the server for 0.3 s (after a move request we could not answer: {reason})"
        ), err


# --- 4. printable text ------------------------------------------------------------------------------------


def test_printable_escapes_every_control_character_and_bounds_the_length():
    assert printable("plain text, äöü — 漢字") == "plain text, äöü — 漢字"
    assert printable("\x1b]0;owned\x07\x1b[31m") == "\\x1b]0;owned\\x07\\x1b[31m"
    assert printable("a\x9bb\x85c\x7f") == "a\\x9bb\\x85c\\x7f"  # C1 controls (CSI, NEL) and DEL
    assert printable("line\nnext\r\tx") == "line\\nnext\\r\\tx"
    assert printable("\u202eevil\u200b\u2028") == "\\u202eevil\\u200b\\u2028"  # bidi override, zero width, LS
    long = printable("x" * 1000, 50)
    assert len(long) == 50 and long.endswith("…")
    cut = printable("ab" + "\x1b" * 10, 7)  # an escape is never cut in half
    assert cut == "ab\\x1b…" and len(cut) <= 7
    assert printable(ValueError("bad \x07")) == "bad \\x07"


def test_no_terminal_escapes_in_the_errors_of_moves_analyse_and_replay(tmp_path, capsys):
    from cli import analyse as analyse_cli
    from cli import moves as cli
    from cli import replay as replay_cli

    bad = tmp_path / "evil\x1b[2J.xml"
    bad.write_bytes(b"<state>&\x1b]0;owned\x07\x1b[31m;</state>")
    for run in (
        lambda: cli.main([str(bad)]),
        lambda: analyse_cli.main([str(bad), "-q", "--no-cache"]),
        lambda: replay_cli.main([str(bad)]),
    ):
        assert run() == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "\\x1b" in err, err
        assert "\x1b" not in err and "\x07" not in err


def test_result_texts_shown_in_the_tui_are_printable():
    from tui.replays import result_texts

    state = GameState.new(Shape.PENTO_L)
    result = irregular_result(Team.ONE, Cause.LEFT, "gone \x1b[5m\x07", (0, 0), ("\x1b[31mevil", "b"))
    title, lines = result_texts(result, state, {Team.ONE: "\x1b[31mevil", Team.TWO: "b"})
    assert not any("\x1b" in t or "\x07" in t for t in (title, *lines))
    assert any("\\x1b[5m\\x07" in line for line in lines)


# --- 5. leaks ------------------------------------------------------------------------------------------------


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


def test_a_failed_framer_is_freed_without_the_cycle_collector():
    gc.disable()
    try:
        framer = StreamFramer(limits=Limits(max_elements=4))
        ref = weakref.ref(framer)
        for _ in range(2):  # the first failure, and the same error again for later input
            try:
                framer.feed(b"<protocol><a>" + b"<b/>" * 10)
                raise AssertionError("no error")
            except MessageTooLarge:
                pass
        del framer
        assert ref() is None
    finally:
        gc.enable()


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
