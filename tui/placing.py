"""Placing a piece: the ghost, its three states, refusals that name the cells, and ``Placement``, the
session's object for the piece being placed (``GameSession.placing``). Nothing here imports Textual."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from blokus.model import placements as P
from blokus.model.moves import IllegalMoveError, Move, MoveMistake, SetMove, SkipMove, describe_move
from blokus.model.pieces import Color, Rotation, Shape, transform
from blokus.model.record import GameRecord
from blokus.model.season import FirstMove
from blokus.model.state import GameState, move_of_placement

N = P.N


def _centre(cells) -> tuple[float, float]:
    cells = list(cells)
    return sum(x for x, _ in cells) / len(cells), sum(y for _, y in cells) / len(cells)


class GhostStatus(Enum):
    """The three states of the ghost piece (ux-notes §3)."""

    BLOCKED = "not placeable"
    NO_CONTACT = "no corner contact"
    LEGAL = "legal"


REFUSAL = "Not allowed: "

# the ghost's word where the state's name is not the rule: a first piece (docs/spec/rules.md §6.1,
# docs/spec/season-2027.md)
_FIRST_MOVE_WORDS = {MoveMistake.NOT_IN_CORNER: "not in a board corner", MoveMistake.NOT_ON_BORDER: "not on the border"}


def ghost_word(status: GhostStatus, mistake: MoveMistake | None) -> str:
    """The legality word of the ghost: ``legal``, ``not placeable``, ``no corner contact``, or the first-move
    rule it breaks (``not in a board corner`` in 2021, ``not on the border`` in 2027)."""
    return _FIRST_MOVE_WORDS.get(mistake, status.value) if mistake is not None else status.value


# --- the ghost piece --------------------------------------------------------------------------------


@dataclass
class Ghost:
    """The piece being placed: shape, rotation, flip, and the top-left corner of its bounding box."""

    shape: Shape
    rotation: Rotation = Rotation.NONE
    flipped: bool = False
    x: int = 0
    y: int = 0

    @property
    def rel_cells(self) -> tuple[tuple[int, int], ...]:
        return transform(self.shape, self.rotation, self.flipped)

    @property
    def size(self) -> tuple[int, int]:
        cells = self.rel_cells
        return 1 + max(x for x, _ in cells), 1 + max(y for _, y in cells)

    def cells(self) -> list[tuple[int, int]]:
        return [(self.x + dx, self.y + dy) for dx, dy in self.rel_cells]

    def move(self, color: Color) -> SetMove:
        return SetMove(color, self.shape, self.rotation, self.flipped, self.x, self.y)

    def clamp(self) -> None:
        """Keep the whole piece on the board."""
        w, h = self.size
        self.x = max(0, min(self.x, N - w))
        self.y = max(0, min(self.y, N - h))

    def rotate(self, quarter_turns: int) -> None:
        """Rotate on screen: +1 clockwise, -1 counter-clockwise, 2 = 180°.

        The server flips after rotating, so on a flipped piece a clockwise turn on screen is a LEFT
        rotation of the unflipped shape.
        """
        step = -quarter_turns if self.flipped else quarter_turns
        self.rotation = Rotation((self.rotation + step) % 4)
        self.clamp()

    def flip(self) -> None:
        self.flipped = not self.flipped
        self.clamp()


def classify(state: GameState, move: SetMove) -> tuple[GhostStatus, MoveMistake | None]:
    mistake = state.validate(move)
    if mistake is None:
        return GhostStatus.LEGAL, None
    if mistake in (MoveMistake.NOT_IN_CORNER, MoveMistake.NOT_ON_BORDER, MoveMistake.NO_SHARED_CORNER):
        return GhostStatus.NO_CONTACT, mistake
    return GhostStatus.BLOCKED, mistake


@dataclass
class Feedback:
    """A one-line message for the user (the result of the last action)."""

    text: str = ""
    error: bool = False


class PlacementHost(Protocol):
    """What a ``Placement`` reads and calls of the session that owns it (``GameSession``): public members only."""

    feedback: Feedback

    @property
    def timeline(self) -> GameRecord: ...

    @property
    def state(self) -> GameState: ...  # the live state

    @property
    def shown(self) -> GameState: ...  # the state on the screen

    @property
    def is_live(self) -> bool: ...

    def is_human_turn(self) -> bool: ...

    def refusal(self) -> str | None: ...  # why the human cannot act now, or None

    def apply(self, move: Move) -> None: ...  # raises IllegalMoveError


class Placement:
    """The piece the human is placing (the *ghost*) of a session, and what the keys and the mouse do with it:
    select, move, turn, flip and place it (on the human's turn only). Owned by the session (``session.placing``)."""

    def __init__(self, session: PlacementHost) -> None:
        self.session = session
        self.ghost: Ghost | None = None
        self._overlay_cache: tuple[tuple, int] | None = None

    @property
    def state(self) -> GameState:
        return self.session.state

    def _say(self, text: str = "", error: bool = False) -> None:
        self.session.feedback = Feedback(text, error)

    def status(self) -> tuple[GhostStatus, MoveMistake | None] | None:
        """The ghost's state and the rule it breaks (None: no ghost, or not the human's turn)."""
        if self.ghost is None or not self.session.is_human_turn() or not self.session.is_live:
            return None
        return classify(self.state, self.ghost.move(self.state.color))

    def placeable_shapes(self, color: Color | None = None) -> set[Shape]:
        """Shapes of ``color`` (default: the colour to move) with at least one legal placement now."""
        st = self.session.shown
        color = st.color if color is None else color
        if not st.is_valid(color) or st.is_over:
            return set()
        ids = st.legal_placements(color)
        return {Shape(int(s)) for s in set(P.P_SHAPE[ids].tolist())}

    def overlay_cells(self) -> int:
        """Bitboard of the cells the colour to move may cover with a legal placement (selected shape only
        when one is selected)."""
        st = self.state
        if st.is_over or not self.session.is_live:
            return 0
        key = (id(st), st.turn, None if self.ghost is None else self.ghost.shape)
        cached = self._overlay_cache
        if cached is not None and cached[0] == key:
            return cached[1]
        bb = self._overlay(st)
        self._overlay_cache = (key, bb)
        return bb

    def _overlay(self, st: GameState) -> int:
        ids = st.legal_placements()
        if self.ghost is not None:
            ids = ids[P.P_SHAPE[ids] == int(self.ghost.shape)]
        bb = 0
        for pid in ids.tolist():
            bb |= P.MASKS[pid]
        return bb

    # --- turn handling ----------------------------------------------------------------------------

    def new_ghost(self, shape: Shape) -> Ghost:
        """A ghost of ``shape`` at a legal placement: the one nearest to the previous ghost of this turn
        (tab through the pieces and each lands where it fits, close to where you were), else near the
        colour's last piece, unrotated if one such placement exists. A first piece starts in the top-left corner
        (2021) or nearest to the board's middle (2027: the middle of a side, not a corner, where a piece has the
        least room to grow); where the AI gives hints, its suggestion takes its place (``AIPurpose.FIRST_GHOST``)."""
        old = self.ghost
        st = self.state
        color = st.color
        ids = st.legal_placements(color)
        ids = ids[P.P_SHAPE[ids] == int(shape)]
        if not len(ids):
            x, y = (old.x, old.y) if old is not None else (N // 2 - 2, N // 2 - 2)
            g = Ghost(shape, x=x, y=y)
            g.clamp()
            return g
        moves = [move_of_placement(color, int(pid)) for pid in ids.tolist()]
        if old is not None:
            ox, oy = _centre(old.cells())

            def near_old(m: SetMove) -> tuple[float, bool]:
                mx, my = _centre(m.cells)
                return (mx - ox) ** 2 + (my - oy) ** 2, (m.rotation, m.flipped) != (old.rotation, old.flipped)

            best = min(moves, key=near_old)
            return Ghost(shape, best.rotation, best.flipped, best.x, best.y)
        last = self.last_cells(color)
        if last or st.season.first_move is FirstMove.CORNER:
            cx, cy = _centre(last) if last else (0.0, 0.0)

            def distance(m: SetMove) -> tuple[bool, float]:
                return (m.rotation != Rotation.NONE or m.flipped), (m.x - cx) ** 2 + (m.y - cy) ** 2
        else:  # a first piece on the border: the middle of a side, not a corner

            def distance(m: SetMove) -> tuple[bool, float]:
                mx, my = _centre(m.cells)
                return (m.rotation != Rotation.NONE or m.flipped), (mx - (N - 1) / 2) ** 2 + (my - (N - 1) / 2) ** 2

        best = min(moves, key=distance)
        return Ghost(shape, best.rotation, best.flipped, best.x, best.y)

    def last_cells(self, color: Color) -> list[tuple[int, int]]:
        """The cells of ``color``'s most recent piece (empty before its first move)."""
        for move in reversed(self.session.timeline.moves):
            if isinstance(move, SetMove) and move.color == color:
                return list(move.cells)
        return []

    def select(self, shape: Shape) -> bool:
        if self.session.refusal():
            return False
        st = self.state
        if not st.has_shape(st.color, shape):
            self._say(f"{shape.name} has already been placed", True)
            return False
        if st.is_first_move() and shape != st.start_piece:
            self._say(f"the first move must place the start piece {st.start_piece.name}", True)
            return False
        if shape not in self.placeable_shapes():
            self._say(f"{shape.name} cannot be placed anywhere now", True)
            return False
        if self.ghost is None or self.ghost.shape != shape:
            self.ghost = self.new_ghost(shape)
        self._say()
        return True

    def cycle(self, step: int) -> bool:
        """Select the next (+1) or previous (-1) shape that can be placed now."""
        if (msg := self.session.refusal()) is not None:
            self._say(msg, True)
            return False
        shapes = sorted(self.placeable_shapes())
        if not shapes:
            return False
        if self.state.is_first_move():
            self._say(f"on a first move only the start piece {self.state.start_piece.name} can be placed", True)
            return False
        if self.ghost is None:
            shape = shapes[0] if step > 0 else shapes[-1]
        else:
            cur = int(self.ghost.shape)
            later = [s for s in shapes if (s - cur) * step > 0]
            if later:
                shape = min(later) if step > 0 else max(later)
            else:
                shape = shapes[0] if step > 0 else shapes[-1]
        return self.select(shape)

    def deselect(self) -> None:
        if self.session.refusal() is not None or self.ghost is None:
            return
        if self.state.is_first_move():
            self._say(f"on a first move the start piece {self.state.start_piece.name} is the only choice", True)
            return
        self.ghost = None
        self._say("piece put back")

    def move_ghost(self, dx: int, dy: int) -> bool:
        if self.ghost is None:
            return False
        g = self.ghost
        g.x += dx
        g.y += dy
        g.clamp()
        return True

    def rotate(self, quarter_turns: int) -> bool:
        if self.ghost is None:
            return False
        self.ghost.rotate(quarter_turns)
        return True

    def flip(self) -> bool:
        if self.ghost is None:
            return False
        self.ghost.flip()
        return True

    def place(self) -> Move | None:
        """Play the ghost if it is legal; otherwise explain the broken rule. Returns the move played."""
        if (msg := self.session.refusal()) is not None:
            self._say(msg, True)
            return None
        if self.ghost is None:
            self._say("select a piece first (tab / n)", True)
            return None
        move = self.ghost.move(self.state.color)
        try:
            self.session.apply(move)
        except IllegalMoveError as exc:
            self._say(f"{REFUSAL}{self.state.refusal_text(move, exc.mistake)}.", True)  # the model's one text
            return None
        self._say(f"placed {describe_move(move)}")
        return move

    def show_hint(self, move: Move) -> None:
        """Show an AI suggestion as the ghost."""
        if isinstance(move, SkipMove):
            self._say("hint: pass")
            return
        self.ghost = Ghost(move.shape, move.rotation, move.flipped, move.x, move.y)
        self._say(f"hint: {describe_move(move)} (enter places it)")

    def start_on(self, move: Move, untouched: Ghost) -> bool:
        """The AI's suggestion for a first piece becomes the ghost, if the ghost is still ``untouched`` (as it
        started: a piece the human moved, turned or flipped stays where they put it)."""
        if not isinstance(move, SetMove) or self.ghost != untouched or not self.session.is_human_turn():
            return False
        self.ghost = Ghost(move.shape, move.rotation, move.flipped, move.x, move.y)
        if not self.session.feedback.text:  # a word of the server's (the clock) stays
            self._say("the piece starts where the AI would place it (i: hint, enter: place)")
        return True

    def forget_stale_refusal(self) -> bool:
        """After the ghost moved: drop a refusal about its old position (True if one was dropped)."""
        feedback = self.session.feedback
        if feedback.error and feedback.text.startswith(REFUSAL):
            self._say()
            return True
        return False
