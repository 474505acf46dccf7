"""``blokus bot``: the headless autopilot for a game server (the contest's ``start.sh`` runs this).

Connects, joins (reservation, room id, or any open game), answers every move request within the time
limit (``ai.players.controller``), prints a one-line summary after the result and exits 0. On a refused or
lost connection, a protocol error or a game that ends without a result it prints one line with the
reason to stderr and exits non-zero (1: connection, 3: protocol or server error). No tracebacks.
The bot itself is ``net.bot.Bot``; this module reads its options.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import socket
import sys
from pathlib import Path

from blokus.ai import DEFAULT_AI, processes
from blokus.ai.players.controller import DEFAULT_THINK_MS, HARD_CUTOFF_MS, STOP_MARGIN_MS
from blokus.ai.players.registry import capped_threads, default_player, search_threads_of
from blokus.ai.players.team_process import BOT_MEMORY_MIB, MEMORY_FLOOR_MIB, MEMORY_LIMIT_MIB, default_memory_mib
from blokus.ai.search.cores import MAX_THREADS, Memory, available_cores, core_budget, memory_budget
from blokus.cli.options import Parser, add_season, add_server_address, milliseconds, options_from, wait_time
from blokus.cli.output import report_dropped
from blokus.cli.players import PlayerKind, PlayerSpec, accepted, parse_player, parse_python_player
from blokus.model.exits import EXIT_CONNECTION, EXIT_FALLBACK, EXIT_OK, EXIT_PLAYER, EXIT_PROTOCOL
from blokus.model.season import DEFAULT_SEASON
from blokus.net.bot import DEFAULT_IDLE_TIMEOUT_S, RESULT_GRACE_S, Bot, BotEnd, BotLines, BotOptions
from blokus.net.lines import LineHandler, LineWriter

REPEATS_SHOWN = 3  # log lines of one kind on stderr (-v); the rest go to --log only


def _memory_bytes() -> int | None:
    memory = memory_budget()
    return None if memory is None else memory.bytes


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        "blokus bot",
        "Headless computer player for a Software-Challenge Blokus server (season 2027 or "
        "2021; the season is read from the server's first state).",
    )
    p.add_argument("-?", action="help", help=argparse.SUPPRESS)
    add_server_address(p)
    p.add_argument(
        "-r",
        "--reservation",
        help="reservation code of a prepared game (joinPrepared)",
    )
    p.add_argument(
        "--socket-fd",
        type=int,
        metavar="FD",
        help="play over this inherited socket, already connected to a game server of the process that started "
        "the bot, which seats it (blokus arena's own side: no code that another process could read); instead "
        "of -h, -p and -r. The bot then keeps its memory and descriptors from the user's other processes, and "
        "exits with 5 after a game in which a move was not its player's own (a fallback: the host voids it)",
    )
    p.add_argument("--room", help="join this room id (joinRoom, 21.4.0 servers)")
    add_season(
        p,
        f"the season to ask for: a plain join sends its gameType (default: {DEFAULT_SEASON.name}'s, then the "
        "other season's if the server drops that join); the server's states decide in the end",
    )
    p.add_argument(
        "--ai",
        default=None,
        help=f"computer player: {accepted()} (default {DEFAULT_AI})",
    )
    p.add_argument(
        "--player",
        metavar="PATH[:CLASS]",
        help="play with your own Python player instead of ours (py:PATH[:CLASS]): a blokus.player.Player "
        "subclass in PATH (docs/player-api.md); a move it gets wrong (an exception, an illegal or a late "
        "move) is replaced by a legal one, shown on stderr and counted in the summary",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="judge your player's mistakes as the contest does: an illegal move is sent as it is, a late "
        "one late, and an exception leaves the game (blokus arena plays py: players so)",
    )
    p.add_argument(
        "--memory-limit",
        type=int,
        metavar="MIB",
        help=f"the memory your player's process may use, in MiB (default: what is left of the memory the bot may "
        f"use, the machine's or its cgroup's limit, after the bot's own {BOT_MEMORY_MIB}, between "
        f"{MEMORY_FLOOR_MIB} and {MEMORY_LIMIT_MIB}: here {default_memory_mib(_memory_bytes())}; 0: no limit): a "
        "bigger allocation is a MemoryError in your code, never a machine out of memory",
    )
    p.add_argument("--seed", type=int, help="seed of the computer player")
    p.add_argument(
        "--move-time",
        type=milliseconds,
        default=DEFAULT_THINK_MS,
        metavar="MS",
        help=f"think time per move from the arrival of the request, in ms or with a unit (1.6s) "
        f"(default {DEFAULT_THINK_MS}; at most {HARD_CUTOFF_MS - STOP_MARGIN_MS}: the move is sent "
        f"by {HARD_CUTOFF_MS} ms)",
    )
    p.add_argument(
        "--ponder",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="think on the opponent's time too (its next move starts from a grown tree; uses a core "
        "while the opponent thinks; default off)",
    )
    p.add_argument(
        "--threads",
        type=int,
        metavar="N",
        help=f"search with at most N threads (1..{MAX_THREADS}; default: one a core this process may use, "
        f"here {available_cores()}); the bot says on stderr how many it uses",
    )
    p.add_argument(
        "--engine",
        choices=("process", "thread"),
        default="process",
        help="run the computer player in its own process (default; keeps the timing on a loaded "
        "machine) or in a thread",
    )
    p.add_argument("--hard-limit", type=int, default=HARD_CUTOFF_MS, metavar="MS", help=argparse.SUPPRESS)
    p.add_argument(
        "--idle-timeout",
        type=wait_time,
        default=DEFAULT_IDLE_TIMEOUT_S,
        metavar="TIME",
        help=f"give up when the server sends nothing for TIME, before the game starts or between "
        f"messages (default {DEFAULT_IDLE_TIMEOUT_S:g}s; ms unless given as e.g. 60s; 0: wait for "
        f"ever). After the result the bot waits at most {RESULT_GRACE_S:g}s for <left>",
    )
    p.add_argument("--log", type=Path, metavar="FILE", help="write a log with the raw XML traffic to FILE")
    p.add_argument("--save-replay", type=Path, metavar="DIR", help="write the game as a replay file into DIR")
    p.add_argument("-v", "--verbose", action="count", default=0, help="log moves and timing to stderr (-vv: XML)")
    return p


def options_from_args(args: argparse.Namespace, player: PlayerSpec | None) -> BotOptions:
    """The bot's options from its parsed command line and its player (None: the default AI)."""
    memory = default_memory_mib(_memory_bytes()) if args.memory_limit is None else args.memory_limit
    return options_from(BotOptions, args, ai=player, memory_limit=memory)


