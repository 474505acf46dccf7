"""The apps of ``blokus play`` and ``blokus replay`` (``cli.play``, ``cli.replay`` parse the options): building
the app of a local game, a network game or a replay, saving their replays."""

from __future__ import annotations

import itertools
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass

from blokus.ai.interface import Player
from blokus.ai.players.registry import PlayerKind, PlayerSpec, default_player
from blokus.model.pieces import Shape, Team
from blokus.model.season import DEFAULT_PORT, DEFAULT_SEASON, Season
from blokus.tui.ai_runner import AISeats
from blokus.tui.app import BlokusApp
from blokus.tui.game_screen import GameScreen, network_screen
from blokus.tui.network import NetworkOptions
from blokus.tui.replay_screen import ReplayScreen
from blokus.tui.replays import ReplayData, save_session
from blokus.tui.server_link import Traffic
from blokus.tui.session import GameSession

DEFAULT_MOVE_TIME_MS = 1000
NETWORK_MOVE_TIME_MS = 1500  # the AI's move for you on a server with the official 2 s limit


@dataclass(frozen=True)
class PlayOptions:
    """What ``blokus play`` was asked (``cli.play`` turns the command line into it; players are specs)."""

    team: Team | None = None
    opponent: PlayerSpec | None = None  # None: the default AI
    level: PlayerSpec | None = None
    ponder: bool = False
    ai: PlayerSpec | None = None  # hints, autopilot and --watch
    move_time: int | None = None  # ms per AI move (None: the default of the game's kind)
    start_piece: Shape | None = None
    season: Season | None = None
    seed: int | None = None
    watch: bool = False
    name: str | None = None
    light: bool = False
    host: str | None = None
    port: int | None = None
    reservation: str | None = None
    room: str | None = None
    time_limit: float | None = DEFAULT_SEASON.soft_timeout_ms / 1000  # seconds per move on a server (None: none)

    @property
    def network(self) -> bool:
        """A game on a server (-h/-p/-r/--room), not a local one."""
        return self.host is not None or self.port is not None or bool(self.reservation) or bool(self.room)


@dataclass(frozen=True)
class ReplayOptions:
    """What ``blokus replay`` was asked besides the file (``cli.replay``)."""

    turn: int | None = None
    analyse: bool = False
    light: bool = False


def theme_name(light: bool) -> str:
    return "textual-light" if light else "textual-dark"


def build_local_app(options: PlayOptions) -> BlokusApp:
    own_team = options.team or Team.ONE
    # the options are specs (``cli.play`` parses the names)
    opponent: PlayerSpec = options.level or options.opponent or default_player()
    human_opponent = opponent.kind is PlayerKind.HUMAN
    hotseat = human_opponent and not options.watch
    ai: PlayerSpec = options.ai or (default_player() if human_opponent else opponent)
    human = None if options.watch else own_team
    seeds = itertools.count(0 if options.seed is None else options.seed)
    move_time = options.move_time or DEFAULT_MOVE_TIME_MS

    def make() -> GameScreen:
        seed = None if options.seed is None else next(seeds)  # a new game gets a new seed
        session = GameSession.new_local(
            options.start_piece, human=human, hotseat=hotseat, seed=seed, season=options.season or DEFAULT_SEASON
        )
        if options.name and human is not None:
            session.names[human] = options.name
        players: dict[Team, Player] = {}
        for t in Team:
            spec = opponent if (t != own_team and not human_opponent) else ai
            players[t] = spec.build(None if seed is None else seed + 1 + int(t))
            if session.seats[t].value == "ai":
                session.names[t] = f"AI {spec.name}"
        hint = ai.build(None if seed is None else seed + 7)
        seats = AISeats(players, hint, move_time, min_delay=0.4 if options.watch else 0.0, ponder=options.ponder)
        return GameScreen(session, seats, save_replay=save_game_replay, new_game=lambda: app.restart())

    app = BlokusApp(make, theme=theme_name(options.light))
    return app


def save_game_replay(session: GameSession, traffic: Sequence[Traffic] = ()) -> str:
    """Save the game of a session as an official replay under replays/."""
    return str(save_session(session))


def save_network_replay(session: GameSession, traffic: Sequence[Traffic]) -> str:
    """The game as an official replay under replays/, and beside it the raw XML log of the connection."""
    path = save_game_replay(session)
    log_path = path[: -len(".xml")] + ".traffic.txt" if path.endswith(".xml") else path + ".traffic.txt"
    with open(log_path, "w", encoding="utf-8") as f:
        for direction, stamp, xml in traffic:
            f.write(f"{'<<' if direction == 'in' else '>>'} {stamp}\n{xml.strip()}\n\n")
    return f"{path} (+ raw XML log {log_path})"


def build_network_app(options: PlayOptions, connection_factory=None) -> BlokusApp:
    host = options.host or "localhost"
    port_number = DEFAULT_PORT if options.port is None else options.port
    opponent: PlayerSpec | None = options.opponent
    ai: PlayerSpec = options.ai or (opponent if opponent is not None and opponent.in_process else default_player())
    player = ai.build(options.seed)
    hint = ai.build(None if options.seed is None else options.seed + 7)
    official = options.time_limit == DEFAULT_SEASON.soft_timeout_ms / 1000
    limit = None if options.reservation and official else options.time_limit

    def make() -> GameScreen:
        return network_screen(
            NetworkOptions(
                host,
                port_number,
                reservation=options.reservation,
                room=options.room,
                player=player,
                hint_player=hint,
                move_time_ms=options.move_time or NETWORK_MOVE_TIME_MS,
                name=options.name,
                team=options.team,
                clock_limit=limit,
                connection_factory=connection_factory,
                save_replay=save_network_replay,
                season=options.season,
            )
        )

    return BlokusApp(make, theme=theme_name(options.light))


def unreachable(host: str, port: int, timeout: float = 10.0) -> str | None:
    """Why no TCP connection to ``host:port`` can be opened (None: it can). A refused or unknown server is
    said in one line before the TUI opens; the game screen then connects for real."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except TimeoutError:
        reason = "timed out"
    except OSError as exc:
        errno = exc.errno
        if errno is not None and errno > 0 and not isinstance(exc, socket.gaierror):
            reason = os.strerror(errno)
        else:
            reason = exc.strerror or str(exc)
    return f"cannot connect to {host}:{port}: {reason}"


def replay_app(options: ReplayOptions, replay: ReplayData) -> BlokusApp:
    return BlokusApp(
        lambda: ReplayScreen(replay, start_turn=options.turn, analyse=options.analyse),
        theme=theme_name(options.light),
    )
