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

import contextlib
import math
import multiprocessing
import multiprocessing.process
import multiprocessing.queues
import multiprocessing.synchronize
import os
import queue
import random
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from typing import Protocol

from blokus.ai import processes
from blokus.ai.arena.adjudication import decided
from blokus.ai.arena.audit import judged
from blokus.ai.arena.game import ArenaGame, ForfeitKind, GameSpec, move_code
from blokus.ai.arena.referee import Referee
from blokus.ai.arena.sprt import PairedSprt, Pentanomial, wilson
from blokus.ai.interface import Engine
from blokus.ai.players.registry import PlayerSpec, capped_threads, compile_ahead, search_threads_of
from blokus.ai.search.cores import available_cores
from blokus.ai.workers import WorkerContext, WorkerPool
from blokus.model.moverecords import MoveRecord, engine_report, write_records
from blokus.model.moves import Move, parse_move
from blokus.model.openings import Opening
from blokus.model.pieces import Shape, Team
from blokus.model.record import GameRecord
from blokus.model.result import Cause, irregular_result, regular_result
from blokus.model.season import DEFAULT_SEASON, season_named
from blokus.model.state import GameState, move_of_placement

EngineFactory = Callable[[int], Engine]  # seed -> engine
SideCores = tuple[tuple[int, ...], tuple[int, ...]]  # the cores of A and of B in a game (``--cores-per-player``)


def make_specs(
    games: int,
    seed: int,
    move_time: float,
    season: str = DEFAULT_SEASON.name,
    replay_dir: str | None = None,
    opening_turns: int = 0,
    ponder: tuple[bool, bool] = (False, False),
    timed: bool = True,
    openings: Sequence[Opening] = (),
    shuffle_openings: bool = False,
    adjudicate: bool = True,
    opening_sides: tuple[bool, bool] = (True, True),
) -> list[GameSpec]:
    """The games of a match in pairs (the same start, the seats swapped). With ``openings`` (of ``season``),
    pair k starts from opening k (in the file's order, or shuffled by ``seed``), the list repeated as needed."""
    rng = random.Random(seed)
    pieces = list(season_named(season).start_pieces)
    rng.shuffle(pieces)
    order = list(openings)
    if shuffle_openings:
        random.Random(seed).shuffle(order)
    specs = []
    for i in range(games):
        pair = i // 2
        opening = order[pair % len(order)] if order else None
        specs.append(
            GameSpec(
                i,
                opening.start_piece.name if opening else pieces[pair % len(pieces)],
                i % 2,
                seed * 1_000_003 + pair,
                move_time,
                season,
                replay_dir,
                opening_turns,
                ponder,
                timed,
                tuple(str(m) for m in opening.moves) if opening else (),
                adjudicate,
                opening_sides,
            )
        )
    return specs


def play_game(
    spec: GameSpec, factory_a: EngineFactory, factory_b: EngineFactory, cores: SideCores | None = None
) -> ArenaGame:
    """One game in this thread. ``cores``: each side's own, A's and B's: the thread runs on a side's cores while it
    makes that side's engine and thinks for it, so the threads and programs the side starts (its search's
    threads, its pondering, a GTP engine) run there too."""
    before = processes.thread_cores() if cores is not None else None
    engines: list[Engine] = []
    try:
        for factory, seed, side in ((factory_a, spec.seed * 2 + 1, 0), (factory_b, spec.seed * 2 + 2, 1)):
            if cores is not None:
                processes.pin_thread(cores[side])
            engines.append(factory(seed))
        game = _play(spec, engines[0], engines[1], cores)
        if cores is not None:
            game.a_cores, game.b_cores = list(cores[0]), list(cores[1])
        return game
    finally:
        for engine in engines:
            engine.stop_pondering()
            close = getattr(engine, "close", None)
            if close is not None:
                close()
        if before is not None:
            processes.pin_thread(before)


