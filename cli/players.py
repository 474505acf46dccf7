"""Player names on the command line: the parser itself is ``ai.players.registry`` (one place for every layer); this
module adds what only a command needs — checking that a program or a team's file can start before any game
(``check_player``) and refusing a program where only an in-process player can work (``in_process_engine``).
"""

from __future__ import annotations

import argparse

from blokus.ai.players.registry import (
    LEVELS,
    PlayerKind,
    PlayerNameError,
    PlayerSpec,
    PlayerUnavailable,
    accepted,
    level_player,
    parse_player,
    parse_python_player,
)

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
    "level_option",
    "player_option",
    "parse_player",
    "parse_python_player",
]


def player_option(what: str):
    """An argparse ``type``: the option's value as a :class:`PlayerSpec` (a bad name: one line)."""

    def convert(text: str) -> PlayerSpec:
        try:
            return parse_player(text, what)
        except PlayerNameError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return convert


def level_option(text: str) -> PlayerSpec:
    """An argparse ``type``: ``--level N`` as the spec of that level."""
    try:
        return level_player(text)
    except PlayerNameError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def check_player(spec: PlayerSpec) -> None:
    """ValueError with one line if the player cannot be started at all (a ``cmd:`` program that is not
    there, a ``py:`` file that cannot be loaded or has no player class — tried in a child process with a time
    limit, never imported here; the player API's compiled engine is made ready here, before any clock runs);
    building an in-process player checks the rest."""
    if spec.external:
        from blokus.net.external import ProgramError, check_program

        try:
            check_program(spec)
        except ProgramError as exc:
            raise PlayerUnavailable(str(exc)) from None
    if spec.kind is PlayerKind.PY:
        from blokus.model.fast import warm_up

        warm_up()  # the player API's compiled engine, before any clock runs


def in_process_engine(spec: PlayerSpec, what: str = "AI") -> PlayerSpec:
    """A player that must play in this process (hints, analysis engines): a one-line error for a program
    (``cmd:``, ``py:``) or a person."""
    if spec.kind is PlayerKind.PY:
        check_player(spec)  # a file that cannot be loaded says so first
    if not spec.in_process:
        raise PlayerUnavailable(f"{what} {spec.name!r}: only an in-process player can be used here, no program")
    return spec


def check_analysis_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The options of a command that analyses (``analyse``, ``watch``): ``--ai`` an in-process player and
    ``--time`` (ms per position) within the analysis's limit; a bad one ends the command with one line."""
    from blokus.ai.analysis import MAX_TIME

    if args.ai is not None:
        try:
            in_process_engine(parse_player(args.ai, "AI"))
        except ValueError as exc:
            parser.error(str(exc))
    if args.time > MAX_TIME * 1000:
        parser.error(f"--time: at most {MAX_TIME:g} s per position, not {args.time / 1000:g} s")
