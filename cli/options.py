"""Command-line pieces shared by every ``blokus`` subcommand: the parser, the ``type=`` validators and the
option groups written once (server address, season, player names).

Every subcommand builds its parser with ``Parser``: ``-h`` stays free for the host (as in every
Software-Challenge player), ``--help`` shows the help, and a bad option is one line on stderr with exit
code 2 (argparse would print the whole usage first). Times are milliseconds everywhere; a value may
carry its unit (``1600``, ``1600ms``, ``1.6s``).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from blokus.model.exits import EXIT_USAGE
from blokus.model.openings import Opening, OpeningsError, read_openings
from blokus.model.pieces import Shape
from blokus.model.season import DEFAULT_PORT, Season, season_named
from blokus.model.text import printable

_Options = TypeVar("_Options")

if TYPE_CHECKING:
    from blokus.ai.arena.match import SideCores
    from blokus.ai.players.registry import PlayerSpec
    from blokus.net.cluster import DaskSite


def fail(prog: str, message: str) -> int:
    """One line on stderr for an error found after parsing; returns the usage exit code."""
    print(printable(f"{prog}: {message}"), file=sys.stderr)
    return EXIT_USAGE


class Parser(argparse.ArgumentParser):
    """An ArgumentParser with ``--help`` only (``-h`` is the host) and one-line errors."""

    def __init__(self, prog: str, description: str, **kwargs) -> None:
        super().__init__(prog=prog, description=description, add_help=False, **kwargs)
        # a value that starts with a minus and a digit is a value, not an option (``--sprt -10,0``), as Python 3.13's
        # argparse has it (3.11 takes only plain negative numbers); no option of ours starts so
        self._negative_number_matcher = re.compile(r"-\.?\d")
        self.add_argument("--help", action="help", help="show this help and exit")

    def error(self, message: str) -> NoReturn:
        if message.startswith("argument -h/--host: expected one argument"):  # `blokus -h` meant help
            message = "-h is the server host and needs a name (-h localhost); --help shows the help"
        self.exit(EXIT_USAGE, f"{self.prog}: {message}\n")


def port(text: str) -> int:
    """A TCP port 1-65535."""
    value = _int(text, "port")
    if not 0 < value < 65536:
        raise argparse.ArgumentTypeError(f"invalid port {value} (1-65535)")
    return value


def listen_port(text: str) -> int:
    """A port to listen on: 0 (any free port) or 1-65535."""
    return 0 if text.strip() == "0" else port(text)


def season(text: str) -> Season:
    """A season by year: ``2021`` or ``2027``."""
    try:
        return season_named(text)
    except KeyError:
        raise argparse.ArgumentTypeError(f"unknown season {text!r}; choose 2021 or 2027") from None


def shape(text: str) -> Shape:
    """A shape by name in any case (``pento_l``); whether it may start a game is ``check_start_piece``'s."""
    try:
        return Shape.parse(text)
    except KeyError:
        raise argparse.ArgumentTypeError(f"unknown shape {text!r} (e.g. PENTO_L)") from None


def check_start_piece(piece: Shape | None, of_season: Season) -> str | None:
    """Why ``piece`` cannot start a game of ``of_season`` (None: it can, or no piece was given)."""
    if piece is None or piece.name in of_season.start_pieces:
        return None
    return f"{piece.name} is never a start piece in {of_season.name}; choose one of {', '.join(of_season.start_pieces)}"


MIN_MOVE_TIME_MS = 10


def _duration_ms(text: str) -> tuple[float, bool]:
    """``text`` as milliseconds (``1600``, ``1600ms`` or ``1.6s``) and whether it had no unit;
    ValueError if it is no number."""
    raw = text.strip().lower()
    if raw.endswith("ms"):
        return float(raw[:-2]), False
    if raw.endswith("s"):
        return float(raw[:-1]) * 1000.0, False
    return float(raw), True


