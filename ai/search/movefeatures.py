"""What a placement does to the board around it: features for a move prior (which moves to look at first).

A strong player looks at few of the hundreds of legal moves. This module describes a placement by what its
cells, its edge neighbours and its new corners touch *before* it is made (blocked opponent corners, own
corners spoilt, contact with the partner colour, how open each new corner is, the piece's size, ...);
a log-linear model over these counts (weights fitted by ``tuning/policy.py prior`` to a stronger program's
choices) gives each move a probability. The MCTS uses it to order and explore the moves of its tree.

Compiled with numba over the arrays of ``model.fast``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from blokus.ai.search import tables as AT
from blokus.ai.search.tables import T_CENTRE_DIST
from blokus.model import numba_cache  # noqa: F401  (before any kernel: where numba caches them)
from blokus.model import placements as P
from blokus.model.fast import (
    ADJ_W,
    ANCH,
    CELL,
    CORNERS_W,
    FORB,
    FSTRIDE,
    M_TURN,
    NCELLS,
    T_ADJ,
    T_CELLS,
    T_CORNERS,
    T_DIAG,
    T_EDGE,
    T_PSIZE,
)

# feature indices (counts, except the last)
(
    X_BLOCK,
    X_PARTNER_SPOT,
    X_ADJ_PARTNER,
    X_ADJ_OPP,
    X_ADJ_SHADOW,
    X_ADJ_OWN_CORNER,
    X_ADJ_FREE,
    X_CORNER_OWN,
    X_CORNER_DEAD,
    X_CORNER_FREE0,
    X_CORNER_FREE1,
    X_CORNER_FREE2,
    X_CORNER_FREE3,
    X_CORNER_FREE4,
    X_CORNER_PARTNER,
    X_LOCAL,
    X_SIZE2,
    X_SIZE3,
    X_SIZE4,
    X_SIZE5,
    X_CENTRE,
) = range(21)
NFEAT = 21
FEATURE_NAMES = (
    "block",
    "partner_spot",
    "adj_partner",
    "adj_opp",
    "adj_shadow",
    "adj_own_corner",
    "adj_free",
    "corner_own",
    "corner_dead",
    "corner_free0",
    "corner_free1",
    "corner_free2",
    "corner_free3",
    "corner_free4",
    "corner_partner",
    "local",
    "size2",
    "size3",
    "size4",
    "size5",
    "centre",
)

# the move model's weights per phase (turn, then one per feature), fitted by ``tuning/policy.py prior`` to
# Pentobi level 6's root visits in 2 995 positions of its own games (turns 12-44); linear between phases
PRIOR_WEIGHTS = np.array(
    [
        [
            12,
            0.72,
            0.24,
            1.76,
            1.01,
            0.90,
            -1.02,
            0.15,
            -0.39,
            -0.68,
            0.54,
            0.66,
            0.68,
            0.95,
            0.94,
            -0.65,
            0.07,
            -0.87,
            -2.11,
            0.55,
            3.09,
            -2.36,
        ],
        [
            16,
            0.78,
            0.08,
            1.03,
            0.91,
            0.74,
            -0.92,
            -0.07,
            -0.00,
            -0.50,
            -0.11,
            0.12,
            0.52,
            0.71,
            0.82,
            -0.62,
            0.37,
            -1.42,
            -2.54,
            2.06,
            4.31,
            -0.46,
        ],
        [
            20,
            0.83,
            -0.12,
            0.82,
            0.75,
            0.52,
            -0.92,
            -0.18,
            0.05,
            -0.46,
            0.04,
            -0.12,
            0.39,
            0.53,
            0.66,
            -0.14,
            0.45,
            -1.87,
            1.31,
            2.60,
            4.65,
            0.31,
        ],
        [
            24,
            0.81,
            -0.00,
            0.66,
            0.59,
            0.40,
            -0.84,
            -0.30,
            0.09,
            -0.49,
            -0.14,
            -0.03,
            0.40,
            0.51,
            0.60,
            -0.15,
            0.50,
            -1.93,
            2.16,
            3.48,
            5.53,
            0.35,
        ],
        [
            28,
            0.77,
            0.03,
            0.64,
            0.57,
            0.42,
            -0.93,
            -0.30,
            -0.02,
            -0.47,
            -0.38,
            -0.05,
            0.27,
            0.38,
            0.54,
            -0.33,
            0.47,
            -1.22,
            -1.48,
            -0.26,
            1.66,
            0.48,
        ],
        [
            32,
            0.69,
            -0.14,
            0.63,
            0.60,
            0.43,
            -0.82,
            -0.26,
            0.02,
            -0.37,
            -0.32,
            0.07,
            0.27,
            0.30,
            0.54,
            -0.12,
            0.66,
            -1.18,
            -1.57,
            -0.42,
            1.42,
            0.79,
        ],
        [
            36,
            0.63,
            -0.29,
            0.57,
            0.52,
            0.37,
            -0.84,
            -0.34,
            0.10,
            -0.36,
            -0.08,
            0.10,
            0.31,
            0.36,
            0.56,
            -0.00,
            0.85,
            -0.33,
            -0.76,
            0.60,
            2.29,
            0.58,
        ],
        [
            40,
            0.73,
            -0.24,
            0.51,
            0.46,
            0.37,
            -0.78,
            -0.39,
            0.08,
            -0.35,
            -0.02,
            0.19,
            0.42,
            0.45,
            0.58,
            -0.13,
            0.79,
            -0.46,
            -0.60,
            0.75,
            2.31,
            0.02,
        ],
        [
            44,
            0.86,
            -0.30,
            0.53,
            0.57,
            0.49,
            -0.72,
            -0.35,
            -0.09,
            -0.34,
            -0.19,
            0.15,
            0.39,
            0.49,
            0.56,
            -0.11,
            0.41,
            -0.86,
            -0.74,
            0.48,
            1.96,
            0.55,
        ],
    ]
)

# bits of the per-cell marks of a position
MARK_BLOCK, MARK_PARTNER, MARK_LOCAL = 1, 2, 4
KEEP_CELL_WEIGHTS = 24  # from this many placements on, ``move_logits`` keeps each cell's weights for the call


@njit(cache=True)
def mark_local(t, b, last, color, local, mark):
    """Mark the attach points (and their free edge neighbours) of the opponents' last placements."""
    for opp in range(4):
        if (opp & 1) == (color & 1):
            continue
        pid = last[opp]
        if pid < 0:
            continue
        fbase = FORB + opp * FSTRIDE
        abase = ANCH + opp * NCELLS
        cells = T_CELLS + 5 * pid
        for j in range(5):
            q = t[np.uint64(cells + j)]
            if q >= NCELLS:
                break
            for k in range(4):
                d = t[np.uint64(T_DIAG + 4 * q + k)]
                if d >= NCELLS:
                    break
                if b[np.uint64(fbase + d)] == 0 and b[np.uint64(abase + d)] == 1:
                    local[np.uint64(d)] = mark
                    for i in range(4):
                        e = t[np.uint64(T_EDGE + 4 * d + i)]
                        if e >= NCELLS:
                            break
                        if b[np.uint64(fbase + e)] == 0:
                            local[np.uint64(e)] = mark


