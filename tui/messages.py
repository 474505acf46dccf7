"""Custom Textual messages of the TUI."""

from __future__ import annotations

from enum import Enum

from textual.message import Message

from blokus.ai.players.controller import Decision
from blokus.model.moves import Move
from blokus.model.pieces import Shape


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


class AIPurpose(Enum):
    """Why the AI was asked: to play its seat, to suggest a move (hint), to play for the human, or where the ghost of
    a colour's first piece starts (the hint's move, asked for without a word while the human looks)."""

    PLAY = "play"
    HINT = "hint"
    PLAY_FOR_HUMAN = "ai_move"
    FIRST_GHOST = "first_ghost"


class AIMoveReady(Message):
    """The AI answered for timeline position ``index``: ``decision`` says which move and where it came from
    (the engine, or the one fallback of ``ai.players.controller`` after an error, an illegal answer or a timeout)."""

    def __init__(self, decision: Decision, index: int, purpose: AIPurpose) -> None:
        super().__init__()
        self.decision, self.index, self.purpose = decision, index, purpose

    @property
    def move(self) -> Move:
        return self.decision.move

    @property
    def failed(self) -> bool:
        return self.decision.source.startswith("fallback")


class GhostMoved(Message):
    """The piece being placed moved, turned or flipped (the board and the status repaint);
    ``refusal_dropped``: a refusal about its old place was dropped (the feedback line too)."""

    def __init__(self, refusal_dropped: bool = False) -> None:
        super().__init__()
        self.refusal_dropped = refusal_dropped


class PlacementChanged(Message):
    """Another piece was picked, the piece was put back, the view stepped (everything repaints)."""


class Placed(Message):
    """Enter or a click tried to place the piece: a move may have been made (the game goes on)."""


class AIAsked(Message):
    """The player asked the AI (``purpose``: a hint, or to play the move for them)."""

    def __init__(self, purpose: AIPurpose) -> None:
        super().__init__()
        self.purpose = purpose


class AutopilotSwitched(Message):
    """The player switched the autopilot of their team on or off."""


class UndoAsked(Message):
    """The player takes back moves (local games)."""