def parse_options(argv: list[str]) -> BotOptions:
    """``argv`` (the bot's arguments) as its options (tests, the bundle's check of baked-in arguments)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    return options_from_args(args, player_of(parser, args))


def player_of(parser: argparse.ArgumentParser, args: argparse.Namespace) -> PlayerSpec | None:
    """The player ``--ai NAME`` or ``--player PATH[:CLASS]`` names (None: the default AI); a bad name ends
    the command with one line."""
    if args.player is not None and args.ai is not None:
        parser.error("--player and --ai name two players: give one")
    try:
        if args.player is not None:
            spec: PlayerSpec | None = parse_python_player(args.player)
        else:
            spec = None if args.ai is None else parse_player(args.ai, "AI")
        if args.threads is not None:
            spec = capped_threads(spec or default_player(), args.threads)
        return spec
    except ValueError as exc:
        parser.error(str(exc))


def resource_lines(spec: PlayerSpec | None, memory_limit: int | None, cores: str, memory: Memory | None) -> list[str]:
    """What the bot says it uses before it joins: its search's threads and the cores and memory it may use (``cores``:
    ``Cores.describe``); for a team's player, its process's default memory limit (what is left of ``memory`` after
    the bot) when that is less than on a big machine (none with ``--memory-limit``: ``memory_limit``), with a note
    when it is at the floor."""
    memory_text = "not known" if memory is None else memory.describe()
    if spec is not None and spec.kind is PlayerKind.PY:
        if memory_limit is not None or memory is None or default_memory_mib(memory.bytes) >= MEMORY_LIMIT_MIB:
            return []  # the team's own choice, or no less than the most by default: the team's stderr stays its own
        mib, left = default_memory_mib(memory.bytes), memory.mib - BOT_MEMORY_MIB
        what = f"what is left of {memory_text}, after the bot's {BOT_MEMORY_MIB} MiB"
        if left < MEMORY_FLOOR_MIB:
            what = f"the least by default; memory {memory_text}"
        lines = [f"your player's process may use {mib} MiB ({what}; --memory-limit MIB sets it); the bot: {cores}"]
        if left < MEMORY_FLOOR_MIB:
            lines.append(
                f"note: only {max(0, left)} MiB are left for your player: it gets {MEMORY_FLOOR_MIB} MiB, and this "
                "machine may run out of memory"
            )
        return lines
    player = spec or default_player()
    threads = search_threads_of(player)
    if threads is None:
        return []
    plural = "s" if threads > 1 else ""
    return [
        f"{player.name} searches with {threads} thread{plural} ({cores}; memory {memory_text}; --threads N caps it)"
    ]


class _Repeats(logging.Filter):
    """Shows a kind of log line (same logger and format string) at most ``REPEATS_SHOWN`` times: a server
    that sends 200 unrequested move requests gives a few lines, not 200."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[tuple[str, object], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.msg)
        count = self.seen[key] = self.seen.get(key, 0) + 1
        if count == REPEATS_SHOWN:
            record.msg = f"{record.msg} (further lines like this are not shown)"
        return count <= REPEATS_SHOWN


