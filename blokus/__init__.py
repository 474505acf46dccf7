"""The ``blokus`` command: a thin dispatcher to the subcommands.

Each subcommand is a module of ``cli`` with ``main(argv) -> int``, imported only when it is run, so that the
commands without a user interface (``moves``, ``bot``, ``serve``, ``arena``) never import Textual.
"""

from __future__ import annotations

import gc
import importlib
import sys

# name -> (one-line description); each runs ``cli.<name>.main(argv) -> int`` (the exit code; ``-`` in a name
# is ``_`` in its module: new-player -> cli.new_player).
SUBCOMMANDS: dict[str, str] = {
    "play": "play in the terminal (local game, or on a server with -h/-p)",
    "replay": "step through a replay file (.xml or .xml.gz)",
    "bot": "headless player for a game server (contest start.sh uses this)",
    "serve": "run a local game server speaking the official protocol",
    "arena": "AI against AI, or your own client (cmd:COMMAND) or player (py:PATH): score table",
    "tournament": "round-robin or gauntlet of many players: Elo ratings, resumable, on a cluster too",
    "cluster-certs": "make the TLS certificates of a cluster of machines (arena/tournament --cluster tls://…)",
    "analyse": "find the mistakes and blunders of each team in replay files",
    "watch": "watch a live game on a server (admin protocol: observe, prepare)",
    "moves": "list the legal moves of the colour to move in a state file or, with --turn N, in a replay",
    "bundle": "build the contest upload (zip: start.sh, dependencies, compiled AI)",
    "new-player": "write a Python player of your own (player.py, its tests, a README)",
    "openings": "write a balanced opening suite for arena and tournament (--openings FILE)",
}

USAGE = """usage: blokus [SUBCOMMAND] [ARGS...]

Software-Challenge Blokus in the terminal: season 2027 (swc_2027_blokus, the current contest) or 2021
(swc_2021_blokus). Without a subcommand, starts a local game against the AI at once (same as `blokus play`).

subcommands:
{lines}

`blokus SUBCOMMAND --help` shows the options of one subcommand; --season 2021|2027 picks the
season where it cannot be read from a server or a file (default {default}).
"""


def usage() -> str:
    from blokus.model.season import DEFAULT_SEASON  # here: the package's own import stays light

    width = max(map(len, SUBCOMMANDS))
    lines = "\n".join(f"  {name:<{width}} {desc}" for name, desc in SUBCOMMANDS.items())
    return USAGE.format(lines=lines, default=DEFAULT_SEASON.name)


def run() -> int:
    """The program's entry point (the ``blokus`` command, ``python -m blokus``)."""
    return main(program=True)


def _command(name: str, *, freeze: bool):
    """The subcommand's ``main``. The cyclic garbage collector waits while its modules import: they make a
    few hundred thousand objects that live as long as the program. With ``freeze`` (the program itself, not
    a caller of ``main``) they are then frozen (``gc.freeze``): no collection scans them again (~20 % of the
    CPU of a start, which every game's bot pays, and shorter collections during its moves)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        command = importlib.import_module(f"blokus.cli.{name.replace('-', '_')}").main
        if freeze:
            gc.freeze()
        return command
    finally:
        if collecting:
            gc.enable()


def main(argv: list[str] | None = None, *, program: bool = False) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("--help", "-?", "help"):
        print(usage(), end="")
        return 0
    if args and args[0] == "--version":
        from importlib.metadata import version

        print(f"blokus-tui {version('blokus-tui')}")
        return 0
    name = "play"
    if args and args[0] == "analyze":  # the American spelling works too
        args[0] = "analyse"
    if args and args[0] in SUBCOMMANDS:
        name = args.pop(0)
    elif args and not args[0].startswith("-"):
        print(
            f"blokus: unknown subcommand {args[0]!r}; choose one of {', '.join(SUBCOMMANDS)} (blokus --help)",
            file=sys.stderr,
        )
        return 2
    func = _command(name, freeze=program)
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `blokus moves FILE | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(run())
