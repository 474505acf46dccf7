"""Game analysis: why a game was lost, position by position (``blokus analyse``, the replay viewer).

For every position in which a colour had a choice, the analysis asks an engine (through the one
``Engine`` interface, so a stronger engine makes a stronger analysis) for its best move within
``time_per_position`` seconds, and then values the best move and the move that was played with one
fixed yardstick: a search with the engine's evaluation that ends at the end of a round (a turn divisible
by 4: BLUE to move, every colour has moved equally often), the last one at most ``VALUE_DEPTH`` plies
ahead (``horizon_turn``: 2 to 5 plies). The yardstick is deterministic and does not depend on the
thinking time, so values of one game are comparable with each other and between runs, and it does not
depend on who is to move: the last ply of a search favours the team that makes it, so a search of a
fixed number of plies, whose end falls on alternate teams in consecutive positions, valued the same
position ~10 points apart from one move to the next (18 in the first round, with alternating sign, on
the official 21.3.3 games); ending every search at the same point of the round values it the same
(median gap ~1 point there, ``tuning/handover_gap.py``).

The scale (used everywhere: the CLI, the viewer, the chart, the JSON):

* **value** — points, BLUE+RED minus YELLOW+GREEN (team ONE minus team TWO, positive = team ONE
  ahead), like the point difference on the scoreboard: the expected final point difference. The yardstick's
  leaves are valued by ``ai.search.evaluate.VALUE_WEIGHTS``: the points now plus the points still to come, a linear
  estimate from the evaluation's terms fitted per phase to the final results of self-play games
  (``tuning/value_scale.py``). A finished game has its exact final point difference as value.
* **curve** — the chart's value of a position (``evaluation_at``): its value (with its best move). A step of the
  curve by ``MISTAKE_LOSS`` or more after a move that is not marked gets a ``note`` (``jump_note``).
* **loss** — how many points the move played gave away against the best move, for the team that
  moved (always >= 0): ``value(best) - value(played)`` seen from the mover's team.
* **marks** — ``?`` mistake: loss >= ``MISTAKE_LOSS`` points; ``??`` blunder: loss >= ``BLUNDER_LOSS``.
  Thresholds chosen on the official 21.3.3 replays: most moves of decent bots lose < 2 points by this
  yardstick, a piece placed where it blocks nothing or loses a whole corner area loses 4–10.

Results are cached as JSON per game (a hash of the game's content + the settings) in
``$XDG_CACHE_HOME/blokus/analysis`` (default ``~/.cache/blokus/analysis``, ``model.user_cache``), so that opening
the same replay again is instant; a cancelled analysis is cached as far as it got and resumes there.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path

from blokus.ai.players.registry import (
    ANALYSIS_AI,
    PlayerSpec,
    capped_threads,
    compile_ahead,
    parse_player,
    search_threads_of,
)
from blokus.ai.search.evaluate import VALUE_WEIGHTS, Weights
from blokus.ai.search.lookahead import SearchStopped, value_to_turn
from blokus.ai.workers import WorkerPool
from blokus.model.moves import Move, SetMove, SkipMove, parse_move
from blokus.model.pieces import COLORS, Color, Team
from blokus.model.state import GameState
from blokus.model.user_cache import cache_folder

ANALYSIS_VERSION = 4  # bump when values change meaning: old cache entries are then ignored (3: round-end horizon;
# 4: leaves valued by VALUE_WEIGHTS, the expected final point difference)
DEFAULT_TIME = 0.3  # engine seconds per position
VALUE_DEPTH = 5  # at most this many plies of the yardstick search (it ends at the last round end within them)
MISTAKE_LOSS = 4.0
BLUNDER_LOSS = 10.0
MAX_TIME = 60.0
# fewer positions to analyse are analysed in this process even with ``workers``: a pool of processes takes a few
# seconds to start (each imports the engine), the time of ~5 positions
PARALLEL_MIN = 20


class AnalysisCancelled(Exception):
    """The analysis was stopped; ``partial`` holds what was done."""

    def __init__(self, partial: GameAnalysis) -> None:
        super().__init__("analysis cancelled")
        self.partial = partial


@dataclass(frozen=True)
class AnalysisSettings:
    engine: str = ""  # AI name, as the analysis's files record it; "" = ai.ANALYSIS_AI
    time_per_position: float = DEFAULT_TIME
    value_depth: int = VALUE_DEPTH

    def engine_name(self) -> str:
        return self.engine or ANALYSIS_AI

    def engine_spec(self) -> PlayerSpec:
        """The engine's spec (ValueError with one line for a name that is no player)."""
        return parse_player(self.engine_name(), "AI")

    def key(self) -> str:
        return f"v{ANALYSIS_VERSION}-{self.engine_name()}-t{self.time_per_position:g}-d{self.value_depth}"