@njit(cache=True)
def position_marks(t, b, color, last, marks, scratch):
    """Per cell (``marks``, NCELLS + 1 bytes): an opponent's corner or a free edge neighbour of one
    (covering it blocks), the partner's corner, near an opponent's last placement."""
    marks[:] = 0
    partner = (color + 2) & 3
    for q in range(NCELLS):
        if b[ANCH + partner * NCELLS + q] == 1:
            marks[q] |= MARK_PARTNER
        for opp in range(4):
            if (opp & 1) == (color & 1) or b[ANCH + opp * NCELLS + q] == 0:
                continue
            marks[q] |= MARK_BLOCK
            fbase = FORB + opp * FSTRIDE
            for i in range(4):
                e = t[T_EDGE + 4 * q + i]
                if e >= NCELLS:
                    break
                if b[fbase + e] == 0:
                    marks[e] |= MARK_BLOCK
    scratch[:] = 0
    mark_local(t, b, last, color, scratch, np.int32(1))
    for q in range(NCELLS):
        if scratch[q] == 1:
            marks[q] |= MARK_LOCAL


@njit(cache=True)
def move_features(t, tf, b, color, pid, marks, out):
    """The features of placing ``pid`` for ``color`` (``marks`` from ``position_marks``; ``tf``:
    ``t.view(np.float64)``) into ``out``."""
    # It runs for every move of every new node of the search: the counts are kept in local integers and
    # written once at the end (adding to ``out`` cell by cell chained every count through memory: ~1.3x the
    # time), and indices are unsigned (numba then skips its check for negative ones).
    fbase = FORB + color * FSTRIDE
    abase = ANCH + color * NCELLS
    partner = (color + 2) & 3
    block = partner_spot = local = 0
    centre = 99.0
    cells = T_CELLS + 5 * pid
    for j in range(5):
        q = t[np.uint64(cells + j)]
        if q >= NCELLS:
            break
        mk = marks[np.uint64(q)]
        block += (mk & MARK_BLOCK) != 0
        partner_spot += (mk & MARK_PARTNER) != 0
        local |= (mk & MARK_LOCAL) != 0
        centre = min(centre, tf[np.uint64(T_CENTRE_DIST + q)])
    adj_partner = adj_opp = adj_shadow = adj_own_corner = adj_free = 0
    adj = T_ADJ + ADJ_W * pid
    for j in range(ADJ_W):
        q = t[np.uint64(adj + j)]
        if q >= NCELLS:
            break
        owner = b[np.uint64(CELL + q)]
        if owner == partner + 1:
            adj_partner += 1
        elif owner != 0:
            adj_opp += 1
        elif b[np.uint64(fbase + q)] == 1:
            adj_shadow += 1
        elif b[np.uint64(abase + q)] == 1:
            adj_own_corner += 1
        else:
            adj_free += 1
    corner_own = corner_dead = corner_partner = 0
    corner_free = 0  # free corners by their free edge neighbours (0-4): one byte of this integer each
    corners = T_CORNERS + CORNERS_W * pid
    for j in range(CORNERS_W):
        q = t[np.uint64(corners + j)]
        if q >= NCELLS:
            break
        if b[np.uint64(fbase + q)] == 1:
            if b[np.uint64(CELL + q)] == color + 1:
                corner_own += 1
            else:
                corner_dead += 1
            continue
        free = 0
        for i in range(4):
            e = t[np.uint64(T_EDGE + 4 * q + i)]
            if e >= NCELLS:
                break
            free += b[np.uint64(fbase + e)] == 0
        corner_free += 1 << (8 * free)
        corner_partner += (marks[np.uint64(q)] & MARK_PARTNER) != 0
    out[X_BLOCK] = block
    out[X_PARTNER_SPOT] = partner_spot
    out[X_ADJ_PARTNER] = adj_partner
    out[X_ADJ_OPP] = adj_opp
    out[X_ADJ_SHADOW] = adj_shadow
    out[X_ADJ_OWN_CORNER] = adj_own_corner
    out[X_ADJ_FREE] = adj_free
    out[X_CORNER_OWN] = corner_own
    out[X_CORNER_DEAD] = corner_dead
    for f in range(5):
        out[X_CORNER_FREE0 + f] = (corner_free >> (8 * f)) & 0xFF
    out[X_CORNER_PARTNER] = corner_partner
    out[X_LOCAL] = local
    size = t[np.uint64(T_PSIZE + pid)]
    for f in range(4):
        out[X_SIZE2 + f] = 1.0 if size == f + 2 else 0.0
    out[X_CENTRE] = centre / 10.0


