"""The bot's memory is bounded whatever the server sends (issue 46.5): it keeps the last state (and, for
``--save-replay`` only, a bounded record); a flood of messages without a move request ends with one line
and a non-zero exit."""

from __future__ import annotations

from blokus.model.pieces import Shape, Team
from blokus.model.season import SEASON_2021, season_named
from blokus.model.state import GameState
from blokus.net.bot import MAX_MESSAGES_WITHOUT_REQUEST
from blokus.net.wire import SeasonWire
from tests.helpers import run_bot_against

ROOM = "r1"


async def test_a_memento_stream_without_move_requests_ends_the_bot_with_one_line(capsys):
    wire = SeasonWire(season_named("2021"))
    memento = wire.memento(ROOM, GameState.new(SEASON_2021, Shape.PENTO_L), ("a", "b")).encode()
    sent = 0

    async def flood(reader, writer):
        nonlocal sent
        await reader.read(1000)  # the join
        writer.write(("<protocol>" + wire.joined(ROOM) + wire.welcome(ROOM, Team.ONE)).encode())
        try:
            while sent < 10 * MAX_MESSAGES_WITHOUT_REQUEST:  # until the bot hangs up (a cap, not a wait)
                writer.write(memento)
                await writer.drain()
                sent += 1
        except ConnectionError:
            pass

    code, bot = await run_bot_against(flood, "--save-replay", "/nonexistent-never-written")
    err = capsys.readouterr().err
    assert code == 3 and err.count("\n") == 1, err
    assert f"the server sent more than {MAX_MESSAGES_WITHOUT_REQUEST} messages without a move request" in err
    assert bot.since_request == MAX_MESSAGES_WITHOUT_REQUEST + 1  # it stopped at the bound
    assert len(bot.record.states) <= MAX_MESSAGES_WITHOUT_REQUEST  # and kept no more than its bound
