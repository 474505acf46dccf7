"""The client side of the protocol: one TCP connection to a game server, as a stream of typed events.

Usage (the bot, the TUI's network play)::

    conn = Connection("localhost", 13050, on_traffic=print_raw)
    await conn.open()                       # raises ConnectionFailed (refused, unknown host, timeout)
    await conn.join(reservation="RC1")      # or room="…", or nothing: any open game
    async for event in conn:                # ends after the final Closed event
        match event:
            case MoveRequested(state=state):
                await conn.send_move(move)  # validated against conn.state, exactly once per request
            case GameOver(result=result): ...
            case Closed(error=True, reason=reason): ...

Every event carries ``raw`` (the XML text of the message that caused it; ``""`` for events without a
message) and ``at`` (``time.monotonic()`` when its bytes were read). Outgoing messages are reported as
:class:`Sent` events and, like incoming ones, to the ``on_traffic(direction, xml)`` callback, so a
raw-XML pane can show both directions in order.

The reader runs in its own task and never waits for the consumer: a slow consumer (a search) does not
stop the socket from being read. The last event is always exactly one :class:`Closed`: after ``left``
and ``</protocol>`` (clean), or on a lost connection, an unexpected end of stream or a protocol error
(``error=True`` with a one-line ``reason``). Nothing here hangs: connecting has a timeout, and a
closed socket ends the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from lxml import etree

from blokus.model import convert
from blokus.model import messages as M
from blokus.model.framing import DEFAULT_MAX_MESSAGE_SIZE, END_OF_STREAM, ProtocolError, StreamFramer, TruncatedStream
from blokus.model.moves import Move
from blokus.model.pieces import Team
from blokus.model.result import GameResult
from blokus.model.season import DEFAULT_PORT, DEFAULT_SEASON, SEASONS, Season, season_of_class
from blokus.model.state import GameState

log = logging.getLogger("blokus.net")

IN, OUT = "in", "out"
READ_SIZE = 64 * 1024
# Events read but not yet taken by the consumer: beyond this the connection stops reading until it takes
# some (TCP then slows the server down), so a server that sends faster than we handle costs no memory.
MAX_PENDING_EVENTS = 64


# --- events -------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Event:
    raw: str = ""  # XML of the message that caused the event ("" if none)
    at: float = field(default_factory=time.monotonic)  # monotonic time its bytes arrived


@dataclass(frozen=True, kw_only=True)
class Sent(Event):
    """A message this client wrote (``raw`` is its XML)."""


@dataclass(frozen=True, kw_only=True)
class Joined(Event):
    room_id: str


@dataclass(frozen=True, kw_only=True)
class Welcome(Event):
    room_id: str
    team: Team  # ONE plays BLUE and RED, TWO plays YELLOW and GREEN


@dataclass(frozen=True, kw_only=True)
class StateChanged(Event):
    room_id: str
    state: GameState
    names: tuple[str, str] = ("", "")  # display names of team ONE and TWO
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class MoveRequested(Event):
    """The server wants a move for ``state.color``; the clock started at ``at``."""

    room_id: str
    state: GameState | None  # the latest state (a copy); None if no memento came first
    for_team: Team | None = None  # our team (from the welcome message)


@dataclass(frozen=True, kw_only=True)
class GameOver(Event):
    room_id: str
    result: GameResult


@dataclass(frozen=True, kw_only=True)
class ServerError(Event):
    """An error message: in a room (invalid move, not requested) or in the lobby (``lobby=True``)."""

    message: str
    room_id: str | None = None
    move: Move | None = None  # the offending move echoed by the server
    lobby: bool = False


@dataclass(frozen=True, kw_only=True)
class Left(Event):
    room_id: str


@dataclass(frozen=True, kw_only=True)
class Prepared(Event):
    """Answer to an administrator's ``prepare``: the room and one reservation code per slot."""

    room_id: str
    reservations: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Observed(Event):
    """Answer to an administrator's ``observe``: the room's messages follow."""

    room_id: str


@dataclass(frozen=True, kw_only=True)
class Ignored(Event):
    """A message that was read but not understood (logged and dropped, docs/spec/protocol.md §9)."""

    reason: str


