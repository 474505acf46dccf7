"""Network play: the game screen driven by a server connection (``net.connection``).

The server owns the game: our moves are checked by the rule engine and sent; the state that comes back
is appended to the session's timeline. Every message in and out goes to the XML pane.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from datetime import datetime

from ai.base import Player
from model.moves import Move
from model.pieces import Shape, Team
from model.season import DEFAULT_PORT, DEFAULT_SEASON
from model.state import GameState
from tui.app import BlokusApp
from tui.game_screen import LAYOUT_CSS, GameScreen, responsive_css
from tui.replays import result_texts
from tui.session import Feedback, GameSession, Seat, Timeline
from tui.widgets import XmlPane

log = logging.getLogger(__name__)

SOFT_LIMIT = DEFAULT_SEASON.soft_timeout_ms / 1000  # seconds per move on a server whose slot can time out


def wall_stamp() -> str:
    return datetime.now().strftime("%H:%M:%S.%f")[:-3] + " "


class NetworkGameScreen(GameScreen):
    """Plays our team on a server; autopilot available; raw XML pane (x)."""

    DEFAULT_CSS = LAYOUT_CSS + responsive_css("NetworkGameScreen")

    def __init__(self, host: str, port: int, *, reservation: str | None = None, room: str | None = None,
                 player: Player, hint_player: Player, ai_time: float = 1.0, name: str | None = None,
                 clock_limit: float | None = SOFT_LIMIT, stamp: Callable[[], str] = wall_stamp,
                 connection_factory=None, save_replay=None, season=None) -> None:
        session = GameSession(Timeline(GameState.new(Shape.PENTO_L)), {Team.ONE: Seat.HUMAN, Team.TWO: Seat.REMOTE},
                              {Team.ONE: name or "you", Team.TWO: "opponent"}, local=False)
        session.send = self._send
        session.feedback = Feedback(f"connecting to {host}:{port} …")
        self._waiting_first_state = True
        super().__init__(session, {}, hint_player, ai_time=min(ai_time, 1.5), network=True,
                         title=f"Blokus @ {host}:{port}", save_replay=save_replay)
        self.host, self.port = host, port
        self.reservation, self.room = reservation, room
        self.player = player
        self.clock_limit = clock_limit
        self.season = season  # asked for with --season; the server's states decide
        self.stamp = stamp
        self.my_team: Team | None = None
        self.my_name = name
        self.conn = None
        self._connection_factory = connection_factory
        self._pending_xml: list[tuple[str, str]] = []
        self.result = None
        self._change_pending = False
        self.traffic: list[tuple[str, str, str]] = []  # (direction, time stamp, xml) of every message

    # --- connection -------------------------------------------------------------------------------

    def on_mount(self) -> None:
        super().on_mount()
        self.run_worker(self._run_connection(), group="net", exit_on_error=False)

    def _traffic(self, direction: str, xml: str) -> None:
        self.traffic.append((direction, self.stamp(), xml))
        try:
            self.query_one(XmlPane).add_message(direction, xml, self.traffic[-1][1])
        except Exception:
            log.exception("xml pane")
        log.info("%s %s", "<<" if direction == "in" else ">>", xml)

    async def _run_connection(self) -> None:
        from net.connection import (
            Closed,
            Connection,
            ConnectionFailed,
            GameOver,
            Ignored,
            MoveRequested,
            ServerError,
            StateChanged,
            Welcome,
        )

        factory = self._connection_factory or Connection
        conn = factory(self.host, self.port, on_traffic=self._traffic,
                       **({"season": self.season} if self.season is not None else {}))
        self.conn = conn
        s = self.session
        try:
            await conn.open()
            await conn.join(reservation=self.reservation, room=self.room)
        except (ConnectionFailed, ConnectionError, OSError) as exc:
            s.end_reason = f"Could not connect: {exc}"
            s.result_text = "No game — connection failed"
            s.feedback = Feedback(str(exc), True)
            self.after_change()
            return
        what = f"reservation {self.reservation}" if self.reservation else f"room {self.room}" if self.room else \
            "any open game"
        s.feedback = Feedback(f"connected to {self.host}:{self.port}, joining {what} …")
        self.refresh_view()
        async for event in conn:
            try:
                if isinstance(event, Welcome):
                    self.my_team = event.team
                    other = event.team.opponent
                    s.seats = {event.team: Seat.HUMAN, other: Seat.REMOTE}
                    s.names = {event.team: s.names.get(Team.ONE, "you"), other: "opponent"}
                    self.players = {event.team: self.player}
                    colors = " and ".join(c.name for c in event.team.colors)
                    s.feedback = Feedback(f"you are team {event.team.name} ({colors})")
                elif isinstance(event, StateChanged):
                    self._on_state(event.state, event.names)
                elif isinstance(event, MoveRequested):
                    s.move_requested = True
                    self.clock_deadline = event.at + self.clock_limit if self.clock_limit else None
                    if self.clock_limit and s.is_human_turn():
                        s.feedback = Feedback(f"your move — the server may allow only {self.clock_limit:g} s "
                                              "(m lets the AI move, o switches on autopilot)")
                    s.begin_turn()
                elif isinstance(event, GameOver):
                    self.result = event.result
                    s.result = event.result
                    s.move_requested = False
                    self.clock_deadline = None
                    title, lines = result_texts(event.result, s.state, s.names)
                    s.result_text = title
                    s.end_reason = "\n".join(lines[1:]) or "Regular end."
                elif isinstance(event, Ignored):
                    self.query_one(XmlPane).add_note(f"ignored: {event.reason}")
                elif isinstance(event, ServerError):
                    text = event.message.strip().replace("\n", " ")
                    s.feedback = Feedback(f"server error: {text}", True)
                elif isinstance(event, Closed):
                    self.clock_deadline = None
                    s.move_requested = False
                    if self.result is None:
                        s.result_text = "Game aborted"
                        s.end_reason = f"The connection ended before a result: {event.reason}"
                self._schedule_change()
            except Exception:
                log.exception("handling %r failed", event)

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
        if self._waiting_first_state:
            self._waiting_first_state = False
            s.timeline = Timeline(state)
        else:
            s.timeline.append(state)
        for team in Team:
            if team == self.my_team and self.my_name:
                continue  # our own name as given on the command line
            if names[team] and names[team] != "Unknown":
                s.names[team] = names[team]
        s.move_requested = False
        s.begin_turn()

    def _send(self, move: Move) -> None:
        self.clock_deadline = None
        self.run_worker(self._send_move(move), group="net-send", exit_on_error=False)

    async def _send_move(self, move: Move) -> None:
        try:
            await self.conn.send_move(move)
        except (ValueError, ConnectionError) as exc:
            self.session.feedback = Feedback(f"not sent: {exc}", True)
            self.refresh_view()

    def check_end(self) -> None:
        if self._waiting_first_state and not self.session.end_reason:
            return
        super().check_end()

    def end_texts(self) -> tuple[str, str]:
        s = self.session
        if self.result is None:
            return s.result_text or "Game over", s.end_reason or ""
        title, lines = result_texts(self.result, s.state, s.names)
        return title, "\n".join(lines)

    async def action_quit(self) -> None:
        self.cancel_ai()
        if self.conn is not None:
            try:
                await self.conn.close()
            except Exception:
                log.exception("closing the connection")
        self.app.exit()

    def status_text(self):
        if not self._waiting_first_state:
            return super().status_text()
        from rich.style import Style
        from rich.text import Text

        s = self.session  # no game yet: nobody is "to move" on the placeholder board
        t = Text()
        t.append(f"Blokus @ {self.host}:{self.port}\n", Style(bold=True))
        t.append("not connected" if s.end_reason else "connecting …")
        t.append("\n\n")
        t.append(s.result_text or "waiting for the server …", Style(bold=bool(s.result_text)))
        return t


def save_network_replay(screen: NetworkGameScreen) -> str:
    """The game as an official replay under replays/, and beside it the raw XML log of the connection."""
    from tui.app import save_game_replay

    path = save_game_replay(screen)
    log_path = path[: -len(".xml")] + ".traffic.txt" if path.endswith(".xml") else path + ".traffic.txt"
    with open(log_path, "w", encoding="utf-8") as f:
        for direction, stamp, xml in screen.traffic:
            f.write(f"{'<<' if direction == 'in' else '>>'} {stamp}\n{xml.strip()}\n\n")
    return f"{path} (+ raw XML log {log_path})"


def build_network_app(args: argparse.Namespace) -> BlokusApp:
    from ai import DEFAULT_AI, make_player
    from tui.app import season_of_args

    host = args.host or "localhost"
    port = DEFAULT_PORT if args.port is None else args.port
    if not 0 < port < 65536:
        raise ValueError(f"invalid port {port}")
    ai = args.ai or (args.opponent if args.opponent and args.opponent != "human" else DEFAULT_AI)
    player = make_player(ai, args.seed)
    hint = make_player(ai, None if args.seed is None else args.seed + 7)

    def make() -> NetworkGameScreen:
        return NetworkGameScreen(host, port, reservation=args.reservation, room=args.room, player=player,
                                 hint_player=hint, ai_time=args.ai_time, name=args.name,
                                 save_replay=save_network_replay, season=season_of_args(args))

    return BlokusApp(make, theme="textual-light" if args.light else "textual-dark")

