"""``blokus watch``: watch a live game on a server as administrator (``net.watch.Watcher``): in the terminal UI
(``tui.watch``), or as lines with ``--text`` or without a terminal (``watch_text``). The command says what went
wrong (``blokus watch: …``) and decides the exit code."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from blokus.ai import ANALYSIS_AI
from blokus.cli.options import Parser, add_season, add_server_address, milliseconds, options_from
from blokus.cli.players import accepted, check_analysis_options
from blokus.model import server_texts
from blokus.model.exits import EXIT_CONNECTION, EXIT_OK, EXIT_PROTOCOL
from blokus.model.result import end_texts
from blokus.model.season import DEFAULT_SEASON
from blokus.model.text import printable
from blokus.net.connection import Closed, GameOver, ServerError
from blokus.net.watch import TextReport, Watcher, WatchFailed, WatchOptions, make_watcher, reservation_lines


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
    add_season(
        p,
        f"game type of a prepared game (default {DEFAULT_SEASON.name} = {DEFAULT_SEASON.game_type})",
        default=DEFAULT_SEASON,
    )
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


def options_of(args: argparse.Namespace) -> WatchOptions:
    prepare = (args.prepare[0], args.prepare[1]) if args.prepare else None
    return options_from(WatchOptions, args, prepare=prepare, time_ms=args.time)


def watch_options(argv: list[str]) -> WatchOptions:
    """``blokus watch ARGS`` as options (a bad option: one line, exit 2)."""
    return options_of(parse_args(argv))


def _say(err: TextIO, text: str) -> None:
    print(f"blokus watch: {text}", file=err)


def _closed_code(reason: str) -> int:
    """The exit code of a connection that ended before the game did."""
    return EXIT_PROTOCOL if reason.startswith("protocol error") else EXIT_CONNECTION


def _failed_code(exc: WatchFailed) -> int:
    return EXIT_CONNECTION if exc.connection else EXIT_PROTOCOL


async def watch_text(
    options: WatchOptions,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    on_started: Callable[[Watcher], None] | None = None,
) -> int:
    """Print the game as lines; ``on_started(watcher)`` is called once observing (tests start players)."""
    watcher = make_watcher(options)
    try:
        await watcher.start()
    except WatchFailed as exc:
        _say(err, str(exc))
        return _failed_code(exc)
    if on_started is not None:
        on_started(watcher)
    report = TextReport(
        watcher, out, analyse_time=options.time_ms / 1000 if options.analyse else None, ai=options.ai or ""
    )
    if watcher.reservations:
        for line in reservation_lines(watcher):
            report.print(line)
    report.print(f"watching room {watcher.room_id} on {watcher.host}:{watcher.port}")
    code = EXIT_OK
    try:
        async for event in watcher.events():
            await report.update()
            if isinstance(event, ServerError):
                report.print(f"server error: {server_texts.shown(event.message)}")
            elif isinstance(event, GameOver):
                report.print("result: " + end_texts(event.result, None, watcher.replay.names).summary)
                if event.result.reason:
                    report.print(f"reason: {server_texts.shown(event.result.reason)}")
            elif isinstance(event, Closed):
                if watcher.result is None:
                    _say(err, f"{event.reason} (before the game was over)")
                    code = _closed_code(event.reason)
    finally:
        report.stop()
        await watcher.close()
        if options.save_replay is not None and watcher.replay.states:
            try:
                report.print(f"replay saved: {watcher.save(options.save_replay)}")
            except OSError as exc:
                _say(err, f"cannot save the replay: {exc.strerror or exc}")
                code = code or EXIT_CONNECTION
    return code


async def watch_tui(
    options: WatchOptions, *, light: bool = False, out: TextIO = sys.stdout, err: TextIO = sys.stderr
) -> int:
    """The live viewer: the reservation codes and a wait for the first state as lines, then the TUI."""
    from blokus.tui.watch import watch_app

    watcher = make_watcher(options)
    try:
        await watcher.start()
    except WatchFailed as exc:
        _say(err, str(exc))
        return _failed_code(exc)
    for line in reservation_lines(watcher) if watcher.reservations else []:
        print(line, file=out)
    print(
        f"watching room {watcher.room_id}: waiting for the first state (the players join) … ctrl+c stops",
        file=out,
        flush=True,
    )
    try:
        async for event in watcher.events():
            if watcher.replay.states:
                break
            if isinstance(event, Closed):
                _say(err, f"{printable(event.reason)} (before the game started)")
                return _closed_code(event.reason)
    except BaseException:
        await watcher.close()
        raise
    app = watch_app(watcher, options, light=light)
    try:
        await app.run_async()
    finally:
        await watcher.close()
    if options.save_replay is not None and watcher.replay.states:
        try:
            print(f"replay saved: {watcher.save(options.save_replay)}", file=out)
        except OSError as exc:
            _say(err, f"cannot save the replay: {exc.strerror or exc}")
            return EXIT_CONNECTION
    return EXIT_OK if app.return_code in (0, None) else int(app.return_code or 1)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    options = options_of(args)
    if args.text or not sys.stdout.isatty():
        try:
            return asyncio.run(watch_text(options))
        except KeyboardInterrupt:
            return 130
    from blokus.tui.app import setup_logging

    setup_logging(args.log)
    try:
        return asyncio.run(watch_tui(options, light=args.light))
    except KeyboardInterrupt:
        return 130
