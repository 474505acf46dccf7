"""``blokus serve``: a local game server speaking the official protocol of the chosen season (``net.server``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from pathlib import Path

from blokus.cli.options import (
    Parser,
    add_season,
    add_server_address,
    at_least_one,
    check_start_piece,
    listen_port,
    shape,
    wait_time,
)
from blokus.cli.output import report_dropped
from blokus.model.exits import EXIT_CONNECTION, EXIT_OK, plural
from blokus.model.season import DEFAULT_PORT, DEFAULT_SEASON
from blokus.net.guard import ConnectionLimits
from blokus.net.lines import LineWriter, log_to
from blokus.net.rooms import Timeouts
from blokus.net.server import GameServer, ServerConfig


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        "blokus serve", "Local game server for Software-Challenge Blokus, official protocol of the chosen season."
    )
    add_season(
        p,
        f"the game and its wire form: 2021 (swc_2021_blokus) or 2027 (swc_2027_blokus); default {DEFAULT_SEASON.name}",
        default=DEFAULT_SEASON,
    )
    add_server_address(
        p,
        host="127.0.0.1",
        host_help="address to listen on (default 127.0.0.1)",
        port_type=listen_port,
        port_help=f"TCP port (default {DEFAULT_PORT}; 0: any)",
    )
    p.add_argument("--password", help="administrator password (authenticate); without it admin requests fail")
    p.add_argument("--no-timeout", action="store_true", help="no time limits (e.g. for human players)")
    p.add_argument(
        "--soft-timeout",
        type=int,
        metavar="MS",
        help=f"soft limit per move (the season's, {DEFAULT_SEASON.soft_timeout_ms})",
    )
    p.add_argument(
        "--hard-timeout",
        type=int,
        metavar="MS",
        help=f"hard limit per move (the season's, {DEFAULT_SEASON.hard_timeout_ms})",
    )
    p.add_argument("--start-piece", type=shape, help="start piece of every game (e.g. PENTO_L; PENTO_X in 2027)")
    p.add_argument("--seed", type=int, help="seed for start pieces and room ids (reproducible games)")
    p.add_argument("--paused", action="store_true", help="games created by <join> start paused")
    p.add_argument("--save-replay", type=Path, metavar="DIR", help="write every game as a replay file into DIR")
    p.add_argument(
        "--encode-workers",
        type=int,
        default=1,
        metavar="N",
        help="processes that serialize game states, keeping the event loop free (default 1; 0: none)",
    )
    defaults = ConnectionLimits()
    p.add_argument(
        "--idle-timeout",
        type=wait_time,
        default=defaults.idle_timeout,
        metavar="TIME",
        help=f"close connections that have not joined or authenticated after TIME (default "
        f"{defaults.idle_timeout:g}s; ms unless given as e.g. 30s; 0: never)",
    )
    p.add_argument(
        "--max-connections",
        type=at_least_one,
        default=defaults.max_connections,
        metavar="N",
        help=f"clients at once (default {defaults.max_connections})",
    )
    p.add_argument(
        "--max-per-address",
        type=at_least_one,
        default=defaults.max_per_address,
        metavar="N",
        help=f"clients at once from one address (default {defaults.max_per_address})",
    )
    p.add_argument("-v", "--verbose", action="count", default=0, help="log to stderr (-vv: debug)")
    return p


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    season = args.season
    soft = season.soft_timeout_ms if args.soft_timeout is None else args.soft_timeout
    hard = season.hard_timeout_ms if args.hard_timeout is None else args.hard_timeout
    timeouts = Timeouts(None, None) if args.no_timeout else Timeouts(soft / 1000, hard / 1000)
    return ServerConfig(
        host=args.host,
        port=args.port,
        password=args.password,
        timeouts=timeouts,
        start_piece=args.start_piece,
        seed=args.seed,
        replay_dir=args.save_replay,
        paused=args.paused,
        encode_workers=max(0, args.encode_workers),
        season=season,
        connections=ConnectionLimits(
            max_connections=args.max_connections, max_per_address=args.max_per_address, idle_timeout=args.idle_timeout
        ),
    )


async def serve(config: ServerConfig, out: LineWriter) -> int:
    """Listen, serve until SIGINT/SIGTERM, say how many games were played; the exit code. Every line goes
    through ``out`` (a writer thread: a stdout nobody reads never stops the games)."""
    server = GameServer(config, output=out)
    try:
        await server.start()
    except OSError as exc:
        print(f"blokus serve: cannot listen on {config.host}:{config.port}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_CONNECTION
    soft, hard = config.timeouts.soft, config.timeouts.hard  # the command line sets both or neither
    limits = "no time limits" if soft is None or hard is None else f"time limits {soft * 1000:.0f}/{hard * 1000:.0f} ms"
    out.write(
        f"blokus serve: listening on {config.host}:{server.port} ({config.season.game_type}, {limits}); Ctrl-C to stop"
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    serving = asyncio.create_task(server.serve_forever())
    await stop.wait()
    serving.cancel()
    await server.close()
    cancelled = server.records.cancelled
    note = f" and {cancelled} cancelled" if cancelled else ""
    out.write(f"blokus serve: stopped after {plural(server.records.total - cancelled, 'game')}{note}")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if (problem := check_start_piece(args.start_piece, args.season)) is not None:
        parser.error(f"argument --start-piece: {problem}")
    soft = args.season.soft_timeout_ms if args.soft_timeout is None else args.soft_timeout
    hard = args.season.hard_timeout_ms if args.hard_timeout is None else args.hard_timeout
    if not args.no_timeout and not 0 < soft <= hard:
        parser.error("--soft-timeout and --hard-timeout must be positive, the soft limit at most the hard one")
    if args.encode_workers < 0:
        parser.error("--encode-workers must be 0 or more")
    level = logging.WARNING if args.verbose == 0 else logging.INFO if args.verbose == 1 else logging.DEBUG
    # every line from here on through writer threads: a stdout or stderr nobody reads never stops the games
    out, err = LineWriter(sys.stdout), LineWriter(sys.stderr, name="stderr")
    log_to(err, level, "%(asctime)s %(name)s %(levelname)s %(message)s")
    config = config_from_args(args)
    try:
        return asyncio.run(serve(config, out))
    except KeyboardInterrupt:
        return 130
    finally:
        for writer in (out, err):
            writer.close()
            report_dropped(writer, "blokus serve")
