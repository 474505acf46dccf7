"""``ai.search.evaluate.evaluate`` in compiled code, on the compiled engine's position arrays (``model.fast``).

The same features and weights as the reference (``tests/test_fasteval.py`` compares both on many
positions of both seasons), ~100 times faster: a board is held as 20 row bitmasks (uint32, bit x of
row y = cell (x, y)), so a reach step is a few shifts per row. Used by the compiled search, whose
leaves and move ordering need thousands of evaluations per move.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from blokus.ai.search import evaluate as E
from blokus.ai.search.tables import T_AWK, T_CENTRE_CELLS
from blokus.model import fast as F
from blokus.model import numba_cache  # noqa: F401  (before any kernel: where numba caches them)
from blokus.model.fast import ALL_SHAPES, ANCH, CELL, FORB, FSTRIDE, M_HAND, M_TURN, M_VALID, NCELLS, NSHAPES, T_SIZE

N = F.N
ROW_MASK = (1 << N) - 1

NF = len(E.FEATURES)
# weight vector: reach steps, colour_area's steps, number of phases k, k phase turns, k x NF weights
# (``weight_vector``)


def weight_vector(w: E.Weights = E.DEFAULT_WEIGHTS) -> np.ndarray:
    """``w`` as the flat vector the compiled evaluation reads."""
    phases = [(w.phase_start, w.vector())] + [(t, p.vector()) for t, p in w.phases]
    out = [float(w.reach_steps), float(w.colour_steps), float(len(phases))] + [float(t) for t, _ in phases]
    for _, v in phases:
        out += v
    return np.array(out, dtype=np.float64)


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
def colour_rows(b, m, color, first_cells, anchors, reach, steps, far_steps):
    """Fill ``anchors`` and ``reach`` (row masks, within ``steps``) of ``color``; return its number of good
    anchors (anchors with a free edge neighbour) and the number of cells it reaches within ``far_steps``.
    A removed colour has none of either."""
    for y in range(N):
        anchors[y] = 0
        reach[y] = 0
    if not (m[M_VALID] >> color) & 1:
        return 0, 0
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
    cur = np.empty(N, dtype=np.int64)
    nxt = np.empty(N, dtype=np.int64)
    for y in range(N):
        reach[y] = anchors[y]
        cur[y] = anchors[y]
    far = _rows_popcount(anchors)
    for step in range(1, max(steps, far_steps) + 1):
        for y in range(N):
            v = cur[y] | (cur[y] << 1) | (cur[y] >> 1)
            if y > 0:
                v |= cur[y - 1]
            if y < N - 1:
                v |= cur[y + 1]
            nxt[y] = v & free[y]
        for y in range(N):
            cur[y] = nxt[y]
        if step == steps:
            for y in range(N):
                reach[y] = cur[y]
        if step == far_steps:
            far = _rows_popcount(cur)
    return good, far


@njit(cache=True)
def stranded_squares(t, b, m, color, first_cells):
    """``ai.search.evaluate.stranded_squares``: squares in hand of shapes that fit nowhere now."""
    hand = m[M_HAND + color]
    if hand == ALL_SHAPES or hand == 0:
        return 0
    fit = F.placeable_shapes(t, b, m, color, first_cells) if (m[M_VALID] >> color) & 1 else 0
    n = 0
    for s in range(NSHAPES):
        if (hand >> s) & 1 and not (fit >> s) & 1:
            n += np.int64(t[T_SIZE + s])
    return n


@njit(cache=True)
def team_features(t, b, m, first_cells, steps, colour_steps, mobility, stranded, out):
    """Fill ``out`` (2 x NF) with the terms of ``ai.search.evaluate.FEATURES`` per team, as
    ``ai.search.evaluate.team_features``."""
    for team in range(2):
        for i in range(NF):
            out[team, i] = 0.0
    over = F.is_over(m)
    fade = max(0.0, 1.0 - m[M_TURN] / 40.0)
    a1 = np.empty(N, dtype=np.int64)
    a2 = np.empty(N, dtype=np.int64)
    r1 = np.empty(N, dtype=np.int64)
    r2 = np.empty(N, dtype=np.int64)
    reach = np.zeros((2, N), dtype=np.int64)
    awk = t.view(np.float64)
    if fade > 0.0:
        for q in range(NCELLS):
            owner = b[CELL + q]
            if owner:
                out[(owner - 1) & 1, 5] += fade * np.int64(t[T_CENTRE_CELLS + q])
    for team in range(2):
        c1 = team
        c2 = team + 2
        if not over:
            g1, n1 = colour_rows(b, m, c1, first_cells, a1, r1, steps, colour_steps)
            g2, n2 = colour_rows(b, m, c2, first_cells, a2, r2, steps, colour_steps)
            out[team, 1] = g1 + g2
            for y in range(N):
                reach[team, y] = r1[y] | r2[y]
                out[team, 2] += _popcount32(r1[y] | r2[y])
                out[team, 3] += _popcount32(a1[y] & a2[y])
            out[team, 9] = np.sqrt(n1) + np.sqrt(n2)
            if mobility:
                for c in (c1, c2):
                    if (m[M_VALID] >> c) & 1:
                        out[team, 8] += F.count_moves(t, b, m, c, first_cells, np.int64(F.MAX_MOVES))
            if stranded:
                out[team, 10] = stranded_squares(t, b, m, c1, first_cells) + stranded_squares(t, b, m, c2, first_cells)
        for c in (c1, c2):
            hand = m[M_HAND + c]
            out[team, 0] += F.points(t, m, c)
            for s in range(NSHAPES):
                if not (hand >> s) & 1:
                    out[team, 4] += awk[T_AWK + s]
            if not (m[M_VALID] >> c) & 1 and hand:
                out[team, 6] += 1.0
    if not over:
        for y in range(N):
            out[0, 7] += _popcount32(reach[0, y] & ~reach[1, y] & ROW_MASK)
            out[1, 7] += _popcount32(reach[1, y] & ~reach[0, y] & ROW_MASK)


@njit(cache=True)
def evaluate(t, b, m, first_cells, w):
    """Heuristic value of the position for team ONE (BLUE+RED), as ``ai.search.evaluate.evaluate``."""
    k = np.int64(w[2])
    base = 3 + k
    # the phase weights at this turn
    turn = m[M_TURN]
    lo = 0
    frac = 0.0
    if k > 1 and turn > w[3]:
        lo = k - 1
        for p in range(k - 1):
            if turn < w[3 + p + 1]:
                lo = p
                frac = (turn - w[3 + p]) / (w[3 + p + 1] - w[3 + p])
                break
    weights = np.empty(NF, dtype=np.float64)
    for i in range(NF):
        wi = w[base + lo * NF + i]
        if frac > 0.0:
            wi += frac * (w[base + (lo + 1) * NF + i] - wi)
        weights[i] = wi
    feats = np.empty((2, NF), dtype=np.float64)
    team_features(t, b, m, first_cells, np.int64(w[0]), np.int64(w[1]), weights[8] != 0.0, weights[10] != 0.0, feats)
    total = 0.0
    for i in range(NF):
        total += weights[i] * (feats[0, i] - feats[1, i])
    return total


@njit(cache=True)
def leaf_value(t, b, m, first_cells, w, sign):
    """A search leaf's value for the side with ``sign`` (+1 team ONE): a finished game is decided
    (``ai.search.evaluate.decided_value``), an unfinished one evaluated."""
    if F.is_over(m):
        diff = F.margin(t, m)
        return sign * (diff + (E.WIN if diff > 0 else (-E.WIN if diff < 0 else 0.0)))
    return sign * evaluate(t, b, m, first_cells, w)
