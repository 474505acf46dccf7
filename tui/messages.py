"""Custom Textual messages of the TUI."""

from __future__ import annotations

from textual.message import Message

from model.moves import Move
from model.pieces import Shape


class BoardHover(Message):
    """The mouse is over board field (x, y)."""

    def __init__(self, x: int, y: int) -> None:
        super().__init__()
        self.x, self.y = x, y


class BoardClicked(Message):
    """A board field was clicked (button 1 = place, 3 = flip)."""

    def __init__(self, x: int, y: int, button: int) -> None:
        super().__init__()
        self.x, self.y, self.button = x, y, button


class BoardWheel(Message):
    """Mouse wheel over the board: +1 = down (clockwise), -1 = up (counter-clockwise)."""

    def __init__(self, direction: int) -> None:
        super().__init__()
        self.direction = direction


class ShapePicked(Message):
    """A shape was clicked in a shape panel."""

    def __init__(self, shape: Shape) -> None:
        super().__init__()
        self.shape = shape


class AIMoveReady(Message):
    """The AI has chosen a move (for the colour to move at ``turn`` in timeline position ``index``)."""

    def __init__(self, move: Move, index: int, purpose: str) -> None:
        super().__init__()
        self.move, self.index, self.purpose = move, index, purpose


class SessionChanged(Message):
    """The session changed (a move, undo, view step): widgets should repaint from it."""