def _play(spec: GameSpec, a: Engine, b: Engine, cores: SideCores | None = None) -> ArenaGame:
    season = season_named(spec.season)
    state = GameState.new(season, Shape[spec.start_piece])
    for text in spec.opening:  # the pair's opening (read and checked from its file), then the game
        state.play(parse_move(text))
    record = GameRecord(state.copy())  # the one game record: states and moves, for the replay
    moves_made: list[MoveRecord] = []  # each move's time and what its engine reported, saved beside the replay
    opening = random.Random(spec.seed)  # the same for both games of a pair (when the arena moves for both sides)

    def draw_opening_move() -> Move:
        ids = state.legal_placements()
        move = move_of_placement(state.color, int(ids[opening.randrange(len(ids))]))
        moves_made.append(MoveRecord(turn=state.turn, seconds=0.0, source="opening"))
        state.play(move)
        record.append(state.copy(), move)
        return move

    result = ArenaGame(spec.index, spec.start_piece, spec.a_team, 0, 0, 0.5, 0)
    # every move from the start piece: the file's opening, the arena's opening turns (the game's follow)
    result.moves = [move_code(parse_move(text)) for text in spec.opening] + [move_code(m) for m in record.moves]
    forfeit_team: int | None = None
    cause = Cause.REGULAR
    referee = Referee(state, season.soft_timeout_ms / 1000 if spec.timed else None)
    while not state.is_over:
        team = state.color % 2
        is_a = team == spec.a_team
        side = "A" if is_a else "B"
        engine = a if is_a else b
        if spec.arena_moves(state.turn, is_a):  # the arena's opening turns (``opening_turns``, ``opening_sides``)
            result.moves.append(move_code(draw_opening_move()))
            continue
        if cores is not None:
            processes.pin_thread(cores[0 if is_a else 1])
        start = time.monotonic()
        stop = threading.Event()
        reported = engine.last_info  # an engine that returns without searching (one move) leaves it as it was
        turn, forced = state.turn, len(state.legal_placements()) <= 1
        try:
            move = engine.think(state.copy(), start + spec.move_time, stop)
        except Exception as exc:  # a crash loses the game, but the match goes on
            forfeit_team, result.forfeit = team, f"{side} crashed at turn {state.turn}: {exc!r}"
            cause, result.forfeit_class = Cause.LEFT, ForfeitKind.CRASHED
            break
        elapsed = time.monotonic() - start
        (result.a_times if is_a else result.b_times).append(elapsed)
        # an external engine keeps its own clock
        verdict = referee.judge(move, elapsed, can_timeout=not getattr(engine, "external", False))
        if not verdict.accepted:
            forfeit_team, result.forfeit = team, f"{side} {verdict.line}"
            cause, result.forfeit_class = verdict.cause, verdict.kind
            break
        info = engine.last_info if engine.last_info is not reported else {}
        source = _source(forced, info)
        moves_made.append(MoveRecord(turn=turn, seconds=round(elapsed, 6), source=source, info=engine_report(info)))
        record.append(state.copy(), move)
        result.moves.append(move_code(move))
        if spec.adjudicate and (why := decided(state)):
            result.adjudicated = why
            break
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
        from blokus.model.replay import new_replay_path, write_replay

        path = new_replay_path(spec.replay_dir, names, season, number=spec.index)
        write_replay(path, record.states, result.result, names=names)
        write_records(path, moves_made)
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


def _source(forced: bool, info: dict) -> str:
    """Who made a move, as its record says: the engine, or nobody had a choice (one placement or none)."""
    if forced and not info:
        return "forced"
    return "engine"


class PlayerFactory:
    """A picklable factory for an in-process player of a spec. ``threads``: the search threads a game may use
    (games side by side share the cores: ``threads_per_game``); a spec that names its threads keeps them."""

    def __init__(self, spec: PlayerSpec, threads: int | None = None) -> None:
        self.spec = spec
        self.threads = threads

    def __call__(self, seed: int) -> Engine:
        spec = self.spec
        if self.threads is not None and search_threads_of(spec) is not None and "threads" not in dict(spec.settings):
            spec = capped_threads(spec, self.threads)
        player = spec.build(seed)
        # a game process loads the compiled search now, not in its first move (where the player would
        # answer with its slow fallback while the loading thread holds the interpreter)
        compile_ahead(self.spec)
        return player


