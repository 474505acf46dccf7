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
from textual.binding import Binding, BindingType

from ai.base import Player
from model.pieces import Color, Team
from model.result import EndTexts
from tui.ai_runner import AIRunner
from tui.board import Board, BoardView
from tui.colors import palette_for
from tui.dialogs import ConfirmScreen, EndScreen
from tui.layout import BoardLayout, compose_board_layout
from tui.menu_actions import GameMenuActions
from tui.messages import AIMoveReady, AIPurpose, GhostMoved, Placed, PlacementChanged, ShapePicked
from tui.placing_board import PLACING_BINDINGS, PlacingBoard
from tui.session import Feedback, GameSession
from tui.status import StatusContext, fit, game_status
from tui.widgets import FeedbackView, MoveLog, PanelView, ShapePanel, StatusBar

log = logging.getLogger(__name__)

# actions whose availability changes with the game (the footer is refreshed when one of them changes)
_DYNAMIC_ACTIONS = ("pass_turn", "undo", "hint", "ai_move", "autopilot", "xml", "live")
_BOARD_ACTIONS = ("move", "place", "cycle")  # the board's (tui.placing_board)


# The keys of a game besides the piece's (``PLACING_BINDINGS``, on the board); the help screen, the command
# palette and the README key table come from both.
SCREEN_BINDINGS: list[BindingType] = [
    Binding("P", "pass_turn", "Pass", show=False, tooltip="pass (asks first; never on a colour's first move)"),
    Binding("u", "undo", "Undo", show=False, tooltip="undo: back to your previous turn (local games)"),
    Binding("i", "hint", "Hint", tooltip="hint: the AI's suggestion becomes the ghost"),
    Binding("m", "ai_move", "AI move", tooltip="AI, play this move for me"),
    Binding("o", "autopilot", "Autopilot", tooltip="autopilot on/off: the AI plays your colours"),
    Binding("v", "overlay", "Overlay", show=False, tooltip="overlay of the fields the colour to move can cover"),
    Binding(
        "left_square_bracket", "view(-1)", "View back", show=False, tooltip="view the previous state (the game goes on)"
    ),
    Binding("right_square_bracket", "view(1)", "View fwd", show=False, tooltip="view the next state"),
    Binding("g", "live", "Live", show=False, tooltip="back to the live game"),
    Binding("x", "xml", "XML", show=False, tooltip="raw XML pane (network games)"),
    Binding("ctrl+s", "save", "Save", show=False, tooltip="save the game as a replay under replays/"),
    Binding("ctrl+r", "open_replay", "Open replay", show=False, tooltip="open a replay from replays/ (q comes back)"),
    Binding(
        "A", "analyse_game", "Analyse", show=False, tooltip="analyse the finished game (replay viewer, q comes back)"
    ),
    Binding("N", "new_game", "New game", show=False, tooltip="new game (local games, after the end)"),
    Binding("question_mark,f1", "help", "Help", tooltip="help with every key"),
    Binding("q", "quit", "Quit", tooltip="quit (asks, and offers to save, while a game is in progress)"),
]


GAME_BINDINGS: list[BindingType] = [*PLACING_BINDINGS, *SCREEN_BINDINGS]


