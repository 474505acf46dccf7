"""Deterministic players and app factories for the TUI tests, the screenshots (``screenshots/shoot.py``) and
the benchmark (``bench/bench_tui.py``); a development tool, not installed with the package."""

from __future__ import annotations

import asyncio
import contextlib
import threading

import pytest

from blokus.ai.interface import Player
from blokus.model.moves import Move, SkipMove
from blokus.model.pieces import Shape, Team
from blokus.model.season import DEFAULT_SEASON, SEASON_2021, Season
from blokus.model.state import GameState
from blokus.net.connection import Closed, Connection, GameOver, MoveRequested
from blokus.tui.ai_runner import AISeats
from blokus.tui.app import BlokusApp
from blokus.tui.game_screen import GameScreen, network_screen
from blokus.tui.network import NetworkOptions
from blokus.tui.session import GameSession
from tests.helpers import CAP, wait_until


def first_move(state: GameState) -> Move:
    moves = state.legal_moves()
    return moves[0] if len(moves) else SkipMove(state.color)


def last_move(state: GameState) -> Move:
    moves = state.legal_moves()
    return moves[len(moves) - 1] if len(moves) else SkipMove(state.color)


class InstantPlayer(Player):
    """Answers at once with a fixed legal move (the first or the last one in generator order)."""

    def __init__(self, pick: str = "first") -> None:
        self.pick = first_move if pick == "first" else last_move
        self.calls = 0

    async def choose_move(self, state: GameState, deadline: float) -> Move:
        self.calls += 1
        return self.pick(state)


class BlockingPlayer(Player):
    """Thinks in a worker thread until the test calls ``release()`` (or the move is cancelled)."""

    name = "blocking"

    def __init__(self) -> None:
        self.go = threading.Event()
        self.started = threading.Event()
        self.cancelled = False

    def release(self) -> None:
        self.go.set()

    def cancel(self) -> None:
        self.cancelled = True
        self.go.set()

    async def choose_move(self, state: GameState, deadline: float) -> Move:
        self.started.set()
        await asyncio.to_thread(self.go.wait, 30)
        return first_move(state)


class HoldingPlayer(Player):
    """Answers at once with the first legal move until the game reaches turn ``hold_at``; there it thinks until
    the test calls ``release()`` (the game stands still meanwhile: the test acts while it is surely running)."""

    name = "holding"

    def __init__(self, hold_at: int) -> None:
        self.hold_at = hold_at
        self.holding = threading.Event()
        self.go = threading.Event()

    def release(self) -> None:
        self.go.set()

    def cancel(self) -> None:
        self.go.set()

    async def choose_move(self, state: GameState, deadline: float) -> Move:
        if state.turn >= self.hold_at and not self.go.is_set():
            self.holding.set()
            await asyncio.to_thread(self.go.wait, CAP)
        return first_move(state)


def play_openings(session: GameSession, plies: int, pick: str = "first") -> None:
    """Advance a local session by ``plies`` moves chosen deterministically (ignores seats)."""
    chooser = first_move if pick == "first" else last_move
    for _ in range(plies):
        if session.state.is_over:
            break
        session.apply(chooser(session.state))
    session.feedback.text = ""


def game_app(
    start_piece: Shape = Shape.PENTO_L,
    *,
    human: Team | None = Team.ONE,
    hotseat: bool = False,
    opponent: Player | None = None,
    own: Player | None = None,
    hint: Player | None = None,
    plies: int = 0,
    theme: str = "textual-dark",
    save_replay=None,
    move_time_ms: int = 500,
    ponder: bool = False,
    first_ghost: bool = False,
    season: Season = SEASON_2021,  # the snapshots' season: name another explicitly
) -> BlokusApp:
    """A local game with deterministic players: the human (team ONE) against ``opponent``; "new game" (after
    the end) starts the same opening again. ``first_ghost``: the first piece's ghost moves to the hint's move (off:
    the tests that drive the ghost by keys start from where it starts without the AI)."""

    def make() -> GameScreen:
        session = GameSession.new_local(start_piece, human=human, hotseat=hotseat, season=season)
        if plies:
            play_openings(session, plies)
            session.begin_turn()
        players: dict[Team, Player] = {}
        for team in Team:
            if session.seats[team].value == "ai":
                players[team] = opponent or InstantPlayer("first")
            else:
                players[team] = own or InstantPlayer("first")
        seats = AISeats(players, hint or InstantPlayer("last"), move_time_ms, ponder=ponder, first_ghost=first_ghost)
        return GameScreen(session, seats, save_replay=save_replay, new_game=app.restart)

    app = BlokusApp(make, theme=theme)
    return app


