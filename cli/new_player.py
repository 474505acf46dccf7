"""``blokus new-player DIR``: a player of your own in Python that plays at once, with its tests and a README.

Writes ``player.py`` (``MyPlayer``, a ``blokus.player.Player`` with a simple heuristic over the legal
moves), ``test_player.py`` (pytest: always a legal move on many positions of both seasons, an answer within
its time), ``README.md`` (one screen: how to run, test and upload it) and ``pytest.ini`` (the folder is its
own test root). Straight after, in DIR: ``blokus arena py:player.py level2 --games 2``, ``python -m pytest``,
``blokus bundle upload.zip --player player.py``. Existing files are never overwritten.
"""

from __future__ import annotations

import os
import sys
from importlib import resources
from pathlib import Path
from string import Template

from blokus.cli.options import Parser
from blokus.model.exits import EXIT_OK, EXIT_USAGE
from blokus.model.season import DEFAULT_SEASON, SEASONS

TEMPLATES = "templates/new_player"
SUFFIX = ".template"
EXIT_EXISTS = 1


def _other_season() -> str:
    return next(name for name, season in SEASONS.items() if season is not DEFAULT_SEASON)


def template_files() -> dict[str, str]:
    """The files to write: name -> text."""
    folder = resources.files("blokus.cli").joinpath(TEMPLATES)
    # the templates name the default season (``$season``, ``$game_type``) and the other one (``$other``)
    names = {"season": DEFAULT_SEASON.name, "game_type": DEFAULT_SEASON.game_type, "other": _other_season()}
    return {
        entry.name.removesuffix(SUFFIX): Template(entry.read_text(encoding="utf-8")).substitute(names)
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(SUFFIX)
    }


def main(argv: list[str] | None = None) -> int:
    parser = Parser(
        "blokus new-player",
        "Write a Python player of your own into DIR (player.py, its tests, a README): it plays at once "
        "(blokus arena py:player.py level2) and is the place to start yours (docs/player-api.md).",
    )
    parser.add_argument("dir", metavar="DIR", help="the folder to write into (made if missing)")
    args = parser.parse_args(argv)
    if not args.dir.strip():
        parser.error("DIR is empty: name the folder to write into (. for this one)")
    folder = Path(args.dir)
    files = template_files()
    # a name that exists as anything, a dangling link too (writing through it would write outside DIR)
    taken = [name for name in files if os.path.lexists(folder / name)]
    if taken:
        print(f"blokus new-player: {folder} already has {', '.join(taken)}; nothing written", file=sys.stderr)
        return EXIT_EXISTS
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            with open(folder / name, "x", encoding="utf-8") as out:  # exclusive: never through a link made since
                out.write(text)
    except OSError as exc:
        print(f"blokus new-player: cannot write into {folder}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, NotADirectoryError) else EXIT_EXISTS
    print(f"blokus new-player: wrote {', '.join(files)} into {folder}")
    print(f"  cd {folder}")
    season, other = DEFAULT_SEASON.name, _other_season()
    print(f"  blokus arena py:player.py level2 --games 2   # play season {season} (--season {other}: {other}'s rules)")
    print("  python -m pytest                             # test")
    print("  blokus bundle upload.zip --player player.py  # the contest upload")
    return EXIT_OK