class GameScreen(GameMenuActions, BoardLayout):
    """Plays one game (local, or on a server in ``NetworkGameScreen``)."""

    BINDINGS = SCREEN_BINDINGS

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
        ponder: bool = False,
    ) -> None:
        super().__init__()
        self.session = session
        self.ai = AIRunner(self, session, players, hint_player, move_time_ms, min_delay, ponder)
        self.title_text = title
        self.save_replay_fn = save_replay
        self.new_game_fn = new_game
        self._end_shown = False
        self._bindings_signature: tuple = ()

    network = False  # NetworkGameScreen: True

    def compose(self) -> ComposeResult:
        yield from compose_board_layout(FeedbackView(id="feedback"), board=PlacingBoard(id="board"))

    def on_mount(self) -> None:
        super().on_mount()
        board = self.query_one(PlacingBoard)
        board.attach(self.session)
        board.focus()  # the piece's keys live on the board
        self.refresh_view()
        self.ai.maybe_start()
        self.refresh_board()  # "AI thinking…"
        self.check_end()  # a game that is already over (loaded, or played to the end before)

    # --- painting ---------------------------------------------------------------------------------

    def status_context(self) -> StatusContext:
        width = self.query_one(StatusBar).content_size.width
        return StatusContext(palette_for(self.app), width if width > 0 else 50, waiting=self.waiting_text())

    def waiting_text(self) -> str:
        team = self.session.state.current_color.team
        return f"waiting for {fit(self.session.names.get(team, team.name), 20)} …"

    def refresh_board(self) -> None:
        self.query_one(Board).show(BoardView.of_session(self.session))
        self.query_one(StatusBar).show(game_status(self.session, self.status_context()))

    def refresh_view(self) -> None:
        """Repaint everything from the session (after moves; ghost moves only repaint the board)."""
        s = self.session
        self.refresh_board()
        shown = s.shown
        selected = s.ghost.shape if s.ghost is not None and s.is_live else None
        for color in Color:
            placeable = frozenset(s.placing.placeable_shapes(color)) if shown.is_valid(color) else frozenset()
            self.query_one(f"#panel-{color.name}", ShapePanel).show(
                PanelView(
                    color,
                    frozenset(shown.undeployed(color)),
                    placeable,
                    selected if color == shown.current_color else None,
                    not shown.is_over and color == shown.current_color,
                    not shown.is_valid(color),
                    shown.points(color),
                )
            )
        self.show_feedback()
        self.query_one(MoveLog).set_entries(s.timeline.entries, s.shown_index)
        # The footer rebuilds its keys on every refresh_bindings(): only when something changed.
        board = self.query_one(PlacingBoard)
        signature = tuple(self.check_action(a, ()) for a in _DYNAMIC_ACTIONS) + tuple(
            board.check_action(a, ()) for a in _BOARD_ACTIONS
        )
        if signature != self._bindings_signature:
            self._bindings_signature = signature
            self.refresh_bindings()

    def show_feedback(self) -> None:
        fb = self.query_one(FeedbackView)
        fb.update(self.session.feedback.text)
        fb.set_class(self.session.feedback.error, "error")

    def say(self, text: str, error: bool = False) -> None:
        self.session.feedback = Feedback(text, error)
        self.refresh_view()

    @on(AIMoveReady)
    def _ai_answered(self, message: AIMoveReady) -> None:
        self.ai.answered(message)
        self.after_change()

    def after_change(self) -> None:
        self.refresh_view()
        self.ai.maybe_start()
        self.refresh_board()  # "AI thinking…"
        self.check_end()

    # --- the end ----------------------------------------------------------------------------------

    def check_end(self) -> None:
        s = self.session
        texts = None if self._end_shown else self.end_texts()
        if texts is None:
            return
        self._end_shown = True
        self.app.push_screen(
            EndScreen(texts.title, "\n".join(texts.lines), s.has_game(), self.can_restart(), s.can_analyse()),
            self._end_choice,
        )

    def end_texts(self) -> EndTexts | None:
        """What the end dialog says (a screen may add to the session's texts)."""
        return self.session.end_texts()

    def can_restart(self) -> bool:
        return self.new_game_fn is not None

    async def _end_choice(self, choice: str | None) -> None:
        if choice == "quit":
            await self.leave()
        elif choice == "save":
            self.action_save()
        elif choice == "new":
            self.action_new_game()
        elif choice == "analyse":
            self.action_analyse_game()

    # --- actions ----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        s = self.session
        human = s.is_human_turn() and s.is_live
        if action in ("pass_turn", "hint", "ai_move", "autopilot") and (not s.human_teams() or s.ended):
            return False  # --watch, or the game is over: no keys for playing in the footer
        if action == "pass_turn":
            return True if human else None  # on a first move it explains why it cannot be used
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
            return True if self.can_restart() and s.ended else None
        return True

    # --- what the board's keys did, and the piece panels --------------------------------------------

    @on(GhostMoved)
    def _ghost_moved(self, message: GhostMoved) -> None:
        if message.refusal_dropped:
            self.show_feedback()
        self.refresh_board()

    @on(PlacementChanged)
    def _placement_changed(self) -> None:
        self.refresh_view()

    @on(Placed)
    def _placed(self) -> None:
        self.after_change()

    @on(ShapePicked)
    def select_shape(self, message: ShapePicked) -> None:
        self.session.placing.select(message.shape)
        self.refresh_view()

    def palette_extras(self) -> list[tuple[str, Callable[[], object], str]]:
        """Command palette: "Select PENTO_X" for every piece that can be placed now."""
        if not self.session.is_human_turn():
            return []
        pick = self.select_shape
        return [
            (f"Select {shape.name}", partial(pick, ShapePicked(shape)), "pick this piece")
            for shape in sorted(self.session.placing.placeable_shapes())
        ]

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

        question = f"Pass with {s.state.current_color.name}? (You keep your pieces; the colour stays in the game.)"
        self.app.push_screen(ConfirmScreen(question), answer)

    def action_undo(self) -> None:
        self.ai.cancel()
        if self.session.undo():
            self._end_shown = False
        self.after_change()

    def action_hint(self) -> None:
        if self.ai.hint_player is not None and self.session.is_human_turn():
            self.session.feedback = Feedback("thinking about a hint…")
            self.ai.think(self.ai.hint_player, AIPurpose.HINT)
            self.refresh_view()

    def action_ai_move(self) -> None:
        if self.ai.hint_player is not None and self.session.is_human_turn():
            self.session.feedback = Feedback("the AI is choosing your move…")
            self.ai.think(self.ai.hint_player, AIPurpose.PLAY_FOR_HUMAN)
            self.refresh_view()

    def action_autopilot(self) -> None:
        s = self.session
        was_on = s.state.current_team in s.autopilot
        s.toggle_autopilot()
        if was_on and self.ai.purpose is AIPurpose.PLAY:
            self.ai.cancel()
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
