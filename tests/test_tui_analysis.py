"""The analysis in the TUI: the background runner (progress, cancel, cache, a growing game), the pane's
text, and the game chart (snapshot, selecting a turn by mouse and keys)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual import on
from textual.app import App, ComposeResult
from textual.widgets import Static

from blokus.ai.analysis import (
    AnalysisCache,
    AnalysisSettings,
    GameAnalysis,
    Mark,
    PositionAnalysis,
    chart_points,
    evaluation_at,
)
from blokus.model.moves import parse_move
from blokus.model.pieces import Color, Shape
from blokus.model.replay import load_replay
from blokus.tui.analysis_view import AnalysisNews, AnalysisPane, AnalysisRunner, ghost_of, pane_text
from blokus.tui.chart import GameChart
from blokus.tui.dialogs import EndScreen
from blokus.tui.replay_screen import ReplayScreen
from blokus.tui.widgets import StatusBar
from tests.helpers import CAP, fixture_path, greedy_game, wait_until
from tests.tui_helpers import (  # noqa: F401  (keep_logging: an autouse fixture)
    GAME1,
    BlockingPlayer,
    InstantPlayer,
    footer_keys_visible,
    game_app,
    keep_logging,
    net_app,
    opponent,
    screen_of,
    scripted_net_app,
    settle,
    widget_lines,
)

FAST = AnalysisSettings(engine="greedy", time_per_position=0.02, value_depth=1)


class Host(App):
    """A bare app that hosts the runner's worker and applies its news."""

    def __init__(self, runner_args: dict) -> None:
        super().__init__()
        self.runner_args = runner_args
        self.changes = 0
        self.runner: AnalysisRunner | None = None

    def compose(self) -> ComposeResult:
        yield AnalysisPane(id="pane")

    def on_mount(self) -> None:
        self.runner = AnalysisRunner(self, **self.runner_args)

    @on(AnalysisNews)
    def _news(self, news: AnalysisNews) -> None:
        self.runner.apply(news)
        self.changes += 1


async def test_runner_analyses_in_the_background_and_caches(tmp_path):
    states, moves = greedy_game(8)
    cache = AnalysisCache(tmp_path)
    app = Host({"settings": FAST, "cache": cache})
    async with app.run_test() as pilot:
        runner = app.runner
        runner.set_game(states, moves, final=True)
        runner.start()
        assert runner.running, (runner.error, runner.analysis and (runner.analysis.done, runner.analysis.total))
        await wait_until(lambda: not runner.running, pilot=pilot)
        assert runner.complete and runner.analysis.complete and runner.analysis.done == 8
        assert app.changes >= 8  # one update per position, on the UI thread
        assert [p.evaluation for p in runner.analysis.chart[:8]] == [
            runner.analysis.positions[i].value for i in range(8)
        ]
        text = pane_text(runner, 3, states[3]).plain
        assert "analysed 8 positions" in text and f"turn {states[3].turn}" in text and "best" in text
        assert "played" in text and "loss" in text
    # reopening: the complete analysis comes from the cache, no worker
    app = Host({"settings": FAST, "cache": cache})
    async with app.run_test():
        runner = app.runner
        runner.set_game(states, moves, final=True)
        runner.start()
        assert not runner.running and runner.complete and runner.analysis.done == 8


async def test_cancel_keeps_the_part_done(tmp_path, monkeypatch):
    import blokus.tui.analysis_view as view

    states, moves = greedy_game(12)
    first = view.positions_to_analyse(states, moves)[0]
    analyse = view.analyse_position

    def held_after_the_first(state, played, index, engine, settings, stop):
        if index != first:
            stop.wait(CAP)  # the greedy engine is too quick to be caught in the middle: held until cancelled
        return analyse(state, played, index, engine, settings, stop)

    monkeypatch.setattr(view, "analyse_position", held_after_the_first)
    slow = AnalysisSettings(engine="greedy", time_per_position=0.2, value_depth=2)
    app = Host({"settings": slow, "cache": AnalysisCache(tmp_path)})
    async with app.run_test() as pilot:
        runner = app.runner
        runner.set_game(states, moves, final=True)
        runner.start()
        await wait_until(lambda: runner.analysis.done >= 1, pilot=pilot)
        runner.cancel()
        assert not runner.running
        done = runner.analysis.done
        await pilot.pause(0.3)
        assert runner.analysis.done <= done + 1  # at most the position that was being analysed
        assert "stopped at" in pane_text(runner, 0, states[0]).plain
        assert 0 < done < 12
        assert len(list(tmp_path.glob("*.json"))) == 1


