"""The keys of the one who plays, where they play: the game's board (``PlacingBoard``: the keys and the mouse that
place the human's piece act on the session's ``Placement``) and the centre column around it (``PlayArea``: pass,
undo, hints, autopilot, looking back). The screen hears of what they did by messages (``GhostMoved``: repaint
the board, ``PlacementChanged``: repaint everything, ``Placed``: a move may have been made; ``AIAsked``,
``AutopilotSwitched``, ``UndoAsked``: the AI's part, which is the screen's)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.binding import Binding, BindingType
from textual.containers import Vertical

from blokus.tui.board import Board
from blokus.tui.dialogs import ConfirmScreen
from blokus.tui.messages import (
    AIAsked,
    AIPurpose,
    AutopilotSwitched,
    BoardClicked,
    BoardHover,
    BoardWheel,
    GhostMoved,
    Placed,
    PlacementChanged,
    ShapePicked,
    UndoAsked,
)
from blokus.tui.session import Feedback, GameSession

# The keys of the piece being placed (the help screen, the palette and the README's key table list them first).
PLACING_BINDINGS: list[BindingType] = [
    Binding(
        "left,h",
        "move(-1,0)",
        "Move",
        show=False,
        tooltip="move the piece (its top-left corner is the move's position)",
    ),
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
    Binding(
        "enter,space", "place", "Place", tooltip="place the piece (refused with the rule and the cells if illegal)"
    ),
    Binding("escape", "deselect", "Put back", show=False, tooltip="put the piece back (none selected)"),
]


class PlacingBoard(Board):
    """The board of a game, with the keys and the mouse of the piece being placed (``attach`` a session)."""

    BINDINGS = PLACING_BINDINGS
    can_focus = True

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session: GameSession | None = None

    def attach(self, session: GameSession) -> None:
        self.session = session

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Shown and usable on the human's turn; on a first move tab, escape and enter say why they cannot."""
        s = self.session
        if s is None or not s.human_teams() or s.ended:
            return False  # a replay, --watch, or the game is over: no keys for placing in the footer
        human = s.is_human_turn() and s.is_live
        if action in ("move", "rotate", "flip"):
            return True if human and s.ghost is not None else None
        return True if human else None

    def _ghost_changed(self, moved: bool) -> None:
        if moved and self.session is not None:
            self.post_message(GhostMoved(refusal_dropped=self.session.placing.forget_stale_refusal()))

    def action_move(self, dx: int, dy: int) -> None:
        if self.session is not None:
            self._ghost_changed(self.session.placing.move_ghost(dx, dy))

    def action_rotate(self, quarter_turns: int) -> None:
        if self.session is not None:
            self._ghost_changed(self.session.placing.rotate(quarter_turns))

    def action_flip(self) -> None:
        if self.session is not None:
            self._ghost_changed(self.session.placing.flip())

    def action_cycle(self, step: int) -> None:
        if self.session is not None:
            self.session.placing.cycle(step)
            self.post_message(PlacementChanged())

    def action_deselect(self) -> None:
        if self.session is not None:
            self.session.placing.deselect()  # on a first move: says that the start piece is the only choice
            self.post_message(PlacementChanged())

    def action_place(self) -> None:
        if self.session is not None:
            self.session.placing.place()
            self.post_message(Placed())

    # --- the mouse (the board's own messages, handled here; a replay's board lets them bubble) ---------

    def on_board_hover(self, msg: BoardHover) -> None:
        s = self.session
        if s is None:
            return
        msg.stop()
        g = s.ghost
        if g is not None and s.is_human_turn():
            g.x, g.y = msg.x, msg.y
            g.clamp()
            self.post_message(GhostMoved())

    def on_board_clicked(self, msg: BoardClicked) -> None:
        if self.session is None:
            return
        msg.stop()
        if msg.button == 3:
            self.action_flip()
        elif msg.button == 1:
            self.on_board_hover(BoardHover(msg.x, msg.y))
            self.action_place()

    def on_board_wheel(self, msg: BoardWheel) -> None:
        if self.session is not None:
            msg.stop()
            self.action_rotate(msg.direction)


# The keys of playing besides the piece's, on the centre column (``PlayArea``).
PLAYING_BINDINGS: list[BindingType] = [
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
]


class PlayArea(Vertical):
    """The centre column of a game (status, board, feedback) with the keys of playing (``PLAYING_BINDINGS``); the
    board in it holds the focus, so these keys work wherever the piece's do."""

    BINDINGS = PLAYING_BINDINGS
    _DYNAMIC = ("pass_turn", "undo", "hint", "ai_move", "autopilot", "live")  # usable or not with the game
    _BOARD_DYNAMIC = ("move", "place", "cycle")  # the board's

    def __init__(self, session: GameSession, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.session = session
        self._keys: tuple = ()

    def keys_changed(self) -> bool:
        """Whether the keys usable now (these and the board's) changed since the last call (the footer follows)."""
        board = self.query_one(PlacingBoard)
        keys = tuple(self.check_action(a, ()) for a in self._DYNAMIC)
        keys += tuple(board.check_action(a, ()) for a in self._BOARD_DYNAMIC)
        changed, self._keys = keys != self._keys, keys
        return changed

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
            return True if human and not s.ai_thinking else None
        if action == "autopilot":
            return bool(s.human_teams())
        if action == "live":
            return True if not s.is_live else None
        return True

    def palette_extras(self) -> list[tuple[str, Callable[[], object], str]]:
        """Command palette: "Select PENTO_X" for every piece that can be placed now."""
        if not self.session.is_human_turn():
            return []
        return [
            (f"Select {shape.name}", partial(self.post_message, ShapePicked(shape)), "pick this piece")
            for shape in sorted(self.session.placing.placeable_shapes())
        ]

    def action_pass_turn(self) -> None:
        s = self.session
        if not s.can_pass():
            s.pass_turn()  # explains why not
            self.post_message(PlacementChanged())
            return

        def answer(yes: bool | None) -> None:
            if yes:
                s.pass_turn()
                self.post_message(Placed())
            else:
                s.feedback = Feedback("not passed")
                self.post_message(PlacementChanged())

        question = f"Pass with {s.state.color.name}? (You keep your pieces; the colour stays in the game.)"
        self.app.push_screen(ConfirmScreen(question), answer)

    def action_undo(self) -> None:
        self.post_message(UndoAsked())

    def action_hint(self) -> None:
        self.post_message(AIAsked(AIPurpose.HINT))

    def action_ai_move(self) -> None:
        self.post_message(AIAsked(AIPurpose.PLAY_FOR_HUMAN))

    def action_autopilot(self) -> None:
        self.post_message(AutopilotSwitched())

    def action_overlay(self) -> None:
        self.session.show_overlay = not self.session.show_overlay
        self.post_message(GhostMoved())  # the board repaints

    def action_view(self, delta: int) -> None:
        self.session.step_view(delta)
        self.post_message(PlacementChanged())

    def action_live(self) -> None:
        self.session.go_live()
        self.post_message(PlacementChanged())
