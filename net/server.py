"""``blokus serve``: a local game server that speaks the official protocol of a season: the 21.3.3 wire
form (default) or, with ``--season 2027``, the 27.0.4 form (docs/spec/season-2027.md §3).

Clients connect over TCP (default port 13050), send ``<protocol>`` and join: ``<join>`` pairs clients
into rooms (first come = team ONE), ``<joinPrepared>`` takes a slot of a game prepared by an
administrator, ``<joinRoom>`` (21.4.0) a free slot of a room by id. Any number of rooms run at once on
one asyncio loop. Administrators (``<authenticate>`` with the ``--password``) can ``prepare``,
``observe``, ``pause``/``step`` and ``cancel`` games. Every move is judged by the rule engine; time
limits, rule violations, disconnects and malformed input end a game as ``docs/spec/rules.md`` §12–§14 describe
(game logic: ``net.rooms``). One line per finished game goes to stdout; ``--save-replay DIR`` writes
each game in the official replay format.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import logging
import multiprocessing
import os
import random
import signal
import socket
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from blokus.ai import processes
from blokus.model import convert
from blokus.model import messages as M
from blokus.model.framing import END_OF_STREAM, Limits, ProtocolError, StreamFramer
from blokus.model.moverecords import MoveRecord, measured_records, write_records
from blokus.model.moves import MoveMistake
from blokus.model.pieces import Shape, Team
from blokus.model.record import MoveEvent
from blokus.model.replay import new_replay_path, replay_layout
from blokus.model.season import DEFAULT_PORT, DEFAULT_SEASON, SEASONS, Season
from blokus.model.text import printable
from blokus.net import wire
from blokus.net.guard import ConnectionCounter, ConnectionLimits, WorkBudget
from blokus.net.lines import LineWriter
from blokus.net.rooms import FinishedGame, Lobby, Room, RoomSeat, Timeouts

log = logging.getLogger("blokus.server")

UNKNOWN_RESERVATION = "Couldn't find a reservation for the provided token."
# Children a move may have (docs/spec/protocol.md §3.3: any other child makes the server drop the connection).
_MOVE_CHILDREN = {s.set_move_class: {"piece"} for s in SEASONS.values()} | {
    s.skip_move_class: {"color"} for s in SEASONS.values()
}
_PIECE_CHILDREN = {"position"}
# What a client may send is small (a move has 3-4 elements, a prepare a few slots): tighter bounds than
# for the server's own messages keep the cost of reading any client message to a few milliseconds.
CLIENT_LIMITS = Limits(max_bytes=64 * 1024, max_elements=256)
# Before a peer has joined or authenticated it can only send lobby messages (join, joinPrepared, joinRoom,
# authenticate: one element of a few hundred bytes), so its messages are bounded far tighter (issue 39).
LOBBY_LIMITS = Limits(max_bytes=2048, max_elements=16, max_attributes=16, max_value_length=1024, max_depth=4)
# Small reads: a flood of tiny messages is parsed a little at a time (about 1000 per read at most),
# between the other clients' reads, instead of 16 000 at once.
READ_SIZE = 4096


@dataclass(frozen=True)
class ServerConfig:
    """What the server is told (``cli.serve`` reads it from the command line; embedded servers set their own)."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    password: str | None = None  # administrators; None: admin requests are refused
    timeouts: Timeouts = field(default_factory=Timeouts)
    start_piece: Shape | None = None
    seed: int | None = None
    replay_dir: Path | None = None
    limits: Limits = CLIENT_LIMITS  # bounds of one client message (model.framing.Limits)
    lobby_limits: Limits = LOBBY_LIMITS  # ... before it has joined or authenticated
    connections: ConnectionLimits = field(default_factory=ConnectionLimits)  # how many, how long idle
    paused: bool = False  # rooms created by <join> start paused (server.properties ``paused``)
    clock: Callable[[], float] = time.monotonic  # measures move latency; injectable for tests
    encode_workers: int = 0  # processes that serialize states (0: in the event loop)
    history: HistoryLimits = field(default_factory=lambda: HistoryLimits())  # finished games remembered
    season: Season = DEFAULT_SEASON  # the game every room plays, and the wire form
    print_games: bool = True  # one line per finished game on stdout (embedded servers keep quiet)


@dataclass(frozen=True)
class HistoryLimits:
    """How many finished games the server remembers (``GameServer.records``), by count and by size."""

    games: int = 1000
    bytes: int = 4 * 1024 * 1024


