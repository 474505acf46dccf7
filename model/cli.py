"""``blokus moves FILE...``: the legal SetMoves of the colour to move in state files.

Each FILE holds a ``<state>`` or a memento ``<room>`` (plain or gzipped). One move per line as
``COLOR KIND ROTATION isFlipped X Y``; ``--count`` prints only the number; ``--timing`` adds the
microseconds spent generating (after the number; when listing moves, as ``COUNT MICROSECONDS`` on
stderr). With several files each line starts with the file name (``FILE COUNT [MICROSECONDS]``).
The season (first-move rule) is read from the file's form (2021 where it does not tell); ``--season``
overrides it.
"""

from __future__ import annotations

import sys
import time

from model.args import Parser
from model.convert import state_from_xml
from model.fast import FastState, warm_up
from model.files import read_bounded
from model.framing import DEFAULT_MAX_MESSAGE_SIZE
from model.season import SEASONS, Season, season_named
from model.state import GameState, LegalMoves


def _read_state(path: str, season: Season | None = None) -> GameState:
    # a state file is one message: more than the message cap is refused while unpacking
    data, warnings = read_bounded(path, max_unpacked=DEFAULT_MAX_MESSAGE_SIZE)
    if warnings:  # damaged gzip data: a cut-off state is no state
        raise ValueError(warnings[0])
    return state_from_xml(data, season).state


def moves_main(argv: list[str]) -> int:
    parser = Parser("blokus moves", "Print every distinct legal SetMove of the colour to move, one per line.")
    parser.add_argument("files", nargs="+", metavar="FILE", help="a <state> or memento <room> XML file")
    parser.add_argument("--count", action="store_true", help="print only the number of legal moves")
    parser.add_argument("--timing", action="store_true", help="add the microseconds spent generating")
    parser.add_argument("--season", choices=sorted(SEASONS), metavar="2021|2027",
                        help="judge by this season's rules (default: the season the file's form shows, else 2021)")
    args = parser.parse_args(argv)
    season = season_named(args.season) if args.season else None
    several = len(args.files) > 1
    warm_up(play=False)  # compile (or load) the move generator, so --timing shows the steady-state cost
    out = sys.stdout
    for path in args.files:
        try:
            state = _read_state(path, season)
        except OSError as exc:
            print(f"blokus moves: {path}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        except Exception as exc:  # any unreadable input: one line, exit status 2, no traceback
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            print(f"blokus moves: {path}: {reason}", file=sys.stderr)
            return 2
        started = time.perf_counter()
        moves = [] if state.is_over else LegalMoves(state.current_color,
                                                  FastState.from_state(state).legal_placements())
        micros = (time.perf_counter() - started) * 1e6
        prefix = f"{path} " if several else ""
        summary = f"{prefix}{len(moves)}" + (f" {micros:.0f}" if args.timing else "")
        if args.count:
            print(summary, file=out)
            continue
        out.writelines(f"{prefix}{move}\n" for move in moves)
        if args.timing:  # keep stdout a pure move list; the timing goes beside it
            print(summary, file=sys.stderr)
    return 0
