"""AI-vs-AI matches (the library of ``blokus arena``, whose options ``cli.arena`` reads).

Player A and player B each control one team. Games come in pairs: the same start piece (opening) is
played twice with the seats swapped, so neither side profits from moving first or from a lucky start
piece; the start pieces are cycled in a seeded order. Every move gets ``--move-time`` milliseconds
(the engine's deadline) and is checked against the rules; an illegal move, an exception or a move later
than the official 2 s limit loses the game. The final table gives wins/draws/losses, mean points, the
score percentage of A (win 1, draw 1/2) with a 95 % Wilson confidence interval, and the mean and
maximum time per move. Reproducible with ``--seed`` (up to the engines' timing: the search depth
reached depends on the machine's speed). No Textual here: plain text to stderr and stdout.

A player ``cmd:COMMAND`` (a team's own client) is played by ``net.external_arena.ExternalGames`` (chosen by
``cli.arena`` from the player names): every game on an embedded server, judged by it.
"""

from __future__ import annotations

import math
import multiprocessing
import random
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field

from ai import compile_ahead, make_player
from ai.base import Engine
from model.moves import InvalidMove, Move
from model.pieces import Shape, Team
from model.record import GameRecord
from model.result import Cause, GameResult, irregular_result, regular_result
from model.season import DEFAULT_SEASON, season_named
from model.state import GameState, move_of_placement

EngineFactory = Callable[[int], Engine]  # seed -> engine


@dataclass
class GameSpec:
    index: int
    start_piece: str
    a_team: int  # 0: A plays team ONE (BLUE+RED), 1: A plays team TWO
    seed: int
    move_time: float
    season: str = DEFAULT_SEASON.name
    replay_dir: str | None = None  # write the game there as a replay (the season's form)
    opening_turns: int = 0  # turns at the start played by the arena (random placements, the same for both seats)
    ponder: tuple[bool, bool] = (False, False)  # A, B think on the opponent's time
    timed: bool = True  # False: no time limit per move (players with a count budget; measuring only)


@dataclass
class ArenaGame:
    """One arena game from A's point of view (``result``: the game's result, team ONE first)."""

    index: int
    start_piece: str
    a_team: int
    a_points: int
    b_points: int
    score: float  # for A: 1 win, 0.5 draw, 0 loss
    turns: int
    a_times: list[float] = field(default_factory=list)
    b_times: list[float] = field(default_factory=list)
    forfeit: str = ""  # why a side lost by a rule violation / timeout / crash, if it did: "B timeout: …"
    result: GameResult | None = None
    substitutes: int = 0  # moves an external engine did not find (it passed with placements left): greedy's
    forfeit_side: str = ""  # "A" or "B": who lost by the forfeit
    forfeit_class: str = ""  # illegal move, timeout, crashed, did not join, left, protocol
    replay: str = ""  # the replay file, with --save-replay
    logs: list[str] = field(default_factory=list)  # log files of cmd: programs (stdout, stderr)


def make_specs(
    games: int,
    seed: int,
    move_time: float,
    season: str = DEFAULT_SEASON.name,
    replay_dir: str | None = None,
    opening_turns: int = 0,
    ponder: tuple[bool, bool] = (False, False),
    timed: bool = True,
) -> list[GameSpec]:
    rng = random.Random(seed)
    pieces = list(season_named(season).start_pieces)
    rng.shuffle(pieces)
    specs = []
    for i in range(games):
        pair = i // 2
        specs.append(
            GameSpec(
                i,
                pieces[pair % len(pieces)],
                i % 2,
                seed * 1_000_003 + pair,
                move_time,
                season,
                replay_dir,
                opening_turns,
                ponder,
                timed,
            )
        )
    return specs


def play_game(spec: GameSpec, factory_a: EngineFactory, factory_b: EngineFactory) -> ArenaGame:
    a = factory_a(spec.seed * 2 + 1)
    b = factory_b(spec.seed * 2 + 2)
    try:
        return _play(spec, a, b)
    finally:
        for engine in (a, b):
            engine.stop_pondering()
            close = getattr(engine, "close", None)
            if close is not None:
                close()


