"""``blokus play`` and ``blokus replay``: options, building the app, running it."""

from __future__ import annotations

import argparse
import itertools
import os
import socket
import sys
from pathlib import Path

from ai import DEFAULT_AI, make_player, player_names
from ai.base import Player
from cli.args import Parser, check_start_piece, fail, milliseconds, port, shape
from cli.args import season as season_type
from model.pieces import Team
from model.season import DEFAULT_PORT, DEFAULT_SEASON
from tui.app import LOG_FILE_ENV, BlokusApp, run_app, setup_logging
from tui.game_screen import GameScreen
from tui.network import NetworkGameScreen
from tui.replay_screen import ReplayScreen
from tui.replays import ReplayData, ReplayError, load_replay, save_session
from tui.session import GameSession

DEFAULT_MOVE_TIME_MS = 1000
NETWORK_MOVE_TIME_MS = 1500  # the AI's move for you on a server with the official 2 s limit


def team(text: str) -> Team:
    try:
        return Team.parse(text)
    except KeyError:
        raise argparse.ArgumentTypeError(f"unknown team {text!r}; choose ONE or TWO") from None


def time_limit(text: str) -> float | None:
    """Seconds per move the server allows, or ``none``."""
    if text.strip().lower() in ("none", "no", "off", "0"):
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r} (or none)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("the time limit must be positive (or none)")
    return value


def play_parser() -> argparse.ArgumentParser:
    p = Parser("blokus play", "Play Blokus in the terminal: a local game against the AI, or on a server with -h/-p.")
    p.add_argument(
        "--team",
        type=team,
        default=None,
        metavar="ONE|TWO",
        help="your team: ONE = BLUE+RED (moves first), TWO = YELLOW+GREEN (local games; on a server "
        "the seats go in the order the clients join)",
    )
    p.add_argument(
        "--opponent",
        default=None,
        metavar="NAME|human|cmd:COMMAND",
        help=f"AI opponent ({', '.join(player_names())}; default {DEFAULT_AI}), 'human' (hotseat) or "
        "cmd:COMMAND (your own client, started as COMMAND -h 127.0.0.1 -p PORT -r CODE)",
    )
    p.add_argument(
        "--level",
        type=int,
        default=None,
        choices=range(1, 6),
        metavar="1-5",
        help="strength of the AI opponent in a local game: 1 (beginner) to 5 (the default AI)",
    )
    p.add_argument(
        "--ponder",
        action="store_true",
        help="the AI opponent of a local game thinks on while you think (stronger; keeps a core busy "
        "during your turn, at most 30 s)",
    )
    p.add_argument("--ai", default=None, metavar="NAME", help="AI used for hints, autopilot and --watch")
    p.add_argument(
        "--move-time",
        "--ai-time",
        dest="move_time",
        type=milliseconds,
        default=None,
        metavar="MS",
        help=f"thinking time per AI move in ms, or with a unit (1.5s) (default {DEFAULT_MOVE_TIME_MS}; "
        f"network games {NETWORK_MOVE_TIME_MS})",
    )
    p.add_argument(
        "--start-piece", type=shape, default=None, metavar="SHAPE", help="start piece, e.g. PENTO_L (default: random)"
    )
    p.add_argument(
        "--season",
        type=season_type,
        default=None,
        metavar="2021|2027",
        help="season of a local game (default 2021: first piece in a corner; 2027: on the border, "
        "24 rounds); on a server: the game type a plain join asks for (the server's states decide)",
    )
    p.add_argument("--seed", type=int, default=None, help="seed for the start piece and the AI")
    p.add_argument("--watch", action="store_true", help="AI against AI; you watch")
    p.add_argument("--name", default=None, help="your player name")
    p.add_argument("--light", action="store_true", help="light theme")
    p.add_argument("--log", default=None, metavar="FILE", help=f"log file (default ${LOG_FILE_ENV} or ~/.cache/blokus)")
    p.add_argument("-h", "--host", default=None, help="server host (network play)")
    p.add_argument("-p", "--port", type=port, default=None, help=f"server port (default {DEFAULT_PORT})")
    p.add_argument("-r", "--reservation", default=None, help="reservation code of a prepared game")
    p.add_argument("--room", default=None, help="room id to join")
    limit = DEFAULT_SEASON.soft_timeout_ms / 1000
    p.add_argument(
        "--time-limit",
        type=time_limit,
        default=limit,
        metavar="SECONDS|none",
        help=f"seconds the server allows per move, for the countdown (default {limit:g}, the official "
        "limit; none: no countdown)",
    )
    p.add_argument(
        "--no-timeout",
        dest="time_limit",
        action="store_const",
        const=None,
        help="the server has no time limit (blokus serve --no-timeout): no countdown",
    )
    return p


def theme_name(args: argparse.Namespace) -> str:
    return "textual-light" if args.light else "textual-dark"


