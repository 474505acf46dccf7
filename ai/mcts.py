"""Monte-Carlo tree search with RAVE over the compiled engine (``model.fast``): the strongest player.

Each simulation walks down the tree from the root (the move with the best blend of its own mean result
and its RAVE value — the mean result of the simulations in which the same colour played the same
placement later — plus a small exploration term and the move model's guidance, ``ai.movefeatures``),
adds one node, and plays the game to its end with a cheap biased policy: among the moves that cover the
most of the opponents' newest attach points (blocking them), large pieces are preferred (weight
``size_base ** size``). A simulation counts 1 for a win of a team, 0.5 for a draw, plus a bonus for a
margin above the search's mean. The move played is the root move with the most visits. Below the root a
node keeps only the moves the model rates at least ``prune`` times the best (they would not be tried in
time anyway; the tree grows for longer).

Everything runs in compiled code; the Python side calls ``run`` in slices of a few dozen simulations
and checks the clock and the stop flag in between (``Engine.think``), so the search is anytime and
cancellable. Early in the game only pentominoes are considered (tree and playouts) while a colour still
holds several: strong players place their big pieces first, and it cuts the branching factor.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

from ai import movefeatures as MF
from ai.base import Engine, StopFlag, TimeKeeper
from ai.compiled import Kernels
from ai.evaluate import DEFAULT_WEIGHTS, evaluate
from ai.fasteval import evaluate as fast_evaluate
from ai.fasteval import weight_vector
from ai.greedy import no_placement_move
from ai.search import LookaheadPlayer
from ai.tables import T_AWK, T_P_CENTRE, TABLES
from model import fast as F
from model import numba_cache  # noqa: F401  (before any kernel: where numba caches them)
from model.fast import (
    ANCH,
    FORB,
    FSTRIDE,
    M_HAND,
    M_TURN,
    M_VALID,
    MAX_MOVES,
    NCELLS,
    NSHAPES,
    P_CELLS,
    P_SHAPE,
    SIZES,
    T_CELLS,
    T_DIAG,
    T_PSIZE,
    T_SHAPE,
    T_SIZE,
    FastState,
)
from model.moves import Move, SetMove, SkipMove
from model.state import GameState, move_of_placement, placement_of

NCOUNT = P_CELLS.shape[0]
PENTO_MASK = sum(1 << s for s in range(NSHAPES) if SIZES[s] == 5)
P_SIZE = SIZES[P_SHAPE]  # squares per placement

# params vector (float64) indices
(
    R_EXPLORE,
    R_RAVE_BIAS,
    R_PRIOR_N,
    R_SIZE_BASE,
    R_SCORE_W,
    R_EARLY_ROUNDS,
    R_EARLY_PENTOS,
    R_ROOT_EVAL,
    R_GRADED,
    R_SHAPE_PRIOR,
    R_PLAYOUT_MOVES,
    R_EVAL_SCALE,
    R_MOVE_PRIOR,
    R_PRIOR_VALUE,
    R_SCORE_Z,
    R_PRUNE,
    R_WEIGHTS,
) = range(17)
# (R_WEIGHTS: the evaluation's weights follow)


@dataclass
class MctsParams:
    explore: float = 0.15  # UCT exploration constant (on top of RAVE)
    rave_bias: float = 0.002  # smaller: RAVE counts for longer
    prior_n: float = 4.0  # virtual visits of the move-ordering prior
    size_base: float = 5.0  # playout weight of a piece: size_base ** size
    score_weight: float = 0.1  # share of the score margin in a simulation's value
    early_rounds: int = 8  # pentominoes only before this round ...
    early_pentos: int = 3  # ... while the colour holds at least this many
    root_eval: float = 0.03  # > 0: root moves get their prior from ``ai.evaluate`` (value drop per point)
    graded: bool = False  # instead: the smallest size considered falls with the pieces placed (5, 4, 3, all)
    shape_prior: float = 0.0  # > 0: node priors also count awkward shapes and (early) the centre
    playout_moves: int = 0  # > 0: a playout stops after this many moves and the evaluation judges it
    eval_scale: float = 12.0  # evaluation points per unit of the logistic value of a stopped playout
    move_prior: float = 0.4  # > 0: node priors from the fitted move model (``ai.movefeatures``): exploration
    #                          constant of its probabilities (c P sqrt(N) log(N + 1) / n) ...
    prior_value: float = 0.5  # ... and a move's start value below the node's mean: this x (1 - sqrt(P / P_max))
    score_z: float = 0.3  # > 0: instead of score_weight, a bonus of up to this for a margin above the search's
    #                       mean margin (in standard deviations; "quality-based rewards", as Pentobi does)
    prune: float = 0.01  # > 0: below the root, keep only the moves the model rates at least this x the best
    reuse: bool = True  # keep the subtree of the position reached since the last search (not a search input)
    count: int = 0  # > 0: a count of simulations a move (the clock still stops it), to measure per simulation:
    #                 this x 0.7 e^(0.1 k) for a colour that placed k pieces (x 0.2, 0.2, 0.3 for k = 0, 1, 2), the
    #                 schedule of Pentobi's levels (count=5028: level 6's budget, 69809: level 7's)

    def vector(self) -> np.ndarray:
        head = np.array(
            [
                self.explore,
                self.rave_bias,
                self.prior_n,
                self.size_base,
                self.score_weight,
                self.early_rounds,
                self.early_pentos,
                self.root_eval,
                float(self.graded),
                self.shape_prior,
                self.playout_moves,
                self.eval_scale,
                self.move_prior,
                self.prior_value,
                self.score_z,
                self.prune,
            ],
            dtype=np.float64,
        )
        return np.concatenate([head, weight_vector(DEFAULT_WEIGHTS)])


class Tree:
    """Preallocated tree arrays (nodes and edges), reused between moves."""

    # a search of 1.6 s adds up to ~650,000 edges on a slow machine (bench/bench_mcts.py: ~80 per simulation
    # in the middle game); the arrays take memory only where written
    def __init__(self, max_nodes: int = 200_000, max_edges: int = 4_000_000) -> None:
        self.node_first = np.zeros(max_nodes, dtype=np.int32)  # first edge; -1: not expanded
        self.node_count = np.zeros(max_nodes, dtype=np.int32)
        self.node_n = np.zeros((max_nodes, 2), dtype=np.float32)  # visits, value sum for the team to move
        self.edge_pid = np.zeros(max_edges, dtype=np.int32)
        self.edge_child = np.zeros(max_edges, dtype=np.int32)
        self.edge_n = np.zeros(max_edges, dtype=np.float32)  # real visits
        self.edge_w = np.zeros(max_edges, dtype=np.float32)  # value sum for the team that moved
        self.edge_pn = np.zeros(max_edges, dtype=np.float32)  # prior: virtual visits ...
        self.edge_pw = np.zeros(max_edges, dtype=np.float32)  # ... at the node's mean value plus this (<= 0)
        self.edge_rn = np.zeros(max_edges, dtype=np.float32)  # RAVE visits
        self.edge_rw = np.zeros(max_edges, dtype=np.float32)
        self.edge_p = np.zeros(max_edges, dtype=np.float32)  # probability by the move model (move_prior > 0)
        self.counters = np.zeros(4, dtype=np.int64)  # nodes used, edges used, simulations, max depth

    def arrays(self) -> tuple:
        return (
            self.node_first,
            self.node_count,
            self.node_n,
            self.edge_pid,
            self.edge_child,
            self.edge_n,
            self.edge_w,
            self.edge_pn,
            self.edge_pw,
            self.edge_rn,
            self.edge_rw,
            self.edge_p,
            self.counters,
        )


class Scratch:
    """Work arrays of one search (position copy, move buffers, AMAF marks)."""

    def __init__(self) -> None:
        self.b = np.zeros(F.BSIZE, dtype=np.uint8)
        self.m = np.zeros(F.MSIZE, dtype=np.int64)
        self.moves = np.zeros(MAX_MOVES, dtype=np.int32)
        self.weights = np.zeros(MAX_MOVES, dtype=np.float64)
        self.seen = np.zeros(NCOUNT, dtype=np.int32)
        self.stamp = np.zeros(1, dtype=np.int64)
        self.amaf = np.zeros(4 * NCOUNT, dtype=np.int32)  # ply + 1 at which (colour, pid) was first played
        self.played = np.zeros(512, dtype=np.int64)  # (colour * NCOUNT + pid) of this simulation
        self.local = np.zeros(NCELLS + 1, dtype=np.int32)  # stamp: cell is an opponent's new attach point
        self.last = np.full(4, -1, dtype=np.int32)  # last placement per colour (local points, move lists)
        self.lists = np.zeros((4, MAX_MOVES), dtype=np.int32)  # playout move list per colour
        self.lcount = np.full(4, -1, dtype=np.int32)  # -1: not built yet in this playout
        self.marks = np.zeros(NCELLS + 1, dtype=np.uint8)  # the move model's work arrays
        self.mscratch = np.zeros(NCELLS + 1, dtype=np.int32)
        self.feats = np.zeros(MF.NFEAT, dtype=np.float64)
        self.margins = np.zeros(3, dtype=np.float64)  # the search's final margins: count, mean, sum of squares
        self.cands = np.zeros(MAX_MOVES, dtype=np.int32)  # the playout policy's candidates

    def arrays(self) -> tuple:
        return (
            self.b,
            self.m,
            self.moves,
            self.weights,
            self.seen,
            self.stamp,
            self.amaf,
            self.played,
            self.local,
            self.last,
            self.lists,
            self.lcount,
            self.marks,
            self.mscratch,
            self.feats,
            self.margins,
            self.cands,
        )


# --- compiled parts ---------------------------------------------------------------------------------


@njit(cache=True)
def seed_rng(seed):
    np.random.seed(seed)


@njit(cache=True)
def _gen(t, b, m, color, first_cells, moves, seen, stamp):
    stamp[0] += 1
    if stamp[0] >= 2_000_000_000:
        seen[:] = 0
        stamp[0] = 1
    return F.gen_moves(t, b, m, color, first_cells, moves, seen, stamp[0])


@njit(cache=True)
def _min_size(t, m, color, params):
    """The smallest piece size worth considering now (tree and playouts): big pieces first."""
    hand = m[M_HAND + color]
    if params[R_GRADED] > 0:
        placed = 0
        for s in range(NSHAPES):
            if not (hand >> s) & 1:
                placed += 1
        if placed < 3:
            return 5
        if placed < 5:
            return 4
        if placed < 7:
            return 3
        return 0
    if m[M_TURN] // 4 + 1 >= params[R_EARLY_ROUNDS]:
        return 0
    pentos = 0
    for s in range(NSHAPES):
        if (hand >> s) & 1 and t[T_SIZE + s] == 5:
            pentos += 1
    return 5 if pentos >= params[R_EARLY_PENTOS] else 0


@njit(cache=True)
def _early_filter(t, m, color, moves, n, params):
    """Keep only the moves of at least ``_min_size`` (all of them if none is that big)."""
    min_size = _min_size(t, m, color, params)
    if min_size == 0:
        return n
    k = 0
    for i in range(n):
        if t[T_PSIZE + moves[i]] >= min_size:
            moves[k] = moves[i]
            k += 1
    return k if k > 0 else n


@njit(cache=True)
def _z_bonus(stats, x):
    """Add ``x`` to the running statistics ``stats`` (count, mean, sum of squared deviations; Welford); how
    far above their mean it is, as a sigmoid in (-1, 1) of its z-score."""
    stats[0] += 1.0
    delta = x - stats[1]
    stats[1] += delta / stats[0]
    stats[2] += delta * (x - stats[1])
    if stats[2] <= 0:
        return 0.0
    z = (x - stats[1]) / math.sqrt(stats[2] / stats[0])
    return 2.0 / (1.0 + math.exp(-2.0 * z)) - 1.0


@njit(cache=True)
def _candidates(t, row, n, floor, local, mark, size_w, cands, weights):
    """The playout policy's candidates among ``row[:n]`` (see ``_playout_move``): the placements of at least
    ``floor`` squares that cover the most cells marked ``mark`` in ``local``, into ``cands`` with the running
    sums of their weights in ``weights``; returns (how many, total weight)."""
    best = -1
    nc = 0
    total = 0.0
    for i in range(n):
        pid = row[np.uint64(i)]
        size = t[np.uint64(T_PSIZE + pid)]
        if size >= floor:
            c = F.cells_marked(t, np.int64(pid), local, mark)
            if c >= best:
                if c > best:
                    best = c
                    nc = 0
                    total = 0.0
                total += size_w[np.uint64(size)]
                cands[np.uint64(nc)] = pid
                weights[np.uint64(nc)] = total
                nc += 1
    return nc, total


@njit(cache=True)
def _playout_move(t, b, m, color, first_cells, weights, seen, stamp, local, last, lists, lcount, params, size_w, cands):
    """A placement for ``color`` by the biased playout policy, or -1 if it has none: among the placements
    of at least ``_min_size`` squares that cover the most of the opponents' newest attach points (blocking
    them), one drawn with weight ``size_base ** size``.

    The colour's legal placements live in ``lists[color]``: built once per playout, then kept up to date
    (drop what became illegal, add what fits at the attach points of the colour's own last piece), then
    scored (two passes over the list per move: most of a playout's time).
    """
    row = lists[color]
    hand = m[M_HAND + color]
    fbase = FORB + color * FSTRIDE
    min_size = _min_size(t, m, color, params)
    stamp[0] += 1
    lmark = np.int32(stamp[0])
    MF.mark_local(t, b, last, color, local, lmark)
    if lcount[color] < 0:
        k = _gen(t, b, m, color, first_cells, row, seen, stamp)
    else:
        stamp[0] += 1
        mark = np.int32(stamp[0])
        k = np.int64(0)
        for i in range(lcount[color]):
            pid = row[np.uint64(i)]
            if (hand >> t[np.uint64(T_SHAPE + pid)]) & 1 and F.fits(t, b, fbase, np.int64(pid)):
                row[np.uint64(k)] = pid
                k += 1
                seen[np.uint64(pid)] = mark
        placed = last[color]
        if placed >= 0:
            for j in range(5):
                q = t[T_CELLS + 5 * placed + j]
                if q >= NCELLS:
                    break
                for i in range(4):
                    a = t[T_DIAG + 4 * q + i]
                    if a >= NCELLS:
                        break
                    if b[ANCH + color * NCELLS + a] == 1:
                        k = F.add_anchor_moves(t, b, fbase, np.int64(a), hand, row, k, seen, mark)
    lcount[color] = k
    if k == 0:
        return -1
    # scored in a second pass: calling ``_candidates`` once per placement inside the loop above cost up to four
    # times the loop itself where numba could not inline it (RESULTS §22); if none has min_size squares, every
    # size counts
    nc, total = _candidates(t, row, k, min_size, local, lmark, size_w, cands, weights)
    if nc == 0:
        nc, total = _candidates(t, row, k, np.int64(0), local, lmark, size_w, cands, weights)
    r = np.random.random() * total
    for i in range(nc):
        if weights[i] > r:
            return cands[i]
    return cands[nc - 1]


@njit(cache=True)
def _prior(t, b, m, color, pid, local, mark, params):
    """A move-ordering score in about [0, 1]: size, blocked opponent attach points, new own attach points."""
    size = t[T_PSIZE + pid]
    blocked = F.cells_marked(t, pid, local, mark)
    opp_anchor = 0
    new_anchor = 0
    fbase = FORB + color * FSTRIDE
    for j in range(5):
        q = t[T_CELLS + 5 * pid + j]
        if q >= NCELLS:
            break
        for opp in range(4):
            if (opp & 1) != (color & 1) and b[ANCH + opp * NCELLS + q] == 1:
                opp_anchor += 1
        for k in range(4):
            d = t[T_DIAG + 4 * q + k]
            if d >= NCELLS:
                break
            if b[fbase + d] == 0 and b[ANCH + color * NCELLS + d] == 0:
                new_anchor += 1
    s = min(0.12 * size + 0.08 * min(blocked, 3) + 0.06 * min(opp_anchor, 3) + 0.02 * min(new_anchor, 6), 1.0)
    k = params[R_SHAPE_PRIOR]
    if k > 0:
        fade = max(0.0, 1.0 - m[M_TURN] / 40.0)
        s += k * (0.5 * t.view(np.float64)[T_AWK + t[T_SHAPE + pid]] + 0.25 * fade * t[T_P_CENTRE + pid])
    return s


@njit(cache=True)
def _expand(
    t,
    node,
    b,
    m,
    first_cells,
    scratch_moves,
    logits,
    seen,
    stamp,
    local,
    last,
    marks,
    mscratch,
    feats,
    params,
    prior_weights,
    node_first,
    node_count,
    edge_pid,
    edge_child,
    edge_n,
    edge_w,
    edge_pn,
    edge_pw,
    edge_rn,
    edge_rw,
    edge_p,
    counters,
):
    first = counters[1]
    if first + MAX_MOVES > edge_pid.shape[0]:
        return False  # the tree is full (checked first: a failed expansion would cost a move generation)
    color = m[M_TURN] & 3
    n = _gen(t, b, m, color, first_cells, scratch_moves, seen, stamp)
    n = _early_filter(t, m, color, scratch_moves, n, params)
    pn = params[R_PRIOR_N]
    if params[R_MOVE_PRIOR] > 0 and n > 0:
        # the fitted move model: probabilities for the exploration term, start values below the node's mean
        # for the moves it rates far below the best
        MF.move_logits(t, b, m, color, last, scratch_moves, n, prior_weights, marks, mscratch, feats, logits)
        top = logits[0]
        for i in range(n):
            top = max(top, logits[i])
        if params[R_PRUNE] > 0 and node > 0:
            # moves far below the best by the model are never visited in time; leaving them out saves
            # edges (the tree grows for longer) and selection time
            cut = top + math.log(params[R_PRUNE])
            k = 0
            for i in range(n):
                if logits[i] >= cut:
                    scratch_moves[k] = scratch_moves[i]
                    logits[k] = logits[i]
                    k += 1
            n = k
        total = 0.0
        for i in range(n):
            logits[i] = math.exp(logits[i] - top)
            total += logits[i]
        scale = params[R_PRIOR_VALUE]
        for i in range(n):
            e = first + i
            edge_p[e] = logits[i] / total
            edge_pw[e] = -scale * (1.0 - math.sqrt(logits[i]))
    else:
        mark = np.int32(stamp[0])
        MF.mark_local(t, b, last, color, local, mark)
        best = 0.0
        for i in range(n):
            p = _prior(t, b, m, color, np.int64(scratch_moves[i]), local, mark, params)
            edge_w[first + i] = p
            if p > best:
                best = p
        for i in range(n):
            e = first + i
            # the best moves by the prior start at the node's mean value, the rest below it, in proportion
            edge_pw[e] = max(-0.6 * (best - edge_w[e]), -0.45)
            edge_p[e] = 0.0
    for i in range(n):
        e = first + i
        edge_pid[e] = scratch_moves[i]
        edge_child[e] = -1
        edge_n[e] = 0.0
        edge_pn[e] = pn
        edge_w[e] = 0.0
        edge_rn[e] = 0.0
        edge_rw[e] = 0.0
    node_first[node] = first
    node_count[node] = n
    counters[1] = first + n
    return True


@njit(cache=True)
def _select(node, node_first, node_count, node_n, edge_n, edge_w, edge_pn, edge_pw, edge_rn, edge_rw, edge_p, params):
    first = node_first[node]
    count = node_count[node]
    parent_n = node_n[node, 0]
    log_n = math.log(parent_n + 1.0)
    mean = node_n[node, 1] / parent_n if parent_n > 0 else 0.5
    explore = params[R_EXPLORE]
    bias = params[R_RAVE_BIAS]
    # the move model's exploration term (as in AlphaGo and Pentobi): c P sqrt(N) log(N + 1) / n
    guide = params[R_MOVE_PRIOR] * math.sqrt(parent_n) * log_n
    best = -1e9
    best_e = first
    for e in range(first, first + count):
        n = edge_n[e] + edge_pn[e]
        q = (edge_w[e] + edge_pn[e] * (mean + edge_pw[e])) / n
        rn = edge_rn[e]
        if rn > 0:
            beta = rn / (rn + n + bias * rn * n)
            q = (1.0 - beta) * q + beta * edge_rw[e] / rn
        v = q + explore * math.sqrt(log_n / (edge_n[e] + 1.0)) + guide * edge_p[e] / n
        if v > best:
            best = v
            best_e = e
    return best_e


@njit(cache=True)
def _mark(color, pid, amaf, played, n_played, ply):
    """Record for RAVE that ``color`` played ``pid`` at ``ply`` (its first time in this simulation)."""
    key = color * NCOUNT + pid
    if amaf[key] == 0:
        amaf[key] = ply + 1
        played[n_played] = key
        n_played += 1
    return n_played


@njit(cache=True)
def _play_and_mark(t, b, m, pid, first_cells, last, amaf, played, n_played, ply):
    color = m[M_TURN] & 3
    last[color] = pid
    F.play(t, b, m, pid, first_cells)
    return _mark(color, pid, amaf, played, n_played, ply)


@njit(cache=True)
def _playout_turn(t, b, m, first_cells, weights, seen, stamp, local, last, lists, lcount, params, size_w, cands):
    """One turn of a playout: the colour to move places a piece by the playout policy (``_playout_move``) or,
    with none left, leaves the game. The turn then passes on with ``F.next_turn``, without ``F.play``'s check
    that the next colour can place: that check cost a third to two thirds of a playout's time, and the next
    colour's move list answers it anyway. Returns the placement, or -1."""
    color = m[M_TURN] & 3
    pid = _playout_move(
        t, b, m, color, first_cells, weights, seen, stamp, local, last, lists, lcount, params, size_w, cands
    )
    if pid < 0:
        m[M_VALID] &= ~(1 << color)
    else:
        last[color] = pid
        F.place(t, b, m, color, pid)
    F.next_turn(m)
    return pid


@njit(cache=True)
def expand_root(
    t,
    b_root,
    m_root,
    first_cells,
    last_root,
    params,
    prior_weights,
    b,
    m,
    moves,
    weights,
    seen,
    stamp,
    amaf,
    played,
    local,
    last,
    lists,
    lcount,
    marks,
    mscratch,
    feats,
    margins,
    cands,
    node_first,
    node_count,
    node_n,
    edge_pid,
    edge_child,
    edge_n,
    edge_w,
    edge_pn,
    edge_pw,
    edge_rn,
    edge_rw,
    edge_p,
    counters,
):
    """Create the root's edges (node 0) with the compiled prior, as the first simulation would."""
    F._copy(b, b_root)
    for i in range(m.shape[0]):
        m[i] = m_root[i]
    for c in range(4):
        last[c] = last_root[c]
    return _expand(
        t,
        np.int64(0),
        b,
        m,
        first_cells,
        moves,
        weights,
        seen,
        stamp,
        local,
        last,
        marks,
        mscratch,
        feats,
        params,
        prior_weights,
        node_first,
        node_count,
        edge_pid,
        edge_child,
        edge_n,
        edge_w,
        edge_pn,
        edge_pw,
        edge_rn,
        edge_rw,
        edge_p,
        counters,
    )


@njit(cache=True, nogil=True)  # nogil: a pondering thread runs beside the caller's loop and other engines
def run(
    t,
    sims,
    b_root,
    m_root,
    first_cells,
    last_root,
    params,
    prior_weights,
    b,
    m,
    moves,
    weights,
    seen,
    stamp,
    amaf,
    played,
    local,
    last,
    lists,
    lcount,
    marks,
    mscratch,
    feats,
    margins,
    cands,
    node_first,
    node_count,
    node_n,
    edge_pid,
    edge_child,
    edge_n,
    edge_w,
    edge_pn,
    edge_pw,
    edge_rn,
    edge_rw,
    edge_p,
    counters,
):
    """``sims`` simulations from the root position into the tree (node 0 must exist)."""
    path_nodes = np.zeros(256, dtype=np.int32)
    path_edges = np.zeros(256, dtype=np.int32)
    path_colors = np.zeros(256, dtype=np.int32)
    score_w = params[R_SCORE_W]
    size_w = np.zeros(6, dtype=np.float64)
    for size in range(6):
        size_w[size] = params[R_SIZE_BASE] ** size
    for _ in range(sims):
        F._copy(b, b_root)
        for i in range(m.shape[0]):
            m[i] = m_root[i]
        for c in range(4):
            last[c] = last_root[c]
        n_played = np.int64(0)  # not literal zeros: numba would compile a variant of each callee for them
        ply = np.int64(0)
        depth = 0
        node = np.int64(0)
        # --- selection and expansion
        while not F.is_over(m):
            if node_first[node] < 0:
                if not _expand(
                    t,
                    node,
                    b,
                    m,
                    first_cells,
                    moves,
                    weights,
                    seen,
                    stamp,
                    local,
                    last,
                    marks,
                    mscratch,
                    feats,
                    params,
                    prior_weights,
                    node_first,
                    node_count,
                    edge_pid,
                    edge_child,
                    edge_n,
                    edge_w,
                    edge_pn,
                    edge_pw,
                    edge_rn,
                    edge_rw,
                    edge_p,
                    counters,
                ):
                    break
            if node_count[node] == 0:
                break
            e = _select(
                node, node_first, node_count, node_n, edge_n, edge_w, edge_pn, edge_pw, edge_rn, edge_rw, edge_p, params
            )
            path_nodes[depth] = node
            path_edges[depth] = e
            path_colors[depth] = m[M_TURN] & 3
            depth += 1
            n_played = _play_and_mark(t, b, m, np.int64(edge_pid[e]), first_cells, last, amaf, played, n_played, ply)
            ply += 1
            child = edge_child[e]
            if child < 0:
                if edge_n[e] >= 1.0 and counters[0] < node_first.shape[0] and depth < 200:
                    child = counters[0]
                    counters[0] += 1
                    node_first[child] = -1
                    node_count[child] = 0
                    node_n[child, 0] = 0.0
                    node_n[child, 1] = 0.0
                    edge_child[e] = child
                    node = child
                    continue
                break
            node = child
        if depth > counters[3]:
            counters[3] = depth
        # --- playout
        for c in range(4):
            lcount[c] = -1
        budget = 1_000_000 if params[R_PLAYOUT_MOVES] <= 0 else np.int64(params[R_PLAYOUT_MOVES])
        while not F.is_over(m) and n_played < played.shape[0] - 1 and budget > 0:
            budget -= 1
            color = m[M_TURN] & 3
            pid = _playout_turn(
                t, b, m, first_cells, weights, seen, stamp, local, last, lists, lcount, params, size_w, cands
            )
            if pid >= 0:
                n_played = _mark(color, pid, amaf, played, n_played, ply)
                ply += 1
        # --- result for team ONE
        if F.is_over(m) or budget > 0:
            diff = F.margin(t, m)
            win = 1.0 if diff > 0 else (0.0 if diff < 0 else 0.5)
            if params[R_SCORE_Z] > 0:
                # a bonus by how far above the search's mean margin this one is
                v1 = win + params[R_SCORE_Z] * _z_bonus(margins, float(diff))
            else:
                v1 = (1.0 - score_w) * win + score_w * (0.5 + 0.5 * math.tanh(diff / 30.0))
        else:  # a stopped playout: the evaluation's view, as a probability
            v1 = 1.0 / (1.0 + math.exp(-fast_evaluate(t, b, m, first_cells, params[R_WEIGHTS:]) / params[R_EVAL_SCALE]))
        # --- backpropagation (values for the team that made the move) and RAVE
        for d in range(depth):
            node = path_nodes[d]
            e = path_edges[d]
            node_n[node, 0] += 1.0
            color = path_colors[d]
            v = v1 if (color & 1) == 0 else 1.0 - v1
            node_n[node, 1] += v
            edge_n[e] += 1.0
            edge_w[e] += v
            first = node_first[node]
            for f in range(first, first + node_count[node]):
                k = amaf[color * NCOUNT + edge_pid[f]]
                if k > d:
                    edge_rn[f] += 1.0
                    edge_rw[f] += v
        counters[2] += 1
        for i in range(n_played):
            amaf[played[i]] = 0


@njit(cache=True)
def copy_subtree(
    root,
    s_first,
    s_count,
    s_n,
    s_pid,
    s_child,
    s_en,
    s_ew,
    s_pn,
    s_pw,
    s_rn,
    s_rw,
    s_p,
    s_counters,
    d_first,
    d_count,
    d_n,
    d_pid,
    d_child,
    d_en,
    d_ew,
    d_pn,
    d_pw,
    d_rn,
    d_rw,
    d_p,
    d_counters,
):
    """Copy the subtree of node ``root`` of one tree into another, as its node 0 (breadth first, so the
    copy is compact); sets the copy's node and edge counts."""
    order = np.empty(s_counters[0], dtype=np.int32)  # old node id of each new node
    order[0] = root
    nodes = 1
    edges = 0
    i = 0
    while i < nodes:
        old = order[i]
        d_n[i, 0] = s_n[old, 0]
        d_n[i, 1] = s_n[old, 1]
        first = s_first[old]
        if first < 0:
            d_first[i] = -1
            d_count[i] = 0
        else:
            count = s_count[old]
            d_first[i] = edges
            d_count[i] = count
            for j in range(count):
                e = first + j
                g = edges + j
                d_pid[g] = s_pid[e]
                d_en[g] = s_en[e]
                d_ew[g] = s_ew[e]
                d_pn[g] = s_pn[e]
                d_pw[g] = s_pw[e]
                d_rn[g] = s_rn[e]
                d_rw[g] = s_rw[e]
                d_p[g] = s_p[e]
                child = s_child[e]
                if child >= 0:
                    order[nodes] = child
                    d_child[g] = nodes
                    nodes += 1
                else:
                    d_child[g] = -1
            edges += count
        i += 1
    d_counters[0] = nodes
    d_counters[1] = edges


@njit(cache=True)
def keep_root_statistics(
    old_first, old_count, node_first, node_count, edge_pid, edge_child, edge_n, edge_w, edge_rn, edge_rw
):
    """The root (node 0) was expanded afresh (all its moves, new priors): give its edges the visits, values
    and children of the same moves in its old edge list."""
    first = node_first[0]
    for i in range(first, first + node_count[0]):
        for j in range(old_first, old_first + old_count):
            if edge_pid[j] == edge_pid[i]:
                edge_child[i] = edge_child[j]
                edge_n[i] = edge_n[j]
                edge_w[i] = edge_w[j]
                edge_rn[i] = edge_rn[j]
                edge_rw[i] = edge_rw[j]
                break


# --- the player ------------------------------------------------------------------------------------

# compiled ahead of time in a child process (``ai.compiled``); until ready the player answers with the
# Python lookahead search
KERNELS = Kernels("ai.mcts", "model.fast", "ai.fasteval", "ai.movefeatures")


def prepare(wait: float | None = 0.0) -> bool:
    """Start making the compiled search ready (once per process); wait up to ``wait`` seconds
    (None: until ready). Returns whether it is ready."""
    return KERNELS.prepare(wait)


def is_ready() -> bool:
    return KERNELS.is_ready()


# the search checks the clock between slices of 5-20 ms, so it may think until this close to the deadline
# (the Python searches keep TimeKeeper's 0.2 s)
STOP_RESERVE_S = 0.05
# pondering (thinking on the opponent's time) ends after this long at the latest, or once half the tree's room
# is used (in the middle game after 5-10 s: ~200 edges a node): an opponent that thinks for minutes (a human)
# would gain the search little more
PONDER_LIMIT_S = 30.0


def counted_simulations(count: int, placed: int) -> int:
    """``MctsParams.count``'s budget for a colour that placed ``placed`` pieces (Pentobi's levels' schedule:
    the simulations get faster as the board fills, so the count grows)."""
    weight = 0.7 * math.exp(0.1 * placed) * {0: 0.2, 1: 0.2, 2: 0.3}.get(placed, 1.0)
    return max(1, math.ceil(count * weight))


class MctsPlayer(Engine):
    name = "mcts"

    def __init__(
        self,
        seed: int | None = None,
        *,
        params: MctsParams | None = None,
        max_simulations: int | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        super().__init__(seed, clock=clock)
        self.params = params or MctsParams()
        if params is None and os.environ.get("BLOKUS_MCTS_PARAMS"):  # experiments: {"playout_moves": 8, ...}
            self.params = MctsParams(**json.loads(os.environ["BLOKUS_MCTS_PARAMS"]))
        self.max_simulations = max_simulations  # a fixed budget (weaker levels, reproducible tests)
        self.tree = Tree()  # allocated here, not in the first timed search
        self._spare: Tree | None = None  # the other tree when a subtree is kept (copied over)
        self._searched: FastState | None = None  # the root position of the search in ``self.tree``
        self._pondered = 0  # simulations of the last ponder (thinking on the opponent's time)
        self._tree_lock = threading.Lock()  # one search at a time in the tree (a think, a ponder)
        self.scratch = Scratch()
        self._fallback = LookaheadPlayer(seed, clock=clock)
        prepare()  # compile in the background from the start, not at the first move

    def think(self, state: GameState, deadline: float, stop: StopFlag) -> Move:
        self.stop_pondering()  # within this move's time: at most one slice of the search
        if not KERNELS.is_ready():  # first start: still compiling
            move = self._fallback.think(state, deadline, stop)
            self.last_info = {**self._fallback.last_info, "fallback": "lookahead (compiling)"}
            return move
        timer = TimeKeeper(self.clock, deadline, stop, self.cpu_clock, reserve=STOP_RESERVE_S)
        color = state.current_color
        pids = state.legal_placements()
        if state.is_over or not len(pids):
            return no_placement_move(state, self.rng)
        if len(pids) == 1:
            return move_of_placement(color, int(pids[0]))
        with self._tree_lock:
            pondered, self._pondered = self._pondered, 0
            kept = self._search(state, timer)
            tree = self.tree
            first, count = int(tree.node_first[0]), int(tree.node_count[0])
            sims = int(tree.counters[2])
            if first < 0 or count == 0:
                best_pid = int(pids[self.rng.randrange(len(pids))])
            else:
                visits = tree.edge_n[first : first + count]
                values = (tree.edge_w[first : first + count] + 1e-3) / (visits + 1e-3)
                best = int(np.lexsort((values, visits))[-1])
                best_pid = int(tree.edge_pid[first + best])
        self.last_info = {
            "simulations": sims,
            "moves": len(pids),
            "time": timer.elapsed(),
            "depth": int(tree.counters[3]),
            "cpu_share": round(timer.share, 2),
            "kept": kept,
        }
        if pondered:
            self.last_info["pondered"] = pondered
        return move_of_placement(color, best_pid)

    def ponder(self, state: GameState, stop: StopFlag) -> None:
        """Grow the tree of ``state`` (the position after our move) while the opponent thinks: until ``stop``,
        ``PONDER_LIMIT_S`` or half the tree's room (the kept subtree is copied at the next move)."""
        if self.max_simulations is not None or self.params.count > 0 or not KERNELS.is_ready():  # a fixed budget
            return
        state = state.copy()
        while not state.is_over and not len(state.legal_placements()):
            state.push(SkipMove(state.current_color))
        if state.is_over:
            return
        # a think that was given up on (its answer came too late) may still be returning: wait for it
        with self._tree_lock:
            timer = TimeKeeper(self.clock, self.clock() + PONDER_LIMIT_S, stop, self.cpu_clock, reserve=0.0)
            self._search(state, timer, room=0.5)
            self._pondered = int(self.tree.counters[2])

    def _search(self, state: GameState, timer: TimeKeeper, room: float = 1.0) -> int:
        """Simulations from ``state`` into ``self.tree`` (its kept subtree, if any) until ``timer`` expires,
        ``max_simulations`` are done or ``room`` (a share) of the tree's nodes or edges are used. Returns the
        simulations kept from the last search."""
        root = FastState.from_state(state)
        kept = self._keep_subtree(root) if self.params.reuse else 0
        tree, scratch = self.tree, self.scratch
        last_root = np.full(4, -1, dtype=np.int32)
        if isinstance(state.last_move, SetMove):
            pid = placement_of(state.last_move)
            if pid is not None:
                last_root[state.last_move.color] = pid
        seed_rng(self.rng.randrange(2**31))
        scratch.margins[:] = 0.0
        if kept:
            tree.counters[2:] = 0  # simulations and depth of this search
        else:
            tree.counters[:] = 0
            tree.counters[0] = 1
            tree.node_first[0] = -1
            tree.node_count[0] = 0
            tree.node_n[0] = 0.0  # both columns
        params = self.params.vector()
        args = (
            root.b,
            root.m,
            root.first_cells,
            last_root,
            params,
            MF.PRIOR_WEIGHTS,
            *scratch.arrays(),
            *tree.arrays(),
        )
        # a kept node lists only the moves its prior did not prune, with the prior of an inner node: the root
        # gets all its moves and the root's priors, with the statistics gathered so far
        old_first, old_count = int(tree.node_first[0]), int(tree.node_count[0])
        if (kept or self.params.root_eval > 0) and expand_root(TABLES, *args):
            if kept:
                keep_root_statistics(
                    old_first,
                    old_count,
                    tree.node_first,
                    tree.node_count,
                    tree.edge_pid,
                    tree.edge_child,
                    tree.edge_n,
                    tree.edge_w,
                    tree.edge_rn,
                    tree.edge_rw,
                )
            if self.params.root_eval > 0:
                self._root_prior(state, tree, timer)
        self._searched = root
        max_nodes, max_edges = room * len(tree.node_first), room * len(tree.edge_pid)
        limit = self.max_simulations
        if self.params.count > 0:
            limit = counted_simulations(self.params.count, NSHAPES - len(state.undeployed(state.current_color)))
        batch = 8
        while True:
            budget = batch
            if limit is not None:
                budget = min(budget, limit - int(tree.counters[2]))
                if budget <= 0:
                    break
            if timer.expired() or tree.counters[0] >= max_nodes or tree.counters[1] >= max_edges:
                break
            t0 = time.perf_counter()
            run(TABLES, budget, *args)
            spent = time.perf_counter() - t0
            # slices of 5-20 ms of real time: the clock and the stop flag are checked often enough (a
            # descheduled slice on a loaded machine must not run far past the stop time)
            if spent < 0.005:
                batch = min(batch * 2, 4096)
            elif spent > 0.02 and batch > 1:
                batch //= 2
        return kept

    def _keep_subtree(self, root: FastState) -> int:
        """If the last search's tree holds ``root`` (the moves played since its root were searched), make
        that node the tree's root, dropping the rest; returns the simulations kept there (0: start afresh)."""
        searched, self._searched = self._searched, None
        tree = self.tree
        if searched is None or not np.array_equal(searched.first_cells, root.first_cells):
            return 0
        b, m = searched.b.copy(), searched.m.copy()
        cells_now = root.b[F.CELL : F.CELL + NCELLS]
        node = 0
        while m[M_TURN] < root.m[M_TURN] and not F.is_over(m):
            first, count = int(tree.node_first[node]), int(tree.node_count[node])
            if first < 0:
                return 0
            # the placement the colour to move made: its cells, found among the node's moves
            color = int(m[M_TURN]) & 3
            placed = np.flatnonzero((cells_now == color + 1) & (b[F.CELL : F.CELL + NCELLS] == 0))
            if not 0 < len(placed) <= 5:
                return 0
            target = np.full(5, NCELLS, dtype=np.int64)
            target[: len(placed)] = placed
            cells = np.sort(P_CELLS[tree.edge_pid[first : first + count]], axis=1)
            hits = np.flatnonzero((cells == target).all(axis=1))
            if not len(hits):
                return 0
            edge = first + int(hits[0])
            F.play(TABLES, b, m, int(tree.edge_pid[edge]), root.first_cells)
            node = int(tree.edge_child[edge])
            if node < 0:
                return 0
        if not (np.array_equal(b, root.b) and np.array_equal(m, root.m)) or tree.node_first[node] < 0:
            return 0
        if node != 0:
            spare = self._spare or Tree(len(tree.node_first), len(tree.edge_pid))
            copy_subtree(node, *tree.arrays(), *spare.arrays())
            self.tree, self._spare = spare, tree
        return int(self.tree.node_n[0, 0])

    def _root_prior(self, state: GameState, tree: Tree, timer: TimeKeeper) -> None:
        """Priors of the root moves from the tuned evaluation one ply ahead (the greedy player's view)."""
        first, count = int(tree.node_first[0]), int(tree.node_count[0])
        sign = 1.0 if state.current_color % 2 == 0 else -1.0
        values = np.empty(count)
        for i, pid in enumerate(tree.edge_pid[first : first + count].tolist()):
            if i & 15 == 15 and timer.expired():
                return
            state.push_placement(pid)
            values[i] = sign * evaluate(state)
            state.pop()
        tree.edge_pw[first : first + count] = np.maximum(-self.params.root_eval * (values.max() - values), -0.45)


def warm_up() -> None:
    """Compile (or load from numba's cache) every kernel a move calls, with the argument types it calls
    them with (a kernel first met in a move would be compiled there: a second or more, past the deadline)."""
    from model.pieces import Shape

    F.warm_up()
    tree, scratch = Tree(max_nodes=16, max_edges=2 * MAX_MOVES), Scratch()
    state = GameState(Shape.PENTO_L)
    state.push_placement(int(state.legal_placements()[0]))
    root = FastState.from_state(state)
    tree.node_first[0] = -1
    tree.counters[0] = 1
    seed_rng(0)
    args = (
        root.b,
        root.m,
        root.first_cells,
        np.full(4, -1, dtype=np.int32),
        MctsParams().vector(),
        MF.PRIOR_WEIGHTS,
        *scratch.arrays(),
        *tree.arrays(),
    )
    expand_root(TABLES, *args)
    run(TABLES, 2, *args)
    copy = Tree(max_nodes=16, max_edges=2 * MAX_MOVES)  # keeping a subtree
    copy_subtree(0, *tree.arrays(), *copy.arrays())
    keep_root_statistics(
        0,
        0,
        copy.node_first,
        copy.node_count,
        copy.edge_pid,
        copy.edge_child,
        copy.edge_n,
        copy.edge_w,
        copy.edge_rn,
        copy.edge_rw,
    )
    F.is_over(root.m)  # following the moves played since the last search
    F.play(TABLES, root.b.copy(), root.m.copy(), int(tree.edge_pid[0]), root.first_cells)
