"""Moves, and the mistakes that make a move illegal (docs/spec/rules.md §5–§6)."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import TypeVar

import numpy as np

from blokus.model.pieces import Cell, Color, Rotation, Shape, canonical, transform


@dataclass(frozen=True, eq=False)
class SetMove:
    """Place ``shape`` in ``color``; ``(x, y)`` is the top-left corner of the transformed bounding box.

    Two SetMoves are equal when colour and cells are equal (the server's ``Piece.equals``), so the
    same placement written with another (rotation, flip) pair compares equal.
    """

    color: Color
    shape: Shape
    rotation: Rotation = Rotation.NONE
    flipped: bool = False
    x: int = 0
    y: int = 0
    _cells: frozenset[Cell] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rel = transform(self.shape, self.rotation, self.flipped)
        object.__setattr__(self, "_cells", frozenset((self.x + dx, self.y + dy) for dx, dy in rel))

    @property
    def cells(self) -> frozenset[Cell]:
        """The board cells (x, y) the piece covers."""
        return self._cells

    @property
    def position(self) -> Cell:
        """(x, y): the top-left corner of the placed piece's bounding box."""
        return (self.x, self.y)

    def sorted_cells(self) -> list[Cell]:
        """The cells row by row (y, then x)."""
        return sorted(self._cells, key=lambda c: (c[1], c[0]))

    def canonical(self) -> SetMove:
        """The same move with the (rotation, flip) pair the server's generator would use."""
        o = canonical(self.shape, self.rotation, self.flipped)
        if (o.rotation, o.flipped) == (self.rotation, self.flipped):
            return self
        return SetMove(self.color, self.shape, o.rotation, o.flipped, self.x, self.y)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SetMove):
            return NotImplemented
        return self.color == other.color and self._cells == other._cells

    def __hash__(self) -> int:
        return hash((self.color, self._cells))

    def __str__(self) -> str:
        flip = "true" if self.flipped else "false"
        return f"{self.color.name} {self.shape.name} {self.rotation.name} {flip} {self.x} {self.y}"

    def german(self) -> str:
        """The server's move text (docs/spec/rules.md §6.5), used in error messages and result reasons."""
        extra = ""
        if self.rotation is not Rotation.NONE:
            extra += f", gedreht um {90 * self.rotation}°"
        if self.flipped:
            extra += ", gespiegelt"
        return f"Setze {self.shape.name}(Farbe {self.color.german}{extra})[{self.x},{self.y}]"


@dataclass(frozen=True)
class SkipMove:
    """Pass. Legal for the colour to move unless it is that colour's first move."""

    color: Color

    def __str__(self) -> str:
        return f"{self.color.name} SKIP"

    def german(self) -> str:
        """The server's German text of the skip."""
        return f"Farbe {self.color.german} setzt aus"


Move = SetMove | SkipMove


# How a turned piece is written for people: clockwise degrees ("MIRROR" is the protocol's name for 180°, and
# next to "flipped" it read like a second reflection).
_TURNED = {Rotation.NONE: "", Rotation.RIGHT: " 90°", Rotation.MIRROR: " 180°", Rotation.LEFT: " 270°"}


def plainest(shape: Shape, rotation: Rotation, flipped: bool) -> tuple[Rotation, bool]:
    """The same cells, named without a turn or a flip that changes nothing: no flip where the piece lies the
    same unflipped, then the smallest turn that lies the same (a MONO is never "90° flipped", a PENTO_I at
    270° lies as at 90°)."""
    cells = transform(shape, rotation, flipped)
    if flipped and transform(shape, rotation, False) == cells:
        flipped = False
    return next(r for r in Rotation if transform(shape, r, flipped) == cells), flipped


def describe_piece(shape: Shape, rotation: Rotation = Rotation.NONE, flipped: bool = False) -> str:
    """``PENTO_S 180° flipped``: a shape as it lies (the TUI, ``blokus analyse``), in its plainest words."""
    rotation, flipped = plainest(shape, rotation, flipped)
    return f"{shape.name}{_TURNED[rotation]}{' flipped' if flipped else ''}"


