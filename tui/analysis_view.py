"""The analysis in the viewer: a background runner, the pane that shows it, and the panel that holds both.

:class:`AnalysisRunner` analyses a game (``ai.analysis``) in a Textual thread worker, position by
position, and posts every result to the UI thread as a message (``AnalysisNews``), so the viewer stays
responsive; it can be cancelled (the part done is cached and resumed next time), reads a finished game's
complete analysis from the cache at once, and keeps up with a game that grows (``blokus watch``).
:class:`AnalysisPane` shows, for the position on the board, the engine's best move (the board shows
it as a ghost) and its value, the move that was played there and what it lost, the progress and the
tally of mistakes per team. :class:`AnalysisPanel` is the widget below the viewer's board: pane, chart,
their keys and the runner.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from functools import partial
from typing import cast

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.dom import DOMNode
from textual.message import Message
from textual.widgets import Static

from blokus.ai.analysis import (
    AnalysisCache,
    AnalysisSettings,
    GameAnalysis,
    Mark,
    PositionAnalysis,
    analyse_position,
    chart_points,
    evaluation_at,
    fill_evaluation,
    game_key,
    positions_to_analyse,
)
from blokus.ai.interface import Engine
from blokus.ai.search.compiled import preparing_text
from blokus.model.moves import Move, SetMove, describe_move
from blokus.model.pieces import Color, Team
from blokus.model.state import GameState
from blokus.tui.chart import GameChart
from blokus.tui.colors import BLUNDER, MISTAKE
from blokus.tui.layout import FOOTER, PaneSwitched
from blokus.tui.session import Timeline
from blokus.tui.spinner import Spinner

log = logging.getLogger(__name__)

AREA_PANE_ONLY, AREA_WITH_CHART, AREA_MIN = 9, 14, 5  # lines of the analysis area
PANE_WIDTH = 62  # columns of the pane beside the chart
MARK_STYLE = {Mark.MISTAKE: Style(color=MISTAKE, bold=True), Mark.BLUNDER: Style(color=BLUNDER, bold=True)}


class AnalysisNews(Message):
    """What the analysis worker (a thread) tells its host on the UI thread, where the runner applies it
    (``AnalysisRunner.apply``); ``run``: the run it comes from (an older run's news is dropped)."""

    def __init__(self, run: threading.Event) -> None:
        super().__init__()
        self.run = run


class PositionAnalysed(AnalysisNews):
    def __init__(self, run: threading.Event, position: PositionAnalysis) -> None:
        super().__init__(run)
        self.position = position


class EnginePreparing(AnalysisNews):
    """The compiled engine is made ready (``status``: "compiling", "loading"; "" once it is)."""

    def __init__(self, run: threading.Event, status: str) -> None:
        super().__init__(run)
        self.status = status


class AnalysisFailed(AnalysisNews):
    def __init__(self, run: threading.Event, reason: str) -> None:
        super().__init__(run)
        self.reason = reason


class AnalysisStopped(AnalysisNews):
    """The worker ended (done, cancelled or failed)."""


class AnalysisRunner:
    """The analysis of one game. Its worker runs in a thread of ``host`` (a widget, or an app) and posts it
    ``AnalysisNews``, which the host hands to ``apply``; all attributes are read and written on the UI thread."""

    def __init__(self, host: DOMNode, settings: AnalysisSettings | None = None, cache: AnalysisCache | None = None):
        self.host = host
        self.settings = settings or AnalysisSettings()
        self.cache = cache
        self.states: list[GameState] = []
        self.moves: list[Move | None] = []
        self.final = False  # the game will not grow any more (a file, a finished game)
        self.analysis: GameAnalysis | None = None
        self.running = False
        self.preparing = ""  # the compiled engine's state while it is made ready: "compiling", "loading"
        self.ticks = 0  # turns of the "preparing" spinner
        self.error = ""
        self._stop = threading.Event()
        self._engine: Engine | None = None

    # --- the game -----------------------------------------------------------------------------------

    def set_game(self, states: Sequence[GameState], moves: Sequence[Move | None], *, final: bool) -> None:
        """The game as it is now (``moves[i]`` played in ``states[i]``); a grown game is analysed further."""
        self.states, self.moves, self.final = list(states), list(moves), final
        if self.analysis is not None:
            fill_evaluation(self.analysis, self.states)
            self.analysis.total = len(positions_to_analyse(self.states, self.moves))
            if self.running is False and self.pending() and not self._stop.is_set():
                self._launch()

    def pending(self) -> list[int]:
        done = self.analysis.positions if self.analysis is not None else {}
        return [i for i in positions_to_analyse(self.states, self.moves) if i not in done]

    @property
    def complete(self) -> bool:
        return self.analysis is not None and self.final and not self.pending()

    # --- running ------------------------------------------------------------------------------------

    def start(self) -> None:
        """Begin (or resume) the analysis; a complete cached one is shown at once."""
        if self.running or not self.states:
            return
        self._stop = threading.Event()
        self.error = ""
        if self.analysis is None:
            key = game_key(self.states, self.moves)
            cached = self.cache.load(key, self.settings) if self.cache is not None and self.final else None
            self.analysis = cached or GameAnalysis(self.settings, key, chart=chart_points(self.states))
            self.analysis.total = len(positions_to_analyse(self.states, self.moves))
            fill_evaluation(self.analysis, self.states)
        if self.pending():
            self._launch()
        else:
            self._finish_if_complete()

    def _launch(self) -> None:
        self.running = True
        stop = self._stop
        work = partial(self._work, stop)
        self.host.run_worker(work, thread=True, group="analysis", exclusive=True, exit_on_error=False)

    def cancel(self) -> None:
        """Stop after the position being analysed; what is done stays (and is cached)."""
        self._stop.set()
        if self.analysis is not None and self.cache is not None and self.final and self.analysis.positions:
            self.cache.save(self.analysis)
        self.running = False

    def _work(self, stop: threading.Event) -> None:
        """The worker (a thread): one position after the other, each result posted to the host."""
        posted: set[int] = set()  # the UI thread adds them to the analysis when it gets to their news
        try:
            if self._engine is None:
                self._prepare_engine(stop)  # a worker thread: waiting here blocks nothing
                self._engine = self.settings.engine_spec().build(seed=0)
            while not stop.is_set():
                states, moves = self.states, self.moves  # lists are replaced, never changed in place
                done = self.analysis.positions if self.analysis is not None else {}
                todo = [i for i in positions_to_analyse(states, moves) if i not in done and i not in posted]
                if not todo:
                    break
                i = todo[0]
                played = cast(Move, moves[i])  # never None: positions_to_analyse lists positions with a move
                result = analyse_position(states[i], played, i, self._engine, self.settings, stop)
                if stop.is_set():
                    break
                posted.add(i)
                self._post(PositionAnalysed(stop, result))
        except Exception as exc:  # the search was stopped, or an engine failed: show it, never crash
            if not stop.is_set():
                log.exception("analysis failed")
                self._post(AnalysisFailed(stop, f"{type(exc).__name__}: {exc}"))
        self._post(AnalysisStopped(stop))

    def _prepare_engine(self, stop: threading.Event) -> None:
        """Load the compiled engine, or compile it (first start: a minute, in a child process); the pane
        shows a turning "preparing the engine" meanwhile."""
        from blokus.ai import kernels_of

        kernels = kernels_of(self.settings.engine_spec())
        if kernels is None:
            return
        while not kernels.prepare(wait=0.2) and kernels.error is None and not stop.is_set():
            self._post(EnginePreparing(stop, kernels.status()))
        self._post(EnginePreparing(stop, ""))

    def _post(self, news: AnalysisNews) -> None:
        try:
            self.host.post_message(news)  # thread-safe; nothing once the host is closed
        except Exception:  # the app is closing (its loop is gone)
            pass

    def apply(self, news: AnalysisNews) -> None:
        """The worker's news, on the UI thread (the host calls this and repaints)."""
        if isinstance(news, EnginePreparing):
            self.preparing = news.status
            self.ticks += 1
        elif isinstance(news, PositionAnalysed):
            if self.analysis is not None:
                self.analysis.positions[news.position.index] = news.position
                fill_evaluation(self.analysis, self.states)
        elif isinstance(news, AnalysisFailed):
            self.error = news.reason
        elif isinstance(news, AnalysisStopped) and news.run is self._stop:  # not an older run, already replaced
            self.running = False
            if not news.run.is_set() and self.pending() and not self.error:
                self._launch()  # the game grew while the last position was analysed
                return
            self._finish_if_complete()

    def _finish_if_complete(self) -> None:
        if self.analysis is not None and self.complete and not self.analysis.complete:
            self.analysis.complete = True
            if self.cache is not None:
                self.cache.save(self.analysis)

    # --- queries for the view -----------------------------------------------------------------------

    def at(self, index: int) -> PositionAnalysis | None:
        return self.analysis.positions.get(index) if self.analysis is not None else None

    def marks(self) -> dict[int, Mark]:
        """Marks by the timeline index of the state each marked move *led to* (the move list's index)."""
        if self.analysis is None:
            return {}
        return {p.index + 1: p.mark for p in self.analysis.positions.values() if p.mark}

    def next_marked(self, index: int, direction: int) -> int | None:
        """The state index of the next (``direction`` 1) or previous (-1) marked move's position."""
        if self.analysis is None:
            return None
        marked = sorted(p.index for p in self.analysis.positions.values() if p.mark)
        if direction > 0:
            return next((i for i in marked if i > index), None)
        return next((i for i in reversed(marked) if i < index), None)


def ghost_of(position: PositionAnalysis | None, state: GameState) -> tuple[tuple[tuple[int, int], ...], Color | None]:
    """The cells and colour of the best move, to show as a ghost (nothing when it was played anyway)."""
    if position is None or position.best == position.played or state.turn != position.turn:
        return (), None
    move = position.best
    if not isinstance(move, SetMove):
        return (), None
    return tuple(sorted(move.cells)), move.color


class AnalysisPane(Static):
    """Best move and value of the position shown, the loss of the move played, progress, tallies."""

    DEFAULT_CSS = """
    AnalysisPane { height: auto; padding: 0 1; border: round $primary-darken-2; display: none;
                   text-wrap: nowrap; text-overflow: ellipsis; }
    AnalysisPane.shown { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.border_title = "Analysis"

    def show(self, runner: AnalysisRunner, index: int, state: GameState) -> None:
        height = self.content_size.height
        self.update(pane_text(runner, index, state, height if height > 0 else None))


def _describe(move: Move) -> str:
    """A move as the rest of the TUI writes it, without its colour (the line above names the colour)."""
    return describe_move(move, color=False)


def _bar(done: int, total: int, width: int = 16) -> str:
    filled = round(width * done / total) if total else width
    return "█" * filled + "░" * (width - filled)


def pane_text(runner: AnalysisRunner, index: int, state: GameState, max_lines: int | None = None) -> Text:
    """The pane's lines; where fewer than all fit (``max_lines``), the least needed go first: the key hint,
    the progress, the tally, the best move; the position's value and the loss of the move played stay."""
    a = runner.analysis
    s = runner.settings
    done, total = (a.done, a.total) if a is not None else (0, 0)
    lines: list[tuple[Text, int]] = []  # (line, rank): the highest ranks are dropped first
    if runner.running and runner.preparing:
        what = preparing_text(runner.preparing)
        lines.append(
            (
                Text.assemble(
                    (f"{Spinner.FRAMES[runner.ticks % len(Spinner.FRAMES)]} {what}", Style(color=MISTAKE)),
                    ("  esc stop", Style(dim=True)),
                ),
                3,
            )
        )
    elif runner.running:
        lines.append(
            (
                Text.assemble(
                    (f"{_bar(done, total)} {done}/{total}", Style(color=MISTAKE)),
                    (f"  {s.engine_name()} {s.time_per_position:g} s/pos · esc stop", Style(dim=True)),
                ),
                3,
            )
        )
    elif runner.error:
        lines.append((Text(f"analysis failed: {runner.error}", Style(color=BLUNDER)), 1))
    elif a is not None and done < total:
        lines.append((Text(f"stopped at {done}/{total} · a resumes", Style(dim=True)), 3))
    else:
        lines.append(
            (Text(f"analysed {done} positions ({s.engine_name()}, {s.time_per_position:g} s/pos)", Style(dim=True)), 3)
        )
    p = runner.at(index)
    if state.is_over:
        diff = state.team_points(Team.ONE) - state.team_points(Team.TWO)
        lines.append((Text(f"game over · final difference {diff:+d} (ONE − TWO)"), 0))
    elif p is None:
        lines.append(
            (Text(f"turn {state.turn}: {'not analysed yet' if runner.running else 'no analysis'}", Style(dim=True)), 0)
        )
    else:
        value = evaluation_at(a, index) if a is not None else None  # the chart's value of this position
        value = p.value if value is None else value
        lines.append((Text(f"turn {p.turn} · {p.color} to move · value {value:+.1f}", Style(bold=True)), 0))
        if p.forced:
            lines.append((Text(f"forced: {_describe(p.played)}"), 0))
        else:
            # the loss first: a long move description is cut at the end of the line, never the verdict
            played = Text.assemble(("played ", Style(dim=True)), f"loss {p.loss:.1f}")
            if p.mark:
                played.append(f" {p.mark}", MARK_STYLE[p.mark])
            played.append(f" · {_describe(p.played)}")
            best = Text.assemble(
                ("best   ", Style(dim=True)), _describe(p.best), "  (= played)" if p.best == p.played else "  (ghost)"
            )
            lines += [(played, 0), (best, 1)]
    if a is not None:
        tally = Text()
        for team in Team:
            sm = a.summaries()[team]
            tally.append(f"{team.name} ", Style(bold=True))
            tally.append(f"{sm.mistakes}", MARK_STYLE[Mark.MISTAKE])
            tally.append(" ? ")
            tally.append(f"{sm.blunders}", MARK_STYLE[Mark.BLUNDER])
            tally.append(f" ??  avg loss {sm.average_loss:.1f}   ")
        tally.rstrip()
        lines.append((tally, 2))
    lines.append((Text("[ ] previous/next mistake · a pane on/off · c chart", Style(dim=True)), 4))
    if max_lines is not None and len(lines) > max_lines:
        keep = sorted(range(len(lines)), key=lambda i: lines[i][1])[: max(max_lines, 1)]
        lines = [lines[i] for i in sorted(keep)]
    t = Text("\n").join(line for line, _rank in lines)
    t.no_wrap, t.overflow = True, "ellipsis"
    return t


class AnalysisPanel(Horizontal, can_focus=True):
    """The analysis of a viewer's game, below its board: the pane (``#analysis``) and the chart (``#chart``), the
    keys that work them (it holds the focus of the viewer: its keys work while neither is shown) and the runner,
    whose news repaint them.

    The viewer hands it the game (``game_changed``) and the state it shows (``show``); it posts ``Changed`` when
    the viewer should repaint (an analysed position: the ghost on the board, the marks in the move list),
    ``PaneSwitched`` when the pane or the chart was switched (the layout fits itself anew: a ``Pane`` of
    ``tui.layout``), ``Jump`` to go to a marked move; the chart's own ``GameChart.Selected`` bubbles through."""

    BINDINGS = [
        Binding(
            "a", "toggle_analysis", "Analysis", tooltip="analysis pane on/off (analyses the game in the background)"
        ),
        Binding("c", "toggle_chart", "Chart", tooltip="chart of the game on/off (click a turn to go there)"),
        Binding(
            "right_square_bracket", "mistake(1)", "Next mistake", show=False, tooltip="the next move marked ? or ??"
        ),
        Binding(
            "left_square_bracket", "mistake(-1)", "Prev mistake", show=False, tooltip="the previous move marked ? or ??"
        ),
        Binding("escape", "stop_analysis", "Stop analysis", show=False, tooltip="stop the analysis (it resumes on a)"),
    ]

    class Changed(Message):
        """The analysis progressed: the viewer repaints."""

    class Jump(Message):
        """Go to the state at ``index`` (the next or previous marked move)."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(
        self,
        timeline: Timeline,
        settings: AnalysisSettings | None = None,
        *,
        cache: AnalysisCache | None = None,
        id: str | None = None,  # noqa: A002
    ) -> None:
        super().__init__(id=id)
        self.timeline = timeline
        self.runner = AnalysisRunner(self, settings, cache if cache is not None else AnalysisCache())
        self.index = 0  # the state the viewer shows
        self._chart_points_stale = True
        self._lines = 0

    def compose(self) -> ComposeResult:
        yield AnalysisPane(id="analysis")
        chart = GameChart(id="chart")
        chart.can_focus = False  # focusable only while shown (toggle_chart)
        yield chart

    def on_unmount(self) -> None:
        """The viewer closes (q back to the game, or quit): the analysis stops; what is done is cached."""
        if self.runner.running:
            self.runner.cancel()

    @on(AnalysisNews)
    def _news(self, news: AnalysisNews) -> None:
        news.stop()
        self.runner.apply(news)
        self._changed()

    def _changed(self) -> None:
        self._chart_points_stale = True
        self.post_message(self.Changed())

    def game_changed(self, *, final: bool) -> None:
        """The viewer's game as it is now (a watched game grows; ``final``: it will not any more)."""
        states = list(self.timeline.states)
        self.runner.set_game(states, [self.timeline.move_before(i + 1) for i in range(len(states))], final=final)
        self._chart_points_stale = True
        if self.runner.analysis is not None:
            self.post_message(self.Changed())

    def _pane(self) -> AnalysisPane:
        return self.query_one("#analysis", AnalysisPane)

    def _chart(self) -> GameChart:
        return self.query_one("#chart", GameChart)

    @property
    def shown(self) -> bool:
        return self._pane().has_class("shown")

    @property
    def wanted(self) -> bool:
        """The pane or the chart is switched on (it shows where the terminal has the lines)."""
        return self._pane().has_class("shown") or self._chart().has_class("shown")

    @property
    def has_lines(self) -> bool:
        return self._lines > 0

    def fit(self, width: int, room: int) -> int:
        """Lines of the analysis area below the board (0 when neither pane nor chart is on, or when fewer than
        ``AREA_MIN`` of the ``room`` the board leaves are free). With no lines it stays displayed, 0 lines high:
        it keeps the focus (a hidden widget loses it), so its keys work while nothing of it is shown."""
        pane_on, chart_on = self._pane().has_class("shown"), self._chart().has_class("shown")
        want = AREA_WITH_CHART if chart_on else AREA_PANE_ONLY if pane_on else 0
        lines = max(0, min(want, room))
        self._lines = lines if lines >= AREA_MIN else 0
        self.styles.height = self._lines
        if self._lines:
            self._pane().styles.width = PANE_WIDTH if chart_on and width >= PANE_WIDTH + 40 else "1fr"
        return self._lines

    def refusal(self, height: int, min_centre_lines: int) -> str:
        """Why the pane or chart asked for does not show in a terminal of ``height`` lines."""
        need = FOOTER + min_centre_lines + AREA_MIN
        return f"The analysis and the chart need a terminal of at least {need} lines (this one has {height})."

    # --- the keys -------------------------------------------------------------------------------------

    def action_toggle_analysis(self) -> None:
        """a: the pane on or off (starting the analysis), or a stopped analysis resumed."""
        pane = self._pane()
        runner = self.runner
        if pane.has_class("shown") and runner.analysis is not None and not runner.running and runner.pending():
            runner.start()  # a stopped analysis: a resumes it, the pane stays
        else:
            pane.toggle_class("shown")
            if pane.has_class("shown") and not runner.running and not runner.complete:
                runner.start()
        self._changed()
        self.post_message(PaneSwitched(self))

    def action_stop_analysis(self) -> None:
        if self.runner.running:
            self.runner.cancel()
            self._changed()
            self.notify("analysis stopped; a resumes it")

    def action_toggle_chart(self) -> None:
        chart = self._chart()
        chart.toggle_class("shown")
        chart.can_focus = chart.has_class("shown")
        if not chart.can_focus and chart.has_focus:
            self.focus()  # the keys stay with the analysis
        self._chart_points_stale = True
        self.post_message(PaneSwitched(self))
        self.show(self.index)

    def action_mistake(self, direction: int) -> None:
        """The next (1) or previous (-1) marked move; where there is none, said why."""
        runner = self.runner
        if runner.analysis is None:
            self.notify("no analysis yet: a analyses the game")
            return
        target = runner.next_marked(self.index, direction)
        if target is None:
            self.notify(
                f"no {'later' if direction > 0 else 'earlier'} mistake" + ("" if runner.complete else " (so far)")
            )
            return
        self.post_message(self.Jump(target))

    # --- what the viewer shows ------------------------------------------------------------------------

    def ghost(self, index: int) -> tuple[tuple[tuple[int, int], ...], Color | None]:
        if not self.shown:
            return (), None
        return ghost_of(self.runner.at(index), self.timeline.states[index])

    def marks(self) -> dict[int, Mark]:
        return self.runner.marks()

    def show(self, index: int) -> None:
        """Pane and chart for the state at ``index`` (called from the viewer's repaint)."""
        self.index = index
        state = self.timeline.states[index]
        pane = self._pane()
        if pane.has_class("shown"):
            pane.show(self.runner, index, state)
        chart = self._chart()
        if chart.has_class("shown"):
            if self._chart_points_stale:
                runner = self.runner
                points = runner.analysis.chart if runner.analysis is not None else None
                if points is None or len(points) < len(self.timeline):
                    points = chart_points(self.timeline.states)
                chart.set_points(points)
                self._chart_points_stale = False
            chart.index = index
