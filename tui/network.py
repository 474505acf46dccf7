"""Network play: the game screen driven by a server connection (``net.connection``).

The server owns the game: our moves are checked by the rule engine and sent; the state that comes back
is appended to the session's timeline. Every message in and out goes to the XML pane.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any

from rich.style import Style
from rich.text import Text

from ai.base import Player
from model import server_texts
from model.moves import Move
from model.pieces import Shape, Team
from model.result import GameResult, end_texts
from model.season import Season
from model.state import GameState
from model.text import printable
from net.connection import (
    Closed,
    Connection,
    ConnectionFailed,
    GameOver,
    Ignored,
    Joined,
    MoveRequested,
    ServerError,
    StateChanged,
    Welcome,
    open_and_join,
)
from tui.colors import palette_for
from tui.game_screen import GameScreen
from tui.jobs import start_job
from tui.session import Aborted, Feedback, GameSession, Seat, Timeline
from tui.status import StatusContext
from tui.widgets import StatusBar, XmlPane

log = logging.getLogger(__name__)

XML_PANE_MIN_HEIGHT = 44  # terminal lines from which the XML pane is shown at the start


def wall_stamp() -> str:
    return datetime.now().strftime("%H:%M:%S.%f")[:-3] + " "


class NetworkGameScreen(GameScreen):
    """Plays our team on a server; autopilot available; raw XML pane (x).

    ``clock_limit``: the seconds the server allows per move, when known (None: no countdown)."""

    network = True

    def __init__(
        self,
        host: str,
        port: int,
        *,
        reservation: str | None = None,
        room: str | None = None,
        player: Player,
        hint_player: Player,
        move_time_ms: int = 1000,
        name: str | None = None,
        team: Team | None = None,
        clock_limit: float | None = None,
        stamp: Callable[[], str] = wall_stamp,
        connection_factory=None,
        save_replay=None,
        season: Season | None = None,
    ) -> None:
        session = GameSession(
            Timeline(GameState.new(Shape.PENTO_L)),
            {Team.ONE: Seat.HUMAN, Team.TWO: Seat.REMOTE},
            {Team.ONE: name or "you", Team.TWO: "opponent"},
            local=False,
            started=False,
        )
        session.send = self._send
        session.feedback = Feedback(f"connecting to {host}:{port} …")
        super().__init__(
            session,
            {},
            hint_player,
            move_time_ms=move_time_ms,
            title=f"Blokus @ {host}:{port}",
            save_replay=save_replay,
        )
        self.ai.clock = lambda: (self.clock_started, self.clock_limit)  # the AI answers within the server's clock
        self.host, self.port = host, port
        self.reservation, self.room = reservation, room
        self.player = player
        self.wanted_team = team
        self.clock_limit = clock_limit
        self.season = season  # asked for with --season; the server's states decide
        self.clock_started: float | None = None  # monotonic arrival of the current move request
        self.stamp = stamp
        self.my_team: Team | None = None
        self.my_name = name
        self.conn: Connection | None = None
        self._connection_factory = connection_factory or Connection
        self.failed = False  # the connection could not be opened: blokus play exits non-zero
        self.joined = False  # the server put us in a room (until the game starts: waiting for an opponent)
        self._change_pending = False
        self.traffic: list[tuple[str, str, str]] = []  # (direction, time stamp, xml) of every message

    # --- connection -------------------------------------------------------------------------------

    def on_mount(self) -> None:
        if self.app.size.height >= XML_PANE_MIN_HEIGHT:
            self.query_one(XmlPane).add_class("shown")  # on a shorter terminal it would cover the board
        super().on_mount()
        self.set_interval(0.2, self._tick_clock)
        start_job(self, self._run_connection, group="net")

    def _traffic(self, direction: str, xml: str) -> None:
        self.traffic.append((direction, self.stamp(), xml))
        if self.is_attached:  # not after the screen closed (the connection says goodbye)
            try:
                self.query_one(XmlPane).add_message(direction, xml, self.traffic[-1][1])
            except Exception:
                log.exception("xml pane")
        log.info("%s %s", "<<" if direction == "in" else ">>", xml)

    async def _run_connection(self) -> None:
        def make(season: Season | None) -> Connection:
            options: dict[str, Any] = {} if season is None else {"season": season}
            self.conn = conn = self._connection_factory(self.host, self.port, on_traffic=self._traffic, **options)
            return conn

        s = self.session
        try:
            conn, early = await open_and_join(make, self.season, reservation=self.reservation, room=self.room)
        except (ConnectionFailed, ConnectionError, OSError) as exc:
            self.failed = True
            s.end = Aborted("No game — connection failed", f"Could not connect: {exc}")
            s.feedback = Feedback(str(exc), True)
            self.after_change()
            return
        what = (
            f"reservation {self.reservation}"
            if self.reservation
            else f"room {self.room}"
            if self.room
            else "any open game"
        )
        s.feedback = Feedback(f"connected to {self.host}:{self.port}, joining {what} …")
        self.refresh_view()
        for event in early:
            self._handle_logged(event)
        async for event in conn:
            self._handle_logged(event)

    def _handle_logged(self, event: object) -> None:
        try:
            self.handle_server_event(event)
            self._schedule_change()
        except Exception:
            log.exception("handling %r failed", event)

    def handle_server_event(self, event: object) -> None:
        s = self.session
        if isinstance(event, Welcome):
            self.my_team = event.team
            other = event.team.opponent
            s.seats = {event.team: Seat.HUMAN, other: Seat.REMOTE}
            s.names = {event.team: s.names.get(Team.ONE, "you"), other: "opponent"}
            self.ai.players = {event.team: self.player}
            colors = " and ".join(c.name for c in event.team.colors)
            text = f"you are team {event.team.name} ({colors})"
            if self.wanted_team is not None and self.wanted_team is not event.team:
                text += (
                    f" — not {self.wanted_team.name}: the server gives the seats in the order the clients "
                    "join (join first for ONE, second for TWO)"
                )
            s.feedback = Feedback(text)
        elif isinstance(event, Joined):
            self.joined = True  # in the room: the game starts when the other player joins
        elif isinstance(event, StateChanged):
            self._on_state(event.state, event.names)
        elif isinstance(event, MoveRequested):
            s.move_requested = True
            self.clock_started = event.at
            if self.clock_limit is not None and s.is_human_turn():
                s.feedback = Feedback(
                    f"your move — the server allows {self.clock_limit:g} s "
                    "(m lets the AI move, o switches on autopilot)"
                )
            s.begin_turn()
        elif isinstance(event, GameOver):
            s.end = event.result
            s.move_requested = False
            self.clock_started = None
            s.feedback = Feedback(end_texts(event.result, s.state, s.names).short)  # the dialog has the whole title
        elif isinstance(event, Ignored):
            self.query_one(XmlPane).add_note(f"ignored: {printable(event.reason)}")
        elif isinstance(event, ServerError):
            # in English where we know the text; the original is in the XML pane and the log
            text = printable(server_texts.shown(event.message, s.state.season).replace("\n", " "))
            s.feedback = Feedback(f"server error: {text}", True)
        elif isinstance(event, Closed):
            self.clock_started = None
            s.move_requested = False
            if not isinstance(s.end, GameResult):
                s.end = Aborted("Game aborted", f"The connection ended before a result: {printable(event.reason)}")

    def _schedule_change(self) -> None:
        """Coalesce the repaint of several events that arrived together (state + move request …)."""
        if not self._change_pending:
            self._change_pending = True
            self.call_later(self._flush_change)

    def _flush_change(self) -> None:
        self._change_pending = False
        self.after_change()

    def _on_state(self, state: GameState, names: tuple[str, str]) -> None:
        s = self.session
        if not s.started:
            s.started = True
            s.timeline = Timeline(state)
        else:
            s.timeline.append(state)
        for team in Team:
            if team == self.my_team and self.my_name:
                continue  # our own name as given on the command line
            if names[team] and names[team] != "Unknown":
                s.names[team] = printable(names[team], 60)
        s.move_requested = False
        s.begin_turn()

    def _send(self, move: Move) -> None:
        self.clock_started = None
        start_job(self, partial(self._send_move, move), group="net-send")

    async def _send_move(self, move: Move) -> None:
        if self.conn is None:  # a move is asked for only over an open connection
            return
        try:
            await self.conn.send_move(move)
        except (ValueError, ConnectionError) as exc:
            self.say(f"not sent: {exc}", True)

    def _clock_left(self) -> float | None:
        if self.clock_limit is None or self.clock_started is None or not self.session.is_human_turn():
            return None
        return self.clock_limit - (time.monotonic() - self.clock_started)

    def _tick_clock(self) -> None:
        if self._clock_left() is not None:
            self.refresh_board()

    # --- texts ------------------------------------------------------------------------------------

    def status_context(self) -> StatusContext:
        ctx = super().status_context()
        return StatusContext(ctx.palette, ctx.width, self._clock_left(), ctx.waiting)

    def refresh_board(self) -> None:
        if self.session.started:
            super().refresh_board()
            return
        s = self.session  # no game yet: nobody is "to move" on the placeholder board
        t = Text()
        t.append(f"Blokus @ {self.host}:{self.port}\n", Style(bold=True))
        t.append("not connected" if s.end is not None else "connecting …")
        t.append("\n\n")
        aborted = s.end.title if isinstance(s.end, Aborted) else None
        waiting = "waiting for an opponent …" if self.joined else "waiting for the server …"
        t.append(aborted or waiting, Style(bold=bool(aborted), color=palette_for(self.app).text))
        self.query_one(StatusBar).show(t)

    def check_end(self) -> None:
        if not self.session.started and self.session.end is None:
            return
        super().check_end()

    async def leave(self) -> None:
        self.ai.cancel()
        if self.conn is not None:
            try:
                await self.conn.close()
            except Exception:
                log.exception("closing the connection")
        self.app.exit(1 if self.failed else 0)