@dataclass(frozen=True, kw_only=True)
class Closed(Event):
    """The last event. ``error``: lost connection, unexpected end of stream, protocol error; ``broken``: the server
    sent what the protocol does not allow (a DOCTYPE, malformed XML, too much): its answer, not a dropped join."""

    reason: str
    error: bool = False
    broken: bool = False


class ConnectionFailed(Exception):
    """Could not connect (refused, unknown host, timeout)."""


# --- the connection -----------------------------------------------------------------------------------


class Connection:
    def __init__(
        self,
        host: str = "localhost",
        port: int = DEFAULT_PORT,
        *,
        connect_timeout: float = 10.0,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        on_traffic: Callable[[str, str], None] | None = None,
        close_on_left: bool = True,
        season: Season | None = None,
        sock: socket.socket | None = None,
    ) -> None:
        self.host, self.port = host, port
        self.sock = sock  # an inherited, already connected socket to use instead of host and port
        # The season: the one asked for (``--season``), until the server's first memento (which comes
        # before the first move request) shows another; then the wire wins (docs/spec/season-2027.md §4.2).
        self.requested_season = season
        self.season: Season = season or DEFAULT_SEASON
        self.season_detected = False
        self.connect_timeout = connect_timeout
        self.max_message_size = max_message_size
        self.on_traffic = on_traffic
        self.close_on_left = close_on_left  # leave (</protocol>, close) as soon as <left> arrives
        self.room_id: str | None = None
        self.team: Team | None = None
        self.state: GameState | None = None
        self.names: tuple[str, str] = ("", "")
        self.result: GameResult | None = None
        self.left = False
        self.move_pending = False  # a move request has not been answered yet
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._events: asyncio.Queue[Event] = asyncio.Queue()
        self._taken = asyncio.Event()  # the consumer took an event (the reader waits for room)
        self._read_task: asyncio.Task | None = None
        self._closed_sent = False
        self._done = False  # the Closed event has been consumed
        self._protocol_closed = False  # we sent </protocol>
        self._closing = False  # close() was called: the end of the stream is no error

    # --- opening and joining ----------------------------------------------------------------------

    async def open(self) -> None:
        """Connect and send ``<protocol>``. Raises :class:`ConnectionFailed` with a one-line reason."""
        where = f"{self.host}:{self.port}" if self.sock is None else "the inherited socket"
        try:
            connecting = (
                asyncio.open_connection(self.host, self.port)
                if self.sock is None
                else asyncio.open_connection(sock=self.sock)
            )
            self._reader, self._writer = await asyncio.wait_for(connecting, self.connect_timeout)
        except TimeoutError as exc:
            raise ConnectionFailed(f"cannot connect to {where}: timed out") from exc
        except OSError as exc:
            if isinstance(exc, socket.gaierror) or not exc.errno or exc.errno < 0:
                reason = exc.strerror or str(exc)
            else:
                reason = os.strerror(exc.errno)
            raise ConnectionFailed(f"cannot connect to {where}: {reason}") from exc
        await self._write(M.PROTOCOL_OPEN)
        self._read_task = asyncio.create_task(self._read_loop(), name="blokus-connection-reader")

    async def join(
        self, *, reservation: str | None = None, room: str | None = None, game_type: str | None = None
    ) -> None:
        """Join: a reservation code, else a room id (21.4.0 ``joinRoom``), else any open game of the
        season's game type (``game_type`` overrides it)."""
        message: M.Join | M.JoinPrepared | M.JoinRoom
        if reservation:
            message = M.JoinPrepared(reservation_code=reservation)
        elif room:
            message = M.JoinRoom(room_id=room)
        else:
            message = M.Join(game_type=game_type or self.season.game_type)
        await self.send_message(message)

    # --- sending ----------------------------------------------------------------------------------

    async def send_move(self, move: Move, *, check: bool = True) -> None:
        """Answer the pending move request. With ``check`` (the default) the move must be legal in the
        latest state and a request must be pending; otherwise ``ValueError`` and nothing is sent."""
        if check:
            if not self.move_pending:
                raise ValueError("no move request is pending")
            if self.state is None:
                raise ValueError("no state known")
            mistake = self.state.validate(move) if not self.state.is_over else "game over"
            if mistake is not None:
                raise ValueError(f"illegal move {move}: {getattr(mistake, 'name', mistake)}")
        if self.room_id is None:
            raise ValueError("not in a room")
        self.move_pending = False
        await self.send_message(convert.move_to_message(move, self.room_id, self.season))

    async def send_message(self, message: M.XmlModel) -> None:
        """Send any message model (admin tooling uses this for ``authenticate``, ``prepare`` …)."""
        await self._write(M.to_xml(message))

    async def _write(self, text: str) -> None:
        if self._writer is None or self._writer.is_closing():
            raise ConnectionError("the connection is closed")
        self._writer.write(text.encode("utf-8"))
        self._traffic(OUT, text)
        self._events.put_nowait(Sent(raw=text))
        try:
            await self._writer.drain()
        except OSError as exc:
            raise ConnectionError(f"connection lost: {exc}") from exc

    def _traffic(self, direction: str, text: str) -> None:
        if self.on_traffic is not None:
            try:
                self.on_traffic(direction, text)
            except Exception:  # a display problem must not break the connection
                log.exception("traffic callback failed")

    async def close(self) -> None:
        """Leave: ``</protocol>``, then close the socket. Safe to call more than once."""
        writer = self._writer
        if writer is None:
            return
        self._closing = True
        if not self._protocol_closed and not writer.is_closing():
            self._protocol_closed = True
            with contextlib.suppress(Exception):
                await self._write(M.PROTOCOL_CLOSE)
        if not writer.is_closing():
            writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(writer.wait_closed(), 2.0)
        if self._read_task is not None and not self._read_task.done():
            # give the reader a moment to see the end of the stream, then stop it
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._read_task), 1.0)
            self._read_task.cancel()
            with contextlib.suppress(BaseException):
                await self._read_task
        self._emit_closed("connection closed by the client", error=False)

    # --- events -----------------------------------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        while not self._done:
            event = await self._events.get()
            self._taken.set()
            if isinstance(event, Closed):
                self._done = True
            yield event

    async def next_event(self) -> Event:
        """The next event (for consumers that do not iterate); after the last, :class:`Closed` again."""
        if self._done:
            return Closed(reason="connection closed")
        event = await self._events.get()
        self._taken.set()
        if isinstance(event, Closed):
            self._done = True
        return event

    def _emit_closed(self, reason: str, *, error: bool, broken: bool = False) -> None:
        if self._closing and error:
            reason, error, broken = "connection closed by the client", False, False
        if not self._closed_sent:
            self._closed_sent = True
            self.move_pending = False
            self._events.put_nowait(Closed(reason=reason, error=error, broken=broken))

    async def _read_loop(self) -> None:
        framer = StreamFramer(self.max_message_size)
        reader = self._reader
        assert reader is not None
        try:
            while True:
                try:
                    data = await reader.read(READ_SIZE)
                except (ConnectionError, OSError) as exc:
                    self._emit_closed(f"connection lost: {exc.strerror or exc}", error=True)
                    return
                at = time.monotonic()
                if not data:
                    try:
                        framer.close()
                    except TruncatedStream as exc:
                        if self.left or self.result is not None:
                            self._emit_closed("connection closed by the server", error=False)
                        elif framer.bytes_read == 0:
                            self._emit_closed("the server closed the connection without a word", error=True)
                        else:
                            self._emit_closed(f"connection lost: {exc}", error=True)
                        return
                    self._emit_closed("the server ended the stream", error=not (self.left or self.result))
                    return
                first = framer.bytes_read == 0
                try:
                    frames = framer.feed(data)
                except ProtocolError as exc:
                    reason = str(exc)
                    if first and not data.lstrip().startswith(b"<"):  # e.g. an HTTP server on that port
                        line = data.lstrip().splitlines()[0][:60].decode("utf-8", "replace")
                        reason = (
                            f"{self.host}:{self.port} is not a Software-Challenge game server (it answered {line!r})"
                        )
                    for frame in exc.frames:  # the messages completed before the error come first
                        if frame is not END_OF_STREAM:
                            self._handle(frame, at)
                    self._emit_closed(f"protocol error: {reason}", error=True, broken=True)
                    self._abort()
                    return
                for frame in frames:
                    if frame is END_OF_STREAM:
                        self._traffic(IN, M.PROTOCOL_CLOSE)
                        self._emit_closed(
                            "the server ended the stream"
                            if (self.left or self.result)
                            else "the server ended the stream before the game was over",
                            error=not (self.left or self.result),
                        )
                        self._abort()
                        return
                    self._handle(frame, at)
                    if self.left and self.close_on_left:
                        self._leave()
                        return
                while self._events.qsize() >= MAX_PENDING_EVENTS:  # the consumer is behind: read no more
                    self._taken.clear()
                    await self._taken.wait()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug must end the stream, not hang the consumer
            log.exception("connection reader failed")
            self._emit_closed(f"internal error: {type(exc).__name__}: {exc}", error=True)
            self._abort()

    def _leave(self) -> None:
        """After ``left``: ``</protocol>`` (2027: ``<close/>`` first, docs/spec/season-2027.md §3.1), close the socket,
        end the event stream (docs/spec/protocol.md §2)."""
        writer = self._writer
        if writer is not None and not writer.is_closing():
            if not self._protocol_closed:
                self._protocol_closed = True
                closing = [M.to_xml(M.Close())] if self.season.close_tag == "close" else []
                for text in [*closing, M.PROTOCOL_CLOSE]:
                    writer.write(text.encode())
                    self._traffic(OUT, text)
                    self._events.put_nowait(Sent(raw=text))
            writer.close()
        self._emit_closed("left the room", error=False)

    def _abort(self) -> None:
        if self._writer is not None and not self._writer.is_closing():
            self._writer.close()

    def _handle(self, element: etree._Element, at: float) -> None:
        raw = etree.tostring(element, encoding="unicode", with_tail=False)
        self._traffic(IN, raw)
        for event in self._interpret(convert.parse_message(element), raw, at):
            self._events.put_nowait(event)

    def _interpret(self, message: M.Message, raw: str, at: float) -> list[Event]:
        if isinstance(message, M.UnknownMessage):
            log.warning("ignored: %s", message)
            return [Ignored(raw=raw, at=at, reason=str(message))]
        if isinstance(message, M.Joined):
            self.room_id = message.room_id
            return [Joined(raw=raw, at=at, room_id=message.room_id)]
        if isinstance(message, M.Left):
            self.left = True
            self.move_pending = False
            return [Left(raw=raw, at=at, room_id=message.room_id)]
        if isinstance(message, M.LobbyError | M.ErrorPacket):
            return [ServerError(raw=raw, at=at, message=message.message, lobby=True)]
        if isinstance(message, M.CloseConnection):
            return [Ignored(raw=raw, at=at, reason="the server closes the connection")]
        if isinstance(message, M.Prepared):
            return [Prepared(raw=raw, at=at, room_id=message.room_id, reservations=tuple(message.reservations))]
        if isinstance(message, M.Observed):
            self.room_id = message.room_id
            return [Observed(raw=raw, at=at, room_id=message.room_id)]
        if not isinstance(message, M.Room):
            log.warning("ignored unexpected %s message", type(message).__name__)
            return [Ignored(raw=raw, at=at, reason=f"unexpected {type(message).__name__} message")]
        if self.room_id is None:
            self.room_id = message.room_id
        room_id = message.room_id
        data = message.data
        if isinstance(data, M.WelcomeMessage):
            self.team = data.color
            return [Welcome(raw=raw, at=at, room_id=room_id, team=data.color)]
        if isinstance(data, M.Memento):
            try:
                read = convert.read_state(message)
            except Exception as exc:  # a state that cannot be interpreted: keep the last good one
                log.warning("unreadable state: %s", exc)
                return [Ignored(raw=raw, at=at, reason=f"unreadable state: {exc}")]
            for warning in read.warnings:
                log.warning("state turn %d: %s", read.state.turn, warning)
            self._learn_season(read.detected)
            read.state.season = self.season
            self.state = read.state
            self.names = read.names
            return [
                StateChanged(
                    raw=raw,
                    at=at,
                    room_id=room_id,
                    state=read.state.copy(),
                    names=read.names,
                    warnings=tuple(read.warnings),
                )
            ]
        if isinstance(data, M.MoveRequest):
            self._learn_season(season_of_class(data.cls))
            if self.state is not None:
                self.state.season = self.season
            self.move_pending = True
            state = self.state.copy() if self.state is not None else None
            if state is not None and self.team is not None and state.team != self.team:
                log.warning(
                    "move request for %s, but the state says %s (%s) is to move",
                    self.team.name,
                    state.color.name,
                    state.team.name,
                )
            return [MoveRequested(raw=raw, at=at, room_id=room_id, state=state, for_team=self.team)]
        if isinstance(data, M.ResultData):
            try:
                result = convert.result_from_message(data)
            except Exception as exc:
                return [Ignored(raw=raw, at=at, reason=f"unreadable result: {exc}")]
            self.result = result
            self.move_pending = False
            return [GameOver(raw=raw, at=at, room_id=room_id, result=result)]
        if isinstance(data, M.ErrorData):
            original = data.original
            move = convert.move_from_message(original) if original is not None else None
            return [ServerError(raw=raw, at=at, message=data.message, room_id=room_id, move=move)]
        return [Ignored(raw=raw, at=at, reason=f"unhandled room data {data.cls!r}")]

    def _learn_season(self, detected: Season | None) -> None:
        if detected is None or self.season_detected:
            return
        self.season_detected = True
        if detected is not self.season:
            if self.requested_season is not None:
                log.warning(
                    "asked for season %s, but the server plays %s: following the server",
                    self.requested_season.name,
                    detected.name,
                )
            else:
                log.info("the server plays season %s", detected.name)
            self.season = detected


