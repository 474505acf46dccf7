"""Helpers shared by the tests (no tests here): waiting with a cap, the fixtures folder, servers on
ephemeral ports with scripted and raw clients, small games. The TUI's helpers (Textual) live in
``tests/tui_helpers.py``. A development tool, not installed with the package."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import random
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from blokus.ai import make_player
from blokus.ai.interface import fallback_move
from blokus.ai.players.controller import check_move
from blokus.cli.bot import EXIT_CODES, bot_lines
from blokus.cli.bot import parse_options as parse_bot_options
from blokus.cli.watch import watch_options
from blokus.model import convert
from blokus.model import messages as M
from blokus.model.framing import END_OF_STREAM, MalformedXml, StreamFramer, parse_document, parse_stream
from blokus.model.moves import Move
from blokus.model.pieces import Shape
from blokus.model.season import SEASON_2021, Season, season_named
from blokus.model.state import GameState
from blokus.net.bot import Bot
from blokus.net.connection import Closed, Connection, Event, GameOver, MoveRequested
from blokus.net.rooms import Timeouts
from blokus.net.server import GameServer, ServerConfig

# --- waiting ----------------------------------------------------------------------------------------------

CAP = 120.0  # seconds: a generous cap for a loaded machine, after which a test fails; never a measure of speed


async def wait_until(
    predicate: Callable[[], object],
    *,
    timeout: float = CAP,
    message: str = "",
    pilot=None,
    interval: float = 0.01,
) -> None:
    """Until ``predicate()`` holds; an ``AssertionError`` naming ``message`` after ``timeout`` seconds.

    With a Textual ``pilot`` the app runs between the looks (``pilot.pause``) and once more after it holds,
    so that what the change set in motion is drawn."""
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"not reached within {timeout:.0f} s: {message or _describe(predicate)}")
        if pilot is not None:
            await pilot.pause(max(interval, 0.02))
        else:
            await asyncio.sleep(interval)
    if pilot is not None:
        await pilot.pause()


def wait_until_sync(
    predicate: Callable[[], object], *, timeout: float = CAP, message: str = "", interval: float = 0.01
) -> None:
    """``wait_until`` for a test without an event loop (another thread or a process does the work)."""
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"not reached within {timeout:.0f} s: {message or _describe(predicate)}")
        time.sleep(interval)


def _describe(predicate: Callable[[], object]) -> str:
    try:
        return inspect.getsource(predicate).strip()
    except (OSError, TypeError):
        return repr(predicate)


# --- the fixtures (tests read only tests/fixtures) ----------------------------------------------------------


# Data captured from the official server and clients, kept in the repository (origin and licence: SOURCES.md).
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixture_path(relative: str) -> Path:
    path = FIXTURES / relative
    if not path.is_file():
        raise FileNotFoundError(f"fixture missing from tests/fixtures: {relative}")
    return path


def fixture_files(folder: str) -> list[Path]:
    """The XML fixtures of a folder (sc2021, sc2027, replays)."""
    return sorted((FIXTURES / folder).glob("*.xml"))


def elements_of(path: Path) -> list[etree._Element]:
    """The top-level elements of a fixture: one document, a stream, or a stream fragment."""
    data = path.read_bytes()
    if data.lstrip().startswith(b"<protocol>"):
        return parse_stream(data, strict=False).messages
    try:
        return [parse_document(data)]
    except MalformedXml:
        return parse_stream(data, prepend_protocol=True, strict=False).messages


# --- servers on ephemeral ports, scripted and raw clients ---------------------------------------------------


HOST = "127.0.0.1"


async def start_server(**config) -> GameServer:
    """A started game server on a free port (no clock unless ``timeouts`` is given; season 2021, the wire of
    the 21.3.3 fixtures, unless ``season`` is given); the caller closes it. Most tests want ``running_server``."""
    config.setdefault("timeouts", Timeouts(soft=None, hard=None))
    config.setdefault("season", SEASON_2021)
    server = GameServer(ServerConfig(host=HOST, port=0, **config))
    await server.start()
    return server


@contextlib.asynccontextmanager
async def running_server(**config) -> AsyncIterator[GameServer]:
    """The one server fixture: ``async with running_server(seed=1) as server:`` — started as ``start_server``
    does, closed however the block ends."""
    server = await start_server(**config)
    try:
        yield server
    finally:
        await server.close()


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
    conn = connection or Connection(HOST, port, season=SEASON_2021)
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


def move_xml(move: Move, room_id: str, season: Season = SEASON_2021) -> str:
    return M.to_xml(convert.move_to_message(move, room_id, season))


def element_text(element: etree._Element) -> str:
    return etree.tostring(element, encoding="unicode", with_tail=False)


async def admin_with_prepared_game(
    port: int, password: str, names: tuple[str, str] = ("alice", "bob"), *, pause: bool = True
) -> tuple[RawClient, M.Prepared]:
    """An authenticated admin client and the answer to its ``<prepare>`` of a two-seat game."""
    admin = await RawClient().connect(port)
    await admin.write(f'<protocol><authenticate password="{password}"/>')
    await admin.send(
        M.Prepare(
            pause=pause,
            slots=[M.Slot(display_name=n, can_timeout=False) for n in names],
            game_type=SEASON_2021.game_type,
        )
    )
    return admin, await admin.read_until(lambda m: isinstance(m, M.Prepared))


# --- a peer that records what a room sends ------------------------------------------------------------------


class Recorder:
    def __init__(self, name: str) -> None:
        self.name = name
        self.sent: list[str] = []
        self.closed = False

    def send(self, xml: str) -> None:
        self.sent.append(xml)

    def close(self, reason: str = "") -> None:
        self.closed = True


# --- a scripted server playing the official wire stream; our bot against a server ---------------------------


WIRE = "sc2021/gen-21.3.3-game1-wire-stream-to-player-one.xml"


def wire_messages() -> list[etree._Element]:
    return parse_stream(fixture_path(WIRE).read_bytes()).messages


def is_move_request(element: etree._Element) -> bool:
    data = element.find("data")
    return element.tag == "room" and data is not None and data.get("class") == M.MOVE_REQUEST_CLASS


def add_unknowns(element: etree._Element, rng: random.Random) -> list[str]:
    """Unknown attributes and child elements in the message; returns unknown messages to put after it."""
    element.set("futureAttribute", "1")
    data = element.find("data")
    if data is not None:
        data.set("extra", "yes")
        data.insert(0, etree.fromstring('<futureChild level="1"><nested>text</nested></futureChild>'))
        state = data.find("state")
        if state is not None:
            state.set("futureStateAttr", "x")
            state.insert(3, etree.fromstring("<futureStateChild><a/><b/></futureStateChild>"))
            board = state.find("board")
            if board is not None and len(board):
                board[0].set("owner", "nobody")
    extra = []
    if rng.random() < 0.4:
        extra.append(
            rng.choice(
                [
                    '<futureMessage kind="x"><inner a="1"/></futureMessage>',
                    f'<room roomId="{element.get("roomId", "r")}"><data class="somethingNew"><x/></data></room>',
                    "<!-- a comment between messages -->",
                    "<sc.protocol.responses.PingPong/>",
                ]
            )
        )
    return extra


async def send_in_pieces(writer: asyncio.StreamWriter, data: bytes, rng: random.Random) -> None:
    pos = 0
    while pos < len(data):
        size = rng.choice([1, 2, 3, 7, 50, 300, 1000, 4096])
        writer.write(data[pos : pos + size])
        await writer.drain()
        pos += size
        if rng.random() < 0.3:
            await asyncio.sleep(0)


class ScriptedServer:
    """Plays the recorded stream to one client; waits for a move after every move request and checks
    it against the state of the preceding memento."""

    def __init__(
        self,
        elements: list[etree._Element],
        rng: random.Random,
        *,
        mutate: bool = False,
        cut: bool = True,
        stop_after_requests: int | None = None,
        prefix: bytes = b"",
    ) -> None:
        self.rng = rng
        self.cut = cut
        self.stop_after = stop_after_requests
        self.prefix = prefix
        self.script: list[tuple[str, bool]] = []
        self.states: list[GameState | None] = []
        state = None
        for element in elements:
            message = convert.parse_message(element)
            if isinstance(message, M.Room) and isinstance(message.data, M.Memento):
                state = convert.state_from_message(message)
            request = is_move_request(element)
            extra = add_unknowns(element, rng) if mutate else []
            self.script.append(("\n  " + etree.tostring(element, encoding="unicode", with_tail=False), request))
            self.states.append(state if request else None)
            for text in extra:
                self.script.append(("\n  " + text, False))
                self.states.append(None)
        self.moves: list = []
        self.illegal: list[str] = []
        self.join = None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        framer = StreamFramer()
        inbox: list = []

        async def receive():
            while not inbox:
                data = await reader.read(65536)
                if not data:
                    return None
                inbox.extend(framer.feed(data))
            return inbox.pop(0)

        self.join = await receive()
        buffer = self.prefix + b"<protocol>"
        requests = 0
        for (text, request), state in zip(self.script, self.states, strict=True):
            buffer += text.encode("utf-8")
            if not request:
                continue
            if self.stop_after is not None and requests >= self.stop_after:
                break
            requests += 1
            await self._send(writer, buffer)
            buffer = b""
            frame = await receive()
            if frame is None or frame is END_OF_STREAM:
                self.illegal.append("no move")
                break
            move = convert.move_from_message(convert.parse_message(frame))
            self.moves.append(move)
            problem = check_move(state, move) if move is not None else "unreadable move"
            if problem:
                self.illegal.append(f"{move}: {problem}")
        else:
            await self._send(writer, buffer + b"\n</protocol>")
            frame = await receive()  # the client's </protocol>
            while frame is not None and frame is not END_OF_STREAM:
                frame = await receive()
        writer.close()

    async def _send(self, writer, data: bytes) -> None:
        if self.cut:
            await send_in_pieces(writer, data, self.rng)
        else:
            writer.write(data)
            await writer.drain()


async def run_bot_against(server_handler, *extra: str) -> tuple[int, object]:
    server = await asyncio.start_server(server_handler, HOST, 0)
    port = server.sockets[0].getsockname()[1]
    try:
        args = parse_bot_options(
            ["-h", HOST, "-p", str(port), "--ai", "random", "--move-time", "20", "--engine", "thread", *extra]
        )
        bot = Bot(args, lines=bot_lines())
        code = EXIT_CODES[await asyncio.wait_for(bot.run(), 60)]
    finally:
        server.close()
    return code, bot


# --- two raw clients in one room ----------------------------------------------------------------------------


async def raw_pair(server, *, first_moves: int = 0):
    """Two raw clients in one room; returns (one, two, room_id, state) with ONE to move."""
    one = await RawClient().connect(server.port)
    await one.write('<protocol><join gameType="swc_2021_blokus"/>')
    joined = await one.read_until(lambda m: isinstance(m, M.Joined))
    two = await RawClient().connect(server.port)
    await two.write('<protocol><join gameType="swc_2021_blokus"/>')
    await two.read_until(lambda m: isinstance(m, M.Joined))
    memento = await one.read_until(is_room(M.Memento))
    state = convert.state_from_message(memento)
    await one.read_until(is_room(M.MoveRequest))
    return one, two, joined.room_id, state


# --- processes of the product -------------------------------------------------------------------------------


ROOT = Path(__file__).resolve().parents[1]


async def spawn(*args: str) -> asyncio.subprocess.Process:
    # start.sh finds `blokus` on PATH: put this interpreter's environment first
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", PATH=path)
    return await asyncio.create_subprocess_exec(
        *args, cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )


# --- XML compared as forms ----------------------------------------------------------------------------------


def canonical(xml: bytes | str) -> str:
    """Whitespace between elements dropped, attributes kept in order: what "equal" means for the forms."""
    root = parse_document(xml.encode("utf-8") if isinstance(xml, str) else xml)
    for el in root.iter():
        if el.text is not None and not el.text.strip():
            el.text = None
        el.tail = None
    return etree.tostring(root, encoding="unicode")


# --- small games --------------------------------------------------------------------------------------------


def greedy_game(plies: int, season: str = "2021") -> tuple[list[GameState], list]:
    """A deterministic game of ``plies`` greedy moves from a fixed start."""
    engine = make_player("greedy", seed=3)
    state = GameState.new(season_named(season), Shape.PENTO_L)
    states, moves = [state.copy()], []
    for _ in range(plies):
        move = engine.choose_move_sync(state, move_time=5.0)
        moves.append(move)
        state.play(move)
        states.append(state.copy())
    return states, moves + [None]


# --- watching a game on the local server --------------------------------------------------------------------


PASSWORD = "secret"


def watch_args(port: int, *extra: str):
    return watch_options(["-h", HOST, "-p", str(port), "--password", PASSWORD, "--text", *extra])


async def run_bot(port: int, code: str, ai: str, season: str = "2021") -> int:
    args = parse_bot_options(
        [
            "-h",
            HOST,
            "-p",
            str(port),
            "-r",
            code,
            "--ai",
            ai,
            "--move-time",
            "30",
            "--engine",
            "thread",
            "--season",
            season,
        ]
    )
    return EXIT_CODES[await Bot(args, lines=bot_lines()).run()]


TEAM_MODULES = ("model", "ai", "net", "cli", "tui")  # a team's own modules, named as our subpackages

TEAM_PLAYER = """\
import ai
import cli
import model
import net
import tui

from blokus.player import Player


class Mine(Player):
    def calculate_move(self):
        # each of these is the team's module (ours are blokus.model, ...): an AttributeError otherwise
        assert [m.TEAM for m in (model, ai, net, cli, tui)] == ["model", "ai", "net", "cli", "tui"]
        return max(self.game_state.legal_moves(), key=lambda move: move.shape.size)


if __name__ == "__main__":
    from blokus.player import run

    run(__file__)
"""


def write_team_folder(folder: Path) -> Path:
    """A team's folder: ``player.py`` importing its own ``model.py``, ``ai.py``, ... beside it; returns the file."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in TEAM_MODULES:
        (folder / f"{name}.py").write_text(f"TEAM = {name!r}\n")
    (folder / "player.py").write_text(TEAM_PLAYER)
    return folder / "player.py"