class Mark(Enum):
    """How a move is judged by its loss; the value is its sign in the lists and the JSON."""

    NONE = ""
    MISTAKE = "?"  # loss >= MISTAKE_LOSS
    BLUNDER = "??"  # loss >= BLUNDER_LOSS

    def __bool__(self) -> bool:  # `if p.mark:` — a marked move
        return self is not Mark.NONE

    def __str__(self) -> str:
        return self.value


def mark_for(loss: float) -> Mark:
    if loss >= BLUNDER_LOSS:
        return Mark.BLUNDER
    if loss >= MISTAKE_LOSS:
        return Mark.MISTAKE
    return Mark.NONE


@dataclass
class PositionAnalysis:
    """The analysis of ``states[index]``, in which ``color`` played ``played`` (leading to index + 1)."""

    index: int
    turn: int
    color: Color
    played: Move
    best: Move  # the best move found (the played move when nothing better was found)
    value: float  # value of the position with the best move (team ONE minus team TWO, points)
    value_played: float  # value after the move played (same scale)
    loss: float  # points the mover's team gave away (>= 0)
    mark: Mark
    choices: int  # legal placements the colour had
    forced: bool = False  # no choice (no placement: the skip was forced)

    @property
    def team(self) -> Team:
        return self.color.team

    def to_dict(self) -> dict:
        """As the JSON writes it: the colour by name, moves in their text form, the mark by its sign."""
        return {
            **asdict(self),
            "color": self.color.name,
            "played": str(self.played),
            "best": str(self.best),
            "mark": self.mark.value,
        }

    @classmethod
    def from_dict(cls, raw: dict) -> PositionAnalysis:
        """Read back what ``to_dict`` wrote (ValueError, KeyError or TypeError for anything else)."""
        fields = {
            **raw,
            "color": Color[raw["color"]],
            "played": parse_move(raw["played"]),
            "best": parse_move(raw["best"]),
            "mark": Mark(raw["mark"]),
        }
        return cls(**fields)


@dataclass
class ChartPoint:
    """The curves of the game chart at ``states[index]``."""

    index: int
    turn: int
    point_diff: int  # team ONE minus team TWO, now
    mobility: tuple[int, int, int, int]  # legal placements per colour (0 = none or out of the game)
    evaluation: float | None = None  # the position's value on the curve (``evaluation_at``), once analysed
    note: str = ""  # why the curve moved by a mistake's loss or more from the point before without a marked move


@dataclass
class TeamSummary:
    team: str
    moves: int = 0  # analysed moves with a choice
    mistakes: int = 0
    blunders: int = 0
    total_loss: float = 0.0
    worst_turn: int | None = None
    worst_loss: float = 0.0

    @property
    def average_loss(self) -> float:
        return self.total_loss / self.moves if self.moves else 0.0


