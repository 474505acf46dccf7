"""``blokus play``: a local game against the AI (or hotseat, or watching AI against AI), a game on a server
(-h/-p), or a game against a program of one's own (``--opponent cmd:COMMAND``) or a Python player of one's own
(``--opponent py:PATH[:CLASS]``, played by ``blokus bot --player PATH --strict`` on an embedded server)."""

from __future__ import annotations

import argparse
import sys

from blokus.ai import DEFAULT_AI
from blokus.cli.options import (
    Parser,
    add_season,
    add_server_address,
    check_start_piece,
    fail,
    milliseconds,
    options_from,
    shape,
)
from blokus.cli.output import run_app
from blokus.cli.players import (
    LEVELS,
    PlayerKind,
    accepted,
    check_player,
    in_process_engine,
    level_option,
    player_option,
)
from blokus.model.pieces import Team
from blokus.model.season import DEFAULT_PORT, DEFAULT_SEASON
from blokus.tui.app import LOG_FILE_ENV, setup_logging
from blokus.tui.launch import (
    DEFAULT_MOVE_TIME_MS,
    NETWORK_MOVE_TIME_MS,
    PlayOptions,
    build_local_app,
    build_network_app,
    save_network_replay,
    unreachable,
)


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
        type=player_option("opponent"),
        default=None,
        metavar="NAME|human|cmd:COMMAND|py:PATH",
        help=f"AI opponent ({accepted()}; default {DEFAULT_AI}), 'human' (hotseat); a cmd:COMMAND (your own "
        "client) is started as COMMAND -h 127.0.0.1 -p PORT -r CODE; py:PATH[:CLASS] (your blokus.player "
        "Player) plays as blokus bot --player PATH --strict",
    )
    p.add_argument(
        "--level",
        type=level_option,
        default=None,
        metavar=f"{min(LEVELS)}-{max(LEVELS)}",
        help="strength of the AI opponent in a local game: 1 (beginner) to 5 (the default AI)",
    )
    p.add_argument(
        "--ponder",
        action="store_true",
        help="the AI opponent of a local game thinks on while you think (stronger; keeps a core busy "
        "during your turn, at most 30 s)",
    )
    p.add_argument(
        "--ai", type=player_option("AI"), default=None, metavar="NAME", help="AI used for hints, autopilot and --watch"
    )
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
    add_season(
        p,
        f"season of a local game (default {DEFAULT_SEASON.name}; 2021: first piece in a corner, 25 rounds; 2027: on "
        "the border, 24 rounds); on a server: the game type a plain join asks for (the server's states decide)",
    )
    p.add_argument("--seed", type=int, default=None, help="seed for the start piece and the AI")
    p.add_argument("--watch", action="store_true", help="AI against AI; you watch")
    p.add_argument("--name", default=None, help="your player name")
    p.add_argument("--light", action="store_true", help="light theme")
    p.add_argument("--log", default=None, metavar="FILE", help=f"log file (default ${LOG_FILE_ENV} or ~/.cache/blokus)")
    add_server_address(p, host=None, host_help="server host (network play)", port_default=None)
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


def options_of(args: argparse.Namespace) -> PlayOptions:
    """The parsed command line as the options the game is built from."""
    return options_from(PlayOptions, args)


def play_options(argv: list[str]) -> PlayOptions:
    """``blokus play ARGS`` as options (a bad option: one line, exit 2)."""
    return options_of(play_parser().parse_args(argv))


def play_external(options: PlayOptions) -> int:
    """``blokus --opponent cmd:COMMAND``: one game against the program; it is stopped when the app ends."""
    from blokus.net.external import ProgramError, check_program
    from blokus.tui.external import build_external_app

    assert options.opponent is not None
    try:
        check_program(options.opponent)
        app, hosted = build_external_app(options, save_network_replay)
    except (ProgramError, ValueError) as exc:
        return fail("blokus play", str(exc))
    try:
        return run_app(app, "blokus play")
    finally:
        hosted.close()


def main(argv: list[str]) -> int:
    args = play_parser().parse_args(argv)
    options = options_of(args)
    opponent = options.opponent  # a spec (None: the default AI)
    try:
        if opponent is not None and opponent.kind is PlayerKind.PY:
            check_player(opponent)  # a py: file that cannot be loaded: one line before the terminal is taken
        if options.ai is not None:
            in_process_engine(options.ai, "AI")  # hints, autopilot and --watch
    except ValueError as exc:
        return fail("blokus play", str(exc))
    if opponent is not None and opponent.external:  # your own client (cmd:) or player (py:) against you or our AI
        setup_logging(args.log)
        return play_external(options)
    if (problem := check_start_piece(options.start_piece, options.season or DEFAULT_SEASON)) is not None:
        return fail("blokus play", f"argument --start-piece: {problem}")
    setup_logging(args.log)
    host, port = options.host or "localhost", DEFAULT_PORT if options.port is None else options.port
    if options.network and (problem := unreachable(host, port)):
        print(f"blokus play: {problem}", file=sys.stderr)  # one line, before the terminal is taken over
        return 1
    app = build_network_app(options) if options.network else build_local_app(options)
    return run_app(app, "blokus play")
