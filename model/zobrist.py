"""The Zobrist key of a position: one 64-bit number, the same for equal positions whatever the moves that led to them.

A position is the board (the owner of every cell), the pieces each colour has left, the turn (so the colour to move
and the rounds left), the colours still in the game, which colours placed the MONO last (5 points), the start piece
(a colour's first move) and the season (first-move cells, turn limit). The key is the XOR of one fixed random 64-bit
number per (colour, cell) owned, per (colour, shape) placed, and per value of the small fields: a placement's number
is the XOR of its cells' and its shape's, so a push XORs one number. The numbers are drawn once from a fixed seed
(keys are the same in every process and run). Both position classes (``model.state.GameState`` and the player API's)
key and compare by it.
"""

from __future__ import annotations

import hashlib

import numpy as np

from blokus.model import placements as P
from blokus.model.pieces import COLORS, SHAPES
from blokus.model.season import Season

_KEY_RNG = np.random.default_rng(0x0B10C05)


def _randoms(*shape: int, rng: np.random.Generator = _KEY_RNG) -> np.ndarray:
    return np.frombuffer(rng.bytes(8 * int(np.prod(shape))), dtype=np.uint64).reshape(shape).copy()


Z_CELL = _randoms(len(COLORS), P.NCELLS + 1)
Z_CELL[:, P.NCELLS] = 0  # the padding cell of short pieces
Z_SHAPE = _randoms(len(COLORS), len(SHAPES))
# per colour, per placement id: the XOR of its cells' numbers and its shape's (Python ints: a push reads one)
Z_PLACE: list[list[int]] = [
    (np.bitwise_xor.reduce(Z_CELL[c][P.P_CELLS], axis=1) ^ Z_SHAPE[c][P.P_SHAPE.astype(np.intp)]).tolist()
    for c in range(len(COLORS))
]
Z_TURN: list[int] = _randoms(512).tolist()  # by turn % 512: games end by turn 100, a hand-made state may say more
Z_VALID: list[int] = _randoms(16).tolist()
Z_MONO: list[int] = _randoms(16).tolist()
Z_START: list[int] = _randoms(len(SHAPES)).tolist()
_Z_CELL_INT: list[list[int]] = Z_CELL.tolist()
_Z_SHAPE_INT: list[list[int]] = Z_SHAPE.tolist()
_ALL_SHAPES = (1 << len(SHAPES)) - 1


def season_key(season: Season) -> int:
    return int.from_bytes(hashlib.blake2b(season.name.encode(), digest_size=8).digest(), "little")


def board_key(season: Season, start_piece: int, boards: list[int], shapes: list[int]) -> int:
    """The key's part of the board and the hands (bitboards, as ``GameState.boards``/``shapes``), and of the game's
    fixed facts (start piece, season): what a push changes by one ``Z_PLACE`` number."""
    key = season_key(season) ^ Z_START[int(start_piece)]
    for c in range(len(COLORS)):
        cells, bits = _Z_CELL_INT[c], boards[c]
        while bits:
            low = bits & -bits
            key ^= cells[low.bit_length() - 1]
            bits ^= low
        placed, numbers = ~shapes[c] & _ALL_SHAPES, _Z_SHAPE_INT[c]
        while placed:
            low = placed & -placed
            key ^= numbers[low.bit_length() - 1]
            placed ^= low
    return key


def position_key(board: int, turn: int, valid: int, mono_flag: int) -> int:
    """The whole key: the board part (``board_key``) with the turn, the colours in the game and the MONO flags."""
    return board ^ Z_TURN[turn & 511] ^ Z_VALID[valid & 15] ^ Z_MONO[mono_flag & 15]
