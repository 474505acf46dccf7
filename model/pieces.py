"""Colours, teams, the 21 shapes and their transformations, exactly as the official server defines them.

Source: docs/spec/rules.md §2–§4 (``Color.kt``, ``Team.kt``, ``PieceShape.kt``, ``Rotation.kt``, ``Piece.kt``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from functools import cache

Cell = tuple[int, int]

_NUMBER_FORMATS = frozenset("bcdoxXneEfFgG%")


class NamedEnum(IntEnum):
    """An ``IntEnum`` that reads as its name: ``str``, ``f"{x}"`` and ``%s`` give ``BLUE``, and every member is
    true (``if state.winner():`` tests for a winner, ``Team.ONE`` included). Still an int where the engine
    needs one — list and array indices, comparisons, arithmetic, ``f"{x:d}"`` — and ``index`` names it."""

    def __str__(self) -> str:
        return self.name

    def __format__(self, spec: str) -> str:
        if spec and spec[-1] in _NUMBER_FORMATS:
            return int.__format__(int(self), spec)
        return format(self.name, spec)

    def __bool__(self) -> bool:
        return True

    @property
    def index(self) -> int:
        """The member's number (its index in the engine's arrays: BLUE 0 to GREEN 3, MONO 0 to PENTO_Y 20)."""
        return int(self)


class Team(NamedEnum):
    """The two teams: ONE plays BLUE and RED, TWO plays YELLOW and GREEN."""

    ONE = 0
    TWO = 1

    @property
    def colors(self) -> tuple[Color, Color]:
        """The team's two colours."""
        return (Color.BLUE, Color.RED) if self is Team.ONE else (Color.YELLOW, Color.GREEN)

    @property
    def opponent(self) -> Team:
        """The other team."""
        return Team(1 - self)

    @classmethod
    def parse(cls, text: str) -> Team:
        """Accepts any case (21.0–21.2 servers sent ``one``/``two``)."""
        return cls[text.strip().upper()]


class Color(NamedEnum):
    """The four colours in turn order: the colour to move is ``Color(turn % 4)``."""

    BLUE = 0
    YELLOW = 1
    RED = 2
    GREEN = 3

    @property
    def team(self) -> Team:
        """The team that plays this colour."""
        return Team(self % 2)

    @property
    def german(self) -> str:
        """The colour's German name (the server's texts)."""
        return ("Blau", "Gelb", "Rot", "Grün")[self]

    @classmethod
    def parse(cls, text: str) -> Color:
        """The colour of its name, any case (KeyError otherwise)."""
        return cls[text.strip().upper()]


COLORS: tuple[Color, ...] = tuple(Color)


class Rotation(NamedEnum):
    """RIGHT is a clockwise quarter turn on screen (y points down); MIRROR is 180°, not a reflection."""

    NONE = 0
    RIGHT = 1
    MIRROR = 2
    LEFT = 3

    def rotate(self, by: Rotation) -> Rotation:
        """This rotation followed by ``by``."""
        return Rotation((self + by) % 4)

    @classmethod
    def parse(cls, text: str) -> Rotation:
        """The rotation of its name, any case (KeyError otherwise)."""
        return cls[text.strip().upper()]


class Shape(NamedEnum):
    """The 21 shapes in the server's order; ``base_cells`` before any rotation or flip (docs/protocol.md)."""

    MONO = 0
    DOMINO = 1
    TRIO_L = 2
    TRIO_I = 3
    TETRO_O = 4
    TETRO_T = 5
    TETRO_I = 6
    TETRO_L = 7
    TETRO_Z = 8
    PENTO_L = 9
    PENTO_T = 10
    PENTO_V = 11
    PENTO_S = 12
    PENTO_Z = 13
    PENTO_I = 14
    PENTO_P = 15
    PENTO_W = 16
    PENTO_U = 17
    PENTO_R = 18
    PENTO_X = 19
    PENTO_Y = 20

    @property
    def base_cells(self) -> tuple[Cell, ...]:
        """The shape's cells (x, y) as the server defines them, before rotation and flip."""
        return _BASE_CELLS[self]

    @property
    def size(self) -> int:
        """The number of squares (1 to 5)."""
        return len(_BASE_CELLS[self])

    @classmethod
    def parse(cls, text: str) -> Shape:
        """The shape of its name, any case (KeyError otherwise)."""
        return cls[text.strip().upper()]


SHAPES: tuple[Shape, ...] = tuple(Shape)