def build_local_app(args: argparse.Namespace) -> BlokusApp:
    own_team = args.team or Team.ONE
    opponent = (f"level{args.level}" if args.level else None) or args.opponent or DEFAULT_AI
    hotseat = opponent.lower() == "human" and not args.watch
    ai_name = args.ai or (DEFAULT_AI if opponent.lower() == "human" else opponent)
    human = None if args.watch else own_team
    seeds = itertools.count(0 if args.seed is None else args.seed)
    move_time = args.move_time or DEFAULT_MOVE_TIME_MS

    def make() -> GameScreen:
        seed = None if args.seed is None else next(seeds)  # a new game gets a new seed
        session = GameSession.new_local(
            args.start_piece, human=human, hotseat=hotseat, seed=seed, season=args.season or DEFAULT_SEASON
        )
        if args.name and human is not None:
            session.names[human] = args.name
        players: dict[Team, Player] = {}
        for t in Team:
            name = opponent if (t != own_team and not hotseat and opponent.lower() != "human") else ai_name
            players[t] = make_player(name, None if seed is None else seed + 1 + int(t))
            if session.seats[t].value == "ai":
                session.names[t] = f"AI {name}"
        hint = make_player(ai_name, None if seed is None else seed + 7)
        return GameScreen(
            session,
            players,
            hint,
            move_time_ms=move_time,
            min_delay=0.4 if args.watch else 0.0,
            save_replay=save_game_replay,
            new_game=lambda: app.restart(),
            ponder=args.ponder,
        )

    app = BlokusApp(make, theme=theme_name(args))
    return app


def save_game_replay(screen: GameScreen) -> str:
    """Save the session of a game screen as an official replay under replays/."""
    return str(save_session(screen.session))


def save_network_replay(screen: NetworkGameScreen) -> str:
    """The game as an official replay under replays/, and beside it the raw XML log of the connection."""
    path = save_game_replay(screen)
    log_path = path[: -len(".xml")] + ".traffic.txt" if path.endswith(".xml") else path + ".traffic.txt"
    with open(log_path, "w", encoding="utf-8") as f:
        for direction, stamp, xml in screen.traffic:
            f.write(f"{'<<' if direction == 'in' else '>>'} {stamp}\n{xml.strip()}\n\n")
    return f"{path} (+ raw XML log {log_path})"


def build_network_app(args: argparse.Namespace, connection_factory=None) -> BlokusApp:
    host = args.host or "localhost"
    port_number = DEFAULT_PORT if args.port is None else args.port
    ai = args.ai or (args.opponent if args.opponent and args.opponent != "human" else DEFAULT_AI)
    player = make_player(ai, args.seed)
    hint = make_player(ai, None if args.seed is None else args.seed + 7)
    limit = None if args.reservation and args.time_limit == DEFAULT_SEASON.soft_timeout_ms / 1000 else args.time_limit

    def make() -> NetworkGameScreen:
        return NetworkGameScreen(
            host,
            port_number,
            reservation=args.reservation,
            room=args.room,
            player=player,
            hint_player=hint,
            move_time_ms=args.move_time or NETWORK_MOVE_TIME_MS,
            name=args.name,
            team=args.team,
            clock_limit=limit,
            connection_factory=connection_factory,
            save_replay=save_network_replay,
            season=args.season,
        )

    return BlokusApp(make, theme=theme_name(args))


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


def play_main(argv: list[str]) -> int:
    args = play_parser().parse_args(argv)
    names = ", ".join(player_names())
    if args.opponent and args.opponent.startswith("cmd:"):  # your own client against you or our AI
        from tui.external import play_external

        setup_logging(args.log)
        return play_external(args, save_network_replay)
    if args.opponent and args.opponent.lower() != "human" and args.opponent not in player_names():
        return fail("blokus play", f"unknown opponent {args.opponent!r}; choose human or one of {names}")
    if args.ai is not None and args.ai not in player_names():
        return fail("blokus play", f"unknown AI {args.ai!r}; choose one of {names}")
    if (problem := check_start_piece(args.start_piece, args.season or DEFAULT_SEASON)) is not None:
        return fail("blokus play", f"argument --start-piece: {problem}")
    setup_logging(args.log)
    network = args.host is not None or args.port is not None or args.reservation or args.room
    if network and (problem := unreachable(args.host or "localhost", DEFAULT_PORT if args.port is None else args.port)):
        print(f"blokus play: {problem}", file=sys.stderr)  # one line, before the terminal is taken over
        return 1
    app = build_network_app(args) if network else build_local_app(args)
    return run_app(app, "blokus play")


def replay_parser() -> argparse.ArgumentParser:
    p = Parser("blokus replay", "Step through a replay (official .xml / .xml.gz, or a game saved by this program).")
    p.add_argument("-h", action="help", help=argparse.SUPPRESS)  # no host here: -h is help too
    p.add_argument("file", help="replay file (.xml or .xml.gz)")
    p.add_argument("--turn", type=int, default=None, help="start at this turn")
    p.add_argument(
        "--analyse",
        action="store_true",
        help="open with the analysis of the whole game running (the pane that a opens)",
    )
    p.add_argument(
        "--season",
        type=season_type,
        default=None,
        metavar="2021|2027",
        help="judge the game by this season's rules (default: the season the file's form shows)",
    )
    p.add_argument("--light", action="store_true", help="light theme")
    p.add_argument("--log", default=None, metavar="FILE", help="log file")
    return p


def replay_main(argv: list[str]) -> int:
    args = replay_parser().parse_args(argv)
    setup_logging(args.log)
    try:
        replay = load_replay(Path(args.file), args.season)
    except ReplayError as exc:
        return fail("blokus replay", str(exc))
    return run_app(replay_app(args, replay), "blokus replay")


def replay_app(args: argparse.Namespace, replay: ReplayData) -> BlokusApp:
    return BlokusApp(lambda: ReplayScreen(replay, start_turn=args.turn, analyse=args.analyse), theme=theme_name(args))
