"""The game's board: the keys and the mouse that place the human's piece live here and act on the session's
``Placement``; the screen hears of what they did by messages (``GhostMoved``: repaint the board,
``PlacementChanged``: repaint everything, ``Placed``: a move was made)."""

from __future__ import annotations

from textual.binding import Binding, BindingType

from tui.board import Board
from tui.messages import BoardClicked, BoardHover, BoardWheel, GhostMoved, Placed, PlacementChanged
from tui.session import GameSession

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