@dataclass
class GameAnalysis:
    settings: AnalysisSettings
    game_key: str
    positions: dict[int, PositionAnalysis] = field(default_factory=dict)  # by state index
    chart: list[ChartPoint] = field(default_factory=list)
    total: int = 0  # positions to analyse
    complete: bool = False
    seconds: float = 0.0  # time spent analysing (summed over resumed runs)

    @property
    def done(self) -> int:
        return len(self.positions)

    def ordered(self) -> list[PositionAnalysis]:
        return [self.positions[i] for i in sorted(self.positions)]

    def marked(self) -> list[PositionAnalysis]:
        return [p for p in self.ordered() if p.mark]

    def summaries(self) -> dict[Team, TeamSummary]:
        out = {team: TeamSummary(team.name) for team in Team}
        for p in self.ordered():
            if p.forced:
                continue
            s = out[p.team]
            s.moves += 1
            s.total_loss += p.loss
            s.mistakes += p.mark is Mark.MISTAKE
            s.blunders += p.mark is Mark.BLUNDER
            if p.loss > s.worst_loss:
                s.worst_loss, s.worst_turn = p.loss, p.turn
        return out

    def to_dict(self) -> dict:
        return {
            "version": ANALYSIS_VERSION,
            "settings": asdict(self.settings),
            "game_key": self.game_key,
            "total": self.total,
            "complete": self.complete,
            "seconds": round(self.seconds, 3),
            "positions": [p.to_dict() for p in self.ordered()],
            "chart": [asdict(c) for c in self.chart],
        }

    @classmethod
    def from_dict(cls, data: dict) -> GameAnalysis:
        positions = {}
        for raw in data["positions"]:
            p = PositionAnalysis.from_dict(raw)
            positions[p.index] = p
        chart = [ChartPoint(**{**raw, "mobility": tuple(raw["mobility"])}) for raw in data["chart"]]
        return cls(
            AnalysisSettings(**data["settings"]),
            data["game_key"],
            positions,
            chart,
            int(data["total"]),
            bool(data["complete"]),
            float(data.get("seconds", 0.0)),
        )


# --- the game: positions and the moves played in them ------------------------------------------------


def game_key(states: Sequence[GameState], moves: Sequence[Move | None]) -> str:
    """A hash of the game's content (positions and moves), independent of the file format."""
    h = hashlib.sha256()
    for i, state in enumerate(states):
        h.update(repr(state.key()).encode())
        h.update(str(moves[i] if i < len(moves) else None).encode())
    return h.hexdigest()[:32]


def _team_one_sign(state: GameState) -> float:
    return 1.0 if state.color.team is Team.ONE else -1.0


def chart_points(states: Sequence[GameState], start: int = 0) -> list[ChartPoint]:
    """Point difference and mobility per state from ``states[start]`` on (cheap: no engine)."""
    out = []
    for i, state in enumerate(states[start:], start=start):
        mobility = tuple(
            0 if state.is_over or not state.is_valid(c) else len(state.legal_placements(c)) for c in COLORS
        )
        diff = state.team_points(Team.ONE) - state.team_points(Team.TWO)
        out.append(ChartPoint(i, state.turn, diff, mobility))  # type: ignore[arg-type]
    return out


def horizon_turn(turn: int, depth: int = VALUE_DEPTH) -> int:
    """The turn at which the yardstick's search from a position of ``turn`` ends: the last end of a round
    (a turn divisible by 4: BLUE to move, every colour has moved equally often) at most ``depth`` plies ahead,
    (with the default 5: 2 to 5 plies), or the next one when none is that near (``depth`` below 4: up to 4
    plies). Every search ends at the same point of the round, whoever is to
    move at its root: the position after a move and the same position valued from the next move's search
    end their searches on the same turn."""
    end = (turn + depth) // 4 * 4
    return end if end > turn else end + 4


def position_value(
    state: GameState, depth: int = VALUE_DEPTH, stop: threading.Event | None = None, weights: Weights = VALUE_WEIGHTS
) -> float:
    """The yardstick: the value of ``state`` (team ONE minus team TWO, points) by a search to the turn
    ``horizon_turn(state.turn, depth)``.

    Raises ``ai.search.lookahead.SearchStopped`` when ``stop`` is set.
    """
    return value_to_turn(state, horizon_turn(state.turn, depth), weights, stop or threading.Event())


def _value_after(state: GameState, move: Move, depth: int, stop: threading.Event) -> float:
    after = state.copy()
    after.push(move)
    return position_value(after, depth, stop)


