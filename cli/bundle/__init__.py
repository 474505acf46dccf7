"""``blokus bundle FILE.zip [-- BOT ARGS]``: build the contest upload (``cli.bundle.build``): a zip with start.sh,
the project, its dependencies and the compiled AI."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from blokus.ai import DEFAULT_AI
from blokus.cli.bundle.build import MAX_ZIP_MIB, BundleError, bundle
from blokus.cli.options import Parser
from blokus.cli.players import PlayerKind, PlayerSpec, accepted, parse_player, parse_python_player
from blokus.model.exits import EXIT_OK

EXIT_FAIL = 1


def _say(text: str) -> None:
    """One line of the command on stderr (its progress, or why it failed)."""
    print(f"blokus bundle: {text}", file=sys.stderr, flush=True)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        "blokus bundle",
        "Build the contest upload: a zip with start.sh at its root, the project, its "
        "dependencies installed for the target Python and the AI compiled for any x86-64 "
        "CPU. Arguments after -- are baked into start.sh for blokus bot (e.g. -- --ponder).",
    )
    p.add_argument("zip", type=Path, metavar="FILE.zip", help="the zip to write")
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    p.add_argument(
        "--python",
        default=here,
        metavar="3.X|PATH",
        help=f"the contest's Python version (default {here}, this one); python3.X must be installed "
        f"here to compile the AI, or give the interpreter's path",
    )
    p.add_argument(
        "--player",
        metavar="PATH[:CLASS]",
        help="the upload plays your own Python player (a blokus.player.Player in PATH): start.sh runs blokus bot "
        "--player. Packed: PATH, the modules of its folder it imports (read, not run) and the packages it "
        "imports from this environment; nothing else unless --include names it",
    )
    p.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="PATH",
        help="with --player: a data file or folder of the player's folder to pack too (repeatable)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="leave the compiled AI out (the bot then compiles it on every start, playing with the "
        "Python search meanwhile)",
    )
    return p


def bot_ai(bot_args: list[str]) -> PlayerSpec:
    """The player the bot's baked-in arguments name; BundleError (one line) for a bad argument or a player the
    contest bot cannot play, so that it fails now, not in the contest."""
    from blokus.cli.bot import build_parser as bot_parser

    parsed = bot_parser().parse_args(bot_args)
    ai = parsed.ai or DEFAULT_AI
    try:
        spec = parse_player(ai, "AI")
    except ValueError:
        raise BundleError(f"unknown AI {ai!r} in the bot's arguments; choose {accepted()}") from None
    if spec.kind not in (PlayerKind.BUILTIN, PlayerKind.LEVEL, PlayerKind.MCTS):
        raise BundleError(f"{ai!r} in the bot's arguments: the contest bot plays our own players only")
    return spec


def team_player(text: str, bot_args: list[str]) -> PlayerSpec:
    """``--player PATH[:CLASS]`` as a spec; BundleError (one line) if it cannot be loaded or the bot's
    arguments name another player."""
    from blokus.ai.players.pyplayer import PlayerLoadError
    from blokus.ai.players.team_process import check_team_player

    if any(arg in ("--ai", "--player") or arg.startswith(("--ai=", "--player=")) for arg in bot_args):
        raise BundleError("--player and a player in the bot's arguments: give one")
    try:
        spec = parse_python_player(text)
        check_team_player(spec)  # in a child process with a time limit: the team's file is never imported here
    except (PlayerLoadError, ValueError) as exc:
        raise BundleError(str(exc)) from None
    return spec


def main(argv: list[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    bot_args: list[str] = []
    if "--" in args_in:
        cut = args_in.index("--")
        args_in, bot_args = args_in[:cut], args_in[cut + 1 :]
    args = build_parser().parse_args(args_in)
    try:
        ai = bot_ai(bot_args)
        player = team_player(args.player, bot_args) if args.player is not None else None
        if args.include and player is None:
            raise BundleError("--include packs files of the player's folder: give --player too")
        size = bundle(
            args.zip,
            args.python,
            bot_args,
            ai=ai,
            with_cache=not args.no_cache,
            player=player,
            includes=args.include,
            say=_say,
        )
    except BundleError as exc:
        _say(str(exc))
        return EXIT_FAIL
    mib = size / 2**20
    if mib > MAX_ZIP_MIB:
        _say(f"{args.zip} is {mib:.1f} MiB: more than the contest's {MAX_ZIP_MIB} MiB")
        return EXIT_FAIL
    print(f"blokus bundle: {args.zip} ({mib:.1f} MiB): upload it; the contest runs start.sh", flush=True)
    return EXIT_OK