async def settle(pilot, timeout: float = 120.0) -> None:
    """Wait until no AI move is pending (the stub players answer at once; on a loaded machine that can take
    a while, up to the generous ``timeout``)."""
    await pilot.pause()
    await wait_until(lambda: not pilot.app.main_screen.ai.busy, pilot=pilot, timeout=timeout)
    await pilot.pause()


class ScriptedConnection:
    """A stand-in for ``net.connection.Connection``: plays the server's part in memory.

    We are team ONE; the opponent (team TWO) answers with the first legal move. Every message goes
    through ``on_traffic`` as the XML the real server would send, so the XML pane looks real.
    """

    ROOM = "00000000-0000-4000-8000-000000000000"

    def __init__(self, host: str, port: int, *, on_traffic=None, start_piece: Shape = Shape.PENTO_L) -> None:
        from blokus.model import messages as M

        self.M = M
        self.on_traffic = on_traffic or (lambda d, x: None)
        self.state = GameState.new(SEASON_2021, start_piece)
        self.queue: asyncio.Queue = asyncio.Queue()
        self.closed = False

    @classmethod
    def factory(cls, start_piece: Shape):
        return lambda host, port, on_traffic=None: cls(host, port, on_traffic=on_traffic, start_piece=start_piece)

    def _in(self, message) -> str:
        xml = self.M.to_xml(message)
        self.on_traffic("in", xml)
        return xml

    def _out(self, message) -> None:
        self.on_traffic("out", message if isinstance(message, str) else self.M.to_xml(message))

    async def open(self) -> None:
        self._out(self.M.PROTOCOL_OPEN)

    async def join(self, *, reservation=None, room=None) -> None:
        from blokus.model.convert import state_to_message
        from blokus.net.connection import Joined, MoveRequested, StateChanged, Welcome

        self._out(self.M.Join(game_type=DEFAULT_SEASON.game_type))
        self._in(self.M.Joined(room_id=self.ROOM))
        self.queue.put_nowait(Joined(room_id=self.ROOM))
        self._in(self.M.Room(room_id=self.ROOM, data=self.M.WelcomeMessage(color=Team.ONE)))
        self.queue.put_nowait(Welcome(room_id=self.ROOM, team=Team.ONE))
        self._in(state_to_message(self.state, self.ROOM, ("alice", "bob")))
        self.queue.put_nowait(StateChanged(room_id=self.ROOM, state=self.state.copy(), names=("alice", "bob")))
        self._in(self.M.Room(room_id=self.ROOM, data=self.M.MoveRequest()))
        self.queue.put_nowait(MoveRequested(room_id=self.ROOM, state=self.state.copy(), for_team=Team.ONE))

    async def send_move(self, move: Move) -> None:
        from blokus.model.convert import move_to_message, state_to_message
        from blokus.net.connection import MoveRequested, StateChanged

        self._out(move_to_message(move, self.ROOM, season=SEASON_2021))
        self.state.play(move)
        while True:
            self._in(state_to_message(self.state, self.ROOM, ("alice", "bob")))
            self.queue.put_nowait(StateChanged(room_id=self.ROOM, state=self.state.copy(), names=("alice", "bob")))
            if self.state.is_over or self.state.team is Team.ONE:
                break
            self.state.play(first_move(self.state))
        if not self.state.is_over:
            self._in(self.M.Room(room_id=self.ROOM, data=self.M.MoveRequest()))
            self.queue.put_nowait(MoveRequested(room_id=self.ROOM, state=self.state.copy(), for_team=Team.ONE))

    async def close(self) -> None:
        from blokus.net.connection import Closed

        if not self.closed:
            self.closed = True
            self._out(self.M.PROTOCOL_CLOSE)
            self.queue.put_nowait(Closed(reason="connection closed by the client"))

    async def next_event(self):
        return await self.queue.get()

    def __aiter__(self):
        return self._iterate()

    async def _iterate(self):
        from blokus.net.connection import Closed

        while True:
            event = await self.queue.get()
            yield event
            if isinstance(event, Closed):
                return