class GameHistory:
    """The latest finished games, oldest dropped first beyond the :class:`HistoryLimits`; ``total`` and
    ``cancelled`` count every game."""

    def __init__(self, limits: HistoryLimits) -> None:
        self.limits = limits
        self._records: collections.deque[tuple[FinishedGame, int]] = collections.deque()
        self.bytes = 0
        self.total = 0
        self.cancelled = 0

    def append(self, record: FinishedGame) -> None:
        size = _record_size(record)
        self._records.append((record, size))
        self.bytes += size
        self.total += 1
        self.cancelled += record.cancelled
        while self._records and (len(self._records) > self.limits.games or self.bytes > self.limits.bytes):
            self.bytes -= self._records.popleft()[1]

    def __len__(self) -> int:
        return len(self._records)

    def __getitem__(self, index: int) -> FinishedGame:
        return self._records[index][0]

    def __iter__(self) -> Iterator[FinishedGame]:
        return (record for record, _ in self._records)


def _record_size(record: FinishedGame) -> int:
    """Approximate bytes of a record: its latencies and texts, plus a fixed part."""
    texts = [record.room_id, *record.names]
    if record.result is not None:
        texts += [p.reason or "" for p in record.result.players]
    return 512 + 32 * len(record.latencies) + sum(len(t) for t in texts)


