"""The game analysis (ai.analysis): values, marks, chart data, cancelling, resuming, the cache."""

from __future__ import annotations

import json
import threading

import pytest

from blokus.ai import make_player
from blokus.ai.analysis import (
    BLUNDER_LOSS,
    AnalysisCache,
    AnalysisCancelled,
    AnalysisSettings,
    GameAnalysis,
    Mark,
    PositionAnalysis,
    analyse_cached,
    analyse_game,
    analyse_position,
    cache_dir,
    chart_points,
    fill_evaluation,
    game_key,
    horizon_turn,
    mark_for,
    position_value,
    replay_moves,
)
from blokus.model.moves import SetMove, SkipMove
from blokus.model.pieces import COLORS, Color, Team
from blokus.model.replay import load_replay
from blokus.model.state import GameState
from tests.helpers import fixture_path, greedy_game

FAST = AnalysisSettings(engine="greedy", time_per_position=0.05, value_depth=2)
# greedy looks at every placement once (one ply, milliseconds): with a minute per position it is never cut short,
# so its best moves, and the analysis, do not depend on the machine's load (FAST's 0.05 s cuts it on a busy one)
UNHURRIED = AnalysisSettings(engine="greedy", time_per_position=60.0, value_depth=2)


def test_marks_follow_the_documented_thresholds():
    assert mark_for(0.0) is Mark.NONE and not mark_for(3.99)
    assert mark_for(4.0) is Mark.MISTAKE and mark_for(BLUNDER_LOSS - 0.01) is Mark.MISTAKE
    assert mark_for(BLUNDER_LOSS) is Mark.BLUNDER and str(Mark.BLUNDER) == "??"


def test_skipping_with_a_pentomino_to_place_is_found_as_a_blunder():
    states, _ = greedy_game(9)
    state = states[9]  # YELLOW in round 3, hundreds of placements, a pentomino in hand
    assert len(state.legal_placements()) > 50
    engine = make_player("greedy", seed=0)
    result = analyse_position(state, SkipMove(state.color), 9, engine, FAST, threading.Event())
    assert result.mark is Mark.BLUNDER
    assert result.loss >= BLUNDER_LOSS
    assert isinstance(result.best, SetMove) and state.is_legal(result.best)
    sign = 1 if state.color.team is Team.ONE else -1
    assert result.loss == pytest.approx(sign * (result.value - result.value_played), abs=0.02)
    assert result.value_played == pytest.approx(
        position_value(_after(state, SkipMove(state.color)), FAST.value_depth), abs=0.01
    )


def test_the_engines_own_move_loses_nothing():
    states, _ = greedy_game(6)
    state = states[6]
    played = make_player("greedy", seed=0).choose_move_sync(state, move_time=5.0)
    result = analyse_position(state, played, 6, make_player("greedy", seed=0), FAST, threading.Event())
    assert result.loss == 0.0 and result.mark is Mark.NONE
    assert result.best == result.played == played


def test_a_finished_game_is_worth_its_exact_point_difference():
    states, _ = greedy_game(4)
    over = states[-1].copy()
    over.valid = 0  # everybody out: the game is over
    assert over.is_over
    assert position_value(over) == over.team_points(Team.ONE) - over.team_points(Team.TWO)


def test_analyse_game_reports_progress_and_fills_the_chart():
    states, moves = greedy_game(10)
    calls = []
    result = analyse_game(states, moves, FAST, progress=lambda done, total, p: calls.append((done, total, p.turn)))
    assert result.complete and result.total == 10 and result.done == 10
    assert calls == [(i + 1, 10, i) for i in range(10)]
    assert [c.index for c in result.chart] == list(range(11))
    assert result.chart[3].mobility == tuple(len(states[3].legal_placements(c)) for c in COLORS)
    for point in result.chart[:10]:  # the curve is each analysed position's value
        assert point.evaluation == result.positions[point.index].value
    assert result.chart[10].evaluation == result.positions[9].value_played  # not analysed: the move that led there
    summaries = result.summaries()
    assert summaries[Team.ONE].moves + summaries[Team.TWO].moves == 10


def test_cancel_returns_the_part_done_and_resuming_finishes_it():
    states, moves = greedy_game(8)
    stop = threading.Event()

    def progress(done, total, position):
        if done == 3:
            stop.set()

    with pytest.raises(AnalysisCancelled) as info:
        analyse_game(states, moves, FAST, stop=stop, progress=progress)
    partial = info.value.partial
    assert partial.done == 3 and not partial.complete
    resumed_turns = []
    result = analyse_game(states, moves, FAST, previous=partial, progress=lambda d, t, p: resumed_turns.append(p.turn))
    assert result.complete and result.done == 8
    assert resumed_turns == [3, 4, 5, 6, 7]


