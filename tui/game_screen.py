"""The game screen: shape panels, status, board, move log; keyboard play against the AI or a server."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from functools import partial

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from ai.base import Player, fallback_move
from model.moves import MoveMistake, SetMove
from model.pieces import Color, Shape, Team
from tui.board import Board, BoardView
from tui.colors import DARK, LIGHT
from tui.dialogs import ConfirmScreen, EndScreen, HelpScreen
from tui.messages import AIMoveReady, BoardClicked, BoardHover, BoardWheel, ShapePicked
from tui.session import GameSession, describe_move
from tui.widgets import Feedback, MoveLog, PanelView, ShapePanel, StatusBar, XmlPane

log = logging.getLogger(__name__)

LAYOUT_CSS = """
#main { height: 1fr; }
.side { width: 1fr; min-width: 22; height: 100%; }
.side ShapePanel { margin-bottom: 1; }
#centre { width: 52; height: 100%; }
#centre Board { margin: 0 1; }
#log-column { width: 38; height: 100%; }
#status { height: 4; }
#xml { display: none; height: 14; }
#xml.shown { display: block; }
"""


XML_PANE_MIN_HEIGHT = 44  # terminal lines needed to show the XML pane (14) below the whole board (29)


def responsive_css(screen: str) -> str:
    """Rules that drop columns on small terminals (DEFAULT_CSS is scoped to the screen's type)."""
    return f"""
{screen}.-narrow #log-column {{ display: none; }}
{screen}.-tiny .side {{ display: none; }}
"""


_HUMAN_ACTIONS = ("move", "rotate", "flip", "place", "deselect", "cycle", "pass_turn", "hint", "ai_move")
_DYNAMIC_ACTIONS = ("move", "place", "cycle", "pass_turn", "undo", "hint", "ai_move", "autopilot", "xml", "live")


def fit_layout(screen: Screen, width: int) -> None:
    """Small terminals: drop the move log below 132 columns, the shape panels below 96; a compact footer
    without the palette key below 132, so that "? Help" and "q Quit" stay visible."""
    screen.set_class(width < 132, "-narrow")
    screen.set_class(width < 96, "-tiny")
    for footer in screen.query(Footer):
        if footer.compact != (width < 132):
            footer.compact = width < 132
            footer.show_command_palette = width >= 132
            screen.refresh_bindings()  # the footer only lays its keys out again on a bindings change


def _fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` columns (at least 8) with "…"."""
    width = max(width, 8)
    return text if len(text) <= width else text[: width - 1] + "…"


def open_replay_picker(app) -> None:
    """ctrl+r: choose a replay under replays/ and view it on top of the current screen (q returns)."""
    from tui.dialogs import ReplayPicker
    from tui.replay_screen import ReplayScreen
    from tui.replays import REPLAY_DIR, ReplayError, load_replay

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


def compose_board_layout(below_board: Widget) -> ComposeResult:
    """The three-column layout shared by the game and the replay screen (ux-notes §1)."""
    with Horizontal(id="main"):
        with Vertical(classes="side", id="team-one"):
            yield ShapePanel(Color.BLUE, id="panel-BLUE")
            yield ShapePanel(Color.RED, id="panel-RED")
        with Vertical(id="centre"):
            yield StatusBar(id="status")
            yield Board(id="board")
            yield below_board
        with Vertical(classes="side", id="team-two"):
            yield ShapePanel(Color.YELLOW, id="panel-YELLOW")
            yield ShapePanel(Color.GREEN, id="panel-GREEN")
        with Vertical(id="log-column"):
            yield MoveLog(id="log")
    yield XmlPane(id="xml")
    yield Footer()


class BoardLayoutMixin:
    """Resize and theme handling shared by the screens built with ``compose_board_layout``."""

    def on_resize(self, event) -> None:
        fit_layout(self, event.size.width)

    def _theme_changed(self, _theme=None) -> None:
        for panel in self.query(ShapePanel):
            panel.refresh(layout=True)
        self.query_one(MoveLog).retheme()
        self.refresh_view()


class GameScreen(BoardLayoutMixin, Screen[None]):
    """Plays one game. All game logic is in ``GameSession``; this class maps keys and AI results to it."""

    DEFAULT_CSS = LAYOUT_CSS + responsive_css("GameScreen")
    AUTO_FOCUS = None

    BINDINGS = [
        Binding("left,h", "move(-1,0)", "Move", show=False),
        Binding("right,l", "move(1,0)", "Move", show=False),
        Binding("up,k", "move(0,-1)", "Move", show=False),
        Binding("down,j", "move(0,1)", "Move", show=False),
        Binding("H", "move(-5,0)", "Move 5", show=False),
        Binding("L", "move(5,0)", "Move 5", show=False),
        Binding("K", "move(0,-5)", "Move 5", show=False),
        Binding("J", "move(0,5)", "Move 5", show=False),
        Binding("tab,n", "cycle(1)", "Piece", priority=True),
        Binding("shift+tab,b", "cycle(-1)", "Prev piece", show=False, priority=True),
        Binding("d", "rotate(1)", "Rotate"),
        Binding("a", "rotate(-1)", "Rotate ⟲", show=False),
        Binding("w,s", "rotate(2)", "180°", show=False),
        Binding("f", "flip", "Flip"),
        Binding("enter,space", "place", "Place"),
        Binding("escape", "deselect", "Put back", show=False),
        Binding("P", "pass_turn", "Pass"),
        Binding("u", "undo", "Undo"),
        Binding("i", "hint", "Hint"),
        Binding("m", "ai_move", "AI move"),
        Binding("o", "autopilot", "Autopilot"),
        Binding("v", "overlay", "Overlay", show=False),
        Binding("left_square_bracket", "view(-1)", "View back", show=False),
        Binding("right_square_bracket", "view(1)", "View fwd", show=False),
        Binding("g", "live", "Live", show=False),
        Binding("x", "xml", "XML"),
        Binding("ctrl+s", "save", "Save", show=False),
        Binding("ctrl+r", "open_replay", "Open replay", show=False),
        Binding("question_mark,f1", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(
        self,
        session: GameSession,
        players: dict[Team, Player],
        hint_player: Player | None = None,
        *,
        ai_time: float = 1.0,
        min_delay: float = 0.0,
        network: bool = False,
        title: str = "Blokus",
        save_replay: Callable[[GameScreen], str] | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.players = players
        self.hint_player = hint_player
        self.ai_time = ai_time
        self.min_delay = min_delay
        self.network = network
        self.title_text = title
        self.save_replay_fn = save_replay
        self.clock_deadline: float | None = None  # monotonic deadline of the current move request
        self._ai_purpose: str | None = None
        self._ai_player: Player | None = None
        self._end_shown = False
        self._bindings_signature: tuple = ()

    # --- layout -----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield from compose_board_layout(Feedback(id="feedback"))

    def on_mount(self) -> None:
        fit_layout(self, self.app.size.width)
        if self.network and self.app.size.height >= XML_PANE_MIN_HEIGHT:
            self.query_one(XmlPane).add_class("shown")  # on a shorter terminal it would cover the board
        self.refresh_view()
        self.maybe_start_ai()
        if self.network:
            self.set_interval(0.2, self._tick_clock)
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    # --- painting ---------------------------------------------------------------------------------

    def board_view(self) -> BoardView:
        s = self.session
        shown = s.shown
        last = s.timeline.move_before(s.shown_index)
        ghost_cells: tuple[tuple[int, int], ...] = ()
        status = None
        gs = s.ghost_status()
        if gs is not None and s.ghost is not None:
            ghost_cells = tuple(s.ghost.cells())
            status = gs[0]
        overlay = s.overlay_cells() if s.show_overlay else 0
        return BoardView(
            shown,
            last if isinstance(last, SetMove) else None,
            ghost_cells,
            shown.current_color,
            status,
            overlay,
            shown.current_color,
        )

    def refresh_board(self) -> None:
        self.query_one(Board).show(self.board_view())
        self.query_one(StatusBar).update(self.status_text(), layout=False)

    def refresh_view(self) -> None:
        """Repaint everything from the session (after moves; ghost moves only repaint the board)."""
        s = self.session
        self.refresh_board()
        shown = s.shown
        selected = s.ghost.shape if s.ghost is not None and s.is_live else None
        for color in Color:
            placeable = frozenset(s.placeable_shapes(color)) if shown.is_valid(color) else frozenset()
            self.query_one(f"#panel-{color.name}", ShapePanel).show(PanelView(
                color,
                frozenset(shown.undeployed(color)),
                placeable,
                selected if color == shown.current_color else None,
                not shown.is_over and color == shown.current_color,
                not shown.is_valid(color),
                shown.points(color),
            ))
        fb = self.query_one(Feedback)
        fb.update(s.feedback.text, layout=False)
        fb.set_class(s.feedback.error, "error")
        self.query_one(MoveLog).set_entries(s.timeline.entries, s.shown_index)
        # The footer rebuilds its keys on every refresh_bindings(): only when something changed.
        signature = tuple(self.check_action(a, ()) for a in _DYNAMIC_ACTIONS)
        if signature != self._bindings_signature:
            self._bindings_signature = signature
            self.refresh_bindings()

    def status_text(self) -> Text:
        s = self.session
        st = s.shown
        pal = DARK if self.app.current_theme.dark else LIGHT
        one, two = st.team_points(Team.ONE), st.team_points(Team.TWO)
        t = Text()
        t.append(f"Round {min(st.round, st.season.round_limit)}/{st.season.round_limit} · turn {st.turn}",
                 Style(bold=True))
        t.append(f"    ONE {one} : {two} TWO\n", Style(bold=True))
        if st.is_over:
            t.append("Game over", Style(bold=True))
        else:
            color = st.current_color
            team = color.team
            rest = f" — {color.name} (team {team.name}) to move"
            rest_width = len(rest) + (11 if team in s.autopilot else 0) + (9 if self.clock_deadline else 0)
            t.append(_fit(s.names.get(team, team.name), self._status_width() - rest_width) + " — ")
            t.append(color.name, Style(color=pal.piece(color), bold=True))
            t.append(f" (team {team.name}) to move")
            if team in s.autopilot:
                t.append("  AUTOPILOT", Style(color="#000000", bgcolor="#e8b610", bold=True))
        if self.clock_deadline is not None and s.is_human_turn():
            left = max(0.0, self.clock_deadline - time.monotonic())
            t.append(f"  ⏱ {left:.1f} s", Style(color="#ff6060" if left < 1 else "#e0e0e0", bold=True))
        t.append("\n")
        for i, color in enumerate(Color):
            if i:
                t.append(" · ")
            t.append(f"{color.name} {st.points(color)}", Style(color=pal.piece(color)))
        t.append("\n")
        if not s.is_live:
            t.append(f"VIEW state {s.shown_index} / {len(s.timeline) - 1} — not live; g returns",
                     Style(color="#000000", bgcolor="#e0e0e0", bold=True))
        elif s.ghost is not None and s.is_human_turn():
            g = s.ghost
            gs = s.ghost_status()
            desc = g.shape.name + ("" if g.rotation == 0 else f" {g.rotation.name}") + (" flipped" if g.flipped else "")
            t.append(f"{desc} @ ({g.x},{g.y})")
            if gs is not None:
                colour = {"legal": "#40c060", "not placeable": "#ff6060"}.get(gs[0].value, "#e8b610")
                text = gs[0].value
                if gs[1] is MoveMistake.NOT_ON_BORDER:  # 2027: a first piece goes to the edge, not a corner
                    text = "not on the border"
                t.append(f"  {text}", Style(color=colour, bold=True))
        elif s.is_human_turn():
            t.append("no piece selected — tab/n picks one", Style(color=pal.label))
        elif s.ai_thinking:
            t.append("AI thinking…", Style(color="#e8b610", bold=True))
        elif s.state.is_over or s.end_reason:
            t.append(s.short_outcome(), Style(bold=True))
        elif not st.is_over and s.is_live:
            t.append(self.waiting_text(), Style(color=pal.label))
        return t

    def waiting_text(self) -> str:
        """The last status line while another player is to move."""
        team = self.session.state.current_color.team
        return f"waiting for {_fit(self.session.names.get(team, team.name), 20)} …"

    def _status_width(self) -> int:
        """Columns of one status line (50 in the usual layout, before the first layout too)."""
        width = self.query_one(StatusBar).content_size.width
        return width if width > 0 else 50

    # --- AI ---------------------------------------------------------------------------------------

    def maybe_start_ai(self) -> None:
        s = self.session
        if self._ai_purpose is not None or not s.wants_ai():
            return
        player = self.players.get(s.state.current_team) or self.hint_player
        if player is None:
            return
        self._think(player, "play")

    def _think(self, player: Player, purpose: str) -> None:
        s = self.session
        self._ai_purpose = purpose
        self._ai_player = player
        s.ai_thinking = True
        index = len(s.timeline)
        state = s.state.copy()
        self.run_worker(partial(self._choose, player, state, index, purpose), group="ai", exclusive=True,
                        exit_on_error=False)
        self.refresh_board()

    async def _choose(self, player: Player, state, index: int, purpose: str) -> None:
        started = time.monotonic()
        deadline = started + self.ai_time
        if self.clock_deadline is not None:
            deadline = min(deadline, self.clock_deadline - 0.2)
        try:
            move = await player.choose_move(state, deadline)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # an engine bug must not kill the UI
            log.exception("AI failed")
            self.post_message(AIMoveReady(fallback_move(state), index, f"error:{purpose}:{exc}"))
            return
        if purpose == "play" and self.min_delay:
            wait = self.min_delay - (time.monotonic() - started)
            if wait > 0:
                await asyncio.sleep(wait)
        self.post_message(AIMoveReady(move, index, purpose))

    def cancel_ai(self) -> None:
        if self._ai_player is not None:
            self._ai_player.cancel()
        self.workers.cancel_group(self, "ai")
        self._ai_purpose = None
        self._ai_player = None
        self.session.ai_thinking = False

    @on(AIMoveReady)
    def on_ai_move_ready(self, message: AIMoveReady) -> None:
        s = self.session
        purpose = message.purpose
        self._ai_purpose = None
        self._ai_player = None
        s.ai_thinking = False
        if purpose.startswith("error:"):
            _, purpose, reason = purpose.split(":", 2)
            s.feedback.text, s.feedback.error = f"The AI failed ({reason}); details in the log", True
            if purpose != "play":
                self.refresh_view()
                return
        problem = s.state.validate(message.move) if message.index == len(s.timeline) else None
        if problem is not None and purpose in ("play", "ai_move"):
            log.error("the AI chose an illegal move %s: %s", message.move, problem.name)
            message = AIMoveReady(fallback_move(s.state), message.index, purpose)
            s.feedback.text, s.feedback.error = f"The AI chose an illegal move ({problem.english}); " \
                "a random legal move was played instead", True
        if message.index != len(s.timeline) or not s.is_live and purpose != "play":
            self.refresh_view()  # the game moved on (undo, new state): the answer is stale
            self.maybe_start_ai()
            return
        if purpose == "hint":
            if s.is_human_turn():
                s.show_hint(message.move)
        elif purpose == "play":
            if s.wants_ai():
                if s.make_move(message.move) and not s.feedback.error:
                    s.feedback.text, s.feedback.error = f"AI: {describe_move(message.move)}", False
        elif purpose == "ai_move":
            if s.is_human_turn() and s.make_move(message.move):
                s.feedback.text, s.feedback.error = f"AI played for you: {describe_move(message.move)}", False
        self.after_change()

    def after_change(self) -> None:
        self.refresh_view()
        self.maybe_start_ai()
        self.check_end()

    def check_end(self) -> None:
        s = self.session
        if self._end_shown or not (s.state.is_over or s.end_reason):
            return
        self._end_shown = True
        title, details = self.end_texts()
        self.app.push_screen(EndScreen(title, details), self._end_choice)

    def end_texts(self) -> tuple[str, str]:
        s = self.session
        st = s.state
        one, two = st.team_points(Team.ONE), st.team_points(Team.TWO)
        details = [f"Score: ONE (BLUE+RED) {one} : {two} TWO (YELLOW+GREEN)"]  # the names are in the title
        details.append("   ".join(f"{c.name} {st.points(c)}" for c in Color))
        if s.end_reason:
            details.append(s.end_reason)
        elif st.turn >= st.season.turn_limit:
            details.append(f"Regular end: the round limit ({st.season.round_limit} rounds) was reached.")
        else:
            details.append("Regular end: no colour can place a piece.")
        details.append(f"{len(s.timeline.moves)} moves, final turn {st.turn}.")
        return s.outcome_text(), "\n".join(details)

    def _end_choice(self, choice: str | None) -> None:
        if choice == "quit":
            self.app.exit()
        elif choice == "save":
            self.action_save()

    # --- actions ----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        s = self.session
        human = s.is_human_turn() and s.is_live
        if not s.human_teams() and action in _HUMAN_ACTIONS:
            return False  # --watch: no keys for playing in the footer
        if action in ("move", "rotate", "flip", "place", "deselect"):
            return True if human and s.ghost is not None else None if action != "place" else (human or None)
        if action == "cycle":
            return True if human else None
        if action == "pass_turn":
            return True if s.can_pass() else None
        if action == "undo":
            return True if s.can_undo() else False if not s.local else None
        if action in ("hint", "ai_move"):
            return True if human and self._ai_purpose is None else None
        if action == "autopilot":
            return True if s.human_teams() else False
        if action == "xml":
            return True if self.network else False
        if action == "live":
            return True if not s.is_live else None
        return True

    def _changed_ghost(self, ok: bool) -> None:
        if ok:
            fb = self.session.feedback
            if fb.error and fb.text.startswith("Not allowed"):  # about the old position: stale now
                self.session.feedback = type(fb)()
                self.query_one(Feedback).update("", layout=False)
                self.query_one(Feedback).set_class(False, "error")
            self.refresh_board()

    def action_move(self, dx: int, dy: int) -> None:
        self._changed_ghost(self.session.move_ghost(dx, dy))

    def action_rotate(self, quarter_turns: int) -> None:
        self._changed_ghost(self.session.rotate(quarter_turns))

    def action_flip(self) -> None:
        self._changed_ghost(self.session.flip())

    def action_cycle(self, step: int) -> None:
        self.session.cycle(step)
        self.refresh_view()

    def select_shape(self, shape: Shape) -> None:
        self.session.select(shape)
        self.refresh_view()

    def action_deselect(self) -> None:
        self.session.deselect()
        self.refresh_view()

    def action_place(self) -> None:
        self.session.place()
        self.after_change()

    def action_pass_turn(self) -> None:
        s = self.session
        if not s.can_pass():
            s.pass_turn()  # explains why not
            self.refresh_view()
            return

        def answer(yes: bool | None) -> None:
            if yes:
                s.pass_turn()
                self.after_change()

        self.app.push_screen(ConfirmScreen(f"Pass with {s.state.current_color.name}? "
                                           "(You keep your pieces; the colour stays in the game.)"), answer)

    def action_undo(self) -> None:
        self.cancel_ai()
        self.session.undo()
        self._end_shown = False
        self.after_change()

    def action_hint(self) -> None:
        if self.hint_player is not None and self.session.is_human_turn():
            self.session.feedback.text, self.session.feedback.error = "thinking about a hint…", False
            self._think(self.hint_player, "hint")
            self.refresh_view()

    def action_ai_move(self) -> None:
        if self.hint_player is not None and self.session.is_human_turn():
            self._think(self.hint_player, "ai_move")
            self.refresh_view()

    def action_autopilot(self) -> None:
        s = self.session
        was_on = s.state.current_team in s.autopilot
        s.toggle_autopilot()
        if was_on and self._ai_purpose == "play":
            self.cancel_ai()
        s.begin_turn()
        self.after_change()

    def action_overlay(self) -> None:
        self.session.show_overlay = not self.session.show_overlay
        self.refresh_board()

    def action_view(self, delta: int) -> None:
        self.session.step_view(delta)
        self.refresh_view()

    def action_live(self) -> None:
        self.session.go_live()
        self.refresh_view()

    def action_xml(self) -> None:
        self.query_one(XmlPane).toggle_class("shown")

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    def action_open_replay(self) -> None:
        open_replay_picker(self.app)

    def action_save(self) -> None:
        s = self.session
        if self.save_replay_fn is None:
            s.feedback.text, s.feedback.error = "saving is not available", True
        else:
            try:
                path = self.save_replay_fn(self)
                s.feedback.text, s.feedback.error = f"saved {path}", False
            except Exception as exc:
                log.exception("saving failed")
                s.feedback.text, s.feedback.error = f"saving failed: {exc}", True
        self.refresh_view()

    async def action_quit(self) -> None:
        self.cancel_ai()
        self.app.exit()

    # --- mouse ------------------------------------------------------------------------------------

    @on(BoardHover)
    def _hover(self, msg: BoardHover) -> None:
        g = self.session.ghost
        if g is not None and self.session.is_human_turn():
            g.x, g.y = msg.x, msg.y
            g.clamp()
            self.refresh_board()

    @on(BoardClicked)
    def _click(self, msg: BoardClicked) -> None:
        if msg.button == 3:
            self.action_flip()
        elif msg.button == 1:
            self._hover(BoardHover(msg.x, msg.y))
            self.action_place()

    @on(BoardWheel)
    def _wheel(self, msg: BoardWheel) -> None:
        self.action_rotate(msg.direction)

    @on(ShapePicked)
    def _picked(self, msg: ShapePicked) -> None:
        self.select_shape(msg.shape)

    # --- network clock ----------------------------------------------------------------------------

    def _tick_clock(self) -> None:
        if self.clock_deadline is not None:
            self.query_one(StatusBar).update(self.status_text(), layout=False)