def _play(spec: GameSpec, a: Engine, b: Engine) -> ArenaGame:
    season = season_named(spec.season)
    hard_limit = season.soft_timeout_ms / 1000  # a move later than this loses the game on the server
    state = GameState.new(Shape[spec.start_piece], season=season)
    record = GameRecord(state.copy())  # the one game record: states and moves, for the replay
    opening = random.Random(spec.seed)  # the same for both games of a pair
    while not state.is_over and state.turn < spec.opening_turns:
        ids = state.legal_placements()
        move: Move = move_of_placement(state.current_color, int(ids[opening.randrange(len(ids))]))
        state.play(move)
        record.append(state.copy(), move)
    result = ArenaGame(spec.index, spec.start_piece, spec.a_team, 0, 0, 0.5, 0)
    forfeit_team: int | None = None
    cause = Cause.REGULAR
    while not state.is_over:
        team = state.current_color % 2
        is_a = team == spec.a_team
        engine = a if is_a else b
        start = time.monotonic()
        stop = threading.Event()
        try:
            move = engine.think(state.copy(), start + spec.move_time, stop)
        except Exception as exc:  # a crash loses the game, but the match goes on
            forfeit_team, result.forfeit = team, f"{'A' if is_a else 'B'} crashed: {exc!r}"
            cause, result.forfeit_class = Cause.LEFT, "crashed"
            break
        elapsed = time.monotonic() - start
        (result.a_times if is_a else result.b_times).append(elapsed)
        # an external engine keeps its own clock
        if spec.timed and elapsed > hard_limit and not getattr(engine, "external", False):
            forfeit_team, result.forfeit = team, f"{'A' if is_a else 'B'} too slow: {elapsed:.3f} s"
            cause, result.forfeit_class = Cause.SOFT_TIMEOUT, "timeout"
            break
        try:
            state.play(move)
        except InvalidMove as exc:
            forfeit_team, result.forfeit = team, f"{'A' if is_a else 'B'} illegal move {move}: {exc}"
            cause, result.forfeit_class = Cause.RULE_VIOLATION, "illegal move"
            break
        record.append(state.copy(), move)
        if spec.ponder[0 if is_a else 1] and not state.is_over:
            engine.start_pondering(state)
    pts = (state.team_points(Team.ONE), state.team_points(Team.TWO))
    names = ("A", "B") if spec.a_team == 0 else ("B", "A")
    result.result = (
        regular_result(pts, names, season)
        if forfeit_team is None
        else irregular_result(Team(forfeit_team), cause, result.forfeit, pts, names, season)
    )
    if spec.replay_dir is not None:
        from model.replay import new_replay_path, write_replay

        path = new_replay_path(spec.replay_dir, names, season, number=spec.index)
        write_replay(path, record.states, result.result, names=names)
        result.replay = str(path)
    result.a_points, result.b_points = pts[spec.a_team], pts[1 - spec.a_team]
    result.turns = state.turn
    result.substitutes = getattr(a, "substitutes", 0) + getattr(b, "substitutes", 0)
    if forfeit_team is not None:
        result.score = 0.0 if forfeit_team == spec.a_team else 1.0
        result.forfeit_side = "A" if forfeit_team == spec.a_team else "B"
    else:
        result.score = 1.0 if result.a_points > result.b_points else 0.0 if result.a_points < result.b_points else 0.5
    return result


class _Named:
    """A picklable factory for a registered player name."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, seed: int) -> Engine:
        player = make_player(self.name, seed)
        # a game process loads the compiled search now, not in its first move (where the player would
        # answer with its slow fallback while the loading thread holds the interpreter)
        compile_ahead(self.name)
        return player


def _run_one(job: tuple[GameSpec, EngineFactory, EngineFactory]) -> ArenaGame:
    return play_game(*job)


GameRunner = Callable[[GameSpec], ArenaGame]  # plays one game by other means (picklable for --jobs)


def run_match(
    specs: list[GameSpec],
    factory_a: EngineFactory | None,
    factory_b: EngineFactory | None,
    jobs: int = 1,
    progress: Callable[[list[ArenaGame]], None] | None = None,
    runner: GameRunner | None = None,
) -> list[ArenaGame]:
    """Every game of ``specs``: by the engines of the factories, or by ``runner`` (e.g. ``net.external``'s
    games of ``cmd:`` programs on an embedded server)."""
    results: list[ArenaGame] = []
    # what ``one`` is called with: a game's spec and factories for ``_run_one``, the spec alone for ``runner``
    work: list[tuple[GameSpec, EngineFactory | None, EngineFactory | None]] | list[GameSpec]
    work = [(spec, factory_a, factory_b) for spec in specs]
    one: Callable = _run_one if runner is None else runner
    if runner is not None:
        work = list(specs)
    if jobs <= 1:
        for job in work:
            results.append(one(job))
            if progress:
                progress(results)
    else:
        # an executor, not a multiprocessing.Pool: a worker that dies (a crash in compiled code, the OOM
        # killer) breaks the match with an error instead of leaving it waiting for ever
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            for future in as_completed([pool.submit(one, job) for job in work]):
                results.append(future.result())
                if progress:
                    progress(results)
    results.sort(key=lambda r: r.index)
    return results


def wilson(score: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson interval for a proportion ``score`` (0..1) from ``n`` games (draws count 1/2)."""
    if n == 0:
        return 0.0, 1.0
    denom = 1 + z * z / n
    centre = (score + z * z / (2 * n)) / denom
    half = z * math.sqrt(score * (1 - score) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def summary(results: list[ArenaGame], name_a: str, name_b: str) -> dict:
    n = len(results)
    wins = sum(r.score == 1.0 for r in results)
    draws = sum(r.score == 0.5 for r in results)
    losses = n - wins - draws
    score = sum(r.score for r in results) / n if n else 0.0
    lo, hi = wilson(score, n)
    a_times = [t for r in results for t in r.a_times]
    b_times = [t for r in results for t in r.b_times]
    return {
        "a": name_a,
        "b": name_b,
        "games": n,
        "wins": wins,
        "draws": draws,
        "losses": losses,
        "a_mean_points": sum(r.a_points for r in results) / n if n else 0.0,
        "b_mean_points": sum(r.b_points for r in results) / n if n else 0.0,
        "score": score,
        "ci95": (lo, hi),
        "a_mean_ms": 1000 * sum(a_times) / len(a_times) if a_times else 0.0,
        "a_max_ms": 1000 * max(a_times, default=0.0),
        "b_mean_ms": 1000 * sum(b_times) / len(b_times) if b_times else 0.0,
        "b_max_ms": 1000 * max(b_times, default=0.0),
        "forfeits": [f"game {r.index}: {r.forfeit}" for r in results if r.forfeit],
        "substitutes": sum(r.substitutes for r in results),
        "a_forfeits": _forfeit_counts(results, "A"),
        "b_forfeits": _forfeit_counts(results, "B"),
        # the replays of the games each side lost (to open with blokus replay / blokus analyse)
        "a_lost_replays": [r.replay for r in results if r.replay and r.score == 0.0],
        "b_lost_replays": [r.replay for r in results if r.replay and r.score == 1.0],
    }


def _forfeit_counts(results: list[ArenaGame], side: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in results:
        if r.forfeit_side == side:
            kind = r.forfeit_class or "other"
            counts[kind] = counts.get(kind, 0) + 1
    return counts


def _forfeit_cell(counts: dict[str, int]) -> str:
    return ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items())) or "-"