def describe_move(move: Move, *, color: bool = True) -> str:
    """``RED PENTO_S 180° flipped @ (3,4)`` or ``RED passed`` (``color=False``: without the colour)."""
    who = f"{move.color.name} " if color else ""
    if isinstance(move, SkipMove):
        return f"{who}passed" if color else "pass"
    return f"{who}{describe_piece(move.shape, move.rotation, move.flipped)} @ ({move.x},{move.y})"


class NotAMove(ValueError):
    """An object that is no move and cannot be read as one: one line naming what it is."""


_LIMIT = 1 << 16  # coordinates beyond any board: judged OUT_OF_BOUNDS, never carried into bit operations


def as_move(obj: object, what: str = "the move is") -> Move:
    """``obj`` as a move of plain values, exactly as it will be judged and sent: the fields of a ``SetMove``
    or ``SkipMove`` may be numpy integers or bools, plain ints for the enums (``Rotation`` 1) or their names
    (``"RIGHT"``); anything else is a :class:`NotAMove` that says what it got (``what`` starts the line:
    ``calculate_move returned``)."""
    if isinstance(obj, SkipMove):
        return obj if type(obj.color) is Color else SkipMove(_member(Color, obj, "color", what))
    if isinstance(obj, SetMove):
        if (
            type(obj.x) is int
            and type(obj.y) is int
            and -_LIMIT <= obj.x <= _LIMIT
            and -_LIMIT <= obj.y <= _LIMIT
            and type(obj.flipped) is bool
            and type(obj.rotation) is Rotation
            and type(obj.shape) is Shape
            and type(obj.color) is Color
        ):
            return obj  # plain already (every move our own engines make)
        return SetMove(
            _member(Color, obj, "color", what),
            _member(Shape, obj, "shape", what),
            _member(Rotation, obj, "rotation", what),
            _flag(obj, what),
            _coordinate(obj, "x", what),
            _coordinate(obj, "y", what),
        )
    if isinstance(obj, str):
        raise NotAMove(f"{what} str {_head(obj)}, not a Move: use parse_move")
    raise NotAMove(f"{what} {type(obj).__name__}, not a Move (a SetMove or a SkipMove)")