def analyse_position(
    state: GameState, played: Move, index: int, engine, settings: AnalysisSettings, stop: threading.Event
) -> PositionAnalysis:
    """Analyse one position: the engine's best move, both values, the loss of ``played``."""
    color = state.color
    choices = len(state.legal_placements())
    sign = _team_one_sign(state)
    if choices == 0:
        value = _value_after(state, played, settings.value_depth, stop)
        return PositionAnalysis(
            index,
            state.turn,
            color,
            played,
            played,
            round(value, 2),
            round(value, 2),
            0.0,
            Mark.NONE,
            0,
            forced=True,
        )
    deadline = time.monotonic() + settings.time_per_position
    best = engine.think(state.copy(), deadline, stop)
    if stop.is_set():
        raise SearchStopped
    if not state.is_legal(best):  # never trust an engine blindly: fall back to the played move
        best = played
    value_played = _value_after(state, played, settings.value_depth, stop)
    value_best = value_played if best == played else _value_after(state, best, settings.value_depth, stop)
    if sign * value_best <= sign * value_played:  # nothing better than the move played was found
        best, value_best = played, value_played
    loss = max(0.0, round(sign * (value_best - value_played), 2))
    return PositionAnalysis(
        index,
        state.turn,
        color,
        played,
        best,
        round(value_best, 2),
        round(value_played, 2),
        loss,
        mark_for(loss),
        choices,
    )


def positions_to_analyse(states: Sequence[GameState], moves: Sequence[Move | None]) -> list[int]:
    """Indexes ``i`` of the states in which a move was played (``moves[i]`` leads to ``states[i + 1]``)."""
    out = []
    for i, state in enumerate(states[:-1] if len(states) == len(moves) + 1 else states):
        move = moves[i] if i < len(moves) else None
        if move is None or state.is_over or move.color != state.color:
            continue
        if isinstance(move, SetMove | SkipMove) and (isinstance(move, SkipMove) or state.is_legal(move)):
            out.append(i)
    return out


Progress = Callable[[int, int, PositionAnalysis | None], None]


def analyse_game(
    states: Sequence[GameState],
    moves: Sequence[Move | None],
    settings: AnalysisSettings | None = None,
    *,
    stop: threading.Event | None = None,
    progress: Progress | None = None,
    previous: GameAnalysis | None = None,
    engine=None,
    workers: int = 1,
) -> GameAnalysis:
    """Analyse a game: ``moves[i]`` is the move played in ``states[i]`` (``None``: none, e.g. the end).

    ``progress(done, total, position)`` is called after every position; ``stop`` cancels (raises
    :class:`AnalysisCancelled` with the partial result); ``previous`` (a partial analysis of the
    same game and settings) is resumed. ``workers`` > 1 (and no ``engine`` given): the positions are analysed
    in that many processes at once, an engine each (the yardstick is a Python search: threads would share one
    core); the same results, reported as each is done.
    """
    settings = settings or AnalysisSettings()
    stop = stop or threading.Event()
    key = game_key(states, moves)
    todo = positions_to_analyse(states, moves)
    if previous is not None and previous.game_key == key and previous.settings == settings:
        result = previous
        result.complete = False
    else:
        result = GameAnalysis(settings, key, chart=chart_points(states))
    result.total = len(todo)
    remaining = [i for i in todo if i not in result.positions]
    workers = min(workers, len(remaining)) if len(remaining) >= PARALLEL_MIN else 1
    if engine is None and workers <= 1:
        engine = _build_engine(settings, one_thread=False)
    started = time.monotonic()
    try:
        if engine is None:
            _analyse_in_processes(states, moves, remaining, result, workers, stop, progress)
        for i in todo if engine is not None else ():
            if i in result.positions:
                continue
            if stop.is_set():
                raise SearchStopped
            played = moves[i]
            assert played is not None  # positions_to_analyse took only positions with a move
            result.positions[i] = position = analyse_position(states[i], played, i, engine, settings, stop)
            if progress is not None:
                progress(result.done, result.total, position)
    except SearchStopped:
        result.seconds += time.monotonic() - started
        fill_evaluation(result, states)
        raise AnalysisCancelled(result) from None
    result.seconds += time.monotonic() - started
    result.complete = True
    fill_evaluation(result, states)
    return result


_worker_engine = None  # an analysis worker process's engine (``_start_worker``)
_worker_settings: AnalysisSettings | None = None


