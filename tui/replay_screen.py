"""The replay viewer: step through the states of a game, autoplay, move list, result, analysis; a file, a
finished game, or a game watched live (``blokus watch``).

Built from separate widgets that each show one thing for the state at ``ReplayScreen.index``: the board,
the shape panels, ``ReplayStatus`` (turn, score, the move), ``ReplayResult`` (the result, on the last
state), the move list, the XML pane and the analysis panel; ``ReplayScreen.refresh_view`` hands each the new
position.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import ActiveBinding, Binding, BindingType
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static

from blokus.ai.analysis import AnalysisSettings
from blokus.model import server_texts
from blokus.model.convert import state_to_message
from blokus.model.messages import to_xml
from blokus.model.moves import SetMove
from blokus.model.pieces import Color, Team
from blokus.model.text import printable
from blokus.tui.analysis_view import AnalysisPanel
from blokus.tui.board import Board, BoardView, Scale
from blokus.tui.chart import GameChart
from blokus.tui.colors import palette_for
from blokus.tui.dialogs import HelpScreen, ReplayPicker, TurnScreen
from blokus.tui.jobs import Jobs
from blokus.tui.keys import in_order
from blokus.tui.layout import CENTRE_MIN, COMPACT_STATUS_LINES, BoardLayout, shortest_status
from blokus.tui.replays import REPLAY_DIR, ReplayData, ReplayError, load_replay, record_note, record_parts, result_texts
from blokus.tui.server_link import GameEnded, LinkClosed, ServerComplained, StateArrived, WatchLink
from blokus.tui.session import GhostStatus, describe_move
from blokus.tui.status import WIDE, pack
from blokus.tui.widgets import MoveLog, PanelView, StatusBar, XmlPane

SPEEDS = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)  # turns per second


def open_replay_picker(app: App) -> None:
    """ctrl+r: choose a replay under replays/ and view it on top of the current screen (q returns)."""

    def chosen(path) -> None:
        if path is None:
            return
        try:
            data = load_replay(path)
        except ReplayError as exc:
            app.notify(str(exc), severity="error")
            return
        app.push_screen(ReplayScreen(data))

    app.push_screen(ReplayPicker(REPLAY_DIR), chosen)


class ReplayStatus(StatusBar):
    """Short lines: players, turn, score, the move that led here, its record (a saved game's: the time, what the
    engine reported), autoplay. Where fewer lines are left above the board (``max_lines``), the less needed ones go
    first: the rest of the record, autoplay, the points of each colour, the players; the turn, the score, the move
    and the first line of its record stay longest."""

    def show_state(
        self, replay: ReplayData, index: int, speed: float, autoplaying: bool, max_lines: int | None = None
    ) -> None:
        timeline = replay.timeline
        st = timeline.states[index]
        pal = palette_for(self.app)
        names = replay_names(replay)
        width = self.content_size.width or 46
        wide = width >= WIDE
        warning = Text()
        if replay.truncated:
            warning.append("file cut off · ", Style(color=pal.bad, bold=True))
        if replay.unreadable_states:
            warning.append(f"{unreadable_text(replay)} · ", Style(color=pal.bad, bold=True))
        if replay.live:
            warning.append("LIVE ", Style(color=pal.bad, bold=True))
        kind = f"{'Watching' if replay.live else 'Replay'} {st.season.name}"
        head = Text.assemble(warning, (f"{kind} — {names[Team.ONE]} vs {names[Team.TWO]}", Style(bold=True)))
        # one count on screen: the states of the file (← → step them); the turn is the game's number of this state
        # (it counts the colours that were skipped too, so "turn 0 / 12" beside "state 1/11" read as a contradiction)
        turn = (
            [Text(f"Turn {st.turn}"), Text(f"round {st.round}")] if wide else [Text(f"Round {st.round} · t {st.turn}")]
        )
        if st.is_over:
            turn.append(Text("game over"))
        else:
            turn.append(Text.assemble("next: ", (st.color.name, Style(color=pal.piece_text(st.color), bold=True))))
        score = Text(f"ONE {st.team_points(Team.ONE)} : {st.team_points(Team.TWO)} TWO", Style(bold=True))
        points = Text("  ".join(f"{c.name[0]} {st.points(c)}" for c in Color), Style(color=pal.label))
        move = timeline.move_before(index)
        if move is None:
            what = Text("start of the game" if index == 0 else "—")
        else:
            what = Text.assemble(
                "move: " if wide else "", (describe_move(move), Style(color=pal.piece_text(move.color), bold=True))
            )
        # a long move ("YELLOW PENTO_S 270° flipped @ (12,13)") takes two lines where one would cut it
        if len(what) > width and " @ " in what.plain:
            piece, where = what.divide([what.plain.index(" @ "), what.plain.index(" @ ") + 1])[::2]
            whats = pack([piece, where], width, " ")
        else:
            whats = [what]
        # the saved game's record of that move: its time and what the engine reported (where the file has them)
        event_turn = timeline.turn_of_move_before(index)
        record = replay.records.get(event_turn) if event_turn is not None else None
        records = [] if record is None else pack([Text(p, Style(color=pal.label)) for p in record_parts(record)], width)
        if autoplaying:
            play = Text(f"▶ autoplay {speed:g} turns/s", Style(color=pal.warn))
        elif replay.live:  # a watched game: the view follows the newest state unless the user stepped back
            behind = "stepped back · end follows live" if wide else "stepped back · end"
            play = Text("following live" if index == len(timeline) - 1 else behind, Style(color=pal.label))
        else:
            play = Text(f"paused (autoplay {speed:g} turns/s)" if wide else "paused", Style(color=pal.label))
        # (line, rank): where the lines are few, the highest ranks are dropped first (rank 0 stays longest)
        lines = [(head, 2 if warning else 4), *((t, 0) for t in pack(turn, width))]
        lines += [(t, 1 if i == 0 else 3) for i, t in enumerate(pack([score, points], width, "   "))]
        lines += [
            *((t, 1) for t in whats),
            *((t, 2 if i == 0 else 6) for i, t in enumerate(records)),  # the rest of the record goes first
            *(
                (t, 5)
                for t in pack([Text(f"state {index + 1} of {len(timeline)}", Style(color=pal.label)), play], width)
            ),
        ]
        if max_lines is not None and len(lines) > max_lines:
            keep = sorted(range(len(lines)), key=lambda i: lines[i][1])[: max(max_lines, 1)]
            lines = [lines[i] for i in sorted(keep)]
        super().show(Text("\n").join(line for line, _rank in lines))


class ReplayResult(Static):
    """The result and its reason, shown on the last state."""

    lines = 1  # terminal lines the text takes at the widget's width (the status gives way to it)

    def show_state(self, replay: ReplayData, index: int, width: int) -> None:
        """``width``: the centre column's columns (the widget's own padding is taken off)."""
        if index != len(replay.timeline) - 1 or (replay.live and replay.result is None):
            self.update("")  # not the end, or a live game that goes on
            self.lines = 1
            return
        title, lines = result_texts(replay.result, replay.timeline.states[index], replay_names(replay))
        columns = max(width - self.styles.gutter.width, 1)
        if len(title) > columns:  # a narrow column (80x24): the status line's short title, no points per colour
            title, lines = result_texts(replay.result, replay.timeline.states[index], replay_names(replay), True)
        text = Text()
        text.append(title + "\n", Style(bold=True, color=palette_for(self.app).good))
        text.append("\n".join(lines))
        self.update(text)
        self.lines = len(text.wrap(self.app.console, columns))


def unreadable_text(replay: ReplayData) -> str:
    n = replay.unreadable_states
    return f"{n} state{'s' if n != 1 else ''} unreadable"


def replay_names(replay: ReplayData) -> dict[Team, str]:
    return {Team.ONE: replay.names[0] or "ONE", Team.TWO: replay.names[1] or "TWO"}


# The viewer's keys; the analysis's are its panel's (``AnalysisPanel.BINDINGS``), listed after them.
REPLAY_BINDINGS: list[BindingType] = [
    Binding("left,h", "step(-1)", "Back", tooltip="one state back"),
    Binding("right,l", "step(1)", "Forward", tooltip="one state forward"),
    Binding("up,k", "step(-4)", "Back 4", show=False, tooltip="four states (one round) back"),
    Binding("down,j", "step(4)", "Fwd 4", show=False, tooltip="four states (one round) forward"),
    Binding("home", "jump(0)", "Start", show=False, tooltip="the first state"),
    Binding("end", "jump(-1)", "End", show=False, tooltip="the last state, with the result"),
    Binding("t", "goto", "Go to turn", tooltip="go to turn … (the first state with that turn or later)"),
    Binding("space", "autoplay", "Autoplay", tooltip="autoplay on/off"),
    Binding("plus,equals_sign", "speed(1)", "Faster", show=False, tooltip="autoplay faster"),
    Binding("minus", "speed(-1)", "Slower", show=False, tooltip="autoplay slower"),
    Binding("x", "xml", "XML", show=False, tooltip="the XML of the current state"),
    Binding("ctrl+r", "open_replay", "Open", show=False, tooltip="open another replay from replays/"),
    Binding("question_mark,f1", "help", "Help", tooltip="help with every key"),
    Binding("q", "quit", "Quit", tooltip="quit (back to the game when opened from one)"),
]
VIEWER_BINDINGS: list[BindingType] = [*REPLAY_BINDINGS, *AnalysisPanel.BINDINGS]  # the README's table
SAVE_LIVE = Binding("ctrl+s", "save", "Save", tooltip="save the game so far as a replay under replays/")


class ReplayScreen(Screen):
    """Steps through a game: a file, a finished game (``analyse``: with its analysis open), or a game watched live
    (``link``: its record grows while it is shown; the view follows the newest state unless the user stepped back,
    ``end`` follows again). Made of the board layout (``tui.layout``) and the analysis panel
    (``tui.analysis_view``), which tell it by messages what happened."""

    AUTO_FOCUS = None
    BINDINGS = [*REPLAY_BINDINGS, SAVE_LIVE]

    index: reactive[int] = reactive(0, init=False)

    def __init__(
        self,
        replay: ReplayData,
        start_turn: int | None = None,
        *,
        analyse: bool = False,
        analysis_settings: AnalysisSettings | None = None,
        link: WatchLink | None = None,
    ) -> None:
        super().__init__()
        self.analyse_at_start = analyse
        self.replay = replay
        self.timeline = replay.timeline
        self.analysis_settings = analysis_settings
        self.link = link
        self.live = link is not None  # the connection of a watched game is open
        self.speed_index = SPEEDS.index(1.0)
        self._timer: Timer | None = None
        self._start = 0 if start_turn is None else self.timeline.index_of_turn(start_turn)
        if link is not None:
            self._start = len(self.timeline) - 1
        self._shown_states = len(self.timeline)

    def compose(self) -> ComposeResult:
        analysis = AnalysisPanel(self.timeline, self.analysis_settings, id="analysis-area")
        min_centre = COMPACT_STATUS_LINES + Scale.HALF.size[1] + 1  # the shortest status, the board, the result
        status, result = ReplayStatus(id="status"), ReplayResult(id="result")
        yield BoardLayout(result, status=status, panes=[analysis], min_centre_lines=min_centre, letters=True)

    @property
    def board_layout(self) -> BoardLayout:
        return self.query_one(BoardLayout)

    @property
    def analysis(self) -> AnalysisPanel:
        return self.query_one(AnalysisPanel)

    def keys(self) -> list[BindingType]:
        """The viewer's keys, in the order of the help screen and the footer."""
        return [*VIEWER_BINDINGS, *([SAVE_LIVE] if self.link is not None else [])]

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """The footer's keys in the order of the help screen: the viewer's, then the analysis's (Textual lists the
        focused widget's first, and the focus rests on the analysis panel, whose keys work while it is hidden)."""
        return in_order(super().active_bindings, self.keys())

    def on_mount(self) -> None:
        analysis = self.analysis
        analysis.game_changed(final=not self.replay.live)
        analysis.focus()
        if self.analyse_at_start:
            analysis.action_toggle_analysis()
        self.index = self._start
        self.refresh_view()
        if self.replay.unreadable_states:
            self.notify(
                f"{unreadable_text(self.replay)} and not shown; the first: {self.replay.first_unreadable}",
                severity="warning",
                timeout=15,
            )
        if self.replay.records_error is not None:
            self.notify(f"move records not shown: {self.replay.records_error}", severity="warning", timeout=15)
        if self.link is not None:
            self.link.start(Jobs(self))
            self.notify(f"watching room {self.link.watcher.room_id} live", timeout=4)

    # --- painting ---------------------------------------------------------------------------------

    @property
    def autoplaying(self) -> bool:
        return self._timer is not None

    def watch_index(self, _old: int, _new: int) -> None:
        self.refresh_view()

    def refresh_view(self) -> None:
        """Hand the state at ``index`` to every widget."""
        i = self.index
        st = self.timeline.states[i]
        move = self.timeline.move_before(i)
        analysis = self.analysis
        ghost, ghost_color = analysis.ghost(i)
        self.query_one(Board).show(
            BoardView(
                st,
                move if isinstance(move, SetMove) else None,
                ghost,
                ghost_color,
                GhostStatus.LEGAL if ghost else None,
            )
        )
        self.board_layout.show_panels(PanelView.of_state(st, color) for color in Color)
        plan = self.board_layout.plan  # None until the first fit to the terminal
        self.query_one(ReplayResult).show_state(self.replay, i, plan.centre if plan else CENTRE_MIN)
        self.refresh_status()
        log = self.query_one(MoveLog)
        log.set_marks(analysis.marks())
        log.set_notes({turn: record_note(record) for turn, record in self.replay.records.items()})
        log.set_entries(self.timeline.entries, i if i > 0 else None)
        analysis.show(i)
        self._show_xml()

    def refresh_status(self) -> None:
        """The status in the lines the board and the result leave (at least its shortest form)."""
        status_room, least = self.board_layout.status_room, shortest_status(self.board_layout.plan)
        room = None if status_room is None else max(least, status_room - (self.query_one(ReplayResult).lines - 1))
        self.query_one(ReplayStatus).show_state(
            self.replay, self.index, SPEEDS[self.speed_index], self.autoplaying, room
        )

    def _show_xml(self) -> None:
        """The state as the server would send it (memento XML), when the pane is shown."""
        pane = self.query_one(XmlPane)
        if not pane.has_class("shown"):
            return
        st = self.timeline.states[self.index]
        pane.clear_options()
        pane.count = 0
        pane.border_title = f"XML of state {self.index + 1} (turn {st.turn})"
        pane.add_message("in", to_xml(state_to_message(st, self.replay.room_id, self.replay.names), pretty=True))
        pane.highlighted = None
        pane.scroll_home(animate=False)

    # --- what the analysis and the link tell ------------------------------------------------------------

    @on(AnalysisPanel.Changed)
    def _repaint(self) -> None:
        self.refresh_view()

    @on(BoardLayout.Fitted)
    def _fitted(self) -> None:
        if self.focused is None:  # the analysis's keys work only with the focus in its panel
            self.analysis.focus()
        self.refresh_view()

    @on(AnalysisPanel.Jump)
    def _jump(self, message: AnalysisPanel.Jump) -> None:
        self.index = message.index

    def on_game_chart_selected(self, message: GameChart.Selected) -> None:
        self.index = message.index

    @on(StateArrived)
    def _states_added(self) -> None:
        """The watched record grew: follow the newest state, unless the user stepped back."""
        following = self.index >= self._shown_states - 1
        self._shown_states = len(self.timeline)
        self.analysis.game_changed(final=False)
        if following:
            self.index = len(self.timeline) - 1  # refreshes the view
        else:
            self.refresh_view()

    @on(GameEnded)
    def _game_ended(self, news: GameEnded) -> None:
        self.replay.result = news.result
        self.analysis.game_changed(final=True)
        self.refresh_view()

    @on(ServerComplained)
    def _server_complained(self, news: ServerComplained) -> None:
        self.notify(f"server: {printable(server_texts.shown(news.text))}", severity="warning", timeout=8)

    @on(LinkClosed)
    def _link_closed(self, news: LinkClosed) -> None:
        self.live = self.replay.live = False
        if self.replay.result is None:
            self.notify(f"{printable(news.reason)} (before the game was over)", severity="error", timeout=12)
        self.analysis.game_changed(final=True)
        self.refresh_view()

    # --- actions ----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.link is not None if action == "save" else True

    def action_step(self, delta: int) -> None:
        self.index = max(0, min(self.index + delta, len(self.timeline) - 1))

    def action_jump(self, where: int) -> None:
        self.index = where if where >= 0 else len(self.timeline) - 1

    def action_goto(self) -> None:
        def go(turn: int | None) -> None:
            if turn is not None:
                self.goto_turn(turn)

        self.app.push_screen(TurnScreen(), go)

    def goto_turn(self, turn: int) -> None:
        self.index = self.timeline.index_of_turn(turn)

    def action_autoplay(self) -> None:
        if self._timer is not None:
            self._stop_autoplay()
        else:
            if self.index >= len(self.timeline) - 1:
                self.index = 0
            self._timer = self.set_interval(1 / SPEEDS[self.speed_index], self._tick)
        self.refresh_status()

    def _stop_autoplay(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _tick(self) -> None:
        if self.index >= len(self.timeline) - 1:
            self._stop_autoplay()
            self.refresh_status()
            return
        self.index += 1

    def action_speed(self, delta: int) -> None:
        self.speed_index = max(0, min(self.speed_index + delta, len(SPEEDS) - 1))
        if self._timer is not None:
            self._timer.stop()
            self._timer = self.set_interval(1 / SPEEDS[self.speed_index], self._tick)
        self.refresh_status()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen([("Replays", self.keys()), ("Everywhere", self.app.BINDINGS)]))

    def action_xml(self) -> None:
        self.board_layout.toggle_xml()
        self._show_xml()

    def action_open_replay(self) -> None:
        open_replay_picker(self.app)

    def action_save(self) -> None:
        if self.link is None:
            return
        try:
            path = self.link.save(REPLAY_DIR)
        except OSError as exc:
            self.notify(f"cannot save: {exc.strerror or exc}", severity="error")
            return
        self.notify(f"saved {path}")

    def action_quit(self) -> None:
        self._stop_autoplay()
        if getattr(self.app, "main_screen", None) is not self and len(self.app.screen_stack) > 1:
            self.app.pop_screen()  # opened from a game or another replay: back to it
        else:
            self.app.exit(0)