_enough: multiprocessing.synchronize.Event | None = None  # in a game process: the match needs no more games
_slot = threading.local()  # a game process's or a game thread's cores (``cores``: SideCores, or none)


def _run_one(job: GameJob) -> ArenaGame | None:
    """A game in a game process (or a game thread); None if the match was decided before it started (the pool
    hands out a few games ahead, which can no longer be cancelled)."""
    if _enough is not None and _enough.is_set():
        return None
    return job(getattr(_slot, "cores", None))


def _take_slot(slots: multiprocessing.queues.Queue | queue.Queue | None) -> None:
    """A game process or thread takes the cores of one of the games side by side (it keeps them)."""
    if slots is not None:
        _slot.cores = slots.get()


def _start_worker(enough: multiprocessing.synchronize.Event, slots: multiprocessing.queues.Queue | None = None) -> None:
    """A game process (``ai.workers``): it takes its cores (``slots``)."""
    global _enough
    _enough = enough
    _take_slot(slots)


class _Flag(Protocol):
    """``threading.Event`` or a game processes' ``multiprocessing`` Event: set once no game should start."""

    def set(self) -> None: ...


class GameRunner(Protocol):
    """Plays one game by other means (e.g. ``net.external_arena``), each side on its ``cores`` when given."""

    def __call__(self, spec: GameSpec, cores: SideCores | None = None) -> ArenaGame: ...


@dataclass(frozen=True)
class GameJob:
    """One game and who plays it: the engines of two factories (in a game process), or a runner (its programs
    on an embedded server: ``net.external_arena``). Picklable when its parts are."""

    spec: GameSpec
    a: EngineFactory | None = None
    b: EngineFactory | None = None
    runner: GameRunner | None = None

    def __call__(self, cores: SideCores | None = None) -> ArenaGame:
        if self.runner is not None:
            return self.runner(self.spec, cores)
        assert self.a is not None and self.b is not None
        return play_game(self.spec, self.a, self.b, cores)


class GameSite(Protocol):
    """Where the games run when not on this machine's processes (``net.cluster``): ``run`` plays the jobs,
    hands each finished game to ``finished`` as it comes (True: start no further game) and on
    KeyboardInterrupt stops its games and re-raises; ``close`` lets the site go after the last match."""

    def run(self, jobs: list[GameJob], finished: Callable[[ArenaGame], bool]) -> None: ...

    def close(self) -> None: ...


WAIT_S = 0.25  # the main thread looks up this often (a Ctrl-C is handled at once anyway)


def _end_at_once_on_a_second_interrupt(workers: list[multiprocessing.process.BaseProcess] | None = None) -> None:
    """While the match stops (games end, programs get their grace periods), a second Ctrl-C ends it at once:
    SIGKILL to every process group started here and to the game processes, exit 130."""

    def end_now(signum: int, frame: object) -> None:
        for child in processes.live_children():
            with contextlib.suppress(OSError):
                os.killpg(child.pid, signal.SIGKILL)
        for worker in workers or []:
            with contextlib.suppress(Exception):
                worker.kill()
        with contextlib.suppress(Exception):
            processes.end_orphans(0)
        os._exit(130)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, end_now)


class MatchStopped(Exception):
    """Ctrl-C stopped the match (or its site was lost: ``reason``): ``results`` are the games that had finished
    (sorted), every game process and everything it started has ended."""

    def __init__(self, results: list[ArenaGame], reason: str = "Ctrl-C") -> None:
        super().__init__(f"stopped after {len(results)} games")
        self.results = results
        self.reason = reason