async def test_a_growing_game_is_analysed_as_it_grows():
    states, moves = greedy_game(9)
    app = Host({"settings": FAST})
    async with app.run_test() as pilot:
        runner = app.runner
        runner.set_game(states[:5], moves[:4] + [None], final=False)
        runner.start()
        await wait_until(lambda: not runner.running, pilot=pilot)
        assert sorted(runner.analysis.positions) == [0, 1, 2, 3]
        runner.set_game(states, moves, final=False)
        await wait_until(lambda: not runner.running and runner.analysis.done == 9, pilot=pilot)
        assert len(runner.analysis.chart) == 10
        assert not runner.complete  # still live
        assert runner.next_marked(-1, 1) is None or runner.next_marked(-1, 1) >= 0


def test_ghost_is_the_best_move_unless_it_was_played():
    states, moves = greedy_game(10)
    best, skip = parse_move("YELLOW PENTO_W NONE false 3 3"), parse_move("YELLOW SKIP")
    p = PositionAnalysis(9, states[9].turn, Color.YELLOW, skip, best, 1.0, 20.0, 19.0, Mark.BLUNDER, 300)
    cells, colour = ghost_of(p, states[9])
    assert colour is not None and colour.name == "YELLOW" and len(cells) == 5
    assert ghost_of(
        PositionAnalysis(9, states[9].turn, Color.YELLOW, best, best, 1.0, 1.0, 0.0, Mark.NONE, 300), states[9]
    ) == (
        (),
        None,
    )


# --- the chart ------------------------------------------------------------------------------------------


def fixture_chart():
    replay = load_replay(fixture_path("sc2021/gen-21.3.3-game1-replay-regular-end.xml"))
    points = chart_points(replay.states)
    for p in points:  # a fixed evaluation curve, so the snapshot does not depend on the engine
        p.evaluation = round(1.4 * p.point_diff + (p.index % 7) - 3, 1)
    return points


class ChartApp(App):
    def __init__(self, points, index: int = 0) -> None:
        super().__init__()
        self.points, self.start_index = points, index
        self.selected: list[int] = []

    def compose(self) -> ComposeResult:
        yield Static("above the chart")
        yield GameChart(id="chart")

    def on_mount(self) -> None:
        chart = self.query_one(GameChart)
        chart.set_points(self.points)
        chart.index = self.start_index

    def on_game_chart_selected(self, message: GameChart.Selected) -> None:
        self.selected.append(message.index)


def test_snapshot_chart(snap_compare):
    assert snap_compare(ChartApp(fixture_chart(), index=30), terminal_size=(100, 18))


async def test_the_chart_legend_lines_up():
    """One mobility row per colour: its letter in the same column, the scale before the first (issue 45)."""
    app = ChartApp(fixture_chart())
    async with app.run_test(size=(100, 18)) as pilot:
        await pilot.pause()
        lines = app.query_one(GameChart).render().plain.splitlines()
    labels = [line[:6] for line in lines if line[:6].rstrip()[-1:] in ("B", "Y", "R", "G")]
    assert [label.rstrip()[-1] for label in labels] == ["B", "Y", "R", "G"]
    assert {label.rstrip().rindex(label.rstrip()[-1]) for label in labels} == {4}  # the column beside the row
    assert labels[0].split()[0].isdigit() and labels[1].strip() == "Y"