def milliseconds(text: str) -> int:
    """A thinking time: ``1600``/``1600ms`` (milliseconds) or ``1.6s`` (seconds); at least 10 ms."""
    try:
        value, bare = _duration_ms(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a time: {text!r} (e.g. 1600, 1600ms or 1.6s)") from None
    if not MIN_MOVE_TIME_MS <= value < 3_600_000:
        hint = f"; did you mean {text}s?" if bare and 0 < value < MIN_MOVE_TIME_MS else ""
        raise argparse.ArgumentTypeError(f"{value:g} ms is not a usable time (at least {MIN_MOVE_TIME_MS} ms){hint}")
    return round(value)


def wait_time(text: str) -> float | None:
    """How long to wait for a silent peer, in seconds: ``300s``, or milliseconds like every time here
    (``300000``, ``300000ms``); ``0`` waits for ever (None)."""
    try:
        value = _duration_ms(text)[0] / 1000
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a time: {text!r} (e.g. 300s, 300000 or 0 for no limit)") from None
    if not 0 <= value < 1e7:
        raise argparse.ArgumentTypeError(f"{text!r} is not a usable time (0 for no limit, or more)")
    return value or None


def at_least_one(text: str) -> int:
    """A count of 1 or more."""
    value = _int(text, "number")
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is too small (at least 1)")
    return value


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid {what} {text!r} (a whole number)") from None


# --- option groups shared by several commands -------------------------------------------------------------


def add_server_address(
    p: argparse.ArgumentParser,
    *,
    host: str | None = "localhost",
    host_help: str = "server host (default localhost)",
    port_type=None,
    port_default: int | None = DEFAULT_PORT,
    port_help: str = f"server port (default {DEFAULT_PORT})",
) -> None:
    """``-h/--host`` and ``-p/--port`` as every Software-Challenge program has them: ``-h`` is the host,
    the help is ``--help``."""
    p.add_argument("-h", "--host", default=host, help=host_help)
    p.add_argument("-p", "--port", type=port_type or port, default=port_default, help=port_help)


def add_season(p: argparse.ArgumentParser, help: str, default: Season | None = None) -> None:
    """``--season 2021|2027`` as a ``Season`` (None when not given and no default)."""
    p.add_argument("--season", type=season, default=default, metavar="2021|2027", help=help)


def add_player(p: argparse.ArgumentParser, *flags: str, help: str, metavar: str = "NAME") -> None:
    """A player name (``cli.players``): the option keeps the name as written; the command parses it with
    ``cli.players.parse_player`` (one line for an unknown name)."""
    p.add_argument(*flags, default=None, metavar=metavar, help=help)


def add_cluster(parser: argparse.ArgumentParser) -> None:
    """``--cluster ADDRESS`` and ``--cluster-certs DIR``: the games on a Dask cluster (``net.cluster``; the optional
    extra ``cluster``), mutual TLS with the certificates of ``blokus cluster-certs``."""
    from blokus.net.cluster import CERTS_ENV

    parser.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="play the games on a Dask cluster: tls://HOST:8786 (dask scheduler and a dask worker on each machine, "
        "started with the certificates of blokus cluster-certs), or local:N to start N workers here (loopback "
        "only); needs pip install -e '.[cluster]'",
    )
    parser.add_argument(
        "--cluster-certs",
        metavar="DIR",
        default=os.environ.get(CERTS_ENV) or None,
        help=f"the folder of blokus cluster-certs with the client's certificate, for --cluster tls://… "
        f"(default: ${CERTS_ENV})",
    )


def open_cluster(parser: argparse.ArgumentParser, args: argparse.Namespace, players: list[PlayerSpec]) -> DaskSite:
    """The cluster of ``--cluster`` (``--cluster-certs``) with its workers checked (``net.cluster.connect``); its
    lines on stderr, a cluster that cannot be used ends the command with one line."""
    from blokus.net.cluster import ClusterError, connect

    def say(line: str) -> None:  # a line said during the games starts with a newline (after the progress bar)
        text = line.lstrip("\n")
        print(f"{line[: len(line) - len(text)]}{parser.prog}: {text}", file=sys.stderr)

    try:
        return connect(args.cluster, players, say, args.cluster_certs)
    except ClusterError as exc:
        parser.error(str(exc))


def add_cores_per_player(parser: argparse.ArgumentParser) -> None:
    """``--cores-per-player N``: each side of a game on N cores of its own (``ai.arena.match.player_cores``)."""
    parser.add_argument(
        "--cores-per-player",
        type=int,
        metavar="N",
        help="give each side of a game N cores of its own (pinned, as fastchess's -use-affinity; our search then "
        "runs N threads): the contest's conditions are 1. Needs 2 x N x --jobs cores (on 2 cores: one game at a "
        "time, each side one core)",
    )


def cores_of(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[SideCores] | None:
    """The cores of each of the ``--jobs`` games side by side under ``--cores-per-player`` (None without it); too
    few cores, or ``--cluster``, end the command with one line."""
    if args.cores_per_player is None:
        return None
    if args.cluster is not None:
        parser.error("--cores-per-player and --cluster: a cluster's workers run their games on their own cores")
    from blokus.ai.arena.match import player_cores

    try:
        return player_cores(args.cores_per_player, args.jobs)
    except ValueError as exc:
        parser.error(str(exc))


def add_openings(p: argparse.ArgumentParser) -> None:
    """``--openings FILE`` and ``--openings-order``: the game pairs start from a file's openings."""
    p.add_argument(
        "--openings",
        metavar="FILE",
        help="start the game pairs from the openings of FILE, each from both seats (blokus openings writes one; "
        "docs/openings.md)",
    )
    p.add_argument(
        "--openings-order",
        choices=("sequential", "random"),
        default="sequential",
        help="the openings in the file's order (default) or shuffled by --seed",
    )


def add_adjudication(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-adjudication",
        action="store_true",
        help="play every game to its end (default: a game ends once its winner can no longer change, scored as "
        "it stands then)",
    )


def read_openings_option(parser: argparse.ArgumentParser, path: str | None, of_season: Season) -> list[Opening]:
    """The openings of ``--openings`` (none without it); a bad file is the parser's one-line error."""
    if path is None:
        return []
    try:
        return read_openings(Path(path), of_season)
    except OpeningsError as exc:
        parser.error(str(exc))


def options_from(cls: type[_Options], args: argparse.Namespace, **derived: Any) -> _Options:
    """The options object ``cls`` (a dataclass) of a command, from its parsed command line: each field takes the
    option of its name (``--move-time`` fills ``move_time``), so an option is declared once, in the parser;
    ``derived`` gives the fields computed from several options (or named otherwise). A field that neither
    names is a mistake of the command (TypeError), not a default taken silently."""
    values = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name in derived:
            values[f.name] = derived.pop(f.name)
        elif hasattr(args, f.name):
            values[f.name] = getattr(args, f.name)
        else:
            raise TypeError(f"{cls.__name__}.{f.name}: no option --{f.name.replace('_', '-')} and no value given")
    if derived:
        raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(derived))}")
    return cls(**values)