EXIT_CODES = {
    BotEnd.PLAYED: EXIT_OK,
    BotEnd.CONNECTION: EXIT_CONNECTION,
    BotEnd.PROTOCOL: EXIT_PROTOCOL,
    BotEnd.PLAYER: EXIT_PLAYER,
    BotEnd.FALLBACK: EXIT_FALLBACK,
}


def bot_lines(console: LineWriter | None = None) -> BotLines:
    """The bot's own lines: ``blokus bot: …`` on stderr (through ``console``, the log's writer thread, when there
    is one: a stderr nobody reads never stalls the event loop, and they stay in order with the log lines; else
    plain prints), the summary on stdout."""

    def raw(line: str) -> None:
        if console is not None:
            console.write(line)
        else:
            print(line, file=sys.stderr, flush=True)

    return BotLines(
        say=lambda text: raw(f"blokus bot: {text}"),
        summary=lambda text: print(f"blokus bot: {text}", flush=True),
        raw=raw,
    )


def _setup_logging(args: argparse.Namespace) -> LineWriter:
    """The bot's log handlers. The console's lines (and the bot's own: ``bot_lines``) go through
    a writer thread: a stderr nobody reads never stalls the event loop (``net.lines``). Close it at the end."""
    root = logging.getLogger()
    root.setLevel(logging.DEBUG)
    writer = LineWriter(sys.stderr, name="stderr")
    console = LineHandler(writer)
    # default: nothing but the bot's own final line on stderr (warnings go to --log)
    console.setLevel(
        logging.CRITICAL + 1 if args.verbose == 0 else logging.INFO if args.verbose == 1 else logging.DEBUG
    )
    console.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    if args.verbose < 2:
        console.addFilter(lambda record: record.name != "blokus.xml")
        console.addFilter(_Repeats())
    root.addHandler(console)
    if args.log is not None:
        try:
            handler = logging.FileHandler(args.log, encoding="utf-8")
        except OSError as exc:
            raise SystemExit(f"blokus bot: cannot open log file: {exc}") from None
        handler.setLevel(logging.DEBUG)
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        root.addHandler(handler)
    return writer


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # the socket, the bot's memory, environment and descriptors: not for the user's other processes (a team's
    # program among them; ``ai.sandbox`` walls those in where Landlock is there, this holds without it)
    processes.keep_private()
    if args.socket_fd is not None:
        try:
            socket.socket(fileno=args.socket_fd).detach()
        except OSError as exc:
            parser.error(f"--socket-fd {args.socket_fd}: not an open socket ({exc.strerror or exc})")
    spec = player_of(parser, args)
    if spec is not None and spec.kind is not PlayerKind.PY:  # a team's player loads in its own process (Bot.run)
        try:
            if spec.kind is PlayerKind.CMD:  # a cmd: program plays by itself
                raise ValueError(f"{spec.name!r} is a program of its own: start it instead of the bot")
            spec.build(0)  # a gtp: engine that cannot be started still plays (its fallback), as before
        except ValueError as exc:
            parser.error(str(exc))
    console = _setup_logging(args)

    def crash(end: BotEnd) -> None:
        console.close()  # the bot's line is written before the process ends
        sys.stdout.flush()
        os._exit(EXIT_CODES[end])

    for line in resource_lines(spec, args.memory_limit, core_budget().describe(), memory_budget()):
        console.write(f"blokus bot: {line}")  # a contest machine's cores and memory are not known beforehand
    try:
        # --strict: a failing team player ends the process at once, as a crashed contest client (its exit code
        # is what the arena names)
        bot = Bot(options_from_args(args, spec), crash=crash if args.strict else None, lines=bot_lines(console))
        return EXIT_CODES[asyncio.run(bot.run())]
    except KeyboardInterrupt:
        return 130
    finally:
        console.close()
        report_dropped(console, "blokus bot")