# docs/spec/rules.md §3, the server's base cells (x, y).
_BASE_CELLS: dict[Shape, tuple[Cell, ...]] = {
    Shape.MONO: ((0, 0),),
    Shape.DOMINO: ((0, 0), (1, 0)),
    Shape.TRIO_L: ((0, 0), (0, 1), (1, 1)),
    Shape.TRIO_I: ((0, 0), (0, 1), (0, 2)),
    Shape.TETRO_O: ((0, 0), (1, 0), (0, 1), (1, 1)),
    Shape.TETRO_T: ((0, 0), (1, 0), (2, 0), (1, 1)),
    Shape.TETRO_I: ((0, 0), (0, 1), (0, 2), (0, 3)),
    Shape.TETRO_L: ((0, 0), (0, 1), (0, 2), (1, 2)),
    Shape.TETRO_Z: ((0, 0), (1, 0), (1, 1), (2, 1)),
    Shape.PENTO_L: ((0, 0), (0, 1), (0, 2), (0, 3), (1, 3)),
    Shape.PENTO_T: ((0, 0), (1, 0), (2, 0), (1, 1), (1, 2)),
    Shape.PENTO_V: ((0, 0), (0, 1), (0, 2), (1, 2), (2, 2)),
    Shape.PENTO_S: ((1, 0), (2, 0), (3, 0), (0, 1), (1, 1)),
    Shape.PENTO_Z: ((0, 0), (1, 0), (1, 1), (1, 2), (2, 2)),
    Shape.PENTO_I: ((0, 0), (0, 1), (0, 2), (0, 3), (0, 4)),
    Shape.PENTO_P: ((0, 0), (1, 0), (0, 1), (1, 1), (0, 2)),
    Shape.PENTO_W: ((0, 0), (0, 1), (1, 1), (1, 2), (2, 2)),
    Shape.PENTO_U: ((0, 0), (2, 0), (0, 1), (1, 1), (2, 1)),
    Shape.PENTO_R: ((2, 0), (0, 1), (1, 1), (2, 1), (1, 2)),
    Shape.PENTO_X: ((1, 0), (0, 1), (1, 1), (2, 1), (1, 2)),
    Shape.PENTO_Y: ((1, 0), (0, 1), (1, 1), (1, 2), (1, 3)),
}

TOTAL_SQUARES = sum(len(c) for c in _BASE_CELLS.values())  # 89
ALL_PLACED_BONUS = 15  # a colour that placed every piece (docs/spec/rules.md §11)
MONO_LAST_BONUS = 5  # ... and placed the monomino last


def _normalise(cells: list[Cell]) -> list[Cell]:
    min_x = min(x for x, _ in cells)
    min_y = min(y for _, y in cells)
    return [(x - min_x, y - min_y) for x, y in cells]


_ROTATE = {
    Rotation.NONE: lambda x, y: (x, y),
    Rotation.RIGHT: lambda x, y: (-y, x),
    Rotation.MIRROR: lambda x, y: (-x, -y),
    Rotation.LEFT: lambda x, y: (y, -x),
}


@cache
def transform(shape: Shape, rotation: Rotation, flipped: bool) -> tuple[Cell, ...]:
    """Cells of a shape relative to its position: rotate, normalise, flip, normalise (docs/spec/rules.md §4).

    Sorted row by row (y, then x), so that equal cell sets give equal tuples.
    """
    cells = _normalise([_ROTATE[rotation](x, y) for x, y in shape.base_cells])
    if flipped:
        cells = _normalise([(-x, y) for x, y in cells])
    return tuple(sorted(cells, key=lambda c: (c[1], c[0])))


@dataclass(frozen=True)
class Orientation:
    """One distinct cell set of a shape, with the (rotation, flip) pair the server would use for it."""

    shape: Shape
    rotation: Rotation
    flipped: bool
    cells: tuple[Cell, ...]  # relative to the position, sorted by (y, x)

    @property
    def width(self) -> int:
        return 1 + max(x for x, _ in self.cells)

    @property
    def height(self) -> int:
        return 1 + max(y for _, y in self.cells)


# The order in which the server's ``variants`` map tries the pairs (docs/spec/rules.md §4).
TRANSFORM_ORDER: tuple[tuple[Rotation, bool], ...] = tuple(
    (rotation, flipped) for rotation in Rotation for flipped in (False, True)
)


@cache
def orientations(shape: Shape) -> tuple[Orientation, ...]:
    """Every distinct orientation of a shape, each with its canonical (rotation, flip) pair."""
    seen: dict[tuple[Cell, ...], Orientation] = {}
    for rotation, flipped in TRANSFORM_ORDER:
        cells = transform(shape, rotation, flipped)
        if cells not in seen:
            seen[cells] = Orientation(shape, rotation, flipped, cells)
    return tuple(seen.values())


def canonical(shape: Shape, rotation: Rotation, flipped: bool) -> Orientation:
    """The canonical orientation with the same cells as ``(rotation, flipped)``."""
    cells = transform(shape, rotation, flipped)
    for orientation in orientations(shape):
        if orientation.cells == cells:
            return orientation
    raise AssertionError("unreachable: every transform is one of the orientations")