@njit(cache=True)
def move_logits(t, b, m, color, last, pids, n, weights, marks, scratch, cells, out):
    """The prior's logit of each of the first ``n`` placements in ``pids``; ``weights`` is
    (phases, 1 + NFEAT): the turn each phase is fitted for, then its weights (linear in between); ``cells`` is
    (4, NCELLS + 1) work space.

    The logit is linear in the features, and each count is a sum over the placement's cells, its edge
    neighbours or its corners: so a cell's weight as an edge neighbour and as a corner is worked out once per
    call, when a placement first touches the cell, and a placement's logit is a sum of those (``move_features``
    then the dot product, for every move of every new node, took about a sixth of a simulation: RESULTS §38).
    Equal to ``features_of(...) @ w`` up to the order of the additions."""
    position_marks(t, b, color, last, marks, scratch)
    turn = m[M_TURN]
    k = 0
    while k + 1 < weights.shape[0] and weights[k + 1, 0] <= turn:
        k += 1
    w = weights[k, 1:].copy()  # this turn's weights, once for all moves
    if k + 1 < weights.shape[0] and turn > weights[k, 0]:
        a = (turn - weights[k, 0]) / (weights[k + 1, 0] - weights[k, 0])
        w = (1.0 - a) * w + a * weights[k + 1, 1:]
    tf = t.view(np.float64)
    # cells[2, q] / cells[3, q] == stamp: the cell's weight as an edge neighbour (cells[0, q]) / as a corner
    # (cells[1, q]) is worked out in this call (a new stamp a call, kept in the slot past the last cell, which no
    # table lists); with few placements a cell is rarely touched twice: the weights are then not kept
    adj_w, corner_w, adj_known, corner_known = cells[0], cells[1], cells[2], cells[3]
    keep = n >= KEEP_CELL_WEIGHTS
    if keep:
        adj_known[NCELLS] += 1.0
    stamp = adj_known[NCELLS]
    fbase = FORB + color * FSTRIDE
    abase = ANCH + color * NCELLS
    partner = (color + 2) & 3
    w_block, w_partner_spot, w_local, w_centre = w[X_BLOCK], w[X_PARTNER_SPOT], w[X_LOCAL], w[X_CENTRE] / 10.0
    for i in range(n):
        pid = np.int64(pids[i])
        z = 0.0
        local = 0
        centre = 99.0
        row = T_CELLS + 5 * pid
        for j in range(5):
            q = t[np.uint64(row + j)]
            if q >= NCELLS:
                break
            mk = marks[np.uint64(q)]
            if mk & MARK_BLOCK:
                z += w_block
            if mk & MARK_PARTNER:
                z += w_partner_spot
            local |= mk & MARK_LOCAL
            centre = min(centre, tf[np.uint64(T_CENTRE_DIST + q)])
        if local:
            z += w_local
        z += w_centre * centre
        size = t[np.uint64(T_PSIZE + pid)]
        if size >= 2:
            z += w[X_SIZE2 + size - 2]
        adj = T_ADJ + ADJ_W * pid
        for j in range(ADJ_W):
            q = np.uint64(t[np.uint64(adj + j)])
            if q >= NCELLS:
                break
            if not keep:
                z += _adj_weight(b, q, partner, fbase, abase, w)
                continue
            if adj_known[q] != stamp:
                adj_w[q] = _adj_weight(b, q, partner, fbase, abase, w)
                adj_known[q] = stamp
            z += adj_w[q]
        corners = T_CORNERS + CORNERS_W * pid
        for j in range(CORNERS_W):
            q = np.uint64(t[np.uint64(corners + j)])
            if q >= NCELLS:
                break
            if not keep:
                z += _corner_weight(t, b, q, color, fbase, marks, w)
                continue
            if corner_known[q] != stamp:
                corner_w[q] = _corner_weight(t, b, q, color, fbase, marks, w)
                corner_known[q] = stamp
            z += corner_w[q]
        out[i] = z