def threads_per_game(jobs: int) -> int | None:
    """The search threads of each of ``jobs`` games played side by side on this machine (None: one game at a
    time, all cores): more threads than cores would slow every move past the clock."""
    return max(1, available_cores() // jobs) if jobs > 1 else None


def player_cores(per_player: int, jobs: int, cores: list[int] | None = None) -> list[SideCores]:
    """``--cores-per-player N``: the cores of A and of B in each of ``jobs`` games side by side, ``per_player`` of
    its own each (as fastchess's ``-use-affinity``), from ``cores`` (default: the cores this process runs on).
    ValueError with one line when there are not enough (``available_cores``: the affinity and the CPU quota)."""
    if per_player < 1:
        raise ValueError(f"--cores-per-player needs at least 1, not {per_player}")
    mine = sorted(cores if cores is not None else processes.thread_cores() or range(available_cores()))
    have = min(len(mine), available_cores()) if cores is None else len(mine)
    need_one = 2 * per_player
    need = need_one * jobs
    if need > have:
        games = f"{jobs} games side by side" if jobs > 1 else "a game"
        raise ValueError(
            f"--cores-per-player {per_player}: {games} need{'s' if jobs == 1 else ''} {need} cores, "
            f"{have} available here" + (f" (--jobs at most {have // need_one})" if have >= need_one else "")
        )
    chunks = [tuple(mine[i * per_player : (i + 1) * per_player]) for i in range(2 * jobs)]
    return [(chunks[2 * k], chunks[2 * k + 1]) for k in range(jobs)]


def cores_line(results: list[ArenaGame]) -> str:
    """The cores each side had of its own in ``results`` (``A on core 0, B on core 1``; games side by side: each
    pair of cores); "" when no game was pinned."""
    seen = sorted({(tuple(r.a_cores), tuple(r.b_cores)) for r in results if r.a_cores})
    return "; ".join(f"A on {_core_list(a)}, B on {_core_list(b)}" for a, b in seen)


def _core_list(cores: tuple[int, ...]) -> str:
    return ("core " if len(cores) == 1 else "cores ") + ",".join(map(str, cores))


class SiteLost(Exception):
    """A ``GameSite`` can play no more games (a cluster's scheduler lost): one line; the finished games stand."""


def run_match(
    specs: list[GameSpec],
    factory_a: EngineFactory | None,
    factory_b: EngineFactory | None,
    jobs: int = 1,
    progress: Callable[[list[ArenaGame]], None] | None = None,
    runner: GameRunner | None = None,
    enough: Callable[[list[ArenaGame]], bool] | None = None,
    site: GameSite | None = None,
    cores: list[SideCores] | None = None,
) -> list[ArenaGame]:
    """Every game of ``specs`` (sorted by index): by the engines of the factories (in this process, or in
    ``jobs`` game processes), or by ``runner`` in ``jobs`` threads (its games are processes on an embedded
    server: ``net.external_arena``), or on ``site`` (a cluster). ``enough(results)`` after each game: True
    starts no further game (the running ones finish). ``cores``: each of the ``jobs`` games side by side
    plays on its own (``player_cores``). Ctrl-C (KeyboardInterrupt) stops the running games,
    ends every process they started and raises :class:`MatchStopped` with the finished games."""
    work = [GameJob(spec, factory_a, factory_b, runner) for spec in specs]
    return run_jobs(work, jobs, progress, enough, site, cores)


def run_jobs(
    work: list[GameJob],
    jobs: int = 1,
    progress: Callable[[list[ArenaGame]], None] | None = None,
    enough: Callable[[list[ArenaGame]], bool] | None = None,
    site: GameSite | None = None,
    cores: list[SideCores] | None = None,
) -> list[ArenaGame]:
    """``run_match`` for games whose players differ from game to game (a tournament): the jobs with a runner
    play in threads, the others in game processes (all of one kind, as ``run_match``), or all on ``site``;
    ``cores``: the cores of each of the ``jobs`` games side by side (``player_cores``; not on a site).
    Every game handed back counts as ``ai.arena.audit.judged`` says: void unless it replays; a game that is none
    of those asked for (or one handed back twice) ends the match (``SiteLost``: that site is not to be trusted)."""
    if cores is not None and len(cores) < max(1, jobs):
        raise ValueError(f"{jobs} games side by side need {jobs} sets of cores, not {len(cores)}")
    results: list[ArenaGame] = []
    asked = {job.spec.index: job.spec for job in work}

    def finished(reported: ArenaGame) -> bool:
        index = getattr(reported, "index", None)
        spec = asked.pop(index, None) if type(index) is int else None
        if spec is None:
            raise SiteLost("a game was handed back that was none of the games asked for (or one handed back twice)")
        game = judged(spec, reported)
        results.append(game)
        stop = enough is not None and enough(results)  # first: the progress line shows the test with this game
        if progress:
            progress(results)
        return stop

    try:
        if site is not None:
            site.run(work, finished)
        elif any(job.runner is not None for job in work):
            _run_in_threads(work, jobs, finished, cores)
        elif jobs <= 1:
            for job in work:
                if finished(job(None if cores is None else cores[0])):
                    break
        else:
            _run_in_processes(work, jobs, finished, cores)
    except KeyboardInterrupt:
        raise MatchStopped(sorted(results, key=lambda r: r.index)) from None
    except SiteLost as exc:
        raise MatchStopped(sorted(results, key=lambda r: r.index), str(exc)) from None
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.default_int_handler)
    results.sort(key=lambda r: r.index)
    return results