def test_positions_analysed_in_two_processes_are_the_same_and_cancel_as_in_one(monkeypatch):
    states, moves = greedy_game(10)
    monkeypatch.setattr("blokus.ai.analysis.PARALLEL_MIN", 2)  # (a real game has ~70 positions)
    one = analyse_game(states, moves, UNHURRIED)
    stop = threading.Event()
    dones = []

    def progress(done, total, position):
        dones.append(done)
        if done == 4:
            stop.set()

    with pytest.raises(AnalysisCancelled) as info:
        analyse_game(states, moves, UNHURRIED, stop=stop, progress=progress, workers=2)
    partial = info.value.partial
    assert dones[:4] == [1, 2, 3, 4] and 4 <= partial.done < 10 and not partial.complete
    assert list(partial.positions) == sorted(partial.positions)
    assert all(partial.positions[i] == one.positions[i] for i in partial.positions)
    both = analyse_game(states, moves, UNHURRIED, previous=partial)  # (one process: a pool costs seconds to start)
    assert both.complete and both.positions == one.positions
    assert both.summaries() == one.summaries()


def test_cache_makes_reopening_instant_and_survives_damage(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "blokus" / "analysis"
    states, moves = greedy_game(6)
    cache = AnalysisCache()
    first = analyse_cached(states, moves, FAST, cache=cache)
    files = list(cache_dir().glob("*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["complete"] is True

    def no_engine(*args, **kwargs):
        raise AssertionError("the cached analysis must be used")

    monkeypatch.setattr("blokus.ai.analysis.analyse_game", no_engine)
    again = analyse_cached(states, moves, FAST, cache=cache)
    assert again.to_dict() == first.to_dict()
    # other settings are another entry
    assert cache.load(game_key(states, moves), AnalysisSettings(engine="greedy", time_per_position=0.1)) is None
    files[0].write_text("{ not json")
    assert cache.load(game_key(states, moves), FAST) is None


def test_a_cancelled_analysis_is_cached_and_resumed(tmp_path):
    states, moves = greedy_game(6)
    cache = AnalysisCache(tmp_path)
    stop = threading.Event()
    with pytest.raises(AnalysisCancelled):
        analyse_cached(
            states, moves, FAST, cache=cache, stop=stop, progress=lambda d, t, p: stop.set() if d == 2 else None
        )
    saved = cache.load(game_key(states, moves), FAST)
    assert saved is not None and saved.done == 2 and not saved.complete
    turns = []
    result = analyse_cached(states, moves, FAST, cache=cache, progress=lambda d, t, p: turns.append(p.turn))
    assert result.complete and turns == [2, 3, 4, 5]


def test_chart_mobility_and_points_match_the_official_game():
    """The official server's own record (moves.tsv: legal SetMoves and points per turn) agrees."""
    replay = load_replay(fixture_path("sc2021/gen-21.3.3-game1-replay-regular-end.xml"))
    lines = fixture_path("sc2021/gen-21.3.3-game1-moves.tsv").read_text().splitlines()[1:]
    rows = [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]
    by_turn = {int(r[0]): r for r in rows}
    chart = chart_points(replay.states)
    checked = 0
    for point, state in zip(chart, replay.states, strict=True):
        row = by_turn.get(point.turn)
        if row is None or state.is_over:
            continue
        assert point.mobility[state.color] == int(row[4])
        checked += 1
    assert checked > 40
    final = replay.states[-1]
    assert chart[-1].point_diff == final.team_points(Team.ONE) - final.team_points(Team.TWO)


def test_analysing_the_official_game_marks_moves_of_both_teams():
    replay = load_replay(fixture_path("sc2021/gen-21.3.3-game1-replay-regular-end.xml"))
    states, moves = replay.states[:12], replay_moves(replay)[:11] + [None]
    result = analyse_game(states, moves, FAST)
    assert result.complete
    skip = result.positions[7]  # GREEN skipped in round 2 with 193 placements available
    assert skip.played == SkipMove(Color.GREEN) and skip.choices == 193
    assert skip.mark is Mark.BLUNDER and skip.best != skip.played


def _after(state: GameState, move) -> GameState:
    after = state.copy()
    after.play(move)
    return after


def test_a_2027_game_is_analysed_by_its_own_rules():
    states, moves = greedy_game(10, season="2027")
    assert states[0].season.year == 2027
    result = analyse_game(states, moves, FAST)
    assert result.complete and result.done == 10
    for i, p in result.positions.items():
        assert states[i].is_legal(p.best) and p.turn == states[i].turn
    assert result.positions[0].choices == len(states[0].legal_placements())


def test_the_yardstick_ends_every_search_at_the_end_of_a_round():
    for depth in range(1, 9):
        for turn in range(40):
            end = horizon_turn(turn, depth)
            assert end % 4 == 0 and end > turn  # BLUE to move: every colour has moved equally often
            assert end - turn <= max(depth, 4)  # at most ``depth`` plies, the next round end when none is nearer
            if depth >= 4:
                assert end - turn > depth - 4  # the last round end within ``depth`` plies
    assert [horizon_turn(t) - t for t in range(8)] == [4, 3, 2, 5, 4, 3, 2, 5]  # the default: 2 to 5 plies


def test_the_position_after_a_move_is_valued_alike_by_the_move_and_by_the_next_position():
    """The position after move i is valued twice: as ``value_played`` of position i and as ``value`` of
    position i + 1 (with its best move). A search of a fixed number of plies ended on alternate teams in
    consecutive positions (its last ply favours the team that makes it): the two differed by 10 points in the
    median and by 18 in every hand-over of the first round, with alternating sign, and the start position
    was worth +18 to team ONE. Ending every search at the same point of the round makes them agree."""
    import statistics

    replay = load_replay(fixture_path("sc2021/gen-21.3.3-game1-replay-regular-end.xml"))
    states, moves = replay.states[:21], replay_moves(replay)[:20] + [None]
    result = analyse_game(states, moves, AnalysisSettings(engine="greedy", time_per_position=0.01))
    positions = result.positions
    gaps = [positions[i].value_played - positions[i + 1].value for i in range(19)]
    assert statistics.median(abs(g) for g in gaps) <= 4
    assert all(abs(g) <= 4 for g in gaps[:4])  # the first round, where the old gaps were 18 points
    assert abs(positions[0].value) <= 4  # four start pieces in four corners: nobody ahead yet
    assert [c.evaluation for c in result.chart[:20]] == [positions[i].value for i in range(20)]


def test_the_last_values_of_an_official_game_are_close_to_its_final_result():
    """Values are the expected final point difference (``VALUE_WEIGHTS``): game 1 of 21.3.3 ended +17; the
    default weights valued its last five positions +40, +34, +24, +24, +12 (12 points off on average)."""
    replay = load_replay(fixture_path("sc2021/gen-21.3.3-game1-replay-regular-end.xml"))
    final = replay.states[-1]
    diff = final.team_points(Team.ONE) - final.team_points(Team.TWO)
    start = len(replay.states) - 7
    settings = AnalysisSettings(engine="greedy", time_per_position=0.05)
    result = analyse_game(replay.states[start:], replay_moves(replay)[start:], settings)
    values = [p.value for p in result.ordered()][-5:]
    assert diff == 17 and all(abs(v - diff) <= 10 for v in values), values
    assert sum(abs(v - diff) for v in values) / len(values) <= 6, values


def _position(index: int, state: GameState, value: float, played: float) -> PositionAnalysis:
    sign = 1.0 if state.color.team is Team.ONE else -1.0
    loss = max(0.0, sign * (value - played))
    move = SkipMove(state.color)
    return PositionAnalysis(index, state.turn, state.color, move, move, value, played, loss, Mark.NONE, 9)


def test_a_step_of_the_value_without_a_marked_move_is_explained():
    states, moves = greedy_game(7)
    over = states[-1].copy()
    over.valid = 0  # the game is over here: its exact result
    states.append(over)
    diff = over.team_points(Team.ONE) - over.team_points(Team.TWO)
    values = {3: (0.0, 0.0), 4: (5.0, 5.0), 5: (3.0, 5.0), 6: (-3.0, -3.0), 7: (-3.0, -3.0)}
    assert abs(diff + 3) >= 4  # the end is a step too
    positions = {i: _position(i, states[i], *v) for i, v in values.items()}
    result = GameAnalysis(AnalysisSettings(engine="greedy"), "k", positions, chart_points(states))  # depth 5
    fill_evaluation(result, states)
    notes = {c.index: c.note for c in result.chart if c.note}
    assert notes == {
        4: "BLUE has a better move here than the search one move earlier expected (+5.0 points)",
        6: "YELLOW's move lost 2.0 points (too few to mark it a mistake); the estimate looks one round further ahead "
        "from here (to turn 12, not 8) and sees -8.0 points that the shorter look missed: no mistake, a longer view",
        8: "the game ended here: the real final score replaces the estimate",
    }
    positions[5].mark = "?"  # a marked move explains its step
    fill_evaluation(result, states)
    assert 6 not in {c.index for c in result.chart if c.note}


def test_positions_are_typed_and_the_json_keeps_their_text_form():
    """Moves are moves and marks a Mark in memory; the JSON (``--json``, the cache) writes their text forms
    and reads them back to the same objects."""
    states, moves = greedy_game(8)
    result = analyse_game(states, moves, FAST)
    data = json.loads(json.dumps(result.to_dict()))
    for p, raw in zip(result.ordered(), data["positions"], strict=True):
        assert isinstance(p.played, SetMove | SkipMove) and isinstance(p.mark, Mark) and isinstance(p.color, Color)
        assert raw["played"] == str(p.played) and raw["color"] == p.color.name and raw["mark"] == p.mark.value
    assert GameAnalysis.from_dict(data).positions == result.positions