async def test_clicking_the_chart_selects_that_turn_and_keys_step():
    points = fixture_chart()
    app = ChartApp(points)
    async with app.run_test(size=(100, 18)) as pilot:
        chart = app.query_one(GameChart)
        width = chart.plot_width()
        await pilot.click(GameChart, offset=(1 + 6 + width - 1, 5))  # border + axis + last column
        await pilot.pause()
        assert app.selected[-1] == len(points) - 1 and chart.index == len(points) - 1
        await pilot.click(GameChart, offset=(1 + 6, 5))
        await pilot.pause()
        assert app.selected[-1] == 0
        middle = chart.index_at(width // 2)
        assert 0 < middle < len(points) - 1 and abs(chart.column_of(middle) - width // 2) <= 1
        chart.focus()
        await pilot.press("right", "right", "left")
        assert app.selected[-3:] == [1, 2, 1]
        await pilot.press("end")
        assert chart.index == len(points) - 1


# --- the replay viewer with the analysis ------------------------------------------------------------------


async def test_replay_viewer_analysis_pane_marks_ghost_and_chart(tmp_path, monkeypatch):
    from blokus.model.record import GameRecord
    from blokus.tui.app import BlokusApp
    from blokus.tui.board import Board
    from blokus.tui.replay_screen import ReplayScreen
    from blokus.tui.replays import ReplayData
    from blokus.tui.session import Timeline
    from blokus.tui.widgets import MoveLog

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    states, moves = greedy_game(12)
    states_with_skip = states[:10]  # YELLOW skips at turn 9 with a full hand: a blunder
    state = states_with_skip[-1].copy()
    from blokus.model.moves import SkipMove

    skip = SkipMove(state.color)
    state.play(skip)
    record = GameRecord.from_states([*states_with_skip, state], [None, *moves[:9], skip])
    data = ReplayData(Timeline.of(record), ("alice", "bob"))
    app = BlokusApp(lambda: ReplayScreen(data, analysis_settings=FAST))
    async with app.run_test(size=(140, 44)) as pilot:
        screen = app.main_screen
        await pilot.press("a")
        runner = screen.analysis.runner
        await wait_until(lambda: runner.complete, pilot=pilot)
        await pilot.pause()
        assert runner.analysis.positions[9].mark is Mark.BLUNDER
        log = app.screen.query_one(MoveLog)
        assert log._marks.get(10) is Mark.BLUNDER  # the entry of the move that led to state 10
        assert "??" in str(log.get_option_at_index(9).prompt.columns[1]._cells[0])
        await pilot.press("home", "right_square_bracket")
        assert screen.index == 9  # the position in which the blunder was played
        pane = str(app.screen.query_one("#analysis", AnalysisPane).render())
        assert "loss" in pane and "??" in pane and "YELLOW to move" in pane and "· pass" in pane
        board = app.screen.query_one(Board)
        ghost = [key for row in board._rows for key in row if key[0] == "gL"]
        assert len(ghost) == len(runner.analysis.positions[9].best.cells) and {k[1] for k in ghost} == {1}
        await pilot.press("c")
        chart = app.screen.query_one(GameChart)
        assert chart.display and chart.index == 9 and len(chart.points) == 11
        assert chart.points[9].evaluation == evaluation_at(runner.analysis, 9) is not None
        await pilot.click(GameChart, offset=(1 + 6, 5))
        await pilot.pause()
        assert screen.index == 0
        await pilot.press("left_square_bracket")  # no earlier mistake: stays
        assert screen.index == 0


async def test_a_finished_local_game_opens_in_the_viewer_with_the_analysis(tmp_path, monkeypatch):
    from blokus.model.pieces import Shape
    from blokus.tui.replay_screen import ReplayScreen

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    app = game_app(Shape.PENTO_L, plies=24)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot)
        await pilot.press("A")  # mid-game: refused, the game screen stays
        assert not isinstance(app.screen, ReplayScreen)
        game = app.main_screen
        game.session.timeline.states[-1].valid = 0  # everybody out: the game is over
        await pilot.press("A")
        await pilot.pause()
        assert isinstance(app.screen, ReplayScreen)
        viewer = app.screen
        assert viewer.analysis.shown and len(viewer.timeline) == len(game.session.timeline)
        runner = viewer.analysis.runner
        assert runner.running, (runner.error, runner.analysis and (runner.analysis.done, runner.analysis.total))
        await pilot.press("q")
        await pilot.pause()
        assert app.screen is game
        assert runner._stop.is_set() and not runner.running  # closing the viewer stops its analysis


# --- the board comes first: the panes below it get only the lines it leaves -----------------------------


@pytest.fixture(scope="module")
def game1_cache(tmp_path_factory) -> Path:
    """One analysis cache for the viewers of game 1 below: the first analyses it, the others load it (their
    tests are about the layout and the keys, not about the analysis being computed)."""
    return tmp_path_factory.mktemp("game1-cache")


def _replay_app(cache: Path, monkeypatch):
    """The viewer of the official game 1 with the fast analysis, its cache in ``cache``."""
    from blokus.tui.app import BlokusApp
    from blokus.tui.replay_screen import ReplayScreen
    from blokus.tui.replays import load_replay as load_for_viewer

    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    data = load_for_viewer(fixture_path("sc2021/gen-21.3.3-game1-replay-regular-end.xml"))
    return BlokusApp(lambda: ReplayScreen(data, analysis_settings=FAST))


SIZES = [(80, 24), (90, 32), (100, 30), (120, 40)]


@pytest.mark.parametrize(
    "key,size", [("a", (80, 24)), ("a", (100, 30)), *(("c", size) for size in SIZES), *(("x", size) for size in SIZES)]
)
async def test_the_whole_board_stays_in_view_beside_the_analysis_the_chart_and_the_xml(
    game1_cache, monkeypatch, key, size
):
    from blokus.tui.board import Board

    app = _replay_app(game1_cache, monkeypatch)
    async with app.run_test(size=size) as pilot:
        await pilot.press("down", "down", "down", "down", "down")  # turn 20: a move to show
        await pilot.press(key)
        await pilot.pause()
        screen = app.screen
        centre, board, status = (screen.query_one(sel) for sel in ("#centre", Board, "#status"))
        pane = screen.query_one("#xml" if key == "x" else "#analysis-area")
        assert pane.display and pane.region.height >= 5  # it opened ...
        assert centre.virtual_size.height <= centre.region.height  # ... and nothing above it is cut off
        assert board.region.height == screen.board_layout.plan.scale.size[1] and board.region.bottom <= pane.region.y
        text = str(status.render())
        assert "ONE 43 : 35 TWO" in text and re.search(r"\b(t|Turn) 20\b", text)  # the turn and score stay


async def test_no_room_below_the_board_says_how_many_lines_are_needed(game1_cache, monkeypatch):
    app = _replay_app(game1_cache, monkeypatch)
    async with app.run_test(size=(80, 21)) as pilot:
        await pilot.press("c")
        await pilot.pause()
        assert app.screen.query_one("#analysis-area").region.height == 0
        await pilot.press("x")
        await pilot.pause()
        assert not app.screen.query_one("#xml").display
        notes = [n.message for n in app._notifications]
        assert any("chart need a terminal of at least 22 lines (this one has 21)" in m for m in notes), notes
        assert any("XML pane needs a terminal of at least 23 lines" in m for m in notes), notes


async def test_the_analysis_keys_work_after_its_panes_were_hidden(game1_cache, monkeypatch):
    """The analysis panel holds the viewer's focus, also with nothing of it shown (a hidden widget would lose it):
    its keys work after the pane and the chart were switched off, even from the focused chart."""
    from blokus.tui.analysis_view import AnalysisPanel

    app = _replay_app(game1_cache, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        panel = app.screen.query_one(AnalysisPanel)
        await pilot.press("a", "a", "c", "tab")
        assert app.screen.focused is panel.query_one(GameChart)
        await pilot.press("c", "a")
        await pilot.pause()
        assert app.screen.focused is panel and panel.shown and panel.region.height > 0


async def test_the_result_on_the_last_state_is_whole_at_80x24(game1_cache, monkeypatch):
    """The result below the board takes more lines than the status leaves it: the status gives way."""
    from blokus.tui.replay_screen import ReplayResult

    app = _replay_app(game1_cache, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        centre, result = app.screen.query_one("#centre"), app.screen.query_one(ReplayResult)
        assert result.lines >= 6 and "Regular end" in str(result.render())
        assert centre.virtual_size.height <= centre.region.height  # nothing cut off
        status = str(app.screen.query_one("#status").render())
        assert "ONE 122 : 105 TWO" in status and "game over" in status


async def test_blokus_replay_analyse_opens_with_the_analysis_running(tmp_path, monkeypatch):
    from blokus.tui.launch import ReplayOptions, replay_app
    from blokus.tui.replays import load_replay as load_for_viewer

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = fixture_path("sc2021/gen-21.3.3-game1-replay-regular-end.xml")
    app = replay_app(ReplayOptions(turn=20, analyse=True), load_for_viewer(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.main_screen
        assert screen.analysis.shown and screen.analysis.runner.analysis is not None
        assert screen.timeline.states[screen.index].turn == 20


async def test_the_pane_says_the_engine_is_being_prepared_while_it_compiles(monkeypatch):
    import threading

    import blokus.ai

    class Compiling:  # the first start: the compiled engine is not ready until ``done`` is set
        error = None

        def __init__(self) -> None:
            self.done = threading.Event()

        def prepare(self, wait: float | None = 0.0) -> bool:
            return self.done.wait(wait)

        def status(self) -> str:
            return "ready" if self.done.is_set() else "compiling"

    kernels = Compiling()
    monkeypatch.setattr(blokus.ai, "kernels_of", lambda name: kernels)
    states, moves = greedy_game(4)
    app = Host({"settings": AnalysisSettings(engine="greedy", time_per_position=0.05, value_depth=1)})
    async with app.run_test() as pilot:
        runner = app.runner
        runner.set_game(states, moves, final=True)
        runner.start()
        shown = "preparing the engine (first start only)"
        await wait_until(lambda: shown in pane_text(runner, 0, states[0]).plain, pilot=pilot)
        ticks = runner.ticks
        await wait_until(lambda: runner.ticks > ticks, pilot=pilot)  # it turns: not a bar stuck at 0
        assert runner.analysis.done == 0
        kernels.done.set()
        await wait_until(lambda: not runner.running, pilot=pilot)
        assert runner.complete and "analysed 4 positions" in pane_text(runner, 0, states[0]).plain


def test_analysis_pane_keeps_the_verdict_when_lines_are_few():
    best, played = parse_move("BLUE PENTO_W NONE false 2 13"), parse_move("BLUE TRIO_L NONE true 2 14")
    position = PositionAnalysis(4, 4, Color.BLUE, played, best, 17.3, 8.8, 8.5, Mark.MISTAKE, 136)
    analysis = GameAnalysis(AnalysisSettings(), "key", {4: position}, total=10)

    class Runner:
        settings = AnalysisSettings()
        running, error, preparing, ticks = True, "", "", 0

        def __init__(self) -> None:
            self.analysis = analysis

        def at(self, index: int):
            return analysis.positions.get(index)

    from blokus.model.replay import load_replay as load_model_replay

    state = next(s for s in load_model_replay(fixture_path(GAME1)).states if s.turn == 4)
    full = pane_text(Runner(), 4, state).plain.splitlines()
    assert len(full) == 6 and any(line.startswith("best") for line in full)
    for lines in (2, 3, 4):
        text = pane_text(Runner(), 4, state, max_lines=lines).plain.splitlines()
        assert len(text) == lines
        assert text[0].startswith("turn 4 · BLUE to move · value")
        assert text[1].startswith("played loss 8.5 ? · TRIO_L flipped @ (2,14)")  # the verdict first, no colour


SIZE = (80, 24)


def status_text(app) -> str:
    return str(app.main_screen.query_one(StatusBar).render())


async def test_the_end_dialog_and_the_status_offer_the_analysis_of_a_local_game():
    app = game_app(Shape.PENTO_L, plies=400)  # played to the end
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, EndScreen) and dialog.can_analyse
        assert "A analyse" in str(dialog.query("Static").last().render())
        await pilot.press("escape")
        assert "A analyse" in status_text(app) and "N new" in status_text(app)
        await pilot.press("A")
        await wait_until(lambda: isinstance(app.screen, ReplayScreen), pilot=pilot)
        assert app.screen.analysis.shown


async def test_a_network_game_once_over_offers_the_analysis():
    app = scripted_net_app(name=None)
    async with app.run_test(size=SIZE) as pilot:
        s = app.main_screen.session
        await wait_until(lambda: s.is_human_turn(), pilot=pilot)
        assert not s.can_analyse()  # not while it runs
        await pilot.press("o")  # the autopilot plays our side to the end
        await wait_until(lambda: isinstance(app.screen, EndScreen), pilot=pilot)
        assert app.screen.can_analyse
        await pilot.press("A")
        await wait_until(lambda: isinstance(app.screen, ReplayScreen), pilot=pilot)
        await pilot.press("q")
        await wait_until(lambda: app.screen is app.main_screen, pilot=pilot)
        assert "A analyse" in status_text(app) and "N new" not in status_text(app)