def _build_engine(settings: AnalysisSettings, one_thread: bool):
    """The settings' engine, loaded before the first position (every position by the compiled search, not its
    fallback); ``one_thread``: our MCTS in one thread (in an analysis process: the processes are the parallelism)."""
    spec = settings.engine_spec()
    if one_thread and search_threads_of(spec) is not None:
        spec = capped_threads(spec, 1)
    compile_ahead(spec)
    return spec.build(seed=0)


def _start_worker(settings: AnalysisSettings) -> None:
    """An analysis process (``ai.workers``): its engine is built once."""
    global _worker_engine, _worker_settings
    _worker_engine, _worker_settings = _build_engine(settings, one_thread=True), settings


def _analyse_in_worker(state: GameState, played: Move, index: int) -> PositionAnalysis:
    assert _worker_settings is not None
    return analyse_position(state, played, index, _worker_engine, _worker_settings, threading.Event())


def _analyse_in_processes(
    states: Sequence[GameState],
    moves: Sequence[Move | None],
    todo: list[int],
    result: GameAnalysis,
    workers: int,
    stop: threading.Event,
    progress: Progress | None,
) -> None:
    """The positions ``todo`` analysed in ``workers`` processes into ``result`` (in the order of ``todo``:
    ``result.positions`` stays sorted); ``stop`` ends them (``SearchStopped``), as does an error."""
    pool = WorkerPool(workers, _start_worker, (result.settings,))
    futures = pool.submit_all(_analyse_in_worker, ((states[i], moves[i], i) for i in todo))
    pending: dict[Future, int] = dict(zip(futures, todo, strict=True))
    try:
        while pending:
            if stop.is_set():
                raise SearchStopped
            finished, _ = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
            for future in finished:
                i = pending.pop(future)
                result.positions[i] = position = future.result()
                if progress is not None:
                    progress(result.done, result.total, position)
    except BaseException:
        pool.stop()
        raise
    finally:  # in the order of the states, as one process would have added them
        positions = sorted(result.positions.items())
        result.positions.clear()
        result.positions.update(positions)
    pool.close()


def evaluation_at(result: GameAnalysis, index: int) -> float | None:
    """The curve's value of ``states[index]``: the position's value (with its best move), or, where it was not
    analysed, the value of the move that led to it (the same position, valued to the same end of a round).
    None where neither is known."""
    here, before = result.positions.get(index), result.positions.get(index - 1)
    if here is not None:
        return here.value
    return before.value_played if before is not None else None


def fill_evaluation(result: GameAnalysis, states: Sequence[GameState]) -> None:
    """The chart's evaluation curve (``evaluation_at``); the exact point difference at the end; and the note of
    every step of the curve by ``MISTAKE_LOSS`` or more that no marked move explains (``jump_note``)."""
    if len(result.chart) < len(states):  # the game grew (live)
        result.chart.extend(chart_points(states, len(result.chart)))
    for point in result.chart:
        if point.index < len(states) and states[point.index].is_over:
            point.evaluation = float(point.point_diff)
        else:
            point.evaluation = evaluation_at(result, point.index)
    for before, point in zip(result.chart, result.chart[1:], strict=False):
        point.note = ""
        if point.evaluation is None or before.evaluation is None or point.index >= len(states):
            continue
        moved = result.positions.get(before.index)
        if abs(point.evaluation - before.evaluation) >= MISTAKE_LOSS and (moved is None or not moved.mark):
            point.note = jump_note(result, states, point.index)


