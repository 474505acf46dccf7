"""``blokus analyse FILE...``: the mistakes and blunders of each team in replay files.

Per file: a table per team of the marked moves (turn, colour, move played, best move, loss), then a
summary line per team. ``--json`` prints one JSON document instead. Progress goes to stderr. A file
that cannot be read gets one line on stderr; the other files are still analysed, and the exit code
is 2. Results are cached (see ``ai.analysis``), so a second run over the same files is instant.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import threading
from pathlib import Path
from typing import TextIO

from blokus.ai.analysis import (
    BLUNDER_LOSS,
    DEFAULT_TIME,
    MISTAKE_LOSS,
    VALUE_DEPTH,
    AnalysisCache,
    AnalysisSettings,
    GameAnalysis,
    PositionAnalysis,
    analyse_cached,
    replay_moves,
)
from blokus.ai.search.cores import available_cores
from blokus.cli.options import Parser, milliseconds
from blokus.cli.players import PlayerSpec, accepted, check_analysis_options
from blokus.model.exits import plural
from blokus.model.moves import Move, describe_move
from blokus.model.pieces import Team
from blokus.model.text import printable

MAX_FILE_BYTES = 64 * 1024 * 1024


class BadFile(Exception):
    """A file that is no readable replay: one line for the user."""


def build_parser() -> argparse.ArgumentParser:
    from blokus.ai import ANALYSIS_AI

    p = Parser(
        "blokus analyse",
        "Find the mistakes (?) and blunders (??) of each team in replay files. Values are "
        "points, BLUE+RED minus YELLOW+GREEN; the loss of a move is the points its team gave "
        f"away against the best move found (? from {MISTAKE_LOSS:g}, ?? from {BLUNDER_LOSS:g}).",
    )
    p.add_argument("-h", action="help", help=argparse.SUPPRESS)  # no host here: -h is help too
    p.add_argument("files", nargs="+", metavar="FILE", help="replay file (.xml or .xml.gz)")
    p.add_argument(
        "--time",
        type=milliseconds,
        default=round(DEFAULT_TIME * 1000),
        metavar="MS",
        help=f"engine thinking time per position (default {DEFAULT_TIME * 1000:g}; 0.5s works too)",
    )
    p.add_argument("--ai", default=None, metavar="NAME", help=f"engine ({accepted()}; default {ANALYSIS_AI})")
    p.add_argument(
        "--depth",
        type=int,
        default=VALUE_DEPTH,
        metavar="PLIES",
        help=f"most plies of the search that values the positions, to a round's end (default {VALUE_DEPTH})",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document (for scripts)")
    p.add_argument("--all", action="store_true", help="list every analysed move, not only the marked ones")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the analysis cache")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return p


def read_game(path: Path):
    """The replay in ``path`` (``model.replay.Replay``), or ``BadFile``."""
    from blokus.model.replay import UnreadableReplay
    from blokus.model.replay import read_game as read_replay_file

    try:
        return read_replay_file(path, max_unpacked=MAX_FILE_BYTES)  # bounded: gzip bombs, /dev/zero
    except UnreadableReplay as exc:
        raise BadFile(str(exc)) from None


def short_move(move: Move) -> str:
    """``BLUE PENTO_L LEFT true 0 16`` -> ``PENTO_L 270° flipped @ (0,16)``, as the TUI writes it (the colour
    has its own column)."""
    return describe_move(move, color=False)


def team_label(team: Team, names: tuple[str, str]) -> str:
    colours = "BLUE+RED" if team is Team.ONE else "YELLOW+GREEN"
    name = names[team.value] if team.value < len(names) and names[team.value] else ""
    return f"{team.name} {name} ({colours})" if name else f"{team.name} ({colours})"


def format_report(path: str, replay, analysis: GameAnalysis, *, every_move: bool = False) -> str:
    names = tuple(replay.names)
    final = replay.states[-1]
    one, two = final.team_points(Team.ONE), final.team_points(Team.TWO)
    s = analysis.settings
    lines = [
        f"{path}: {team_label(Team.ONE, names)} {one} : {two} {team_label(Team.TWO, names)}",
        f"  {analysis.total} positions, engine {s.engine_name()}, {s.time_per_position:g} s per position, "
        f"values by a search to the end of a round (at most {s.value_depth} plies)"
        + ("" if analysis.complete else f" (incomplete: {analysis.done} analysed)"),
    ]
    summaries = analysis.summaries()
    for team in Team:
        rows = [p for p in analysis.ordered() if p.team is team and (every_move or p.mark) and not p.forced]
        lines.append("")
        lines.append(
            f"  {team_label(team, names)}: "
            + ("no mistakes" if not rows else ("every move" if every_move else "mistakes and blunders"))
        )
        if rows:
            lines.append(f"  {'turn':>4}  {'colour':<6}  {'played':<34}  {'best':<30}  {'loss':>6}")
            lines.extend(_row(p) for p in rows)
    jumps = [(before, point) for before, point in zip(analysis.chart, analysis.chart[1:], strict=False) if point.note]
    if jumps:
        lines.append("")
        lines.append(
            f"  where the estimate (team ONE's expected lead in points) jumps by {MISTAKE_LOSS:g} or more without a"
            " marked move, and why:"
        )
        lines.extend(
            f"  turn {before.turn} to {point.turn}: {before.evaluation:+.1f} to {point.evaluation:+.1f}, {point.note}"
            for before, point in jumps
        )
    lines.append("")
    for team in Team:
        sm = summaries[team]
        worst = f", worst turn {sm.worst_turn} ({sm.worst_loss:.1f})" if sm.worst_turn is not None else ""
        lines.append(
            f"  {team.name}: {plural(sm.moves, 'move')}, {plural(sm.mistakes, 'mistake')}, "
            f"{plural(sm.blunders, 'blunder')}, "
            f"average loss {sm.average_loss:.2f}{worst}"
        )
    return "\n".join(lines) + "\n"


def _row(p: PositionAnalysis) -> str:
    best = "=" if p.best == p.played else short_move(p.best)
    played = f"{short_move(p.played)} {p.mark}".rstrip()
    return f"  {p.turn:>4}  {p.color.name:<6}  {played:<34}  {best:<30}  {p.loss:>6.1f}"


def report_dict(path: str, replay, analysis: GameAnalysis) -> dict:
    final = replay.states[-1]
    data = analysis.to_dict()
    data.pop("game_key", None)
    return {
        "file": path,
        "cut_off": bool(replay.truncated),  # the file ended early: the states up to there
        "names": list(replay.names),
        "points": [final.team_points(Team.ONE), final.team_points(Team.TWO)],
        "thresholds": {"mistake": MISTAKE_LOSS, "blunder": BLUNDER_LOSS},
        "summary": {
            team.name: {**vars(sm), "average_loss": round(sm.average_loss, 3)}
            for team, sm in analysis.summaries().items()
        },
        "marked": [p.to_dict() for p in analysis.marked()],
        **data,
    }


def _prepare_engine(spec: PlayerSpec, stream: TextIO, quiet: bool) -> None:
    """Load the compiled engine (a second), or compile it on the first start (a child process, a minute):
    a spinner says so on a terminal meanwhile, instead of a progress line stuck at 0."""
    from blokus.ai import kernels_of
    from blokus.ai.search.compiled import preparing_text
    from blokus.tui.spinner import Spinner

    kernels = kernels_of(spec)
    if kernels is None or kernels.prepare(wait=0.5) or kernels.error is not None:
        return  # ready, or failed: the analysis answers with the Python search and says nothing here
    with Spinner(preparing_text(kernels.status()), stream, enabled=not quiet):
        kernels.prepare(wait=None)


class _Progress:
    """``FILE: 12/61`` on stderr: rewritten in place on a terminal, every 10 positions otherwise."""

    def __init__(self, path: str, stream: TextIO, quiet: bool) -> None:
        self.path, self.stream, self.quiet = path, stream, quiet
        self.tty = stream.isatty()

    def __call__(self, done: int, total: int, position) -> None:
        if self.quiet:
            return
        if self.tty:
            self.stream.write(f"\r{self.line(done, total, shutil.get_terminal_size().columns)}\x1b[K")
        elif position is None or done % 10 == 0 or done == total:
            self.stream.write(f"analysing {self.path}: {done}/{total}\n")
        self.stream.flush()

    def line(self, done: int, total: int, columns: int) -> str:
        """The progress line in fewer than ``columns`` columns (a line that wraps could not be rewritten in
        place: every update would leave a line behind); a long path loses its start."""
        count = f": {done}/{total}"
        room = columns - 1 - len("analysing ") - len(count)
        path = self.path if len(self.path) <= room else "…" + self.path[len(self.path) - max(room - 1, 1) :]
        return f"analysing {path}{count}"[: max(columns - 1, 1)]

    def finish(self) -> None:
        if self.tty and not self.quiet:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not logging.getLogger().handlers:  # the reader's warnings are not for the terminal; a cut-off file gets
        logging.getLogger().addHandler(logging.NullHandler())  # one line below
    check_analysis_options(parser, args)
    if not 1 <= args.depth <= 8:
        parser.error(f"--depth must be between 1 and 8, not {args.depth}")
    settings = AnalysisSettings(engine=args.ai or "", time_per_position=args.time / 1000, value_depth=args.depth)
    cache = None if args.no_cache else AnalysisCache()
    out, err = sys.stdout, sys.stderr
    _prepare_engine(settings.engine_spec(), err, args.quiet)
    status = 0
    documents = []
    stop = threading.Event()
    workers = available_cores()  # the positions in a process a core
    printed = False
    for name in args.files:
        try:
            replay = read_game(Path(name))
        except BadFile as exc:
            print(printable(f"blokus analyse: {name}: {exc}"), file=err)
            documents.append({"file": name, "error": str(exc)})
            status = 2
            continue
        if replay.truncated:
            print(
                f"blokus analyse: {name}: the file is cut off; analysing the {len(replay.states)} states "
                f"up to turn {replay.states[-1].turn}",
                file=err,
            )
        progress = _Progress(name, err, args.quiet)
        moves = replay_moves(replay) + [None]
        try:
            if cache is None:
                from blokus.ai.analysis import analyse_game

                analysis = analyse_game(replay.states, moves, settings, stop=stop, progress=progress, workers=workers)
            else:
                analysis = analyse_cached(
                    replay.states, moves, settings, cache=cache, stop=stop, progress=progress, workers=workers
                )
        finally:
            progress.finish()
        if args.json:
            documents.append(report_dict(name, replay, analysis))
        else:
            if printed:
                out.write("\n")
            out.write(format_report(name, replay, analysis, every_move=args.all))
            printed = True
            out.flush()
    if args.json:
        json.dump({"files": documents}, out, indent=1)
        out.write("\n")
    return status