def _collect(pending: set[Future], finished: Callable[[ArenaGame], bool], enough: _Flag | None = None) -> None:
    """Hand every result to ``finished`` as it comes; once it says enough, cancel the games not started.
    Ctrl-C only sets a flag here (the main thread only waits): KeyboardInterrupt is raised at one known
    point of this loop, never in the middle of some cleanup."""
    interrupted = threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, lambda signum, frame: interrupted.set())
    try:
        _collect_until(pending, finished, interrupted, enough or threading.Event())
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def _collect_until(
    pending: set[Future], finished: Callable[[ArenaGame], bool], interrupted: threading.Event, enough: _Flag
) -> None:
    while pending:
        if interrupted.is_set():
            raise KeyboardInterrupt
        done, pending = wait(pending, timeout=WAIT_S, return_when=FIRST_COMPLETED)
        for future in done:
            game = None if future.cancelled() else future.result()
            if game is not None and finished(game):
                enough.set()
                for other in pending:
                    other.cancel()


def _slots(cores: list[SideCores] | None, into: multiprocessing.queues.Queue | queue.Queue) -> None:
    for side_cores in cores or []:
        into.put(side_cores)


def _run_in_threads(
    work: list[GameJob], jobs: int, finished: Callable[[ArenaGame], bool], cores: list[SideCores] | None = None
) -> None:
    slots: queue.Queue | None = None
    if cores is not None:
        _slots(cores, slots := queue.Queue())
    pool = ThreadPoolExecutor(
        max(1, jobs), thread_name_prefix="blokus-arena-game", initializer=_take_slot, initargs=(slots,)
    )
    pending = {pool.submit(_run_one, job) for job in work}
    try:
        _collect(pending, finished)
    except BaseException:
        _end_at_once_on_a_second_interrupt()
        for future in pending:
            future.cancel()
        for runner in {id(job.runner): job.runner for job in work}.values():
            stop = getattr(runner, "stop", None)
            if stop is not None:
                stop()  # the running games end now (their programs with them)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _run_in_processes(
    work: list[GameJob], jobs: int, finished: Callable[[ArenaGame], bool], cores: list[SideCores] | None = None
) -> None:
    context = WorkerContext()
    enough = context.Event()
    slots = None
    if cores is not None:
        _slots(cores, slots := context.Queue())
    pool = WorkerPool(jobs, _start_worker, (enough, slots), context)
    pending = set(pool.submit_all(_run_one, ((job,) for job in work)))
    try:
        _collect(pending, finished, enough)
    except BaseException:
        _end_at_once_on_a_second_interrupt(pool.workers)  # the running games: ended with their process
        pool.stop()
        raise
    pool.close()


