"""``blokus watch``: watch a live game on a server as administrator (``net.watch.Watcher``): in the terminal UI
(``tui.watch``), or as lines with ``--text`` or without a terminal (``net.watch.watch_text``)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from ai import ANALYSIS_AI
from cli.options import Parser, add_season, add_server_address, milliseconds
from cli.players import accepted, check_analysis_options
from model.season import DEFAULT_SEASON
from net.watch import watch_text


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        "blokus watch",
        "Watch a live game on a game server as administrator: an existing room (--room), or "
        "a new one (--prepare NAME1 NAME2 prints the two reservation codes for the players).",
    )
    p.add_argument("-?", action="help", help=argparse.SUPPRESS)
    add_server_address(p)
    p.add_argument(
        "--password",
        default="examplepassword",
        help="administrator password (server.properties / blokus serve --password; default examplepassword)",
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--room", metavar="ID", help="observe this room")
    which.add_argument(
        "--prepare",
        nargs=2,
        metavar=("NAME1", "NAME2"),
        help="prepare a game for two players (NAME1 = team ONE) and watch it",
    )
    add_season(p, "game type of a prepared game (default 2021 = swc_2021_blokus)", default=DEFAULT_SEASON)
    p.add_argument("--text", action="store_true", help="print the moves as lines instead of the TUI")
    p.add_argument("--analyse", action="store_true", help="analyse every move as it is played")
    p.add_argument(
        "--time",
        type=milliseconds,
        default=300,
        metavar="MS",
        help="analysis: engine time per position (default 300; 0.5s works too)",
    )
    p.add_argument(
        "--ai",
        default=None,
        metavar="NAME",
        help=f"analysis engine ({accepted()}; default {ANALYSIS_AI})",
    )
    p.add_argument("--save-replay", type=Path, metavar="DIR", help="write the game as a replay into DIR at the end")
    p.add_argument("--light", action="store_true", help="light theme (TUI)")
    p.add_argument("--log", default=None, metavar="FILE", help="log file")
    return p


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_analysis_options(parser, args)
    if args.prepare is not None and any(not name.strip() for name in args.prepare):
        parser.error("--prepare needs two non-empty player names")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.text or not sys.stdout.isatty():
        try:
            return asyncio.run(watch_text(args))
        except KeyboardInterrupt:
            return 130
    from tui.app import setup_logging
    from tui.watch import watch_tui

    setup_logging(args.log)
    try:
        return asyncio.run(watch_tui(args))
    except KeyboardInterrupt:
        return 130
