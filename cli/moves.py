"""``blokus moves FILE...``: the legal SetMoves of the colour to move in state files.

Each FILE holds a ``<state>`` or a memento ``<room>`` (plain or gzipped). One move per line as
``COLOR KIND ROTATION isFlipped X Y``; ``--count`` prints only the number; ``--timing`` adds the
microseconds spent generating (after the number; when listing moves, as ``COUNT MICROSECONDS`` on
stderr). With several files each line starts with the file name (``FILE COUNT [MICROSECONDS]``).
The season (first-move rule) is read from the file's form (the default season, 2027, where it does not
tell); ``--season`` overrides it. ``--turn N`` reads each FILE as a replay (a whole game) and lists the moves of
its state at turn N; a replay given without ``--turn`` is said to be one, with that hint.
"""

from __future__ import annotations

import sys
import time

from blokus.cli.options import Parser
from blokus.model import numba_cache
from blokus.model.convert import state_from_xml
from blokus.model.fast import warm_up
from blokus.model.files import Unpacker, file_chunks, read_bounded
from blokus.model.framing import DEFAULT_MAX_MESSAGE_SIZE
from blokus.model.season import DEFAULT_SEASON, SEASONS, Season, season_named
from blokus.model.state import GameState, move_of_placement
from blokus.model.text import printable
from blokus.tui.spinner import Spinner

REPLAY_BYTES = 64 * 1024 * 1024  # unpacked bytes of a replay read for --turn (a game is below 2 MiB)


class NotAState(ValueError):
    """The file is no single state (e.g. a whole replay): one line for the user."""


def _looks_like_replay(head: bytes) -> bool:
    """A replay: the protocol stream of a whole game (``<protocol>`` and more than one state)."""
    return head.lstrip().startswith((b"<protocol", b"<?xml")) and head.count(b"memento") + head.count(b"<state") > 2


def _head(path: str, size: int = 256 * 1024) -> bytes:
    """The first ``size`` unpacked bytes of ``path`` (empty if it cannot be read)."""
    out = b""
    try:
        for chunk in file_chunks(path, Unpacker(max_unpacked=REPLAY_BYTES)):
            out += chunk
            if len(out) >= size:
                break
    except (OSError, ValueError):
        pass
    return out


def _read_state(path: str, season: Season | None = None) -> GameState:
    try:
        # a state file is one message: more than the message cap is refused while unpacking
        data, warnings = read_bounded(path, max_unpacked=DEFAULT_MAX_MESSAGE_SIZE)
        if warnings:  # damaged gzip data: a cut-off state is no state
            raise ValueError(warnings[0])
        return state_from_xml(data, season).state
    except Exception:  # noqa: BLE001 - any unreadable state: a replay gets its own explanation
        if _looks_like_replay(_head(path)):
            raise NotAState(
                f"a replay (a whole game), not one state; `blokus moves {path} --turn N` lists the moves at turn N"
            ) from None
        raise


def _replay_state(path: str, turn: int, season: Season | None = None) -> GameState:
    """The state at ``turn`` of the replay in ``path``."""
    from blokus.model.replay import load_replay

    if not _looks_like_replay(_head(path)):
        raise NotAState("not a replay (--turn picks a state of a whole game; a state file needs no --turn)")
    replay = load_replay(path, season, max_unpacked=REPLAY_BYTES)
    for state in replay.states:
        if state.turn == turn:
            return state
    turns = sorted({s.turn for s in replay.states})
    if not turns:
        raise NotAState("the replay holds no readable state")
    near = sorted(turns, key=lambda t: (abs(t - turn), t))[:2]  # a removed colour's turns have no state
    raise NotAState(
        f"the replay has no state at turn {turn} (turns {turns[0]}–{turns[-1]}; nearest: "
        f"{' and '.join(map(str, sorted(near)))})"
    )


def main(argv: list[str]) -> int:
    parser = Parser("blokus moves", "Print every distinct legal SetMove of the colour to move, one per line.")
    parser.add_argument("files", nargs="+", metavar="FILE", help="a <state> or memento <room> XML file")
    parser.add_argument("--count", action="store_true", help="print only the number of legal moves")
    parser.add_argument("--timing", action="store_true", help="add the microseconds spent generating")
    parser.add_argument(
        "--season",
        choices=sorted(SEASONS),
        metavar="2021|2027",
        help=f"judge by this season's rules (default: the season the file's form shows, else {DEFAULT_SEASON.name})",
    )
    parser.add_argument(
        "--turn", type=int, default=None, metavar="N", help="FILE is a replay: the moves of its state at turn N"
    )
    args = parser.parse_args(argv)
    if args.turn is not None and args.turn < 0:
        parser.error(f"--turn must be 0 or more, not {args.turn}")
    season = season_named(args.season) if args.season else None
    several = len(args.files) > 1
    cold = not numba_cache.is_warm(["blokus.model.fast"])
    with Spinner("preparing the engine (first start only)", enabled=cold):
        warm_up(play=False)  # compile (or load) the move generator, so --timing shows the steady-state cost
    if cold:
        numba_cache.mark_warm(["blokus.model.fast"])
    out = sys.stdout
    for path in args.files:
        try:
            state = _read_state(path, season) if args.turn is None else _replay_state(path, args.turn, season)
        except OSError as exc:
            print(printable(f"blokus moves: {path}: {exc.strerror or exc}"), file=sys.stderr)
            return 2
        except Exception as exc:  # any unreadable input: one line, exit status 2, no traceback
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            print(printable(f"blokus moves: {path}: {reason}"), file=sys.stderr)
            return 2
        started = time.perf_counter()
        ids = [] if state.is_over else state.compiled().legal_placements().tolist()
        micros = (time.perf_counter() - started) * 1e6
        moves = [move_of_placement(state.color, pid) for pid in ids]
        prefix = f"{path} " if several else ""
        summary = f"{prefix}{len(moves)}" + (f" {micros:.0f}" if args.timing else "")
        if args.count:
            print(summary, file=out)
            continue
        out.writelines(f"{prefix}{move}\n" for move in moves)
        if args.timing:  # keep stdout a pure move list; the timing goes beside it
            print(summary, file=sys.stderr)
    return 0
