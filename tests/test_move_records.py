"""Per-move records of saved games (``model.moverecords``): the arena writes them beside its replays, a replay
without them loads, a bad records file is one line, and the replay viewer shows them."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

import blokus.ai.search.mcts as mcts
from blokus.ai.arena.game import GameSpec
from blokus.ai.arena.match import play_game
from blokus.ai.interface import Player
from blokus.ai.search.greedy import GreedyPlayer
from blokus.ai.search.mcts import MctsParams, MctsPlayer
from blokus.model.moverecords import (
    FORMAT,
    MAX_FILE,
    MAX_INFO,
    MAX_RECORDS,
    MoveRecord,
    UnreadableRecords,
    engine_report,
    read_records,
    records_path,
    write_records,
)
from blokus.model.moves import Move
from blokus.model.pieces import Shape
from blokus.model.replay import MoveEvent, read_game, write_replay
from blokus.model.season import SEASON_2027
from blokus.model.state import GameState
from blokus.tui.app import BlokusApp
from blokus.tui.replay_screen import ReplayScreen, ReplayStatus
from blokus.tui.replays import load_replay
from blokus.tui.widgets import MoveLog
from tests.helpers import fixture_path
from tests.tui_helpers import GAME1, first_move, game_app, screen_of, settle, widget_lines


def test_a_saved_arena_game_records_every_move_with_its_time_and_the_mcts_simulations(tmp_path):
    mcts.warm_up()  # the real search, not the lookahead it answers with while compiling
    mcts.KERNELS.ready.set()
    spec = GameSpec(0, "PENTO_X", 0, seed=3, move_time=10.0, season="2027", replay_dir=str(tmp_path), timed=False)
    searcher = MctsParams(book=False)  # every move searched (a book move has no simulations)
    game = play_game(
        spec, lambda seed: MctsPlayer(seed, params=searcher, max_simulations=40), lambda seed: GreedyPlayer(seed)
    )
    replay = read_game(game.replay)
    records = read_records(game.replay)
    assert records is not None and records.version == 1
    moved = [e.turn for e in replay.events if isinstance(e, MoveEvent)]
    assert [r.turn for r in records.records] == moved and len(moved) > 10  # one record a move, in order
    mcts_turns = [r for r in records.records if r.turn % 2 == 0 and r.source == "engine"]  # A plays ONE
    assert mcts_turns and all(r.seconds > 0 for r in records.records if r.source == "engine")
    # the simulations and the mean value of the move chosen (a win is about 1, a bonus for the margin can add a bit)
    assert all(r.info["simulations"] > 0 and isinstance(r.info["value"], float) for r in mcts_turns)
    assert all("simulations" not in r.info for r in records.records if r.turn % 2 == 1)  # greedy: its own figures
    assert load_replay(Path(game.replay)).records == records.by_turn()  # what the viewer is handed


def test_a_replay_without_records_loads_as_before(tmp_path):
    path = tmp_path / "game1.xml"
    shutil.copy(fixture_path(GAME1), path)
    assert read_records(path) is None
    data = load_replay(path)
    assert data.records == {} and data.records_error is None and len(data.timeline) == 62


def _game(tmp_path, plies: int = 6) -> tuple[str, list[MoveRecord]]:
    """A short saved game and records of its moves (the fifth with known figures)."""
    state = GameState.new(SEASON_2027, Shape.PENTO_X)
    states = [state.copy()]
    for _ in range(plies):
        state.play(first_move(state))
        states.append(state.copy())
    path = write_replay(tmp_path / "replay_swc_2027_blokus_x_A_B.xml.gz", states)
    records = [MoveRecord(turn=t, seconds=0.5, info={"depth": 2}) for t in range(plies)]
    records[4] = MoveRecord(turn=4, seconds=1.25, info={"simulations": 12345, "value": 0.61, "fallback": "x" * 30})
    return str(path), records


BAD = {
    "not JSON": b"{not json",
    "another format": json.dumps({"format": "something else", "version": 1, "records": []}).encode(),
    "a newer version": json.dumps({"format": FORMAT, "version": 2, "records": []}).encode(),
    "too many records": json.dumps(
        {"format": FORMAT, "version": 1, "records": [{"turn": 0, "seconds": 1.0}] * (MAX_RECORDS + 1)}
    ).encode(),
    "too many entries": json.dumps(
        {
            "format": FORMAT,
            "version": 1,
            "records": [{"turn": 0, "seconds": 1.0, "info": {f"k{i}": i for i in range(MAX_INFO + 1)}}],
        }
    ).encode(),
    "a long text": json.dumps(
        {"format": FORMAT, "version": 1, "records": [{"turn": 0, "seconds": 1.0, "info": {"fallback": "x" * 5000}}]}
    ).encode(),
    "a nested value": json.dumps(
        {"format": FORMAT, "version": 1, "records": [{"turn": 0, "seconds": 1.0, "info": {"tree": {"a": [1] * 9}}}]}
    ).encode(),
    "negative time": json.dumps({"format": FORMAT, "version": 1, "records": [{"turn": 0, "seconds": -1}]}).encode(),
    "not a number": b'{"format": "%s", "version": 1, "records": [{"turn": 0, "seconds": NaN}]}' % FORMAT.encode(),
    "an unknown field": json.dumps(
        {"format": FORMAT, "version": 1, "records": [{"turn": 0, "seconds": 1.0, "board": "..."}]}
    ).encode(),
    "too large": b" " * (MAX_FILE + 1),
    "too large unpacked": gzip.compress(b" " * (MAX_FILE + 1)),
}


@pytest.mark.parametrize("content", BAD.values(), ids=BAD.keys())
def test_a_bad_records_file_is_one_line_and_the_game_is_shown_without_it(tmp_path, content):
    path, _ = _game(tmp_path)
    records_path(path).write_bytes(content)
    with pytest.raises(UnreadableRecords) as caught:
        read_records(path)
    message = str(caught.value)
    assert message and "\n" not in message and len(message) < 200, message
    data = load_replay(Path(path))  # the game itself is fine
    assert data.records == {} and len(data.timeline) == 7
    assert data.records_error == f"{records_path(path).name}: {message}"
    assert f"move records not shown: {data.records_error}" in data.warnings


def test_engine_reports_are_cut_to_the_bounds():
    import numpy as np

    info = {"simulations": np.int64(7), "value": 0.123456, "bad key": 1, "tree": [1, 2], "nan": float("nan")}
    info |= {f"k{i}": i for i in range(40)}
    report = engine_report(info)
    assert report["simulations"] == 7 and type(report["simulations"]) is int and report["value"] == 0.1235
    assert "bad key" not in report and "tree" not in report and "nan" not in report and len(report) == MAX_INFO
    MoveRecord(turn=0, seconds=0.1, info=report)  # within the bounds the reader checks


@pytest.mark.parametrize("size", [(80, 24), (140, 44)])
async def test_the_viewer_shows_the_records_of_the_current_move(tmp_path, size):
    path, records = _game(tmp_path)
    write_records(path, records)
    data = load_replay(Path(path))
    app = BlokusApp(lambda: ReplayScreen(data, start_turn=5))  # the state after turn 4's move
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.main_screen
        assert isinstance(screen, ReplayScreen) and screen.timeline.turn_of_move_before(screen.index) == 4
        status = " ".join(widget_lines(screen.query_one(ReplayStatus)))
        assert "1.25 s" in status and "12 345 sims" in status, status
        if size[0] >= 100:
            assert "value 0.61" in status
        await pilot.press("left")  # turn 3's move: its own figures
        status = " ".join(widget_lines(screen.query_one(ReplayStatus)))
        assert "0.50 s" in status and "depth 2" in status and "sims" not in status, status
        log = screen.query_one(MoveLog)
        if log.display and log.region.width:  # the move list is shown at this size: a column of short figures
            await pilot.pause()
            shown = "\n".join(log.render_line(y).text for y in range(log.scrollable_content_region.height))
            assert "1.2s 12k" in shown and "0.5s" in shown, shown
        elif size == (140, 44):
            pytest.fail("the move list is not shown at 140x44")


class ReportingPlayer(Player):
    """Answers at once with the first legal move and reports figures as an engine does (``last_info``)."""

    name = "reporting"

    def __init__(self) -> None:
        self.last_info: dict = {}

    async def choose_move(self, state: GameState, deadline: float) -> Move:
        self.last_info = {"simulations": 77 + state.turn, "value": 0.25}
        return first_move(state)


async def test_a_tui_game_saves_each_move_with_the_ais_report(tmp_path, monkeypatch):
    from blokus.tui.launch import save_game_replay

    monkeypatch.chdir(tmp_path)
    app = game_app(Shape.PENTO_L, opponent=ReportingPlayer(), plies=1, save_replay=save_game_replay)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot)  # the AI (team TWO: YELLOW) has moved
        session = screen_of(app).session
        assert session.state.turn == 2
        await pilot.press("ctrl+s")
        assert "saved" in session.feedback.text
    (path,) = (tmp_path / "replays").glob("*.xml")
    records = load_replay(path).records
    assert sorted(records) == [0, 1] and records[0].source == "human" and records[0].info == {}
    assert records[1].source == "engine" and records[1].info == {"simulations": 78, "value": 0.25}


def test_blokus_replay_names_a_bad_records_file_in_one_line_and_shows_the_game(tmp_path, monkeypatch, capsys):
    import blokus.cli.replay as cli

    path, _ = _game(tmp_path)
    records_path(path).write_bytes(BAD["too many entries"])
    shown = []
    monkeypatch.setattr(cli, "run_app", lambda app, prog: shown.append(app) or 0)  # not run: the terminal is a test's
    assert cli.main([path]) == 0 and len(shown) == 1
    err = capsys.readouterr().err
    assert err.startswith("blokus replay: move records not shown: replay_swc_2027_blokus_x_A_B.moves.json: records.0")
    assert err.count("\n") == 1, err


def test_measured_records_keep_the_first_time_of_each_kept_turn_within_the_bounds():
    from blokus.model.moverecords import MAX_RECORDS, MAX_SECONDS, measured_records

    timings = [(0, 0.5, "client"), (1, 9.0, "client"), (1, 0.2, "client"), (2, -1.0, "observed"), (3, 1e9, "x")]
    records = measured_records([0, 2, 3], timings)  # turn 1's move was refused: the game has no such turn
    assert [(r.turn, r.seconds, r.source) for r in records] == [
        (0, 0.5, "client"),
        (2, 0.0, "observed"),
        (3, MAX_SECONDS, "x"),
    ]
    many = measured_records(range(1000), ((t, 0.1, "client") for t in range(1000)))
    assert len(many) == MAX_RECORDS and many[-1].turn == MAX_RECORDS - 1