class ClientConn:
    """One TCP client. Implements the ``Peer`` interface of ``net.rooms``."""

    def __init__(self, server: GameServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        peer = writer.get_extra_info("peername")
        self.name = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else "client"
        self.address = str(peer[0]) if isinstance(peer, tuple) else "?"
        self.refusals = 0  # lobby errors so far (unknown reservations)
        self.seat: str | None = None  # seated by its host (``GameServer.seat_connection``): its join takes this code
        self.room: Room | None = None
        self.admin = False
        self.observing: list[Room] = []
        self.closed = False
        self._opened = False

    def send(self, xml: str) -> None:
        if self.closed or self.writer.is_closing():
            return
        if not self._opened:
            self._opened = True
            self.writer.write(b"<protocol>")
        self.writer.write(b"\n" + xml.encode("utf-8"))
        if self.writer.transport.get_write_buffer_size() > self.server.config.connections.max_unsent:
            self._abandon("does not read: too much output waiting")

    def _abandon(self, reason: str) -> None:
        """Cut a connection that cannot be written to any more: the waiting output is discarded, and the
        read loop then ends as for a disconnect (a game in progress is lost with LEFT). Not done here
        directly, because ``send`` may be called while a room walks its peers."""
        log.info("%s: dropping connection: %s", self.name, printable(reason))
        self.closed = True
        self.writer.transport.abort()

    def close(self, reason: str = "") -> None:
        """Close element, ``</protocol>``, then the socket (the server's side of leaving)."""
        if self.closed:
            return
        if reason:
            log.info("closing %s: %s", self.name, printable(reason))
        self.send(self.server.wire.close())
        self._finish_stream()

    def _finish_stream(self) -> None:
        if self.closed:
            return
        if not self._opened:
            self._opened = True
            self.writer.write(b"<protocol>")
        with contextlib.suppress(Exception):
            self.writer.write(b"\n</protocol>\n")
        self.closed = True
        self._close_transport()

    def _close_transport(self) -> None:
        """Close the socket once the output is written, but for good: output that the peer does not read
        within the grace is discarded (else the transport, and its descriptor, would wait for ever)."""
        transport = self.writer.transport
        if transport.is_closing():
            return
        transport.close()
        if transport.get_write_buffer_size() > 0:
            asyncio.get_running_loop().call_later(self.server.config.connections.close_grace, transport.abort)

    @property
    def settled(self) -> bool:
        """Joined a room, authenticated or observing: no longer subject to the idle timeout."""
        return self.room is not None or self.admin or bool(self.observing)

    async def run(self) -> None:
        config = self.server.config
        # Until the peer has joined or authenticated: lobby bounds and a small work budget (issue 39)
        framer = StreamFramer(limits=config.lobby_limits)
        budget = WorkBudget(config.connections.lobby_rate)
        lobby = True
        idle = config.connections.idle_timeout
        deadline = None if idle is None else time.monotonic() + idle
        try:
            while not self.closed:
                if lobby and self.settled:
                    lobby = False
                    framer.set_limits(config.limits)
                    budget.set_rate(config.connections.player_rate)
                pause = budget.delay()
                if pause > 0:  # over its budget: not read for a while (TCP holds the peer back meanwhile)
                    await asyncio.sleep(pause)
                    if deadline is not None and not self.settled and time.monotonic() >= deadline:
                        self.drop(f"did not join within {idle:g} s")
                        break
                    continue
                try:
                    if deadline is not None and not self.settled:
                        timeout = max(0.0, deadline - time.monotonic())
                        data = await asyncio.wait_for(self.reader.read(READ_SIZE), timeout)
                    else:
                        data = await self.reader.read(READ_SIZE)
                except TimeoutError:
                    self.drop(f"did not join within {idle:g} s")
                    break
                except (ConnectionError, OSError):
                    break
                if not data:
                    break
                at = config.clock()  # a move's time is judged by its arrival, not by when it is handled
                elements = framer.elements_read
                try:
                    frames = framer.feed(data)
                except ProtocolError as exc:
                    log.info("%s: protocol error: %s", self.name, printable(str(exc)))
                    self.close(f"protocol error: {exc}")
                    break
                budget.charge(len(data), framer.elements_read - elements)
                for frame in frames:
                    if self.closed:
                        break
                    if frame is END_OF_STREAM:  # the client left: answer </protocol> and close
                        self._finish_stream()
                        break
                    self.handle(frame, at)
                with contextlib.suppress(Exception):
                    await self.writer.drain()
                await asyncio.sleep(0)  # the other connections' reads come in between: no peer hogs the loop
        finally:
            self.closed = True
            with contextlib.suppress(Exception):
                self._close_transport()
            self.server.disconnected(self)

    # --- dispatch ---------------------------------------------------------------------------------

    def handle(self, element: etree._Element, at: float | None = None) -> None:
        message = convert.parse_message(element)
        if isinstance(message, M.UnknownMessage):
            # 21.3.3: an unknown element or class, or unreadable content, drops the connection (→ LEFT)
            self.drop(str(message))
            return
        server = self.server
        match message:
            case M.Room():
                self.on_room_message(message, element, at)
            case M.Join() | M.JoinPrepared() | M.JoinRoom() if self.seat is not None:
                server.join_prepared(self, M.JoinPrepared(reservation_code=self.seat))
            case M.Join():
                server.join(self, message.game_type)
            case M.JoinPrepared():
                server.join_prepared(self, message)
            case M.JoinRoom():
                server.join_room(self, message.room_id)
            case M.Authenticate():
                if server.config.password is not None and message.password == server.config.password:
                    self.admin = True
                else:
                    log.info("%s: authentication failed", self.name)
                    self.drop("authentication failed")
            case M.CloseConnection():
                self.drop("client sent a close element")
            case (
                M.Prepare()
                | M.Observe()
                | M.Pause()
                | M.Step()
                | M.Cancel()
                | M.FreeReservation()
                | M.Timeout()
                | M.TestMode()
                | M.ScoreForPlayer()
            ):
                if not self.admin:  # dropped, not ignored: it cannot be repeated for ever
                    self.drop("admin request without authentication")
                    return
                server.admin(self, message)
            case _:
                self.drop(f"unexpected {type(message).__name__} message from a client")

    def drop(self, reason: str) -> None:
        """Disconnect (malformed input etc.); a game in progress is lost with LEFT."""
        log.info("%s: dropping connection: %s", self.name, printable(reason))
        self.close(reason)
        self.server.disconnected(self)

    def on_room_message(self, message: M.Room, element: etree._Element, at: float | None = None) -> None:
        room = self.room
        data = message.data
        if not isinstance(data, M.SetMoveData | M.SkipMoveData):
            self.drop(f"unexpected room data {data.cls!r} from a client")
            return
        season = self.server.config.season
        if data.cls not in (season.set_move_class, season.skip_move_class):
            # another season's class is unknown to this server's XStream: the connection is dropped
            self.drop(f"move class {data.cls!r} is not a {season.game_type} move")
            return
        if room is None or message.room_id != room.id:
            self.drop(f"move for room {message.room_id!r}, not this client's room")
            return
        extra = _unknown_move_children(element)
        if extra:
            self.drop(f"unknown element <{extra}> in a move")
            return
        move = convert.move_from_message(data)
        if move is None:  # a SkipMove without <color>: the colour is missing → WRONG_COLOR
            room.on_move(self, None, mistake=MoveMistake.WRONG_COLOR, at=at)
            return
        room.on_move(self, move, at=at)


def _unknown_move_children(room_element: etree._Element) -> str | None:
    data = room_element.find("data")
    if data is None:
        return None
    allowed = _MOVE_CHILDREN.get(data.get("class") or "", set())
    for child in data:
        if child.tag not in allowed:
            return str(child.tag)
        if child.tag == "piece":
            for grandchild in child:
                if grandchild.tag not in _PIECE_CHILDREN:
                    return str(grandchild.tag)
    return None


def _start_encoder(server: int) -> None:
    """Encoder workers leave Ctrl-C to the server (which shuts them down) instead of printing tracebacks,
    end with their parent (the fork server, or the server) and hold none of the server's standard streams."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    guard = sys.modules.get("blokus.net.forkserver_guard")
    processes.die_with_parent(getattr(guard, "PID", server))


def _nothing() -> None:
    """A first task: starts a worker now rather than at the first move."""


class GameServer:
    """The server: lobby, rooms, administrators. ``start()`` binds, ``close()`` stops."""

    def __init__(
        self,
        config: ServerConfig | None = None,
        *,
        on_game_end: Callable[[FinishedGame], None] | None = None,
        output: LineWriter | None = None,
    ) -> None:
        self.config = config or ServerConfig()
        # the per-game lines (print_games): through a writer thread, never a print in the event loop
        self.output = output if output is not None or not self.config.print_games else LineWriter()
        self._own_output = output is None and self.output is not None
        self.wire = wire.SeasonWire(self.config.season)
        self.lobby = Lobby()
        self.records = GameHistory(self.config.history)  # the latest finished games
        self.on_game_end = on_game_end
        self.rng = random.Random(self.config.seed)
        self.clients: set[ClientConn] = set()
        self.connections = ConnectionCounter(self.config.connections)
        self.refused = 0  # connections refused by the limits
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.sockets[0].getsockname()[1]

    async def start(self) -> None:
        if self.config.encode_workers > 0:  # before accepting: the workers hold no client's socket
            self._start_pool()
        self._server = await asyncio.start_server(self._accept, self.config.host, self.config.port)
        for sock in self._server.sockets:  # inherited by every accepted socket (and its TCP window)
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.config.connections.recv_buffer)

    def _start_pool(self) -> None:
        # forkserver (spawn off Linux): a worker is forked from a clean process, never from the server, so
        # it holds none of the server's sockets, whenever it starts
        # (like spawn, it imports the main module again: a script that starts a server needs the
        # ``if __name__ == "__main__"`` guard; without it the encoder fails and the loop encodes, logged)
        method = "forkserver" if sys.platform.startswith("linux") else "spawn"
        context = multiprocessing.get_context(method)
        if method == "forkserver":
            # imported once, in the fork server (the guard first: it ends with this process)
            context.set_forkserver_preload(["blokus.net.forkserver_guard", "blokus.net.wire"])
        self._pool = concurrent.futures.ProcessPoolExecutor(
            self.config.encode_workers,
            mp_context=context,
            initializer=_start_encoder,
            initargs=(os.getpid(),),
        )
        self._pool.submit(_nothing)

    async def serve_forever(self) -> None:
        assert self._server is not None
        await self._server.serve_forever()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for room in list(self.lobby.rooms.values()):  # cancelled, not lost by the players (LEFT)
            if room.started and not room.finished:
                room.cancel()
        for client in list(self.clients):
            client.close("server shutting down")
        tasks = list(self._tasks)
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=2)
            for task in pending:
                task.cancel()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
        if self._pool is not None:  # waited for (in a thread): an abandoned pool's pipes fail at exit (EBADF)
            pool, self._pool = self._pool, None
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)
        if self._own_output and self.output is not None:
            await asyncio.to_thread(self.output.close)

    async def seat_connection(self, sock: socket.socket, reservation: str) -> None:
        """Serve a connection that a host made itself: ``sock`` is one end of a socket pair whose other end a
        player of the host's own inherits (``net.external``). Its join, in whatever form, takes the seat of
        ``reservation``, a code the host gives nobody: no code travels, so no other process can read one or
        join that seat. A connection budget of its own (a program under test cannot use it up)."""
        reader, writer = await asyncio.open_connection(sock=sock)
        counter = ConnectionCounter(self.config.connections)
        self._tasks.add(asyncio.create_task(self._accept(reader, writer, counter, seat=reservation)))

    async def _accept(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        counter: ConnectionCounter | None = None,
        seat: str | None = None,
    ) -> None:
        connections = self.connections if counter is None else counter
        client = ClientConn(self, reader, writer)
        client.seat = seat
        sock = writer.get_extra_info("socket")
        if sock is not None:  # a fixed kernel buffer: what a client that does not read can hold is bounded
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.config.connections.send_buffer)
        refusal = connections.admit(client.address)
        if refusal is not None:
            self.refused += 1
            log.info("refused %s: %s", client.name, refusal)
            client.send(self.wire.lobby_error(refusal))  # in the season's form (2027: <errorpacket>)
            client.close()
            return
        self.clients.add(client)
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await client.run()
        except asyncio.CancelledError:  # stopped at shutdown: asyncio's stream callback would log it as an error
            pass
        finally:
            self.clients.discard(client)
            connections.release(client.address)
            if task is not None:
                self._tasks.discard(task)

    # --- rooms ------------------------------------------------------------------------------------

    def _new_room(self, **kwargs) -> Room:
        rng = random.Random(self.rng.getrandbits(64))
        room_id = str(uuid.UUID(int=self.rng.getrandbits(128), version=4)) if self.config.seed is not None else None
        room = Room(
            self.wire,
            room_id=room_id,
            start_piece=self.config.start_piece,
            rng=rng,
            timeouts=self.config.timeouts,
            on_finish=self._finished,
            clock=self.config.clock,
            encoder=self._encode if self.config.encode_workers > 0 else None,
            **kwargs,
        )
        self.lobby.add(room)
        return room

    def prepare_game(self, slots: list[RoomSeat], paused: bool = False) -> Room:
        """A prepared game with these slots (reservation codes in them), as an administrator's ``prepare``
        makes it; for hosts that run the server in-process (``net.external``)."""
        return self._new_room(prepared=True, paused=paused, slots=slots)

    async def _encode(self, room_id: str, state, names: tuple[str, str]) -> str:
        if self._pool is None:
            self._start_pool()
        return await asyncio.get_running_loop().run_in_executor(self._pool, wire.memento_xml, room_id, state, names)

    def _admins(self) -> list[ClientConn]:
        return [c for c in self.clients if c.admin and not c.closed]

    def join(self, client: ClientConn, game_type: str | None = None) -> None:
        if client.room is not None and not client.room.finished:
            client.drop("join while already in a game")
            return
        room = self.lobby.open_join_room()  # the type of an open room is not checked
        existing = room is not None
        season = self.config.season
        if room is None and season.one_game_type and game_type not in (None, season.game_type):
            # 27.x bundles one plugin: a new room of another type is a non-rescuable error
            # (docs/spec/season-2027.md §3.2)
            client.drop(f"unknown game type {game_type!r}: this server plays {season.game_type}")
            return
        if room is None:
            room = self._new_room(paused=self.config.paused)
        slot = room.free_slot()
        assert slot is not None, "an open room and a new room both have a free seat"
        client.room = room
        for admin in self._admins():
            admin.send(self.wire.joined_game_room(room.id, existing, sum(s.peer is not None for s in room.slots) + 1))
        room.add_player(client, slot)

    def join_prepared(self, client: ClientConn, message: M.JoinPrepared) -> None:
        if client.room is not None and not client.room.finished:  # one slot per connection
            client.drop("joinPrepared while already in a game")
            return
        reservation = self.lobby.reservations.get(message.reservation_code)
        if reservation is None or reservation.slot.peer is not None or reservation.room.finished:
            # 21.3.3: top-level error, the connection stays open (but not for ever)
            client.refusals += 1
            if client.refusals > self.config.connections.max_refusals:
                client.drop("too many unknown reservations")
                return
            original = M.OriginalRequest(cls="joinPrepared", reservation_code=message.reservation_code)
            client.send(self.wire.lobby_error(UNKNOWN_RESERVATION, original))
            return
        client.room = reservation.room
        reservation.room.add_player(client, reservation.slot)

    def join_room(self, client: ClientConn, room_id: str) -> None:
        if client.room is not None and not client.room.finished:  # one slot per connection
            client.drop("joinRoom while already in a game")
            return
        room = self.lobby.rooms.get(room_id)
        slot = room.open_slot() if room is not None and not room.started else None
        if room is None or slot is None:  # like an unknown reservation: one error, the connection stays open
            client.refusals += 1
            if client.refusals > self.config.connections.max_refusals:
                client.drop("too many refused joins")
                return
            original = M.OriginalRequest(cls="joinRoom", room_id=room_id)
            client.send(self.wire.lobby_error(f"No free seat without a reservation in room {room_id}.", original))
            return
        client.room = room
        room.add_player(client, slot)

    def disconnected(self, client: ClientConn) -> None:
        for watched in list(client.observing):
            if client in watched.observers:
                watched.observers.remove(client)
        client.observing.clear()
        room = client.room
        if room is None:
            return
        room.on_leave(client)
        if not room.started and not room.prepared and all(s.peer is None for s in room.slots):
            self.lobby.remove(room)

    def _finished(self, room: Room, record: FinishedGame) -> None:
        self.lobby.remove(room)
        for slot in room.slots:  # after <left> the players are disconnected (they need not close first)
            if isinstance(slot.peer, ClientConn):
                slot.peer.close("the game is over")
        self.records.append(record)
        for observer in room.observers:  # an observer's list of rooms does not keep finished games alive
            if isinstance(observer, ClientConn) and room in observer.observing:
                observer.observing.remove(room)
        if self.output is not None:  # never blocks: a stdout nobody reads must not stop the games
            self.output.write(printable(record.summary(), None))
        if self.config.replay_dir is not None and room.history:
            try:
                path = save_replay(self.config.replay_dir, room)
                log.info("replay written to %s", path)
            except OSError as exc:
                log.error("cannot write replay: %s", exc)
        if self.on_game_end is not None:
            self.on_game_end(record)

    # --- administration ---------------------------------------------------------------------------

    def admin(self, client: ClientConn, message: M.XmlModel) -> None:
        rooms = self.lobby.rooms
        room: Room | None
        match message:
            case M.Prepare():
                slots_in = list(message.slots) or [M.Slot(), M.Slot()]
                slots = []
                for index, team in enumerate((Team.ONE, Team.TWO)):
                    spec = slots_in[index] if index < len(slots_in) else M.Slot()
                    # reserved="false" (21.4.0/27.x): no code, the slot is for joinRoom; 21.3.3 reserves all
                    code = None if spec.reserved is False else str(uuid.uuid4())
                    slots.append(
                        RoomSeat(team, display_name=spec.display_name, can_timeout=spec.can_timeout, reservation=code)
                    )
                room = self._new_room(prepared=True, paused=bool(message.pause), slots=slots)
                client.send(self.wire.prepared(room.id, [s.reservation for s in slots if s.reservation]))
            case M.Observe():
                room = rooms.get(message.room_id)
                if room is None:
                    client.drop(f"observe: unknown room {message.room_id!r}")
                    return
                client.send(self.wire.observed(room.id))
                client.observing.append(room)
                room.add_observer(client)
            case M.Pause():
                if (room := rooms.get(message.room_id)) is not None:
                    room.set_paused(message.pause)
            case M.Step():
                if (room := rooms.get(message.room_id)) is not None:
                    room.step(message.forced)
            case M.Cancel():
                if (room := rooms.get(message.room_id)) is not None:
                    room.cancel()
            case M.FreeReservation():
                reservation = self.lobby.reservations.pop(message.reservation, None)
                if reservation is not None:
                    reservation.slot.reservation = None
            case M.Timeout():
                room = rooms.get(message.room_id)
                if room is not None and 0 <= message.slot < len(room.slots):
                    room.slots[message.slot].can_timeout = message.activate
            case M.TestMode():
                client.send(self.wire.testing(message.test_mode))
            case _:
                log.info("ignored admin request %s", type(message).__name__)


# --- replays ------------------------------------------------------------------------------------------


def room_replay(room: Room) -> bytes:
    """The replay file of ``room``'s game: every state sent, then the result (if there is one yet)."""
    return replay_layout([*room.history_xml, *([room.result_xml] if room.result_xml is not None else [])])


def save_replay(directory: Path, room: Room) -> Path:
    """Write the game of ``room`` (every state sent, then the result) in the official replay format.

    The messages are written exactly as they were sent (``to_xml(pretty=True)``, the layout of
    ``model.replay``'s writer), so no state is serialized a second time on the server's event loop.
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = new_replay_path(directory, room.names, room.season)
    path.write_bytes(room_replay(room))
    records = room_records(room)
    if records:
        write_records(path, records)
    return path


def room_records(room: Room) -> list[MoveRecord]:
    """Each kept move's time as the server measured it (request sent to move received); a client reports
    nothing of its search. A refused move made no turn, so it has no record."""
    timings = ((turn, seconds, "client") for turn, seconds in zip(room.latency_turns, room.latencies, strict=True))
    return measured_records((e.turn for e in room.record.events if isinstance(e, MoveEvent)), timings)