FIRST_EVENTS_KEPT = 100  # events read while finding out the server's season (bounded)
FIRST_ANSWER_WAIT_S = 10.0  # how long open_and_join waits for the answer to a plain join


async def open_and_join(
    make: Callable[[Season | None], Connection],
    season: Season | None = None,
    *,
    reservation: str | None = None,
    room: str | None = None,
    silence_limit: float | None = None,
) -> tuple[Connection, list[Event]]:
    """Connect and join; returns the connection and the events already read (handle them first).

    ``silence_limit``: a server that answers a plain join with nothing for that long raises ``TimeoutError``
    (the caller's idle limit, which the wait here counts against); None: after ``FIRST_ANSWER_WAIT_S`` the
    caller's own loop goes on waiting.

    With no season asked for, a plain join asks for the default season's game type. A server of the
    other season that has no open room drops a connection asking for a type it does not play (a 27.x
    server bundles one plugin: docs/spec/season-2027.md §3.2); then this connects once more and asks for the other
    season's type, so that a plain ``blokus bot`` finds its game on either server. Raises
    :class:`ConnectionFailed` or ``ConnectionError`` like ``open`` and ``join``.
    """

    async def start(season: Season | None) -> Connection:
        conn = make(season)
        try:
            await conn.open()
            await conn.join(reservation=reservation, room=room)
        except BaseException:
            await conn.close()
            raise
        return conn

    conn = await start(season)
    if season is not None or reservation or room:
        return conn, []
    seen: list[Event] = []
    while True:
        try:
            event = await asyncio.wait_for(conn.next_event(), silence_limit or FIRST_ANSWER_WAIT_S)
        except TimeoutError:
            if silence_limit is not None:
                await conn.close()
                raise
            return conn, seen  # a slow server: go on waiting in the caller's loop
        seen.append(event)
        if isinstance(event, Closed) and event.broken:  # not a drop: the server's answer is the reason
            return conn, seen
        if isinstance(event, Closed):
            break
        if len(seen) > FIRST_EVENTS_KEPT:  # a flood before the first real answer: the caller's loop judges it
            return conn, seen
        if not isinstance(event, Sent | Ignored):  # our own join; a 27.x server's <close/> before it hangs up
            return conn, seen
    await conn.close()
    other = next(s for s in SEASONS.values() if s is not conn.season)
    log.warning(
        "the server closed the connection after a join for season %s (%s); trying season %s",
        conn.season.name,
        event.reason,
        other.name,
    )
    return await start(other), []
