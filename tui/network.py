"""A game on a server, as the session sees it (no Textual): the session of a network game, what each piece of the
link's news (``tui.server_link``) means for it, and the status before the first state.

The server owns the game: our moves are checked by the rule engine and sent; the state that comes back is
appended to the session's timeline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text

from blokus.ai.interface import Player
from blokus.model import server_texts
from blokus.model.pieces import Shape, Team
from blokus.model.result import GameResult, end_texts
from blokus.model.season import Season
from blokus.model.state import GameState
from blokus.model.text import printable
from blokus.net.connection import Connection
from blokus.tui.colors import Palette
from blokus.tui.server_link import (
    ConnectFailed,
    Connecting,
    GameEnded,
    LinkClosed,
    MoveRequested,
    SeatAssigned,
    SendFailed,
    ServerComplained,
    ServerLink,
    ServerNews,
    StateArrived,
    wall_stamp,
)
from blokus.tui.session import Aborted, Feedback, GameSession, SeatKind, Timeline

XML_PANE_MIN_HEIGHT = 44  # terminal lines from which the XML pane is shown at the start


@dataclass(frozen=True)
class NetworkOptions:
    """A game on a server: where, which room or reservation, the players, the clock.

    ``clock_limit``: the seconds the server allows per move, when known (None: no countdown);
    ``team``: the team asked for (the server decides; a different one is said);
    ``season``: asked for with --season (the server's states decide);
    ``stamp``: the time stamp of a message in the XML pane; ``connection_factory``: tests script the server;
    ``save_replay``: called with the session and the traffic, returns where it saved."""

    host: str
    port: int
    player: Player
    hint_player: Player
    reservation: str | None = None
    room: str | None = None
    move_time_ms: int = 1000
    name: str | None = None
    team: Team | None = None
    clock_limit: float | None = None
    stamp: Callable[[], str] = wall_stamp
    connection_factory: Callable[..., Connection] | None = None
    save_replay: Callable[..., str] | None = None
    season: Season | None = None

    def link(self) -> ServerLink:
        return ServerLink(
            self.host,
            self.port,
            reservation=self.reservation,
            room=self.room,
            wanted=self.team,
            name=self.name,
            season=self.season,
            clock_limit=self.clock_limit,
            stamp=self.stamp,
            connection_factory=self.connection_factory,
        )


def network_session(link: ServerLink) -> GameSession:
    """The session of a game on a server before it starts: a placeholder board, our moves sent by ``link``."""
    session = GameSession(
        Timeline(GameState.new(start_piece=Shape.PENTO_L)),
        {Team.ONE: SeatKind.HUMAN, Team.TWO: SeatKind.REMOTE},
        {Team.ONE: link.name or "you", Team.TWO: "opponent"},
        local=False,
        started=False,
    )
    session.send = link.send
    session.feedback = Feedback(f"connecting to {link.address} …")
    return session


def apply_news(session: GameSession, news: ServerNews, link: ServerLink) -> None:
    """What ``news`` of a player's link means for the session of its game."""
    s = session
    if isinstance(news, Connecting):
        s.feedback = Feedback(f"connected to {news.address}, joining {news.what} …")
    elif isinstance(news, ConnectFailed):
        s.end = Aborted("No game — connection failed", f"Could not connect: {news.reason}")
        s.feedback = Feedback(news.reason, True)
    elif isinstance(news, SeatAssigned):
        team, other = news.team, news.team.opponent
        s.seats = {team: SeatKind.HUMAN, other: SeatKind.REMOTE}
        s.names = {team: s.names.get(Team.ONE, "you"), other: "opponent"}
        colors = " and ".join(c.name for c in team.colors)
        text = f"you are team {team.name} ({colors})"
        if news.wanted is not None and news.wanted is not team:
            text += (
                f" — not {news.wanted.name}: the server gives the seats in the order the clients "
                "join (join first for ONE, second for TWO)"
            )
        s.feedback = Feedback(text)
    elif isinstance(news, StateArrived):
        _state_arrived(s, news, link)
    elif isinstance(news, MoveRequested):
        s.move_requested = True
        if link.clock_limit is not None and s.is_human_turn():
            s.feedback = Feedback(f"your move — {link.clock_limit:g} s on the clock (m: the AI moves, o: autopilot)")
        s.begin_turn()
    elif isinstance(news, GameEnded):
        s.end = news.result
        s.move_requested = False
        s.feedback = Feedback(end_texts(news.result, s.state, s.names).short)  # the dialog has the whole title
    elif isinstance(news, ServerComplained):
        # in English where we know the text; the original is in the XML pane and the log
        text = printable(server_texts.shown(news.text, s.state.season).replace("\n", " "))
        s.feedback = Feedback(f"server error: {text}", True)
    elif isinstance(news, LinkClosed):
        s.move_requested = False
        if not isinstance(s.end, GameResult):
            s.end = Aborted("Game aborted", f"The connection ended before a result: {printable(news.reason)}")
    elif isinstance(news, SendFailed):
        s.feedback = Feedback(f"not sent: {news.reason}", True)


def _state_arrived(s: GameSession, news: StateArrived, link: ServerLink) -> None:
    if not s.started:
        s.started = True
        s.timeline = Timeline(news.state)
    else:
        s.timeline.append(news.state)
    for team in Team:
        if team == link.team and link.name:
            continue  # our own name as given on the command line
        if news.names[team] and news.names[team] != "Unknown":
            s.names[team] = printable(news.names[team], 60)
    s.move_requested = False
    s.begin_turn()


TIME_LIMIT_TITLE = "This server has a time limit"


def time_limit_notice(link: ServerLink) -> str | None:
    """What a human on a timed server is told once, when it has joined (before the game and its clock start): the
    limit and the ways out. None on an untimed server (``--no-timeout``)."""
    if link.clock_limit is None:
        return None
    return (
        f"You have {link.clock_limit:g} s per move; a later move loses the game.\n"
        "m: the AI plays this move for you · o: autopilot (the AI plays on)\n"
        "To think as long as you like, play on an untimed server:\n"
        "blokus serve --no-timeout, and join with --no-timeout"
    )


def clock_left(link: ServerLink, session: GameSession, now: float) -> float | None:
    """Seconds left on the server's clock for the human's move (None: no clock, or not the human's move)."""
    started, limit = link.clock()
    if limit is None or started is None or not session.is_human_turn():
        return None
    return limit - (now - started)


def waiting_status(link: ServerLink, session: GameSession, palette: Palette) -> Text:
    """The status before the game: nobody is "to move" on the placeholder board."""
    t = Text()
    t.append(f"Blokus @ {link.address}\n", Style(bold=True))
    t.append("not connected" if session.end is not None else "connecting …")
    t.append("\n\n")
    aborted = session.end.title if isinstance(session.end, Aborted) else None
    waiting = "waiting for an opponent …" if link.joined else "waiting for the server …"
    t.append(aborted or waiting, Style(bold=bool(aborted), color=palette.text))
    return t
