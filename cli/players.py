"""Player names on the command line: the parser itself is ``ai.players`` (one place for every layer); this
module adds what only a command needs — checking that a program or a team's file can start before any game
(``check_player``) and refusing a program where only an in-process player can work (``in_process_engine``).
"""

from __future__ import annotations

import argparse

from ai.players import LEVELS, PlayerKind, PlayerNameError, PlayerSpec, PlayerUnavailable, accepted, parse_player

__all__ = [
    "LEVELS",
    "PlayerKind",
    "PlayerNameError",
    "PlayerSpec",
    "PlayerUnavailable",
    "accepted",
    "check_analysis_options",
    "check_player",
    "in_process_engine",
    "parse_player",
]


def check_player(spec: PlayerSpec) -> None:
    """ValueError with one line if the player cannot be started at all (a ``cmd:`` program that is not
    there, a ``py:`` file that cannot be loaded or has no player class; its compiled engine is made ready
    here, before any clock runs); building an in-process player checks the rest."""
    if spec.kind is PlayerKind.CMD:
        from net.external import ProgramError, check_program

        try:
            check_program(spec.name)
        except ProgramError as exc:
            raise PlayerUnavailable(str(exc)) from None
    spec.load()


def in_process_engine(text: str, what: str = "AI") -> PlayerSpec:
    """A player name that must play in this process (hints, analysis engines): ``parse_player``, and a
    one-line error for a program (``cmd:``, ``py:``)."""
    spec = parse_player(text, what)
    if spec.kind is PlayerKind.PY:
        spec.load()  # a file that cannot be loaded says so first
    if spec.external:
        raise PlayerUnavailable(f"{what} {text!r}: a program cannot be used here, only an in-process player")
    return spec


def check_analysis_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The options of a command that analyses (``analyse``, ``watch``): ``--ai`` an in-process player and
    ``--time`` (ms per position) within the analysis's limit; a bad one ends the command with one line."""
    from ai.analysis import MAX_TIME

    if args.ai is not None:
        try:
            in_process_engine(args.ai)
        except ValueError as exc:
            parser.error(str(exc))
    if args.time > MAX_TIME * 1000:
        parser.error(f"--time: at most {MAX_TIME:g} s per position, not {args.time / 1000:g} s")