@dataclass(frozen=True)
class ArenaSummary:
    """The verdict of a match between A and B: the games with a result scored from A's side (void games
    listed, never scored); :meth:`to_dict` is the ``summary`` of ``blokus arena --json``."""

    a: str
    b: str
    games: int  # with a result
    wins: int
    draws: int
    losses: int
    void: int
    void_games: list[str]
    a_mean_points: float
    b_mean_points: float
    score: float  # A's, 0..1
    ci95: tuple[float, float]
    a_mean_ms: float
    a_max_ms: float
    b_mean_ms: float
    b_max_ms: float
    forfeits: list[str]
    substitutes: int
    a_forfeits: dict[str, int]
    b_forfeits: dict[str, int]
    # the replays of the games each side lost (to open with blokus replay / blokus analyse)
    a_lost_replays: list[str]
    b_lost_replays: list[str]
    # the game pairs (an opening from both seats) whose two games both have a result: A's pair scores
    pentanomial: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)
    unpaired: int = 0  # games with a result whose pair's other game is void or missing: not in the pairs

    @property
    def pairs(self) -> Pentanomial:
        return Pentanomial(self.pentanomial)

    def to_dict(self) -> dict:
        """The full names, every count, and the pairs' counts and figures (``Pentanomial.as_dict``) under
        ``pairs``."""
        data = asdict(self)
        del data["pentanomial"], data["unpaired"]
        return data | {"pairs": self.pairs.as_dict() | {"unpaired": self.unpaired}}


def scored_pairs(results: list[ArenaGame]) -> tuple[list[tuple[float, float]], int]:
    """A's scores in the two games (2k, 2k + 1: one opening from both seats) of every pair that has both with a
    result, and the number of games with a result left out (the other game of their pair void or missing)."""
    by_pair: dict[int, dict[int, ArenaGame]] = {}
    for game in results:
        if not game.void:
            by_pair.setdefault(game.index // 2, {})[game.index] = game
    pairs = [(games[2 * k].score, games[2 * k + 1].score) for k, games in sorted(by_pair.items()) if len(games) == 2]
    return pairs, sum(len(games) for games in by_pair.values()) - 2 * len(pairs)


def summary(results: list[ArenaGame], name_a: str, name_b: str) -> ArenaSummary:
    void = [r for r in results if r.void]
    results = [r for r in results if not r.void]  # the games with a result: the only ones scored
    n = len(results)
    wins = sum(r.score == 1.0 for r in results)
    draws = sum(r.score == 0.5 for r in results)
    score = sum(r.score for r in results) / n if n else 0.0
    a_times = [t for r in results for t in r.a_times]
    b_times = [t for r in results for t in r.b_times]
    pairs, unpaired = scored_pairs(results)
    return ArenaSummary(
        a=name_a,
        b=name_b,
        games=n,
        wins=wins,
        draws=draws,
        losses=n - wins - draws,
        void=len(void),
        void_games=[f"game {r.index}: {r.void}" for r in void],
        a_mean_points=sum(r.a_points for r in results) / n if n else 0.0,
        b_mean_points=sum(r.b_points for r in results) / n if n else 0.0,
        score=score,
        ci95=wilson(score, n),
        a_mean_ms=1000 * sum(a_times) / len(a_times) if a_times else 0.0,
        a_max_ms=1000 * max(a_times, default=0.0),
        b_mean_ms=1000 * sum(b_times) / len(b_times) if b_times else 0.0,
        b_max_ms=1000 * max(b_times, default=0.0),
        forfeits=[f"game {r.index}: {r.forfeit}" for r in results if r.forfeit],
        substitutes=sum(r.substitutes for r in results),
        a_forfeits=_forfeit_counts(results, "A"),
        b_forfeits=_forfeit_counts(results, "B"),
        a_lost_replays=[r.replay for r in results if r.replay and r.score == 0.0],
        b_lost_replays=[r.replay for r in results if r.replay and r.score == 1.0],
        pentanomial=Pentanomial.of_pairs(pairs).counts,
        unpaired=unpaired,
    )


def _forfeit_counts(results: list[ArenaGame], side: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in results:
        if r.forfeit_side == side:
            kind = r.forfeit_class or "other"
            counts[kind] = counts.get(kind, 0) + 1
    return counts


def _forfeit_cell(counts: dict[str, int]) -> str:
    return ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items())) or "-"