# --- the app and its screens --------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def keep_logging(tmp_path, monkeypatch):
    """The CLI entry points install a file log handler: keep it in tmp and restore the root logger."""
    import logging

    monkeypatch.setenv("BLOKUS_LOG", str(tmp_path / "blokus.log"))
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            handler.close()
    root.handlers[:] = handlers
    root.setLevel(level)


GAME1 = "sc2021/gen-21.3.3-game1-replay-regular-end.xml"


def screen_of(app: BlokusApp) -> GameScreen:
    screen = app.main_screen
    assert isinstance(screen, GameScreen)
    return screen


def exit_code(main, argv) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's exit after a one-line error
        return exc.code


def widget_lines(widget) -> list[str]:
    from textual.geometry import Region

    region = Region(0, 0, widget.region.width, widget.region.height)
    return [strip.text.strip() for strip in widget.render_lines(region)]


async def footer_keys_visible(pilot) -> set[str]:
    """The footer's keys that are shown whole, once its layout has settled (the footer recomposes after a
    refresh: under load that can take a few more rounds of the message loop)."""
    from textual.widgets._footer import FooterKey

    app = pilot.app
    before: set[str] | None = None
    for _ in range(100):
        width = app.size.width
        keys = {k.key for k in app.screen.query(FooterKey) if k.region.width and k.region.right <= width}
        if keys and keys == before:
            break
        before = keys
        await pilot.pause()
    return keys


# --- network games on the in-process server -----------------------------------------------------------------


async def opponent(
    port: int, stop_after: int | None = None, hold: asyncio.Event | None = None, hold_at: int = 0
) -> None:
    """A client that joins any game and plays the first legal move (or leaves after some moves; or waits
    for ``hold`` before its move number ``hold_at``)."""
    conn = Connection("127.0.0.1", port, season=SEASON_2021)
    await conn.open()
    await conn.join()
    moves = 0
    async for event in conn:
        if isinstance(event, MoveRequested) and event.state is not None:
            if stop_after is not None and moves >= stop_after:
                await conn.close()
                return
            if hold is not None and moves == hold_at:
                await hold.wait()
            await conn.send_move(first_move(event.state))
            moves += 1
        elif isinstance(event, GameOver | Closed):
            break
    with contextlib.suppress(Exception):
        await conn.close()


def scripted_net_app(name: str | None = "alice", save_replay=None) -> BlokusApp:
    """A network game against a scripted server (``ScriptedConnection``, start piece PENTO_L), no clock."""
    return BlokusApp(
        lambda: network_screen(
            NetworkOptions(
                "127.0.0.1",
                13050,
                player=InstantPlayer("first"),
                hint_player=InstantPlayer("first"),
                name=name,
                stamp=lambda: "",
                connection_factory=ScriptedConnection.factory(Shape.PENTO_L),
                save_replay=save_replay,
            )
        )
    )


def net_app(port: int) -> BlokusApp:
    return BlokusApp(
        lambda: network_screen(
            NetworkOptions(
                "127.0.0.1",
                port,
                player=InstantPlayer("first"),
                hint_player=InstantPlayer("last"),
                clock_limit=None,
                stamp=lambda: "",
            )
        )
    )
