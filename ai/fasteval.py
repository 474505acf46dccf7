"""``ai.evaluate.evaluate`` in compiled code, on the compiled engine's position arrays (``model.fast``).

The same features and weights as the reference (``tests/test_fasteval.py`` compares both on many
positions of both seasons), ~100 times faster: a board is held as 20 row bitmasks (uint32, bit x of
row y = cell (x, y)), so a reach step is a few shifts per row. Used by the compiled search, whose
leaves and move ordering need thousands of evaluations per move.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ai import evaluate as E
from model import fast as F
from model.fast import ALL_SHAPES, ANCH, CELL, FORB, FSTRIDE, M_HAND, M_MONO_FLAG, M_TURN, M_VALID, NCELLS
from model.pieces import TOTAL_SQUARES

N = F.N
ROW_MASK = (1 << N) - 1

# weight vector indices
W_POINTS, W_ANCHORS, W_AREA, W_OVERLAP, W_AWKWARD, W_CENTRE, W_DEAD, W_EXCLUSIVE, W_STEPS = range(9)
WSIZE = 9

SHAPE_AWK = np.array(E.AWK, dtype=np.float64)
SHAPE_SIZE = np.array(E.SIZE, dtype=np.int64)
# per cell: 1 in the central 14x14, 2 in the central 8x8 (the evaluation's centre term)
CENTRE_CELLS = np.array([((E.CENTRE_IN >> q) & 1) + ((E.CENTRE_MID >> q) & 1) for q in range(NCELLS)],
                        dtype=np.int64)


def weight_vector(w: E.Weights = E.DEFAULT_WEIGHTS) -> np.ndarray:
    return np.array([w.points, w.anchors, w.area, w.overlap, w.awkward, w.centre, w.dead, w.exclusive,
                     w.reach_steps], dtype=np.float64)


@njit(cache=True)
def _popcount32(x):
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) & 0xFFFFFFFF) >> 24


@njit(cache=True)
def _rows_popcount(rows):
    n = 0
    for y in range(N):
        n += _popcount32(rows[y])
    return n


@njit(cache=True)
def colour_rows(b, m, color, first_cells, anchors, reach, steps):
    """Fill ``anchors`` and ``reach`` (row masks) of ``color``; return its number of good anchors
    (anchors with a free edge neighbour). A removed colour has none of either."""
    for y in range(N):
        anchors[y] = 0
        reach[y] = 0
    if not (m[M_VALID] >> color) & 1:
        return 0
    free = np.empty(N, dtype=np.int64)
    first = m[M_HAND + color] == ALL_SHAPES
    fbase = FORB + color * FSTRIDE
    abase = ANCH + color * NCELLS
    for y in range(N):
        fr = 0
        an = 0
        for x in range(N):
            q = y * N + x
            if first:
                if b[CELL + q] == 0:
                    fr |= 1 << x
                    if first_cells[q]:
                        an |= 1 << x
            else:
                if b[fbase + q] == 0:
                    fr |= 1 << x
                if b[abase + q]:
                    an |= 1 << x
        free[y] = fr
        anchors[y] = an
    good = 0
    for y in range(N):
        nb = ((free[y] << 1) | (free[y] >> 1)) & ROW_MASK
        if y > 0:
            nb |= free[y - 1]
        if y < N - 1:
            nb |= free[y + 1]
        good += _popcount32(anchors[y] & nb)
    r = np.empty(N, dtype=np.int64)
    for y in range(N):
        reach[y] = anchors[y]
    for _ in range(steps):
        for y in range(N):
            v = reach[y] | (reach[y] << 1) | (reach[y] >> 1)
            if y > 0:
                v |= reach[y - 1]
            if y < N - 1:
                v |= reach[y + 1]
            r[y] = v & free[y]
        for y in range(N):
            reach[y] = r[y]
    return good


@njit(cache=True)
def hand_points(m, color):
    hand = m[M_HAND + color]
    if hand == 0:
        return TOTAL_SQUARES + 15 + (5 if (m[M_MONO_FLAG] >> color) & 1 else 0)
    left = 0
    for s in range(SHAPE_SIZE.shape[0]):
        if (hand >> s) & 1:
            left += SHAPE_SIZE[s]
    return TOTAL_SQUARES - left


@njit(cache=True)
def evaluate(b, m, first_cells, w):
    """Heuristic value of the position for team ONE (BLUE+RED), as ``ai.evaluate.evaluate``."""
    over = F.is_over(m)
    steps = np.int64(w[W_STEPS])
    fade = max(0.0, 1.0 - m[M_TURN] / 40.0)
    a1 = np.empty(N, dtype=np.int64)
    a2 = np.empty(N, dtype=np.int64)
    r1 = np.empty(N, dtype=np.int64)
    r2 = np.empty(N, dtype=np.int64)
    team_reach = np.zeros((2, N), dtype=np.int64)
    centre = np.zeros(4, dtype=np.int64)
    if fade > 0.0:
        for q in range(NCELLS):
            owner = b[CELL + q]
            if owner:
                centre[owner - 1] += CENTRE_CELLS[q]
    total = 0.0
    for team in range(2):
        c1 = team
        c2 = team + 2
        v = 0.0
        if not over:
            g1 = colour_rows(b, m, c1, first_cells, a1, r1, steps)
            g2 = colour_rows(b, m, c2, first_cells, a2, r2, steps)
            area = 0
            overlap = 0
            for y in range(N):
                team_reach[team, y] = r1[y] | r2[y]
                area += _popcount32(r1[y] | r2[y])
                overlap += _popcount32(a1[y] & a2[y])
            v = w[W_ANCHORS] * (g1 + g2) + w[W_AREA] * area + w[W_OVERLAP] * overlap
        for c in (c1, c2):
            hand = m[M_HAND + c]
            v += w[W_POINTS] * hand_points(m, c)
            awk = 0.0
            for s in range(SHAPE_AWK.shape[0]):
                if not (hand >> s) & 1:
                    awk += SHAPE_AWK[s]
            v += w[W_AWKWARD] * awk
            if fade > 0.0:
                v += w[W_CENTRE] * fade * centre[c]
            if not (m[M_VALID] >> c) & 1 and hand:
                v -= w[W_DEAD]
        total += v if team == 0 else -v
    if w[W_EXCLUSIVE] != 0.0 and not over:
        only0 = 0
        only1 = 0
        for y in range(N):
            only0 += _popcount32(team_reach[0, y] & ~team_reach[1, y] & ROW_MASK)
            only1 += _popcount32(team_reach[1, y] & ~team_reach[0, y] & ROW_MASK)
        total += w[W_EXCLUSIVE] * (only0 - only1)
    return total


def evaluate_state(fs: F.FastState, weights: E.Weights = E.DEFAULT_WEIGHTS) -> float:
    """The compiled evaluation of a ``FastState`` (for tests and tools)."""
    return float(evaluate(fs.b, fs.m, fs.first_cells, weight_vector(weights)))
