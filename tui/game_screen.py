"""The game screen: maps keys, mouse and AI answers to the ``GameSession`` and repaints from it.

The game logic is in ``tui.session``, the status lines in ``tui.status``, the AI in ``tui.ai_runner``,
the layout in ``tui.layout``; this class only connects them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding

from ai.base import Player
from model.moves import SetMove
from model.pieces import Color, Shape, Team
from tui.ai_runner import AIRunner
from tui.board import Board, BoardView
from tui.colors import palette_for
from tui.dialogs import ConfirmScreen, EndScreen, HelpScreen, QuitScreen
from tui.layout import BoardLayout, compose_board_layout
from tui.messages import AIMoveReady, AIPurpose, BoardClicked, BoardHover, BoardWheel, ShapePicked
from tui.replay_screen import open_replay_picker
from tui.session import Feedback, GameSession, describe_move
from tui.status import StatusContext, fit, game_status
from tui.widgets import Feedback as FeedbackView
from tui.widgets import MoveLog, PanelView, ShapePanel, StatusBar, XmlPane

log = logging.getLogger(__name__)

# actions whose availability changes with the game (the footer is refreshed when one of them changes)
_DYNAMIC_ACTIONS = ("move", "place", "cycle", "pass_turn", "undo", "hint", "ai_move", "autopilot", "xml", "live")
_PLAYING_ACTIONS = ("move", "rotate", "flip", "place", "deselect", "cycle", "pass_turn", "hint", "ai_move")


class GameScreen(BoardLayout):
    """Plays one game (local, or on a server in ``NetworkGameScreen``)."""

    BINDINGS = [
        Binding("left,h", "move(-1,0)", "Move", show=False, tooltip="move the piece (its top-left corner is the "
                "move's position)"),
        Binding("right,l", "move(1,0)", "Move", show=False),
        Binding("up,k", "move(0,-1)", "Move", show=False),
        Binding("down,j", "move(0,1)", "Move", show=False),
        Binding("H", "move(-5,0)", "Move 5", show=False, tooltip="move the piece by 5 fields"),
        Binding("L", "move(5,0)", "Move 5", show=False),
        Binding("K", "move(0,-5)", "Move 5", show=False),
        Binding("J", "move(0,5)", "Move 5", show=False),
        Binding("tab,n", "cycle(1)", "Piece", priority=True, tooltip="next piece that can be placed now"),
        Binding("shift+tab,b", "cycle(-1)", "Prev piece", show=False, priority=True, tooltip="previous piece"),
        Binding("d", "rotate(1)", "Rotate", tooltip="rotate clockwise"),
        Binding("a", "rotate(-1)", "Rotate ⟲", show=False, tooltip="rotate counter-clockwise"),
        Binding("w,s", "rotate(2)", "180°", show=False, tooltip="rotate by 180°"),
        Binding("f", "flip", "Flip", tooltip="flip (mirror) the piece"),
        Binding("enter,space", "place", "Place", tooltip="place the piece (refused with the rule and the cells "
                "if illegal)"),
        Binding("escape", "deselect", "Put back", show=False, tooltip="put the piece back (none selected)"),
        Binding("P", "pass_turn", "Pass", show=False, tooltip="pass (asks first; never on a colour's first move)"),
        Binding("u", "undo", "Undo", show=False, tooltip="undo: back to your previous turn (local games)"),
        Binding("i", "hint", "Hint", tooltip="hint: the AI's suggestion becomes the ghost"),
        Binding("m", "ai_move", "AI move", tooltip="AI, play this move for me"),
        Binding("o", "autopilot", "Autopilot", tooltip="autopilot on/off: the AI plays your colours"),
        Binding("v", "overlay", "Overlay", show=False, tooltip="overlay of the fields the colour to move can cover"),
        Binding("left_square_bracket", "view(-1)", "View back", show=False, tooltip="view the previous state "
                "(the game goes on)"),
        Binding("right_square_bracket", "view(1)", "View fwd", show=False, tooltip="view the next state"),
        Binding("g", "live", "Live", show=False, tooltip="back to the live game"),
        Binding("x", "xml", "XML", show=False, tooltip="raw XML pane (network games)"),
        Binding("ctrl+s", "save", "Save", show=False, tooltip="save the game as a replay under replays/"),
        Binding("ctrl+r", "open_replay", "Open replay", show=False, tooltip="open a replay from replays/ "
                "(q comes back)"),
        Binding("A", "analyse_game", "Analyse", show=False,
                tooltip="analyse the finished game (replay viewer, q comes back)"),
        Binding("N", "new_game", "New game", show=False, tooltip="new game (local games, after the end)"),
        Binding("question_mark,f1", "help", "Help", tooltip="help with every key"),
        Binding("q", "quit", "Quit", tooltip="quit (asks, and offers to save, while a game is in progress)"),
    ]

    def __init__(
        self,
        session: GameSession,
        players: dict[Team, Player],
        hint_player: Player | None = None,
        *,
        move_time_ms: int = 1000,
        min_delay: float = 0.0,
        title: str = "Blokus",
        save_replay: Callable[[GameScreen], str] | None = None,
        new_game: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.players = players
        self.hint_player = hint_player
        self.ai = AIRunner(self, move_time_ms, min_delay)
        self.title_text = title
        self.save_replay_fn = save_replay
        self.new_game_fn = new_game
        self._end_shown = False
        self._bindings_signature: tuple = ()

    network = False  # NetworkGameScreen: True

    def compose(self) -> ComposeResult:
        yield from compose_board_layout(FeedbackView(id="feedback"))

    def on_mount(self) -> None:
        super().on_mount()
        self.refresh_view()
        self.maybe_start_ai()

    # --- painting ---------------------------------------------------------------------------------

    def board_view(self) -> BoardView:
        s = self.session
        shown = s.shown
        last = s.timeline.move_before(s.shown_index)
        gs = s.ghost_status()
        ghost = tuple(s.ghost.cells()) if gs is not None and s.ghost is not None else ()
        overlay = s.overlay_cells() if s.show_overlay else 0
        return BoardView(shown, last if isinstance(last, SetMove) else None, ghost, shown.current_color,
                         gs[0] if gs is not None else None, overlay, shown.current_color)

    def status_context(self) -> StatusContext:
        width = self.query_one(StatusBar).content_size.width
        return StatusContext(palette_for(self.app), width if width > 0 else 50, waiting=self.waiting_text())

    def waiting_text(self) -> str:
        team = self.session.state.current_color.team
        return f"waiting for {fit(self.session.names.get(team, team.name), 20)} …"

    def refresh_board(self) -> None:
        self.query_one(Board).show(self.board_view())
        self.query_one(StatusBar).show(game_status(self.session, self.status_context()))

    def refresh_view(self) -> None:
        """Repaint everything from the session (after moves; ghost moves only repaint the board)."""
        s = self.session
        self.refresh_board()
        shown = s.shown
        selected = s.ghost.shape if s.ghost is not None and s.is_live else None
        for color in Color:
            placeable = frozenset(s.placeable_shapes(color)) if shown.is_valid(color) else frozenset()
            self.query_one(f"#panel-{color.name}", ShapePanel).show(PanelView(
                color, frozenset(shown.undeployed(color)), placeable,
                selected if color == shown.current_color else None,
                not shown.is_over and color == shown.current_color, not shown.is_valid(color), shown.points(color)))
        fb = self.query_one(FeedbackView)
        fb.update(s.feedback.text)
        fb.set_class(s.feedback.error, "error")
        self.query_one(MoveLog).set_entries(s.timeline.entries, s.shown_index)
        # The footer rebuilds its keys on every refresh_bindings(): only when something changed.
        signature = tuple(self.check_action(a, ()) for a in _DYNAMIC_ACTIONS)
        if signature != self._bindings_signature:
            self._bindings_signature = signature
            self.refresh_bindings()

    def say(self, text: str, error: bool = False) -> None:
        self.session.feedback = Feedback(text, error)
        self.refresh_view()

    # --- AI ---------------------------------------------------------------------------------------

    def maybe_start_ai(self) -> None:
        s = self.session
        if self.ai.busy or not s.wants_ai():
            return
        player = self.players.get(s.state.current_team) or self.hint_player
        if player is not None:
            self.think(player, AIPurpose.PLAY)

    def think(self, player: Player, purpose: AIPurpose) -> None:
        self.session.ai_thinking = True
        self.ai.start(player, self.session.state, len(self.session.timeline), purpose)
        self.refresh_board()

    def cancel_ai(self) -> None:
        self.ai.cancel()
        self.session.ai_thinking = False

    @on(AIMoveReady)
    def on_ai_move_ready(self, message: AIMoveReady) -> None:
        s = self.session
        self.ai.finished()
        s.ai_thinking = False
        purpose = message.purpose
        if message.index != len(s.timeline) or (not s.is_live and purpose is not AIPurpose.PLAY):
            self.refresh_view()  # the game moved on (undo, new state): the answer is stale
            self.maybe_start_ai()
            return
        failed = f"The AI failed ({message.decision.detail}); " if message.failed else ""
        if failed:
            log.error("AI %s: %s", message.decision.source, message.decision.detail)
        if purpose is AIPurpose.HINT:
            if s.is_human_turn():
                s.show_hint(message.move)
        elif purpose is AIPurpose.PLAY:
            if s.wants_ai() and s.make_move(message.move):
                s.feedback = Feedback(f"{failed}AI: {describe_move(message.move)}", bool(failed))
        elif s.is_human_turn() and s.make_move(message.move):
            s.feedback = Feedback(f"{failed}AI played for you: {describe_move(message.move)}", bool(failed))
        self.after_change()

    def after_change(self) -> None:
        self.refresh_view()
        self.maybe_start_ai()
        self.check_end()

    # --- the end ----------------------------------------------------------------------------------

    def check_end(self) -> None:
        s = self.session
        if self._end_shown or not (s.state.is_over or s.end_reason):
            return
        self._end_shown = True
        title, details = self.end_texts()
        self.app.push_screen(EndScreen(title, details, can_save=s.has_game(), can_restart=self.can_restart()),
                             self._end_choice)

    def end_texts(self) -> tuple[str, str]:
        return self.session.outcome_text(), self.session.end_details()

    def can_restart(self) -> bool:
        return self.new_game_fn is not None

    async def _end_choice(self, choice: str | None) -> None:
        if choice == "quit":
            await self.leave()
        elif choice == "save":
            self.action_save()
        elif choice == "new":
            self.action_new_game()

    # --- actions ----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        s = self.session
        human = s.is_human_turn() and s.is_live
        if not s.human_teams() and action in _PLAYING_ACTIONS:
            return False  # --watch: no keys for playing in the footer
        if action in ("move", "rotate", "flip"):
            return True if human and s.ghost is not None else None
        if action in ("place", "cycle", "deselect", "pass_turn"):
            return True if human else None  # on a first move they explain why they cannot be used
        if action == "undo":
            return True if s.can_undo() or not s.local else None  # network games: says that it cannot
        if action in ("hint", "ai_move"):
            return True if human and not self.ai.busy else None
        if action == "autopilot":
            return bool(s.human_teams())
        if action == "xml":
            return True  # local games: says what the pane is for
        if action == "live":
            return True if not s.is_live else None
        if action == "new_game":
            return True if self.can_restart() and (s.state.is_over or s.end_reason) else None
        return True

    def _ghost_changed(self, ok: bool) -> None:
        if ok:
            if self.session.forget_stale_refusal():
                self.query_one(FeedbackView).update("")
                self.query_one(FeedbackView).set_class(False, "error")
            self.refresh_board()

    def action_move(self, dx: int, dy: int) -> None:
        self._ghost_changed(self.session.move_ghost(dx, dy))

    def action_rotate(self, quarter_turns: int) -> None:
        self._ghost_changed(self.session.rotate(quarter_turns))

    def action_flip(self) -> None:
        self._ghost_changed(self.session.flip())

    def action_cycle(self, step: int) -> None:
        self.session.cycle(step)
        self.refresh_view()

    def select_shape(self, shape: Shape) -> None:
        self.session.select(shape)
        self.refresh_view()

    def palette_extras(self) -> list[tuple[str, Callable[[], object], str]]:
        """Command palette: "Select PENTO_X" for every piece that can be placed now."""
        if not self.session.is_human_turn():
            return []
        return [(f"Select {shape.name}", partial(self.select_shape, shape), "pick this piece")
                for shape in sorted(self.session.placeable_shapes())]

    def action_deselect(self) -> None:
        self.session.deselect()  # on a first move: says that the start piece is the only choice
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
            else:
                self.say("not passed")

        self.app.push_screen(ConfirmScreen(f"Pass with {s.state.current_color.name}? "
                                           "(You keep your pieces; the colour stays in the game.)"), answer)

    def action_undo(self) -> None:
        self.cancel_ai()
        if self.session.undo():
            self._end_shown = False
        self.after_change()

    def action_hint(self) -> None:
        if self.hint_player is not None and self.session.is_human_turn():
            self.session.feedback = Feedback("thinking about a hint…")
            self.think(self.hint_player, AIPurpose.HINT)
            self.refresh_view()

    def action_ai_move(self) -> None:
        if self.hint_player is not None and self.session.is_human_turn():
            self.think(self.hint_player, AIPurpose.PLAY_FOR_HUMAN)
            self.refresh_view()

    def action_autopilot(self) -> None:
        s = self.session
        was_on = s.state.current_team in s.autopilot
        s.toggle_autopilot()
        if was_on and self.ai.purpose is AIPurpose.PLAY:
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
        if not self.network:
            self.say("the XML pane shows the messages of network games (and of replays)", True)
            return
        self.query_one(XmlPane).toggle_class("shown")
        self.fit_to(self.app.size.width, self.app.size.height)

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen([("Playing", self.BINDINGS), ("Everywhere", self.app.BINDINGS)]))

    def action_open_replay(self) -> None:
        open_replay_picker(self.app)

    def action_save(self) -> None:
        s = self.session
        if self.save_replay_fn is None or not s.has_game():
            self.say("nothing to save" if self.save_replay_fn else "saving is not available", True)
            return
        try:
            self.say(f"saved {self.save_replay_fn(self)}")
        except Exception as exc:
            log.exception("saving failed")
            self.say(f"saving failed: {exc}", True)

    def action_analyse_game(self) -> None:
        """A finished game in the replay viewer, with the analysis pane open (q comes back here)."""
        s = self.session
        if not s.has_game() or len(s.timeline) < 2:
            self.say("no moves to analyse yet", True)
            return
        if self.game_in_progress():
            self.say("analysis after the game (the AI would share the CPU with it)", True)
            return
        from model.pieces import Team
        from tui.replay_screen import ReplayScreen
        from tui.replays import ReplayData, session_result
        from tui.session import Timeline

        record = Timeline()  # a copy: the game screen's own timeline may go on (new game) meanwhile
        record.states, record.steps = list(s.timeline.states), list(s.timeline.steps)
        names = (s.names.get(Team.ONE, "ONE"), s.names.get(Team.TWO, "TWO"))
        result = getattr(s, "result", None) or session_result(s)
        self.app.push_screen(ReplayScreen(ReplayData(record, names, result), analyse=True))

    def action_new_game(self) -> None:
        if self.new_game_fn is not None:
            self.cancel_ai()
            self.new_game_fn()

    def game_in_progress(self) -> bool:
        s = self.session
        return s.has_game() and len(s.timeline) > 1 and not (s.state.is_over or s.end_reason)

    async def action_quit(self) -> None:
        if not self.game_in_progress():
            await self.leave()
            return

        async def answer(choice: str | None) -> None:
            if choice == "save":
                self.action_save()
                if self.session.feedback.error:
                    return  # not saved: stay, the message says why
            if choice in ("save", "quit"):
                await self.leave()

        question = "The game is not over. Quit anyway?"
        if self.network:
            question += " (Leaving a server game ends it for both players.)"
        self.app.push_screen(QuitScreen(question, can_save=self.save_replay_fn is not None), answer)

    async def leave(self) -> None:
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