def jump_note(result: GameAnalysis, states: Sequence[GameState], index: int) -> str:
    """Why the value of ``states[index]`` differs from the value of the position before, whose move was no
    mistake. The value before is the value of the best move there; the move played gave away its loss (less than
    a mistake), and the rest is what the two searches saw differently: the end of the game (its exact result
    replaces the estimate), the yardstick looking a round further from this position (the search of the move's
    value ended a round earlier), or the best move found here being better (or worse) than the search before
    foresaw (both searches are pruned)."""
    state = states[index]
    moved = result.positions.get(index - 1)
    if state.is_over:
        return "the game ended here: the real final score replaces the estimate"
    here = result.positions.get(index)
    if moved is None or here is None:
        return "the move before was not analysed"
    parts = []
    if moved.loss >= 0.5:
        parts.append(f"{moved.color}'s move lost {moved.loss:.1f} points (too few to mark it a mistake)")
    gap = here.value - moved.value_played
    if abs(gap) >= 0.5:
        depth = result.settings.value_depth
        seen, now = horizon_turn(state.turn, depth), horizon_turn(state.turn + 1, depth)
        if now > seen:
            parts.append(
                f"the estimate looks one round further ahead from here (to turn {now}, not {seen}) and sees "
                f"{gap:+.1f} points that the shorter look missed: no mistake, a longer view"
            )
        else:
            sign = 1.0 if here.team is Team.ONE else -1.0
            better = "better" if sign * gap > 0 else "worse"
            parts.append(
                f"{here.color} has a {better} move here than the search one move earlier expected ({gap:+.1f} points)"
            )
    return "; ".join(parts)


# --- the cache ---------------------------------------------------------------------------------------


def cache_dir() -> Path:
    return cache_folder("analysis")


class AnalysisCache:
    """One JSON file per (game, settings). Unreadable entries count as missing; write errors are ignored."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or cache_dir()

    def path(self, key: str, settings: AnalysisSettings) -> Path:
        name = hashlib.sha256(f"{key}|{settings.key()}".encode()).hexdigest()[:40]
        return self.directory / f"{name}.json"

    def load(self, key: str, settings: AnalysisSettings) -> GameAnalysis | None:
        path = self.path(key, settings)
        try:
            if path.stat().st_size > 16 * 1024 * 1024:
                return None
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("version") != ANALYSIS_VERSION:
                return None
            analysis = GameAnalysis.from_dict(data)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if analysis.game_key != key or analysis.settings != settings:
            return None
        return analysis

    def save(self, analysis: GameAnalysis) -> Path | None:
        path = self.path(analysis.game_key, analysis.settings)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(analysis.to_dict()), encoding="utf-8")
            os.replace(tmp, path)  # atomic: a reader never sees half a file
        except OSError:
            return None
        return path


def analyse_cached(
    states: Sequence[GameState],
    moves: Sequence[Move | None],
    settings: AnalysisSettings | None = None,
    *,
    cache: AnalysisCache | None = None,
    stop: threading.Event | None = None,
    progress: Progress | None = None,
    workers: int = 1,
) -> GameAnalysis:
    """``analyse_game`` (in ``workers`` processes) through the cache: a complete entry is returned at once, a
    partial one resumed, and the result (also a cancelled one) stored."""
    settings = settings or AnalysisSettings()
    cache = cache or AnalysisCache()
    key = game_key(states, moves)
    previous = cache.load(key, settings)
    if previous is not None and previous.complete:
        if progress is not None:
            progress(previous.done, previous.total, None)
        return previous
    try:
        result = analyse_game(states, moves, settings, stop=stop, progress=progress, previous=previous, workers=workers)
    except AnalysisCancelled as exc:
        cache.save(exc.partial)
        raise
    cache.save(result)
    return result


def replay_moves(replay) -> list[Move | None]:
    """``moves[i]`` = the move played in ``replay.states[i]`` (a ``model.replay.Replay``)."""
    from blokus.model.replay import MoveEvent

    return [next((e.move for e in step if isinstance(e, MoveEvent)), None) for step in replay.steps]


__all__ = [
    "AnalysisSettings",
    "PositionAnalysis",
    "ChartPoint",
    "GameAnalysis",
    "TeamSummary",
    "AnalysisCache",
    "AnalysisCancelled",
    "analyse_game",
    "analyse_cached",
    "analyse_position",
    "position_value",
    "chart_points",
    "fill_evaluation",
    "evaluation_at",
    "horizon_turn",
    "jump_note",
    "positions_to_analyse",
    "game_key",
    "Mark",
    "mark_for",
    "cache_dir",
    "replay_moves",
    "MISTAKE_LOSS",
    "BLUNDER_LOSS",
    "DEFAULT_TIME",
    "VALUE_DEPTH",
]
