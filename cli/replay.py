"""``blokus replay FILE``: step through a replay (official .xml / .xml.gz, or a game saved by this program)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from blokus.cli.options import Parser, add_season, fail
from blokus.cli.output import run_app
from blokus.model.text import printable
from blokus.tui.app import setup_logging
from blokus.tui.launch import ReplayOptions, replay_app
from blokus.tui.replays import ReplayError, load_replay


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
    add_season(p, "judge the game by this season's rules (default: the season the file's form shows)")
    p.add_argument("--light", action="store_true", help="light theme")
    p.add_argument("--log", default=None, metavar="FILE", help="log file")
    return p


def main(argv: list[str]) -> int:
    args = replay_parser().parse_args(argv)
    setup_logging(args.log)
    try:
        replay = load_replay(Path(args.file), args.season)
    except ReplayError as exc:
        return fail("blokus replay", str(exc))
    if replay.records_error is not None:  # the game is fine: shown without them (the viewer says so too)
        print(printable(f"blokus replay: move records not shown: {replay.records_error}"), file=sys.stderr)
    options = ReplayOptions(turn=args.turn, analyse=args.analyse, light=args.light)
    return run_app(replay_app(options, replay), "blokus replay")
