"""Helpers for the net tests (no tests here): servers on ephemeral ports, scripted and raw clients."""

from __future__ import annotations

import asyncio
import contextlib
import random
from dataclasses import dataclass, field

from lxml import etree

from ai.base import fallback_move
from model import convert
from model import messages as M
from model.framing import END_OF_STREAM, StreamFramer
from model.moves import Move
from net.connection import Closed, Connection, Event, GameOver, MoveRequested
from net.rooms import Timeouts
from net.server import GameServer, ServerConfig

HOST = "127.0.0.1"


async def start_server(**config) -> GameServer:
    config.setdefault("timeouts", Timeouts(soft=None, hard=None))
    server = GameServer(ServerConfig(host=HOST, port=0, **config))
    await server.start()
    return server


@dataclass
class ClientLog:
    events: list[Event] = field(default_factory=list)

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]

    @property
    def closed(self) -> Closed:
        return self.of(Closed)[-1]

    @property
    def result(self) -> convert.GameResult | None:
        over = self.of(GameOver)
        return over[-1].result if over else None


async def play_client(
    port: int,
    *,
    seed: int = 0,
    reservation: str | None = None,
    room: str | None = None,
    choose=None,
    stop_after: int | None = None,
    connection: Connection | None = None,
) -> ClientLog:
    """A well-behaved client: answers every request with ``choose(state)`` (default: a random legal move).

    ``stop_after``: close the connection (leave) after that many own moves.
    """
    rng = random.Random(seed)
    conn = connection or Connection(HOST, port)
    if connection is None:
        await conn.open()
    await conn.join(reservation=reservation, room=room)
    log = ClientLog()
    moves = 0
    async for event in conn:
        log.events.append(event)
        if isinstance(event, MoveRequested):
            if stop_after is not None and moves >= stop_after:
                await conn.close()
                continue
            move = choose(event.state) if choose else fallback_move(event.state, rng)
            await conn.send_move(move, check=choose is None)
            moves += 1
    await conn.close()
    return log


class RawClient:
    """A client that writes arbitrary bytes and reads the server's messages (as models)."""

    def __init__(self) -> None:
        self.framer = StreamFramer()
        self.messages: list = []
        self.ended = False

    async def connect(self, port: int) -> RawClient:
        self.reader, self.writer = await asyncio.open_connection(HOST, port)
        return self

    async def write(self, data: str | bytes) -> None:
        self.writer.write(data.encode() if isinstance(data, str) else data)
        await self.writer.drain()

    async def send(self, message) -> None:
        await self.write(M.to_xml(message))

    async def read_until(self, predicate, timeout: float = 20.0):
        """Read messages until ``predicate(message)``; returns it (None if the stream ended first)."""
        for m in self.messages:
            if predicate(m):
                self.messages.remove(m)
                return m

        async def loop():
            while True:
                if self.ended:
                    return None
                data = await self.reader.read(65536)
                if not data:
                    self.ended = True
                    return None
                found = None
                for frame in self.framer.feed(data):
                    if frame is END_OF_STREAM:
                        self.ended = True
                        continue
                    message = convert.parse_message(frame)
                    if found is None and predicate(message):
                        found = message
                    else:
                        self.messages.append(message)
                if found is not None:
                    return found

        return await asyncio.wait_for(loop(), timeout)

    async def read_to_end(self, timeout: float = 20.0) -> list:
        await self.read_until(lambda m: False, timeout)
        return self.messages

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()
            await self.writer.wait_closed()


def is_room(data_type):
    return lambda m: isinstance(m, M.Room) and isinstance(m.data, data_type)


def move_xml(move: Move, room_id: str) -> str:
    return M.to_xml(convert.move_to_message(move, room_id))


def element_text(element: etree._Element) -> str:
    return etree.tostring(element, encoding="unicode", with_tail=False)


async def admin_with_prepared_game(
    port: int, password: str, names: tuple[str, str] = ("alice", "bob"), *, pause: bool = True
) -> tuple[RawClient, M.Prepared]:
    """An authenticated admin client and the answer to its ``<prepare>`` of a two-seat game."""
    admin = await RawClient().connect(port)
    await admin.write(f'<protocol><authenticate password="{password}"/>')
    await admin.send(M.Prepare(pause=pause, slots=[M.Slot(display_name=n, can_timeout=False) for n in names]))
    return admin, await admin.read_until(lambda m: isinstance(m, M.Prepared))