@njit(cache=True, inline="always")
def _adj_weight(b, q, partner, fbase, abase, w):
    """Cell ``q``'s term in the logit of a placement it is an edge neighbour of (``move_features``' counts)."""
    owner = b[np.uint64(CELL) + q]
    if owner == partner + 1:
        return w[X_ADJ_PARTNER]
    if owner != 0:
        return w[X_ADJ_OPP]
    if b[np.uint64(fbase) + q] == 1:
        return w[X_ADJ_SHADOW]
    if b[np.uint64(abase) + q] == 1:
        return w[X_ADJ_OWN_CORNER]
    return w[X_ADJ_FREE]


@njit(cache=True, inline="always")
def _corner_weight(t, b, q, color, fbase, marks, w):
    """Cell ``q``'s term in the logit of a placement it is a corner of."""
    if b[np.uint64(fbase) + q] == 1:
        return w[X_CORNER_OWN] if b[np.uint64(CELL) + q] == color + 1 else w[X_CORNER_DEAD]
    free = 0
    for i in range(4):
        e = t[np.uint64(T_EDGE) + 4 * q + np.uint64(i)]
        if e >= NCELLS:
            break
        free += b[np.uint64(fbase + e)] == 0
    if marks[q] & MARK_PARTNER:
        return w[X_CORNER_FREE0 + free] + w[X_CORNER_PARTNER]
    return w[X_CORNER_FREE0 + free]


def features_of(state_fast, color: int, last: np.ndarray, pids: np.ndarray) -> np.ndarray:
    """(len(pids), NFEAT) features of the placements in a ``FastState`` (for fitting and tests)."""
    color = int(color)  # a Color would compile another variant of the kernels
    if not 0 <= color < 4 or len(last) != 4 or not all(-1 <= int(p) < P.COUNT for p in last):
        raise ValueError("a colour is 0-3 and last holds 4 placements (-1: none)")
    if not all(0 <= int(p) < P.COUNT for p in pids):
        raise ValueError("pids must be placement ids")
    marks = np.zeros(NCELLS + 1, dtype=np.uint8)
    scratch = np.zeros(NCELLS + 1, dtype=np.int32)
    position_marks(AT.TABLES, state_fast.b, color, last.astype(np.int32), marks, scratch)
    out = np.zeros((len(pids), NFEAT))
    for i, pid in enumerate(pids):
        move_features(AT.TABLES, AT.TABLES.view(np.float64), state_fast.b, color, int(pid), marks, out[i])
    return out
