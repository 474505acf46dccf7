"""The replay viewer: step through the states of a game, autoplay, move list, result."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static

from model.moves import SetMove
from model.pieces import Color, Team
from tui.board import Board, BoardView
from tui.colors import DARK, LIGHT
from tui.dialogs import HelpScreen, TurnScreen
from tui.game_screen import LAYOUT_CSS, BoardLayoutMixin, compose_board_layout, fit_layout, responsive_css
from tui.replays import ReplayData, result_texts
from tui.widgets import MoveLog, PanelView, ShapePanel, StatusBar, XmlPane

SPEEDS = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)  # turns per second


class ReplayScreen(BoardLayoutMixin, Screen[None]):
    DEFAULT_CSS = LAYOUT_CSS + responsive_css("ReplayScreen") + """
    #result { height: auto; padding: 0 1; }
    #status { height: 5; }
    """
    AUTO_FOCUS = None

    BINDINGS = [
        Binding("left,h", "step(-1)", "Back"),
        Binding("right,l", "step(1)", "Forward"),
        Binding("up,k", "step(-4)", "Back 4", show=False),
        Binding("down,j", "step(4)", "Fwd 4", show=False),
        Binding("home", "jump(0)", "Start"),
        Binding("end", "jump(-1)", "End"),
        Binding("t", "goto", "Go to turn"),
        Binding("space", "autoplay", "Autoplay"),
        Binding("plus,equals_sign", "speed(1)", "Faster"),
        Binding("minus", "speed(-1)", "Slower"),
        Binding("x", "xml", "XML", show=False),
        Binding("ctrl+r", "open_replay", "Open", show=False),
        Binding("question_mark,f1", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    index: reactive[int] = reactive(0, init=False)

    def __init__(self, replay: ReplayData, start_turn: int | None = None) -> None:
        super().__init__()
        self.replay = replay
        self.timeline = replay.timeline
        self.speed_index = SPEEDS.index(1.0)
        self._timer: Timer | None = None
        names = replay.names
        self.names = {Team.ONE: names[0] or "ONE", Team.TWO: names[1] or "TWO"}
        self._start = 0 if start_turn is None else self.timeline.index_of_turn(start_turn)

    def compose(self) -> ComposeResult:
        yield from compose_board_layout(Static(id="result"))

    def on_mount(self) -> None:
        fit_layout(self, self.app.size.width)
        log = self.query_one(MoveLog)
        log.border_title = "Moves"
        self.index = self._start
        self.refresh_view()
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)
        if self.replay.unreadable_states:
            self.notify(f"{self.unreadable_text()} and not shown; the first: {self.replay.first_unreadable}",
                        severity="warning", timeout=15)

    def unreadable_text(self) -> str:
        n = self.replay.unreadable_states
        return f"{n} state{'s' if n != 1 else ''} unreadable"

    @property
    def autoplaying(self) -> bool:
        return self._timer is not None

    def watch_index(self, _old: int, _new: int) -> None:
        self.refresh_view()

    def refresh_view(self) -> None:
        i = self.index
        st = self.timeline.states[i]
        move = self.timeline.move_before(i)
        self.query_one(Board).show(BoardView(st, move if isinstance(move, SetMove) else None))
        for color in Color:
            self.query_one(f"#panel-{color.name}", ShapePanel).show(PanelView(
                color, frozenset(st.undeployed(color)),
                frozenset(st.undeployed(color)) if st.is_valid(color) else frozenset(), None,
                not st.is_over and color == st.current_color, not st.is_valid(color), st.points(color)))
        self.query_one(StatusBar).update(self.status_text(), layout=False)
        self.query_one(MoveLog).set_entries(self.timeline.entries, i if i > 0 else None)
        self._show_xml()
        last = len(self.timeline) - 1
        result = self.query_one("#result", Static)
        if i == last:
            title, lines = result_texts(self.replay.result, st, self.names)
            text = Text()
            text.append(title + "\n", Style(bold=True, color="#40c060"))
            text.append("\n".join(lines))
            result.update(text)
        else:
            result.update("")

    def status_text(self) -> Text:
        """Five short lines that fit the 50-column centre (never wrapped: see ``StatusBar``)."""
        i = self.index
        st = self.timeline.states[i]
        last = self.timeline.states[-1]
        pal = DARK if self.app.current_theme.dark else LIGHT
        t = Text()
        if self.replay.truncated:
            t.append("file cut off · ", Style(color="#ff6060", bold=True))
        if self.replay.unreadable_states:
            t.append(f"{self.unreadable_text()} · ", Style(color="#ff6060", bold=True))
        t.append(f"Replay — {self.names[Team.ONE]} vs {self.names[Team.TWO]}\n", Style(bold=True))
        t.append(f"Turn {st.turn} / {last.turn} · round {st.round}")
        if st.is_over:
            t.append(" · game over")
        else:
            t.append(" · next: ")
            t.append(st.current_color.name, Style(color=pal.piece(st.current_color), bold=True))
        t.append("\n")
        t.append(f"ONE {st.team_points(Team.ONE)} : {st.team_points(Team.TWO)} TWO", Style(bold=True))
        t.append("   " + "  ".join(f"{c.name[0]} {st.points(c)}" for c in Color), Style(color=pal.label))
        t.append("\n")
        move = self.timeline.move_before(i)
        if move is None:
            t.append("start of the game" if i == 0 else "—")
        else:
            from tui.session import describe_move

            t.append("move: ")
            t.append(describe_move(move), Style(color=pal.piece(move.color), bold=True))
        t.append("\n")
        t.append(f"state {i + 1}/{len(self.timeline)} · ", Style(color=pal.label))
        speed = f"{SPEEDS[self.speed_index]:g} turns/s"
        if self.autoplaying:
            t.append(f"▶ autoplay {speed}", Style(color="#e8b610"))
        else:
            t.append(f"paused (autoplay {speed})", Style(color=pal.label))
        return t

    # --- actions ----------------------------------------------------------------------------------

    def action_step(self, delta: int) -> None:
        self.index = max(0, min(self.index + delta, len(self.timeline) - 1))

    def action_jump(self, where: int) -> None:
        self.index = where if where >= 0 else len(self.timeline) - 1

    def action_goto(self) -> None:
        def go(turn: int | None) -> None:
            if turn is not None:
                self.index = self.timeline.index_of_turn(turn)

        self.app.push_screen(TurnScreen(), go)

    def goto_turn(self, turn: int) -> None:
        self.index = self.timeline.index_of_turn(turn)

    def action_autoplay(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        else:
            if self.index >= len(self.timeline) - 1:
                self.index = 0
            self._timer = self.set_interval(1 / SPEEDS[self.speed_index], self._tick)
        self.query_one(StatusBar).update(self.status_text(), layout=False)

    def _tick(self) -> None:
        if self.index >= len(self.timeline) - 1:
            if self._timer is not None:
                self._timer.stop()
                self._timer = None
            self.query_one(StatusBar).update(self.status_text(), layout=False)
            return
        self.index += 1

    def action_speed(self, delta: int) -> None:
        self.speed_index = max(0, min(self.speed_index + delta, len(SPEEDS) - 1))
        if self._timer is not None:
            self._timer.stop()
            self._timer = self.set_interval(1 / SPEEDS[self.speed_index], self._tick)
        self.query_one(StatusBar).update(self.status_text(), layout=False)

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    def action_xml(self) -> None:
        self.query_one(XmlPane).toggle_class("shown")
        self._show_xml()

    def _show_xml(self) -> None:
        """The state as the server would send it (memento XML), when the pane is shown."""
        pane = self.query_one(XmlPane)
        if not pane.has_class("shown"):
            return
        from model.convert import state_to_message
        from model.messages import to_xml

        st = self.timeline.states[self.index]
        pane.clear_options()
        pane.count = 0
        pane.border_title = f"XML of state {self.index + 1} (turn {st.turn})"
        pane.add_message("in", to_xml(state_to_message(st, self.replay.room_id, self.replay.names), pretty=True))
        pane.highlighted = None
        pane.scroll_home(animate=False)

    def action_open_replay(self) -> None:
        from tui.game_screen import open_replay_picker

        open_replay_picker(self.app)

    def action_quit(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        if getattr(self.app, "main_screen", None) is not self and len(self.app.screen_stack) > 1:
            self.app.pop_screen()  # opened from a game or another replay: back to it
        else:
            self.app.exit(0)
