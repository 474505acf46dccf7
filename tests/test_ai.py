"""Tests of the AI players (ai/): legality, deadlines, stopping, crafted positions, the arena.

Time is injected: the engines read a counting clock that advances a fixed step per call, so the tests
neither race the real clock nor depend on the machine's speed.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import subprocess
import sys
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blokus.ai import DEFAULT_AI, Engine, RandomPlayer, make_player
from blokus.ai.arena.match import make_specs, summary
from blokus.ai.arena.sprt import wilson
from blokus.ai.interface import TimeKeeper
from blokus.ai.players.registry import BUILTINS
from blokus.ai.search.evaluate import evaluate, terminal_value
from blokus.cli.arena import main as arena_main
from blokus.model.moves import SetMove, SkipMove
from blokus.model.pieces import COLORS, SHAPES, Color, Shape
from blokus.model.season import DEFAULT_SEASON, SEASON_2021
from blokus.model.state import GameState

ENGINES = ["random", "greedy", "lookahead", "lookahead-py", "mcts"]


@pytest.fixture(scope="module", autouse=True)
def compiled_search():
    import blokus.ai.search.fastsearch
    import blokus.ai.search.mcts

    blokus.ai.search.mcts.prepare(wait=None)  # the real searches, not their fallback while compiling
    blokus.ai.search.fastsearch.KERNELS.prepare(wait=None)


class CountingClock:
    """A fake monotonic clock: every call advances it by ``step`` seconds."""

    def __init__(self, step: float = 0.002, start: float = 1000.0) -> None:
        self.now = start
        self.step = step
        self.calls = 0

    def __call__(self) -> float:
        self.calls += 1
        self.now += self.step
        return self.now


def engine(name: str, clock: CountingClock, seed: int = 0) -> Engine:
    e = make_player(name, seed)
    e.clock = e.cpu_clock = clock  # a CPU share of 100 %: no load-dependent early stop
    return e


def random_state(seed: int, plies: int) -> GameState:
    rng = random.Random(seed)
    state = GameState.new(start_piece=Shape[rng.choice(DEFAULT_SEASON.start_pieces)])
    for _ in range(plies):
        if state.is_over:
            break
        ids = state.legal_placements()
        if len(ids) and rng.random() > 0.03:
            state.push_placement(int(ids[rng.randrange(len(ids))]))
        else:
            state.push(SkipMove(state.color))
    return state


def filled_state(
    holes: set[tuple[int, int]],
    cells: dict[tuple[int, int], Color],
    hands: dict[Color, list[Shape]],
    valid: list[Color],
    turn: int = 0,
) -> GameState:
    """A board full of GREEN except ``holes`` and the given ``cells`` (a crafted end-game position)."""
    board = []
    for y in range(20):
        for x in range(20):
            if (x, y) in cells:
                board.append((x, y, cells[(x, y)]))
            elif (x, y) not in holes:
                board.append((x, y, Color.GREEN))
    return GameState.from_parts(
        start_piece=Shape.PENTO_L, turn=turn, cells=board, undeployed=hands, valid_colors=valid, season=SEASON_2021
    )


def test_registry():
    assert set(BUILTINS) == {"random", "greedy", "lookahead", "lookahead-py", "mcts"}
    assert DEFAULT_AI == "mcts"
    with pytest.raises(ValueError):
        make_player("nobody")


@pytest.mark.parametrize("name", ENGINES)
def test_first_move_is_legal_start_piece_in_a_corner(name):
    state = GameState.new(SEASON_2021, Shape.PENTO_W)
    move = engine(name, CountingClock()).think(state, 1000.3, threading.Event())
    assert isinstance(move, SetMove) and move.shape == Shape.PENTO_W
    assert state.validate(move) is None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    plies=st.integers(0, 90),
    name=st.sampled_from(ENGINES),
    step=st.sampled_from([0.0005, 0.005, 0.05]),
)
def test_always_legal(seed, plies, name, step):
    state = random_state(seed, plies)
    if state.is_over:
        return
    clock = CountingClock(step)
    move = engine(name, clock, seed).think(state.copy(), clock.now + 0.2, threading.Event())
    assert state.validate(move) is None
    if state.has_legal_move():
        assert isinstance(move, SetMove)  # never skips while it can place


@pytest.mark.parametrize("name", ENGINES)
def test_only_a_skip_is_left(name):
    # BLUE (not on its first move) has no free diagonal: only a skip is legal
    state = filled_state(
        holes={(5, 5), (6, 5)},
        cells={(0, 0): Color.BLUE, (1, 1): Color.YELLOW},
        hands={c: [s for s in SHAPES if s != Shape.MONO] for c in COLORS},
        valid=list(COLORS),
    )
    assert not state.has_legal_move()
    move = engine(name, CountingClock()).think(state, 1000.2, threading.Event())
    assert move == SkipMove(Color.BLUE)
    assert state.validate(move) is None


@pytest.mark.parametrize("name", ["greedy", "lookahead", "mcts"])
@pytest.mark.parametrize("plies", [0, 12, 40])
def test_respects_the_deadline(name, plies):
    state = random_state(7, plies)
    clock = CountingClock(step=0.001)
    deadline = clock.now + 0.2
    move = engine(name, clock).think(state, deadline, threading.Event())
    assert state.validate(move) is None
    # the engine stopped on its own before the deadline (with the margin), in clock time
    assert clock.now <= deadline


@pytest.mark.parametrize("name", ["greedy", "lookahead", "mcts"])
def test_stops_when_the_stop_event_is_set(name):
    state = random_state(3, 20)
    stop = threading.Event()

    class StoppingClock(CountingClock):
        stopped_at: int | None = None

        def __call__(self) -> float:
            if self.calls == 4 and not stop.is_set():
                stop.set()  # "the user cancelled" part-way through the search
                self.stopped_at = self.calls
            return super().__call__()

    clock = StoppingClock(step=1e-6)
    move = engine(name, clock).think(state, clock.now + 3600, stop)  # an hour: only the stop ends it
    assert state.validate(move) is None
    assert clock.stopped_at is not None and clock.calls - clock.stopped_at < 10


def test_stop_before_start_returns_a_legal_move():
    state = random_state(5, 30)
    stop = threading.Event()
    stop.set()
    for name in ENGINES:
        move = engine(name, CountingClock()).think(state, 1e9, stop)
        assert state.validate(move) is None


async def test_choose_move_and_cancel():
    state = random_state(11, 24)
    player = make_player("lookahead", 1)
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(player.choose_move(state, loop.time() + 3600))
    await asyncio.sleep(0.05)
    player.cancel()
    move = await asyncio.wait_for(task, 60)  # generous: a working cancel returns within milliseconds
    assert state.validate(move) is None


def test_starved_thread_stops_early():
    # the thinking thread gets 10 % of the CPU: the engine keeps a larger reserve before the deadline
    state = random_state(8, 30)
    clock = CountingClock(step=0.001)
    cpu = CountingClock(step=0.0001)
    e = make_player("lookahead", 1)
    e.clock, e.cpu_clock = clock, cpu
    deadline = clock.now + 1.6
    move = e.think(state, deadline, threading.Event())
    assert state.validate(move) is None
    assert clock.now < deadline - 0.5


def test_time_keeper_stops_its_reserve_before_the_deadline():
    clock = CountingClock(step=0.0)
    stop = threading.Event()
    for reserve, budget, stops_at in [(0.2, 1.6, 1.4), (0.05, 1.6, 1.55), (0.2, 0.4, 0.34)]:  # at most 15 %
        start = clock.now
        timer = TimeKeeper(clock, start + budget, stop, cpu_clock=lambda: clock.now, reserve=reserve)
        clock.now = start + stops_at - 0.001
        assert not timer.expired()
        clock.now = start + stops_at + 0.001
        assert timer.expired()


def test_mcts_thinks_until_close_to_the_deadline():
    # its clock checks are milliseconds apart, so it stops STOP_RESERVE_S before the deadline, not 0.2 s
    from blokus.ai.search.mcts import STOP_RESERVE_S

    state = random_state(9, 16)
    clock = CountingClock(step=0.01)  # each look at the clock: 10 ms (a few dozen slices in all)
    deadline = clock.now + 1.6
    e = engine("mcts", clock)
    move = e.think(state, deadline, threading.Event())
    assert state.validate(move) is None
    assert deadline - STOP_RESERVE_S - 0.05 <= clock.now <= deadline


def test_an_arena_game_process_has_the_compiled_search_before_its_first_move():
    # a fresh process, as the arena's workers are: the factory returns only once the search is loaded
    code = (
        "from blokus.ai import parse_player; from blokus.ai.search import mcts; "
        "from blokus.ai.arena.match import PlayerFactory; "
        "PlayerFactory(parse_player('mcts'))(0); print(mcts.is_ready())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.stdout.strip() == "True", out.stderr


_NO_COMPILE_IN_A_MOVE = """
import json, sys
import numba
from blokus.ai import compile_ahead, make_player, parse_player
from blokus.model.pieces import Shape
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState

name = sys.argv[1]
compile_ahead(parse_player(name))
ours = ("blokus.ai.", "blokus.model.")
modules = [m for m in list(sys.modules.values()) if getattr(m, "__name__", "").startswith(ours)]
kernels = {f"{m.__name__}.{k}": v for m in modules for k, v in vars(m).items()
           if isinstance(v, numba.core.registry.CPUDispatcher)}
before = {k: len(v.signatures) for k, v in kernels.items()}
player = make_player(name, 1)
state = GameState(Shape.PENTO_L, season=SEASON_2021)
while state.turn < 12:  # one player for all colours: the search's tree is kept from move to move
    state.play(player.choose_move_sync(state, move_time=0.15))
state.push_placement(int(state.legal_placements()[0]))
player.choose_move_sync(state, move_time=0.15)  # a position the tree did not reach
player.choose_move_sync(state, move_time=0.15)  # the same position again
print(json.dumps({"kernels": len(kernels), "fallback": "fallback" in player.last_info,
                  "compiled in a move": [k for k, v in kernels.items() if len(v.signatures) != before[k]]}))
"""


@pytest.mark.parametrize("name", ["mcts", "lookahead"])
def test_no_kernel_is_compiled_or_loaded_in_a_move(name):
    """After ``compile_ahead`` (the bot's engine process, the arena's game process) a move calls only
    kernels its ``warm_up`` made ready: one first met in a move is compiled or loaded there (a second or
    more on a slow machine: past the 2-second limit on its first move)."""
    out = subprocess.run(
        [sys.executable, "-c", _NO_COMPILE_IN_A_MOVE, name], capture_output=True, text=True, timeout=600
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["kernels"] > 10 and not report["fallback"]
    assert report["compiled in a move"] == []


def test_choose_move_sync():
    state = random_state(12, 8)
    move = make_player("greedy", 1).choose_move_sync(state, move_time=0.5)
    assert state.validate(move) is None


# --- crafted positions ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["greedy", "lookahead", "mcts"])
def test_keeps_the_colour_alive(name):
    # BLUE holds MONO and DOMINO. The mono on (6,6) kills BLUE (no room left for the domino); the
    # domino on (6,6)-(7,6) keeps the corner (8,7) for the mono: all pieces placed, mono last.
    state = filled_state(
        holes={(6, 6), (7, 6), (8, 7)},
        cells={(5, 5): Color.BLUE},
        hands={Color.BLUE: [Shape.MONO, Shape.DOMINO]},
        valid=[Color.BLUE],
    )
    assert len(state.legal_placements()) == 2
    move = engine(name, CountingClock()).think(state, 1000.3, threading.Event())
    assert isinstance(move, SetMove) and move.shape == Shape.DOMINO
    assert move.cells == {(6, 6), (7, 6)}


@pytest.mark.parametrize("name", ["greedy", "lookahead", "mcts"])
def test_blocks_the_opponents_last_corner(name):
    # BLUE can place a TRIO_I for 3 points, or the MONO on YELLOW's last free corner (11,11), which
    # removes YELLOW from the game and keeps the trio for later.
    holes = {(3, 3), (3, 4), (3, 5), (11, 11)}
    cells = {(2, 2): Color.BLUE, (12, 12): Color.BLUE, (10, 10): Color.YELLOW}
    hands = {Color.BLUE: [Shape.MONO, Shape.TRIO_I, Shape.PENTO_X], Color.YELLOW: [Shape.MONO, Shape.DOMINO]}
    state = filled_state(holes, cells, hands, valid=[Color.BLUE, Color.YELLOW])
    move = engine(name, CountingClock()).think(state, 1000.3, threading.Event())
    assert isinstance(move, SetMove) and move.cells == {(11, 11)}


def test_evaluation_and_final_score():
    start = GameState.new(SEASON_2021, Shape.PENTO_L)
    assert evaluate(start) == 0.0  # the empty board is the same for both teams
    blue_placed = start.copy()
    blue_placed.play(blue_placed.legal_moves()[0])
    assert evaluate(blue_placed) > 0  # team ONE (BLUE) is a piece ahead: good for ONE
    final = random_state(22, 200)
    assert final.is_over
    assert terminal_value(final) == final.outcome().points[0] - final.outcome().points[1]


# --- arena ---------------------------------------------------------------------------------------


def test_arena_specs_pair_openings_and_swap_seats():
    specs = make_specs(6, seed=4, move_time=0.1, season="2021")
    assert [s.a_team for s in specs] == [0, 1, 0, 1, 0, 1]
    assert specs[0].start_piece == specs[1].start_piece and specs[0].seed == specs[1].seed
    assert len({s.start_piece for s in specs}) == 3
    assert make_specs(6, seed=4, move_time=0.1, season="2021") == specs


def test_wilson_interval():
    lo, hi = wilson(0.5, 100)
    assert 0.39 < lo < 0.41 and 0.59 < hi < 0.61
    assert wilson(1.0, 10)[1] == 1.0


def test_arena_smoke(capsys):
    assert arena_main(["greedy", "random", "--games", "2", "--move-time", "20", "--seed", "3"]) == 0
    out = capsys.readouterr()
    assert "greedy" in out.out and "score %" in out.out and "95% CI" in out.out
    assert "2/2" in out.err  # the progress bar


def test_arena_refuses_a_move_time_beyond_the_time_limit(capsys):
    with pytest.raises(SystemExit) as exc:
        arena_main(["greedy", "random", "--games", "2", "--move-time", "3200"])
    assert exc.value.code == 2
    assert "--move-time must be at most 2000 ms" in capsys.readouterr().err


def test_arena_replays_are_named_like_every_replay(tmp_path):
    assert (
        arena_main(
            ["greedy", "random", "--games", "2", "--move-time", "20", "--seed", "3", "--save-replay", str(tmp_path)]
            + ["--season", "2021"]
        )
        == 0
    )
    names = sorted(p.name for p in tmp_path.glob("*.xml"))
    stamp = r"\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d"
    assert len(names) == 2, names
    # beside each replay its moves' records, named after it
    assert sorted(p.name for p in tmp_path.glob("*.moves.json")) == [n[: -len(".xml")] + ".moves.json" for n in names]
    assert re.fullmatch(rf"replay_swc_2021_blokus_{stamp}_A_B_000\.xml", names[0]), names
    assert re.fullmatch(rf"replay_swc_2021_blokus_{stamp}_B_A_001\.xml", names[1]), names


def test_arena_summary_counts():
    from blokus.ai.arena.match import ArenaGame as GameResult

    results = [
        GameResult(0, "PENTO_L", 0, 100, 90, 1.0, 80, [0.1, 0.2], [0.3]),
        GameResult(1, "PENTO_L", 1, 90, 90, 0.5, 80, [0.4], [0.1]),
    ]
    s = summary(results, "a", "b")
    assert (s.wins, s.draws, s.losses) == (1, 1, 0)
    assert s.score == 0.75 and s.a_max_ms == pytest.approx(400)


class _DyingEngine:
    """A picklable factory whose engine kills its process at the first move (a crash in compiled code)."""

    def __call__(self, seed: int):
        from blokus.ai.interface import RandomPlayer

        class Dying(RandomPlayer):
            def think(self, state, deadline, stop):
                import os

                os._exit(3)

        return Dying(seed)


class _RandomFactory:
    def __call__(self, seed: int):
        from blokus.ai.interface import RandomPlayer

        return RandomPlayer(seed)


def test_arena_match_with_a_dying_game_process_ends_with_an_error():
    from concurrent.futures.process import BrokenProcessPool

    from blokus.ai.arena.match import run_match

    with pytest.raises(BrokenProcessPool):
        run_match(make_specs(2, seed=1, move_time=0.1, season="2021"), _DyingEngine(), _RandomFactory(), jobs=2)


class _PonderRecorder(RandomPlayer):
    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.pondered: list[GameState] = []

    def start_pondering(self, state: GameState) -> None:
        self.pondered.append(state.copy())


def test_the_arena_lets_the_pondering_side_think_on_the_opponents_time():
    from blokus.ai.arena.match import _play

    spec = make_specs(2, seed=3, move_time=0.05, ponder=(True, False), season="2021")[1]  # A plays team TWO
    a, b = _PonderRecorder(1), _PonderRecorder(2)
    result = _play(spec, a, b)
    assert not b.pondered
    # after each of A's moves (but the last, if it ended the game), with the position after it
    assert len(a.pondered) in (len(result.a_times), len(result.a_times) - 1) and len(a.pondered) > 10
    assert all(s.last_move is not None and s.last_move.color % 2 == spec.a_team for s in a.pondered)


def test_the_arena_says_when_pondering_games_share_too_few_cores(monkeypatch, capsys):
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    assert arena_main(["random", "greedy", "--ponder", "a", "--games", "2", "--move-time", "50", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("blokus arena: note: with --ponder each game keeps two cores busy") and err.count("\n") == 1
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert arena_main(["random", "greedy", "--ponder", "a", "--games", "2", "--move-time", "50", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_an_untimed_arena_game_lets_a_slow_player_finish(monkeypatch):
    """``--untimed`` (players with a count budget, for measuring): a move past the server's limit loses the game
    only when the arena keeps the time."""
    import time
    import types

    import blokus.ai.arena.match as arena

    real = time.monotonic
    calls = []

    def slow_clock() -> float:  # every move seems to take 2.5 s (the players' own clocks are real)
        calls.append(1)
        return real() + 2.5 * len(calls)

    monkeypatch.setattr(arena, "time", types.SimpleNamespace(monotonic=slow_clock))
    timed, untimed = (make_specs(2, seed=3, move_time=0.05, timed=t, season="2021")[0] for t in (True, False))
    lost = arena._play(timed, make_player("greedy", 1), make_player("random", 2))
    assert re.match(r"A timeout: 25\d\d ms at turn 0$", lost.forfeit) and lost.score == 0.0 and lost.turns < 8
    assert lost.forfeit_class == "timeout" and lost.result.cause.name == "SOFT_TIMEOUT"
    played = arena._play(untimed, make_player("greedy", 1), make_player("random", 2))
    assert played.forfeit == "" and played.result.cause.name == "REGULAR" and played.turns > 40
    assert max(played.a_times) > 2.0
    assert arena_main(["random", "random", "--untimed", "--move-time", "5000", "--games", "2", "--quiet"]) == 0