NAME_WIDTH = 24  # a player's name in a table at most
TABLE_WIDTH = 100  # the arena's and the tournament's tables fit this many columns (their names shortened to fit)


def short_name(name: str, width: int = NAME_WIDTH) -> str:
    """A player's name for a table: each path in it as its folder and file (``py:…/team/player.py``), else its
    file alone, then, if still longer than ``width``, with its middle cut out (``…``). Names of ``width`` or
    fewer characters stay as they are."""
    if len(name) <= width:
        return name
    short = name
    for keep in (2, 1):
        words = []
        for word in name.split(" "):
            start = word.find("/")
            parts = word[start:].split("/") if start >= 0 else []
            words.append(word[:start] + "…/" + "/".join(parts[-keep:]) if len(parts) > keep + 1 else word)
        short = " ".join(words)
        if len(short) <= width:
            return short
    head = (width - 1) // 2
    return short[:head] + "…" + short[len(short) - (width - 1 - head) :]


def short_names(names: list[str], width: int = NAME_WIDTH) -> list[str]:
    """``short_name`` of each, told apart: different names that would read alike keep the last folder in which
    they differ (``py:…/team-a/…/player.py``), or else get their place in ``names`` (``py:…/player.py #2``)."""
    short = [short_name(n, width) for n in names]
    for s in set(short):
        group = [i for i, x in enumerate(short) if x == s]
        if len({names[i] for i in group}) < 2:
            continue
        parts = [names[i].split("/") for i in group]
        same = 0  # trailing parts all of them share
        while all(len(p) > same + 1 for p in parts) and len({p[-1 - same] for p in parts}) == 1:
            same += 1
        told = [p[0] + "…/" + p[-1 - same] + ("/…/" if same > 1 else "/") + p[-1] if same else "" for p in parts]
        if not all(told) or len(set(told)) < len(told) or max(map(len, told)) > width:
            told = [f"{short_name(names[i], width - 4)} #{i + 1}" for i in group]
        for i, name in zip(group, told, strict=True):
            short[i] = name
    return short


def fitted_table(names: list[str], render: Callable[[list[str]], str]) -> str:
    """``render(short names)``: a table of these players with their names as long as let it fit
    ``TABLE_WIDTH`` columns (down to 12 characters a name; a table wider even so is left so)."""
    text = ""
    for width in range(NAME_WIDTH, 11, -1):
        text = render(short_names(names, width))
        if max(map(len, text.splitlines()), default=0) <= TABLE_WIDTH:
            break
    return text


