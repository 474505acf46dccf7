"""Precomputed placement tables: every orientation of every shape at every position on the board.

A *placement* is one distinct cell set of one shape on the board (there are 91 orientations, so about
28 000 placements). Move generation works on placement ids: for each cell, the placements that cover
it; for each placement, its cells as a bitboard. Cell ``(x, y)`` is bit ``y * 20 + x``.
"""

from __future__ import annotations

import numpy as np

from blokus.model.pieces import SHAPES, Orientation, Shape, orientations
from blokus.model.season import BOARD_SIZE

N = BOARD_SIZE
NCELLS = N * N
WORDS = (NCELLS + 63) // 64  # 7 uint64 words hold a board
FULL = (1 << NCELLS) - 1
_COL0 = sum(1 << (y * N) for y in range(N))  # bits of column x = 0
NOT_LEFT = FULL & ~_COL0  # cells with x > 0
NOT_RIGHT = FULL & ~(_COL0 << (N - 1))  # cells with x < 19
CORNERS = (1 << 0) | (1 << (N - 1)) | (1 << (N * (N - 1))) | (1 << (NCELLS - 1))


def bit(x: int, y: int) -> int:
    return 1 << (y * N + x)


def edge_neighbours(bb: int) -> int:
    """Cells edge-adjacent to any cell of ``bb`` (on the board)."""
    return (((bb << 1) & NOT_LEFT) | ((bb >> 1) & NOT_RIGHT) | (bb << N) | (bb >> N)) & FULL


def diagonal_neighbours(bb: int) -> int:
    """Cells diagonally adjacent to any cell of ``bb`` (on the board)."""
    right = (bb << 1) & NOT_LEFT
    left = (bb >> 1) & NOT_RIGHT
    return ((right << N) | (right >> N) | (left << N) | (left >> N)) & FULL


def to_words(bb: int) -> np.ndarray:
    return np.frombuffer(bb.to_bytes(WORDS * 8, "little"), dtype=np.uint64)


# --- the tables -------------------------------------------------------------------------------------

ORIENTATIONS: tuple[Orientation, ...] = tuple(o for s in SHAPES for o in orientations(s))

# Built with numpy, an orientation at a time: the tables are made at every start of every process (a Python
# loop over the placements' bits cost ~0.35 s of it). Placement ids run orientation by orientation, then row by
# row, then column by column; a placement's cells are listed in ascending order.
_base: list[int] = []  # first placement id of each orientation
_span: list[int] = []  # positions per row of each orientation (21 - width)
_cells_parts: list[np.ndarray] = []
_x_parts: list[np.ndarray] = []
_y_parts: list[np.ndarray] = []
MASKS: list[int] = []  # placement id -> cells as a Python int bitboard

for _o in ORIENTATIONS:
    _base.append(len(MASKS))
    _span.append(N - _o.width + 1)
    _rel = sorted(dy * N + dx for dx, dy in _o.cells)
    _ys, _xs = np.divmod(np.arange((N - _o.height + 1) * (N - _o.width + 1)), N - _o.width + 1)
    _offsets = _ys * N + _xs
    _cells = np.full((len(_offsets), 5), NCELLS, dtype=np.intp)
    _cells[:, : len(_rel)] = _offsets[:, None] + np.array(_rel)
    _cells_parts.append(_cells)
    _x_parts.append(_xs)
    _y_parts.append(_ys)
    _rel_mask = sum(1 << c for c in _rel)
    MASKS.extend(_rel_mask << offset for offset in _offsets.tolist())

COUNT = len(MASKS)
P_ORIENT = np.repeat(np.arange(len(ORIENTATIONS), dtype=np.int16), [len(c) for c in _cells_parts])
P_SHAPE = np.array([o.shape for o in ORIENTATIONS], dtype=np.int8)[P_ORIENT]
P_X = np.concatenate(_x_parts).astype(np.int8)
P_Y = np.concatenate(_y_parts).astype(np.int8)
P_SHAPE_LIST: list[int] = P_SHAPE.tolist()
X_PARTS, Y_PARTS = tuple(_x_parts), tuple(_y_parts)  # per orientation: the x and y of its placements, in id order

# placement id -> its cell indices, padded with NCELLS (an index that is never forbidden)
P_CELLS = np.concatenate(_cells_parts)

_bits = np.zeros((COUNT, WORDS * 64), dtype=bool)  # (the padding index NCELLS is a bit past the board: cleared)
_bits[np.arange(COUNT)[:, None], P_CELLS] = True
_bits[:, NCELLS] = False
MASK_WORDS = np.frombuffer(np.packbits(_bits, axis=1, bitorder="little").tobytes(), dtype=np.uint64).reshape(
    COUNT, WORDS
)
del _bits


def forbidden_array(bb: int) -> np.ndarray:
    """``bb`` as a bool array over the cell indices, plus one always-False padding entry."""
    out = np.zeros(NCELLS + 1, dtype=bool)
    out[:NCELLS] = np.unpackbits(to_words(bb).view(np.uint8), bitorder="little")[:NCELLS]
    return out


# cell -> placement ids covering it (ascending), as a numpy array and as a Python list (for early-exit loops)
_flat_cells = P_CELLS.ravel()
_flat_ids = np.repeat(np.arange(COUNT, dtype=np.int32), 5)[_flat_cells < NCELLS]
_flat_cells = _flat_cells[_flat_cells < NCELLS]
_order = np.argsort(_flat_cells, kind="stable")  # stable: within a cell, the ids stay ascending
BY_CELL_NP: tuple[np.ndarray, ...] = tuple(
    np.split(_flat_ids[_order], np.cumsum(np.bincount(_flat_cells, minlength=NCELLS))[:-1])
)
BY_CELL: tuple[list[int], ...] = tuple(ids.tolist() for ids in BY_CELL_NP)

# (cell, set of available shapes) -> the placement ids through that cell of those shapes. Within one game
# a colour has only a few dozen shape sets, so this stays small; it is cleared when it grows too big.
_BY_CELL_SHAPES: dict[tuple[int, int], np.ndarray] = {}


def by_cell_and_shapes(cell: int, shapes: int) -> np.ndarray:
    key = (cell, shapes)
    ids = _BY_CELL_SHAPES.get(key)
    if ids is None:
        if len(_BY_CELL_SHAPES) > 50_000:
            _BY_CELL_SHAPES.clear()
        ids = BY_CELL_NP[cell]
        if shapes != (1 << len(SHAPES)) - 1:
            lut = np.array([shapes >> s & 1 for s in range(len(SHAPES))], dtype=bool)
            ids = ids[lut[P_SHAPE[ids]]]
        _BY_CELL_SHAPES[key] = ids
    return ids


def placement_id(orientation_index: int, x: int, y: int) -> int | None:
    """Id of an orientation placed at ``(x, y)``, or None if it does not fit on the board."""
    o = ORIENTATIONS[orientation_index]
    if x < 0 or y < 0 or x + o.width > N or y + o.height > N:
        return None
    return _base[orientation_index] + y * _span[orientation_index] + x


_ORIENTATION_BY_CELLS: dict[tuple[Shape, tuple[tuple[int, int], ...]], int] = {
    (o.shape, o.cells): i for i, o in enumerate(ORIENTATIONS)
}


def orientation_index(shape: Shape, rel_cells: tuple[tuple[int, int], ...]) -> int:
    return _ORIENTATION_BY_CELLS[(shape, rel_cells)]
