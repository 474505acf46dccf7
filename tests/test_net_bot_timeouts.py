"""net/bot.py never hangs: inactivity timeout before the game and between messages and after a request it
cannot answer, exit after the result without <left>, and exactly one line on stderr at default verbosity."""

from __future__ import annotations

import asyncio
import random
import sys

from blokus.ai.interface import fallback_move
from blokus.model.pieces import Shape, Team
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState
from blokus.net import connection
from blokus.net.wire import SeasonWire
from tests.helpers import (
    HOST,
    ScriptedServer,
    run_bot_against,
    wire_messages,
)

wire = SeasonWire(SEASON_2021)  # the 2021 season's forms

ROOM = "r1"


async def test_a_silent_server_is_given_up_before_the_game_starts(capsys, monkeypatch):
    async def silent(reader, writer):
        await reader.read()  # never says a word; waits until the bot goes

    # the idle limit bounds the wait for the answer to the join too (that wait alone is 10 s: here an hour)
    monkeypatch.setattr(connection, "FIRST_ANSWER_WAIT_S", 3600.0)
    code, _ = await run_bot_against(silent, "--idle-timeout", "0.2s")
    err = capsys.readouterr().err
    assert code == 1
    assert (
        err == "blokus bot: no message from the server for 0.2 s (waiting for the game to start); giving up "
        "(see --idle-timeout)\n"
    )


async def test_a_server_that_goes_silent_after_a_move_request_is_given_up(capsys):
    state = GameState.new(SEASON_2021, Shape.PENTO_L)
    answered = asyncio.Event()

    async def goes_silent(reader, writer):
        await reader.read(1000)
        writer.write(
            (
                "<protocol>"
                + wire.joined(ROOM)
                + wire.welcome(ROOM, Team.ONE)
                + wire.memento(ROOM, state, ("a", "b"))
                + wire.move_request(ROOM)
            ).encode()
        )
        await writer.drain()
        await reader.read(10000)  # the move
        answered.set()
        await reader.read()

    code, bot = await run_bot_against(goes_silent, "--idle-timeout", "0.3s")
    err = capsys.readouterr().err
    assert answered.is_set() and bot.moves == 1
    assert code == 1 and "no message from the server for 0.3 s (game running, turn 0)" in err
    assert err.count("\n") == 1


async def test_the_bot_leaves_after_the_result_when_left_never_comes(capsys):
    elements = [e for e in wire_messages() if e.tag != "left"]

    class NoLeft(ScriptedServer):
        async def _send(self, writer, data: bytes) -> None:  # no </protocol> either: the server just idles
            await super()._send(writer, data.replace(b"\n</protocol>", b""))

    script = NoLeft(elements, random.Random(7))
    code, _ = await run_bot_against(script.handle, "--idle-timeout", "0.2s")
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.strip().endswith("winner ONE (we won), cause REGULAR; moves: 30 random, 1 forced") and not err


async def _stderr_of_bot_against(handler, *extra: str) -> tuple[int, str]:
    server = await asyncio.start_server(handler, HOST, 0)
    port = server.sockets[0].getsockname()[1]
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "blokus",
            "bot",
            "-h",
            HOST,
            "-p",
            str(port),
            "--ai",
            "random",
            "--engine",
            "thread",
            "--move-time",
            "20",
            *extra,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        server.close()
    return proc.returncode, err.decode()


def _flooding_server():
    state = GameState.new(SEASON_2021, Shape.PENTO_L)
    state.push(state.legal_moves()[0])  # YELLOW (team TWO) to move, but we are ONE

    async def handler(reader, writer):
        await reader.read(1000)
        head = "<protocol>" + wire.joined(ROOM) + wire.welcome(ROOM, Team.ONE) + wire.memento(ROOM, state, ("a", "b"))
        writer.write((head + wire.move_request(ROOM) * 200 + "<ghost/>" * 50).encode())
        writer.write(b"\n<room roomId='r1'>\n<data class=\n'x'\n></oops>\n")  # not well-formed
        await writer.drain()
        await reader.read()

    return handler


async def test_exactly_one_line_on_stderr_at_default_verbosity():
    code, err = await _stderr_of_bot_against(_flooding_server())
    assert code == 3
    # one line for the 200 move requests on the other team's turn (issue 46.7), one for the end
    first, last = err.splitlines()
    assert first.startswith("blokus bot: a move request for team ONE, but the state says YELLOW (team TWO) is to move")
    assert err.count("\n") == 2 and last.startswith("blokus bot: protocol error: not well-formed XML")
    code, err = await _stderr_of_bot_against(_flooding_server(), "-v")  # 200 requests: a few lines, not 200
    lines = err.splitlines()
    assert code == 3 and lines[-1].startswith("blokus bot: protocol error")
    assert 3 <= len(lines) < 30 and sum("further lines like this are not shown" in line for line in lines) >= 1


def test_idle_timeout_values():
    import argparse

    import pytest

    from blokus.cli.options import wait_time

    assert wait_time("300s") == 300 and wait_time("300000") == 300 and wait_time("1500ms") == 1.5
    assert wait_time("0") is None and wait_time("0s") is None  # no limit
    for bad in ("-1", "soon", "1e9s"):
        with pytest.raises(argparse.ArgumentTypeError):
            wait_time(bad)


async def test_the_bot_gives_up_after_a_request_it_cannot_answer_and_silence(capsys):
    over = GameState.new(SEASON_2021, Shape.PENTO_L)
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