def format_table(s: dict) -> str:
    lo, hi = s["ci95"]
    rows = [
        ("player", "W", "D", "L", "mean pts", "score %", "95% CI", "mean ms/move", "max ms/move", "forfeits"),
        (
            s["a"],
            s["wins"],
            s["draws"],
            s["losses"],
            f"{s['a_mean_points']:.1f}",
            f"{100 * s['score']:.1f}",
            f"{100 * lo:.1f}-{100 * hi:.1f}",
            f"{s['a_mean_ms']:.0f}",
            f"{s['a_max_ms']:.0f}",
            _forfeit_cell(s.get("a_forfeits", {})),
        ),
        (
            s["b"],
            s["losses"],
            s["draws"],
            s["wins"],
            f"{s['b_mean_points']:.1f}",
            f"{100 * (1 - s['score']):.1f}",
            f"{100 * (1 - hi):.1f}-{100 * (1 - lo):.1f}",
            f"{s['b_mean_ms']:.0f}",
            f"{s['b_max_ms']:.0f}",
            _forfeit_cell(s.get("b_forfeits", {})),
        ),
    ]
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(str(v).rjust(w) if i else str(v).ljust(w) for i, (v, w) in enumerate(zip(row, widths, strict=True)))
        for row in rows
    ]
    lines.insert(1, "-" * len(lines[0]))
    out = "\n".join(lines) + f"\n{s['games']} games"
    if s["forfeits"]:
        out += "\nforfeits:\n  " + "\n  ".join(s["forfeits"])
    for side in ("a", "b"):
        if s.get(f"{side}_lost_replays"):
            out += f"\ngames {s[side]} lost (blokus replay FILE, blokus analyse FILE):\n  " + "\n  ".join(
                s[f"{side}_lost_replays"]
            )
    if s.get("substitutes"):
        out += (
            f"\n{s['substitutes']} moves the external engine did not find (it passed with placements left) "
            "were played for it by greedy"
        )
    return out


class Progress:
    """A plain-text progress bar on stderr."""

    def __init__(self, total: int, stream=None) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.start = time.monotonic()

    def __call__(self, results: list[ArenaGame]) -> None:
        done = len(results)
        w = sum(r.score == 1.0 for r in results)
        d = sum(r.score == 0.5 for r in results)
        bar = "#" * (30 * done // self.total) + "." * (30 - 30 * done // self.total)
        elapsed = time.monotonic() - self.start
        eta = elapsed / done * (self.total - done) if done else 0.0
        self.stream.write(
            f"\r[{bar}] {done}/{self.total}  A: {w}W {d}D {done - w - d}L  {elapsed:.0f}s elapsed, ~{eta:.0f}s left "
        )
        if done == self.total:
            self.stream.write("\n")
        self.stream.flush()