def _head(value: object, width: int = 40) -> str:
    """``repr`` of a value, cut for a one-line message."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _wrong(move: object, field_name: str, what: str, wanted: str) -> NotAMove:
    value = getattr(move, field_name)
    return NotAMove(
        f"{what} a {type(move).__name__} whose {field_name} is {type(value).__name__} {_head(value)}, not {wanted}"
    )


_E = TypeVar("_E", bound=IntEnum)


def _member(kind: type[_E], move: object, field_name: str, what: str) -> _E:
    value = getattr(move, field_name)
    if isinstance(value, kind):
        return value
    try:
        if isinstance(value, str):
            return kind[value]
        if not isinstance(value, bool | np.bool_):
            return kind(operator.index(value))
    except (KeyError, ValueError, TypeError):
        pass
    raise _wrong(move, field_name, what, f"a {kind.__name__}") from None


def _flag(move: SetMove, what: str) -> bool:
    value = move.flipped
    if isinstance(value, bool | np.bool_):
        return bool(value)
    try:
        number = operator.index(value)
    except TypeError:
        number = -1
    if number not in (0, 1):
        raise _wrong(move, "flipped", what, "a bool")
    return bool(number)


def _coordinate(move: object, field_name: str, what: str) -> int:
    value = getattr(move, field_name)
    try:
        number = operator.index(value)
    except TypeError:
        raise _wrong(move, field_name, what, "an int") from None
    return max(-_LIMIT, min(_LIMIT, number))  # far off the board either way: judged OUT_OF_BOUNDS


def parse_move(text: str) -> Move:
    """Inverse of ``str(move)``: ``BLUE PENTO_L NONE true 0 16`` or ``GREEN SKIP``."""
    parts = text.split()
    try:
        if len(parts) == 2 and parts[1].upper() == "SKIP":
            return SkipMove(Color.parse(parts[0]))
        if len(parts) == 6:
            color, shape, rotation, flipped, x, y = parts
            if flipped.lower() not in ("true", "false"):
                raise ValueError(flipped)
            return SetMove(
                Color.parse(color),
                Shape.parse(shape),
                Rotation.parse(rotation),
                flipped.lower() == "true",
                int(x),
                int(y),
            )
    except (KeyError, ValueError) as exc:
        raise ValueError(f"not a move: {text!r}") from exc
    raise ValueError(f"not a move: {text!r} (expected 'COLOR KIND ROTATION FLIPPED X Y' or 'COLOR SKIP')")


class MoveMistake(Enum):
    """The official mistakes (``MoveMistake.kt``) with the server's German messages."""

    WRONG_COLOR = "Die Farbe des Zuges ist nicht an der Reihe"
    SKIP_FIRST_TURN = "Der erste Zug muss einen Stein setzen"
    WRONG_SHAPE = "Der erste Zug muss den festgelegten Spielstein setzen"
    DUPLICATE_SHAPE = "Der gewählte Stein wurde bereits gesetzt"
    OUT_OF_BOUNDS = "Der Spielstein passt nicht vollständig auf das Spielfeld"
    OBSTRUCTED = "Der Spielstein würde eine andere Farbe überlagern"
    TOUCHES_SAME_COLOR = "Der Spielstein berührt ein Feld gleicher Farbe"
    NOT_IN_CORNER = "Der erste Zug muss auf eine freie Ecke gesetzt werden"
    NOT_ON_BORDER = "Der erste Zug muss an den Rand gesetzt werden"  # 2027 (BlokusMoveMistake.kt)
    NO_SHARED_CORNER = "Alle Teile müssen ein vorheriges Teil gleicher Farbe über mindestens eine Ecke berühren"
    INVALID_FORMAT = "Der Zug konnte nicht erkannt werden"

    @property
    def german(self) -> str:
        return self.value

    @property
    def english(self) -> str:
        return _ENGLISH[self]

    @property
    def carries_move(self) -> bool:
        """WRONG_SHAPE and DUPLICATE_SHAPE are raised without the move (docs/spec/rules.md §6.5)."""
        return self not in (MoveMistake.WRONG_SHAPE, MoveMistake.DUPLICATE_SHAPE)


_ENGLISH = {
    MoveMistake.WRONG_COLOR: "it is not this colour's turn",
    MoveMistake.SKIP_FIRST_TURN: "a colour's first move must place a piece; it cannot pass",
    MoveMistake.WRONG_SHAPE: "the first move must place the start piece",
    MoveMistake.DUPLICATE_SHAPE: "this piece has already been placed",
    MoveMistake.OUT_OF_BOUNDS: "the piece does not fit completely on the board",
    MoveMistake.OBSTRUCTED: "the piece would cover a field that is already taken",
    MoveMistake.TOUCHES_SAME_COLOR: "the piece touches a piece of its own colour along an edge",
    MoveMistake.NOT_IN_CORNER: "the first piece must cover a free corner of the board",
    MoveMistake.NOT_ON_BORDER: "the first piece must touch the edge of the board",
    MoveMistake.NO_SHARED_CORNER: "the piece must touch a piece of its own colour at a corner",
    MoveMistake.INVALID_FORMAT: "the move could not be read",
}


class IllegalMoveError(ValueError):
    """A move the rules refuse: ``mistake`` is the rule broken (the server's ``MoveMistake``; None: the game is
    over), ``move`` the move, ``text`` the season's message (``Season.violation_text``, the result reason). A
    ``ValueError``, so ``except ValueError`` still catches it."""

    def __init__(self, mistake: MoveMistake | None, move: Move | None, text: str) -> None:
        super().__init__(text)
        self.mistake = mistake
        self.move = move

    @property
    def rule(self) -> str:
        """The rule broken, in English ("the piece must touch a piece of its own colour at a corner")."""
        return self.mistake.english if self.mistake is not None else "the game is over"
