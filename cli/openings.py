"""``blokus openings FILE``: write a balanced opening suite for a season (``blokus arena --openings FILE``).

The openings are made by ``blokus.ai.arena.openings`` (plausible moves from every start piece, kept when our
evaluation judges the position even) and written in the text format of ``blokus.model.openings``
(docs/openings.md). An existing file is never overwritten.
"""

from __future__ import annotations

import sys
from pathlib import Path

from blokus.ai.arena.openings import SuiteSettings, balanced_suite
from blokus.cli.options import Parser, add_season, at_least_one
from blokus.model.exits import EXIT_OK, EXIT_USAGE
from blokus.model.openings import MAX_MOVES, MAX_OPENINGS, format_openings
from blokus.model.season import DEFAULT_SEASON

EXIT_EXISTS = 1


def main(argv: list[str] | None = None) -> int:
    parser = Parser(
        "blokus openings",
        "Write a balanced opening suite into FILE: openings from every start piece of the season that our engine "
        "judges even, for `blokus arena A B --openings FILE` (each played from both seats).",
    )
    parser.add_argument("file", metavar="FILE", help="the file to write (refused if it exists)")
    add_season(parser, f"the season of the openings (default {DEFAULT_SEASON.name})", default=DEFAULT_SEASON)
    parser.add_argument("--count", type=at_least_one, default=50, help="how many openings (default 50)")
    parser.add_argument("--plies", type=int, default=8, help="moves in each opening (default 8: two rounds)")
    parser.add_argument(
        "--max-value", type=float, default=6.0, help="how uneven an opening may be, in points (default 6)"
    )
    parser.add_argument("--seed", type=int, default=1, help="the random seed (default 1)")
    args = parser.parse_args(argv)
    if args.count > MAX_OPENINGS:
        parser.error(f"--count: at most {MAX_OPENINGS}")
    if not 0 <= args.plies <= MAX_MOVES:
        parser.error(f"--plies: from 0 to {MAX_MOVES}")
    if args.max_value < 0:
        parser.error("--max-value: not negative")
    path = Path(args.file)
    settings = SuiteSettings(count=args.count, plies=args.plies, max_value=args.max_value, seed=args.seed)
    suite = balanced_suite(args.season, settings)
    values = [j.value for j in suite]
    comment = (
        f"season {args.season.name}, {len(suite)} openings of {args.plies} moves, seed {args.seed}; each judged "
        f"within {args.max_value:g} points by the evaluation (made by blokus openings)"
    )
    try:
        with open(path, "x", encoding="utf-8") as out:  # exclusive: never over a file or through a link
            out.write(format_openings((j.opening for j in suite), comment))
    except FileExistsError:
        print(f"blokus openings: {path} exists; nothing written", file=sys.stderr)
        return EXIT_EXISTS
    except OSError as exc:
        print(f"blokus openings: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    spread = f"values {min(values):+.1f} .. {max(values):+.1f} points" if values else "none found"
    short = "" if len(suite) == args.count else f" (of {args.count} asked: try a larger --max-value)"
    print(f"blokus openings: wrote {len(suite)} openings{short} into {path}; {spread}")
    return EXIT_OK