def format_table(s: ArenaSummary, pairs: bool = True) -> str:
    """The score table (the players' names shortened to fit: ``fitted_table``), the pairs' figures (pentanomial
    counts, Elo and normalised Elo; ``pairs`` False: not, e.g. when the SPRT's report gives them) and the lists
    of void games, forfeits and lost replays (full names)."""
    out = fitted_table([s.a, s.b], lambda names: _score_rows(s, names[0], names[1]))
    void = s.void
    out += f"\n{s.games} games" + (f" with a result, {void} void (no result, no point)" if void else "")
    if pairs and s.pairs.pairs:
        unpaired = f"; {s.unpaired} game(s) without the other game of their pair" if s.unpaired else ""
        out += f"\nA's game pairs (an opening from both seats{unpaired}):\n  {s.pairs.describe()}"
    if s.void_games:
        out += "\nvoid games:\n  " + "\n  ".join(s.void_games)
    if s.forfeits:
        out += "\nforfeits:\n  " + "\n  ".join(s.forfeits)
    for side in ("a", "b"):
        if getattr(s, f"{side}_lost_replays"):
            out += f"\ngames {getattr(s, side)} lost (blokus replay FILE, blokus analyse FILE):\n  " + "\n  ".join(
                getattr(s, f"{side}_lost_replays")
            )
    if s.substitutes:
        out += (
            f"\n{s.substitutes} moves the external engine did not find (it passed with placements left) "
            "were played for it by greedy"
        )
    return out


def _score_rows(s: ArenaSummary, name_a: str, name_b: str) -> str:
    lo, hi = s.ci95
    rows = [
        ("player", "W", "D", "L", "Void", "mean pts", "score %", "95% CI", "ms/move", "max ms", "forfeits"),
        (
            name_a,
            s.wins,
            s.draws,
            s.losses,
            s.void,
            f"{s.a_mean_points:.1f}",
            f"{100 * s.score:.1f}" if s.games else "-",
            f"{100 * lo:.1f}-{100 * hi:.1f}" if s.games else "-",
            f"{s.a_mean_ms:.0f}",
            f"{s.a_max_ms:.0f}",
            _forfeit_cell(s.a_forfeits),
        ),
        (
            name_b,
            s.losses,
            s.draws,
            s.wins,
            s.void,
            f"{s.b_mean_points:.1f}",
            f"{100 * (1 - s.score):.1f}" if s.games else "-",
            f"{100 * (1 - hi):.1f}-{100 * (1 - lo):.1f}" if s.games else "-",
            f"{s.b_mean_ms:.0f}",
            f"{s.b_max_ms:.0f}",
            _forfeit_cell(s.b_forfeits),
        ),
    ]
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(str(v).rjust(w) if i else str(v).ljust(w) for i, (v, w) in enumerate(zip(row, widths, strict=True)))
        for row in rows
    ]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


class Progress:
    """A plain-text progress bar on stderr. With an SPRT (``sprt``) ``total`` is only the cap: the time left is
    estimated from the test's trend (``PairedSprt.pairs_left``), with the cap's as the most it can take."""

    def __init__(self, total: int, stream=None, sprt: PairedSprt | None = None) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.start = time.monotonic()
        self.sprt = sprt

    def __call__(self, results: list[ArenaGame]) -> None:
        done = len(results)
        v = sum(bool(r.void) for r in results)
        w = sum(r.score == 1.0 and not r.void for r in results)
        d = sum(r.score == 0.5 and not r.void for r in results)
        bar = "#" * (30 * done // self.total) + "." * (30 - 30 * done // self.total)
        elapsed = time.monotonic() - self.start
        per_game = elapsed / done if done else 0.0
        left = f"~{per_game * (self.total - done):.0f}s left "
        of = f"{done}/{self.total}"
        if self.sprt is not None:
            of = f"{done} games (at most {self.total})"
            pairs = self.sprt.pairs_left()
            cap = f"at most {per_game * (self.total - done):.0f}s (the cap)"
            if self.sprt.decided:
                left = "decided: the running games finish "
            elif pairs is None:
                left = f"{cap} left "
            else:
                games = min(self.total - done, math.ceil(2 * pairs))
                left = f"~{per_game * games:.0f}s left by the SPRT's trend, {cap} "
        self.stream.write(
            f"\r[{bar}] {of}  A: {w}W {d}D {done - w - d - v}L"
            + (f" {v} void" if v else "")
            + f"  {elapsed:.0f}s elapsed, {left}"
        )
        if done == self.total:
            self.stream.write("\n")
        self.stream.flush()
