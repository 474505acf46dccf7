"""The link of a screen to a game server: a plain object (no Textual in its logic) that follows the connection in
a background job of the screen and posts the screen one message per thing that happened (``ServerNews``: a state
arrived, our move is requested, the game ended, …). The screen decides what each means for what it shows.

``ServerLink``: a player's connection (a network game, or a game against a team's program on an embedded server):
opens it and joins, sends our moves, keeps every message for the XML pane and the saved log, the server's clock.
``WatchLink``: an observer's (``blokus watch``): follows a ``net.watch.Watcher`` that is connected already.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from textual.message import Message

from blokus.model.moves import Move
from blokus.model.pieces import Team
from blokus.model.result import GameResult
from blokus.model.season import Season
from blokus.model.state import GameState
from blokus.net import connection as net
from blokus.net.watch import Watcher
from blokus.tui.jobs import Jobs

log = logging.getLogger(__name__)

Traffic = tuple[str, str, str]  # (direction "in" | "out", time stamp, xml) of one message


def wall_stamp() -> str:
    return datetime.now().strftime("%H:%M:%S.%f")[:-3] + " "


# --- what a link posts ------------------------------------------------------------------------------------


class ServerNews(Message):
    """Something that happened on the link (the subclasses say what)."""


class Connecting(ServerNews):
    """The connection is open; joining ``what`` ("reservation …", "room …", "any open game")."""

    def __init__(self, address: str, what: str) -> None:
        super().__init__()
        self.address, self.what = address, what


class ConnectFailed(ServerNews):
    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class RoomJoined(ServerNews):
    """In a room: the game starts when the other player joins."""


class SeatAssigned(ServerNews):
    """The server gave us ``team``; ``wanted``: the team asked for (None: any)."""

    def __init__(self, team: Team, wanted: Team | None) -> None:
        super().__init__()
        self.team, self.wanted = team, wanted


class StateArrived(ServerNews):
    def __init__(self, state: GameState, names: tuple[str, str]) -> None:
        super().__init__()
        self.state, self.names = state, names


class MoveRequested(ServerNews):
    """The server asks for our move (its clock runs: ``ServerLink.clock``)."""


class GameEnded(ServerNews):
    def __init__(self, result: GameResult) -> None:
        super().__init__()
        self.result = result


class MessageIgnored(ServerNews):
    """A message that was not understood (``reason``), and left aside."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class ServerComplained(ServerNews):
    """The server's error message (``text``, as it sent it)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class LinkClosed(ServerNews):
    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class SendFailed(ServerNews):
    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class TrafficLogged(ServerNews):
    """A message in or out (for the XML pane)."""

    def __init__(self, traffic: Traffic) -> None:
        super().__init__()
        self.direction, self.stamp, self.xml = traffic


def news_of(event: object) -> ServerNews | None:
    """The message a screen gets for one event of ``net.connection`` (None: nothing to tell)."""
    if isinstance(event, net.Joined):
        return RoomJoined()
    if isinstance(event, net.StateChanged):
        return StateArrived(event.state, event.names)
    if isinstance(event, net.MoveRequested):
        return MoveRequested()
    if isinstance(event, net.GameOver):
        return GameEnded(event.result)
    if isinstance(event, net.Ignored):
        return MessageIgnored(event.reason)
    if isinstance(event, net.ServerError):
        return ServerComplained(event.message)
    if isinstance(event, net.Closed):
        return LinkClosed(event.reason)
    return None


# --- a player's link --------------------------------------------------------------------------------------


class ServerLink:
    """Our player's connection to ``host:port`` (a ``reservation``, a ``room``, or any open game).

    ``wanted``: the team asked for (the server decides); ``name``: our name as given (it stays ours whatever the
    server's states say); ``season``: asked for with --season (the server's states decide); ``clock_limit``: the
    seconds the server allows per move, when known (None: no countdown); ``stamp``: the time stamp of a message
    in the XML pane; ``connection_factory``: tests script the server."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        reservation: str | None = None,
        room: str | None = None,
        wanted: Team | None = None,
        name: str | None = None,
        season: Season | None = None,
        clock_limit: float | None = None,
        stamp: Callable[[], str] = wall_stamp,
        connection_factory: Callable[..., net.Connection] | None = None,
    ) -> None:
        self.host, self.port, self.reservation, self.room = host, port, reservation, room
        self.wanted, self.name, self.season, self.clock_limit = wanted, name, season, clock_limit
        self.stamp = stamp
        self._connection_factory = connection_factory or net.Connection
        self.conn: net.Connection | None = None
        self.team: Team | None = None  # ours, once the server said
        self.joined = False  # the server put us in a room (until the game starts: waiting for an opponent)
        self.failed = False  # the connection could not be opened: blokus play exits non-zero
        self.clock_started: float | None = None  # monotonic arrival of the move request not answered yet
        self.traffic: list[Traffic] = []  # every message in and out
        self._jobs: Jobs | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self, jobs: Jobs) -> None:
        """Connect and follow the game in a background job of the screen, which gets the news."""
        self._jobs = jobs
        jobs.start(self._run, group="net")

    def _post(self, news: ServerNews) -> None:
        if self._jobs is not None:
            self._jobs.post(news)

    def _traffic(self, direction: str, xml: str) -> None:
        self.traffic.append((direction, self.stamp(), xml))
        self._post(TrafficLogged(self.traffic[-1]))
        log.info("%s %s", "<<" if direction == "in" else ">>", xml)

    async def _run(self) -> None:
        def make(season: Season | None) -> net.Connection:
            options: dict[str, Any] = {} if season is None else {"season": season}
            self.conn = conn = self._connection_factory(self.host, self.port, on_traffic=self._traffic, **options)
            return conn

        try:
            conn, early = await net.open_and_join(make, self.season, reservation=self.reservation, room=self.room)
        except (net.ConnectionFailed, ConnectionError, OSError) as exc:
            self.failed = True
            self._post(ConnectFailed(str(exc)))
            return
        what = (
            f"reservation {self.reservation}"
            if self.reservation
            else f"room {self.room}"
            if self.room
            else "any open game"
        )
        self._post(Connecting(self.address, what))
        for event in early:
            self._follow(event)
        async for event in conn:
            self._follow(event)

    def _follow(self, event: object) -> None:
        """What the link itself keeps of an event (our team, the room, the clock), then the news of it."""
        if isinstance(event, net.Welcome):
            self.team = event.team
            self._post(SeatAssigned(event.team, self.wanted))
            return
        if isinstance(event, net.Joined):
            self.joined = True
        elif isinstance(event, net.MoveRequested):
            self.clock_started = event.at
        elif isinstance(event, net.GameOver | net.Closed):
            self.clock_started = None
        if (news := news_of(event)) is not None:
            self._post(news)

    def send(self, move: Move) -> None:
        """Send our move (checked by the session already); a failure comes back as ``SendFailed``."""
        self.clock_started = None
        if self._jobs is not None:
            self._jobs.start(partial(self._send, move), group="net-send")

    async def _send(self, move: Move) -> None:
        if self.conn is None:  # a move is asked for only over an open connection
            return
        try:
            await self.conn.send_move(move)
        except (ValueError, ConnectionError) as exc:
            self._post(SendFailed(str(exc)))

    def clock(self) -> tuple[float | None, float | None]:
        """The server's clock of the move asked for: (monotonic start, seconds allowed), or Nones."""
        return self.clock_started, self.clock_limit

    async def close(self) -> None:
        if self.conn is not None:
            try:
                await self.conn.close()
            except Exception:
                log.exception("closing the connection")


# --- an observer's link -----------------------------------------------------------------------------------


class WatchLink:
    """An observer's link: the news of a ``Watcher`` (connected, its first state arrived) for the viewer; the
    game record grows in the watcher (the viewer's timeline shares it)."""

    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher
        self._jobs: Jobs | None = None

    def start(self, jobs: Jobs) -> None:
        self._jobs = jobs
        jobs.start(self._run, group="watch")

    async def _run(self) -> None:
        async for event in self.watcher.events():
            news = news_of(event)
            if self._jobs is not None and isinstance(news, StateArrived | GameEnded | ServerComplained | LinkClosed):
                self._jobs.post(news)

    def save(self, directory: Path) -> Path:
        """The game so far as a replay under ``directory`` (OSError: not written)."""
        return self.watcher.save(directory)
