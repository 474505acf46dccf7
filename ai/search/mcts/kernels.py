"""The MCTS's compiled parts: a simulation (selection, expansion, playout, backpropagation), the root's
expansion, and keeping a subtree for the next search.

The kernels take the arrays in named groups (``ai.search.mcts.buffers``: ``Tree``, ``Root``, ``Scratch``'s ``Sim``,
``Playout`` and ``Walk``), numba named tuples: ~10 µs to type at a call from Python (once per slice of 5-20 ms).
Inside compiled code every array passed to a kernel that is not inlined costs a little at each call, and reading a
field may cost a reference count: the hot kernels take only the groups they use and read their fields once, at
the top (RESULTS §32).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from blokus.ai.search import movefeatures as MF
from blokus.ai.search.fasteval import evaluate as fast_evaluate
from blokus.ai.search.mcts import atomics
from blokus.ai.search.mcts.buffers import NCOUNT
from blokus.ai.search.mcts.params import R
from blokus.ai.search.tables import T_AWK, T_CENTRE_DIST, T_P_CENTRE
from blokus.model import fast as F
from blokus.model import numba_cache  # noqa: F401  (before any kernel: where numba caches them)
from blokus.model.fast import (
    ADJ_W,
    ANCH,
    CELL,
    FORB,
    FSTRIDE,
    M_HAND,
    M_TURN,
    M_VALID,
    MAX_MOVES,
    NCELLS,
    NSHAPES,
    T_ADJ,
    T_CELLS,
    T_DIAG,
    T_PSIZE,
    T_SHAPE,
    T_SIZE,
)


@njit(cache=True)
def seed_rng(seed):
    np.random.seed(seed)


@njit(cache=True)
def _fresh_mark(stamp, seen, local):
    """A new mark for ``seen`` and ``local`` (the playout's marks: both are cleared before an int32 would wrap)."""
    stamp[0] += 1
    if stamp[0] >= 2_000_000_000:
        seen[:] = 0
        local[:] = 0
        stamp[0] = 1
    return np.int32(stamp[0])


@njit(cache=True)
def _gen(t, sim, playout, color, first_cells, out):
    """The legal placements of ``color`` in the simulation's position, into ``out``; returns how many."""
    mark = _fresh_mark(playout.stamp, playout.seen, playout.local)
    return F.gen_moves(t, sim.b, sim.m, color, first_cells, out, playout.seen, mark)


@njit(cache=True)
def _min_size(t, m, color, params):
    """The smallest piece size worth considering now (tree and playouts): big pieces first."""
    hand = m[M_HAND + color]
    if params[R.graded] > 0:
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
    if m[M_TURN] // 4 + 1 >= params[R.early_rounds]:
        return 0
    pentos = 0
    for s in range(NSHAPES):
        if (hand >> s) & 1 and t[T_SIZE + s] == 5:
            pentos += 1
    return 5 if pentos >= params[R.early_pentos] else 0


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
def _on_board(m):
    """The pieces on the board, of every colour."""
    placed = 0
    for c in range(4):
        hand = m[M_HAND + c]
        for s in range(NSHAPES):
            if not (hand >> s) & 1:
                placed += 1
    return placed


@njit(cache=True)
def _partner_filter(t, b, m, color, moves, n, params):
    """While the board holds fewer than ``partner_pieces`` pieces, keep only the moves of ``color`` that touch its
    partner colour along an edge, if any does (Pentobi's opening rule of its classic_2 game); not for the colour's
    first piece."""
    limit = params[R.partner_pieces]
    if limit <= 0 or n == 0 or m[M_HAND + color] == F.ALL_SHAPES or _on_board(m) >= limit:
        return n
    mate = ((color + 2) & 3) + 1  # the partner's mark in the board's cells
    k = 0
    for i in range(n):
        row = T_ADJ + ADJ_W * np.int64(moves[i])
        for j in range(ADJ_W):
            q = t[row + j]
            if q >= NCELLS:
                break
            if b[CELL + q] == mate:
                moves[k] = moves[i]
                k += 1
                break
    return k if k > 0 else n


@njit(cache=True)
def _nearest_centre(t, tf, pid):
    """How near placement ``pid`` comes to the board's centre: the least distance of its cells (at least 2)."""
    d = np.inf
    for j in range(5):
        q = t[T_CELLS + 5 * pid + j]
        if q >= NCELLS:
            break
        d = min(d, tf[T_CENTRE_DIST + q])
    return d


@njit(cache=True)
def _centre_filter(t, m, color, moves, n, params):
    """In the opening (at most ``centre_pieces`` pieces on the board), keep only the moves of ``color`` that come
    within ``centre_cut`` as near the centre as the nearest of them; not before the colour's first piece (in 2027
    a first piece nearest the centre would crowd the middle of each side, RESULTS §23)."""
    cut = params[R.centre_cut]
    if cut <= 0 or n == 0 or m[M_HAND + color] == F.ALL_SHAPES:
        return n
    if _on_board(m) > params[R.centre_pieces]:
        return n
    tf = t.view(np.float64)
    best = np.inf
    for i in range(n):
        best = min(best, _nearest_centre(t, tf, np.int64(moves[i])))
    k = 0
    for i in range(n):
        if _nearest_centre(t, tf, np.int64(moves[i])) <= best + cut:
            moves[k] = moves[i]
            k += 1
    return k


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


@njit(cache=True, inline="always")  # the playout's hottest loop: no call
def _still_legal(t, b, fbase, hand, src, n, row, seen, mark):
    """The placements of ``src[:n]`` still legal for the colour (its shape in ``hand``, no cell forbidden by the
    flags from ``fbase``), into ``row`` (may be ``src``: written behind what is read), each marked ``mark`` in
    ``seen``; returns how many."""
    k = np.int64(0)
    for i in range(n):
        pid = src[np.uint64(i)]
        if (hand >> t[np.uint64(T_SHAPE + pid)]) & 1 and F.fits(t, b, fbase, np.int64(pid)):
            row[np.uint64(k)] = pid
            k += 1
            seen[np.uint64(pid)] = mark
    return k


@njit(cache=True)
def _lists_from_root(t, b, m, color, root, row, seen, mark):
    """The legal placements of ``color`` in the simulation's position, into ``row``, from those at the root (a
    placement stays legal until the colour places its shape or a cell it covers becomes forbidden; a new one
    touches an attach point the colour did not have at the root): the root's list filtered, then the placements
    at the new attach points (marked ``mark`` in ``seen``). Returns how many. A full generation instead cost
    14-31 % of a playout's time in turns 24-48 (RESULTS §37)."""
    hand = m[M_HAND + color]
    fbase = FORB + color * FSTRIDE
    k = _still_legal(t, b, fbase, hand, root.lists[color], root.lcount[color], row, seen, mark)
    if hand == F.ALL_SHAPES:  # before its first piece: the first-move cells, the same as at the root
        return k
    abase = np.int64(ANCH + color * NCELLS)
    root_b = root.b
    words, root_words = b.view(np.uint64), root_b.view(np.uint64)
    a = np.int64(0)
    while a < NCELLS:  # a word (8 cells) at a time where a word begins: most hold no new attach point
        if a & 7 == 0:
            w = np.uint64((abase + a) >> 3)
            if words[w] & ~root_words[w] == 0:
                a += 8
                continue
        if b[np.uint64(abase + a)] != 0 and root_b[np.uint64(abase + a)] == 0:
            k = F.add_anchor_moves(t, b, fbase, a, hand, row, k, seen, mark)
        a += 1
    return k


@njit(cache=True)
def _playout_move(t, sim, playout, color, root, params, size_w):
    """A placement for ``color`` in the simulation's position by the biased playout policy, or -1 if it has none:
    among the placements of at least ``_min_size`` squares that cover the most of the opponents' newest attach
    points (blocking them), one drawn with weight ``size_base ** size``.

    The colour's legal placements live in ``playout.lists[color]``: built once per playout (``lcount[color]`` < 0)
    from the root's (``_lists_from_root``), then kept up to date (drop what became illegal, add what fits at the
    attach points of the colour's own last piece), then scored (two passes over the list per move: most of a
    playout's time).
    """
    b, m, last = sim.b, sim.m, sim.last
    lcount, stamp, seen, local = playout.lcount, playout.stamp, playout.seen, playout.local
    cands, weights = playout.cands, playout.weights
    row = playout.lists[color]
    hand = m[M_HAND + color]
    fbase = FORB + color * FSTRIDE
    min_size = _min_size(t, m, color, params)
    lmark = _fresh_mark(stamp, seen, local)
    MF.mark_local(t, b, last, color, local, lmark)
    mark = _fresh_mark(stamp, seen, local)
    if lcount[color] < 0:
        k = _lists_from_root(t, b, m, color, root, row, seen, mark)
    else:
        k = _still_legal(t, b, fbase, hand, row, lcount[color], row, seen, mark)
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
    k = params[R.shape_prior]
    if k > 0:
        fade = max(0.0, 1.0 - m[M_TURN] / 40.0)
        s += k * (0.5 * t.view(np.float64)[T_AWK + t[T_SHAPE + pid]] + 0.25 * fade * t[T_P_CENTRE + pid])
    return s


@njit(cache=True)
def _expand(t, node, sim, playout, walk, first_cells, params, prior_weights, tree):
    """Give ``node`` (the simulation's position) its edges: the legal moves (only the big pieces early; with
    ``centre_cut``, in the opening only those nearest the centre), with their priors; False if the tree has no room
    for them. The caller has claimed the node (``_claim``): its edges are published (``node_first`` set) only once
    written, for threads that share the tree."""
    if tree.counters[1] + MAX_MOVES > tree.edge_pid.shape[0]:
        return False  # the tree is full (checked first: a failed expansion would cost a move generation)
    b, m, last, moves, logits, local = sim.b, sim.m, sim.last, walk.moves, playout.weights, playout.local
    edge_pid, edge_child, edge_n, edge_w = tree.edge_pid, tree.edge_child, tree.edge_n, tree.edge_w
    edge_pn, edge_pw, edge_rn, edge_rw, edge_p = tree.edge_pn, tree.edge_pw, tree.edge_rn, tree.edge_rw, tree.edge_p
    color = m[M_TURN] & 3
    n = _gen(t, sim, playout, color, first_cells, moves)
    n = _early_filter(t, m, color, moves, n, params)
    n = _centre_filter(t, m, color, moves, n, params)
    n = _partner_filter(t, b, m, color, moves, n, params)
    pn = params[R.prior_n]
    if params[R.move_prior] > 0 and n > 0:
        # the fitted move model: probabilities for the exploration term, start values below the node's mean
        # for the moves it rates far below the best
        MF.move_logits(t, b, m, color, last, moves, n, prior_weights, walk.marks, walk.mscratch, walk.cells, logits)
        top = logits[0]
        for i in range(n):
            top = max(top, logits[i])
        if params[R.prune] > 0 and node > 0:
            # moves far below the best by the model are never visited in time; leaving them out saves
            # edges (the tree grows for longer) and selection time
            cut = top + math.log(params[R.prune])
            k = 0
            for i in range(n):
                if logits[i] >= cut:
                    moves[k] = moves[i]
                    logits[k] = logits[i]
                    k += 1
            n = k
        first = _take_edges(tree, n)
        if first < 0:
            return False
        total = 0.0
        for i in range(n):
            logits[i] = math.exp(logits[i] - top)
            total += logits[i]
        scale = params[R.prior_value]
        for i in range(n):
            e = first + i
            edge_p[e] = logits[i] / total
            edge_pw[e] = -scale * (1.0 - math.sqrt(logits[i]))
    else:
        first = _take_edges(tree, n)
        if first < 0:
            return False
        mark = np.int32(playout.stamp[0])
        MF.mark_local(t, b, last, color, local, mark)
        best = 0.0
        for i in range(n):
            p = _prior(t, b, m, color, np.int64(moves[i]), local, mark, params)
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
        edge_pid[e] = moves[i]
        edge_child[e] = -1
        edge_n[e] = 0.0
        edge_pn[e] = pn
        edge_w[e] = 0.0
        edge_rn[e] = 0.0
        edge_rw[e] = 0.0
    tree.node_count[node] = n
    atomics.store(tree.node_first, node, first)  # published: after every write above
    return True


@njit(cache=True)
def _take_edges(tree, n):
    """The first of ``n`` edges taken for one node (one atomic addition: threads sharing the tree take blocks
    apart), or -1 if they would not fit."""
    first = atomics.fetch_add(tree.counters, 1, n)
    if first + n > tree.edge_pid.shape[0]:
        return np.int64(-1)
    return np.int64(first)


@njit(cache=True)
def _claim(tree, node):
    """Whether this thread may expand ``node`` (not expanded yet): it is marked -2 until expanded, so a thread
    sharing the tree that reaches it meanwhile plays out from there instead."""
    return atomics.compare_swap(tree.node_first, node, -1, -2) == -1


@njit(cache=True)
def _new_node(tree, e, m):
    """The node edge ``e`` leads to, added to the tree now (``m``: the simulation's meta after the edge's move, as
    ``F.play`` left it); -1 if the tree is full. If another thread added one first, that one (the node taken here
    is left unused)."""
    node_first = tree.node_first
    child = atomics.fetch_add(tree.counters, 0, 1)
    if child >= node_first.shape[0]:
        return np.int64(-1)
    node_first[child] = -1
    tree.node_count[child] = 0
    tree.node_n[child, 0] = 0.0
    tree.node_n[child, 1] = 0.0
    tree.node_turn[child, 0] = m[M_TURN]
    tree.node_turn[child, 1] = m[M_VALID]
    linked = atomics.compare_swap(tree.edge_child, e, -1, child)  # publishes the node's fields
    return np.int64(child if linked == -1 else linked)


@njit(cache=True)
def _select(node, tree, params):
    """The edge of ``node`` to follow: the best blend of its mean value and its RAVE value, plus exploration.

    Per edge n = visits + prior visits, q = its mean with the prior's, blended with the RAVE mean by
    beta = rn / (rn + n + bias rn n); value q + explore sqrt(log(N + 1) / (visits + 1)) + guide P / n. Written with
    one division for the mean's two terms, one for RAVE and one for exploration (five before: RESULTS §38)."""
    node_n, edge_n, edge_w, edge_pn, edge_pw = tree.node_n, tree.edge_n, tree.edge_w, tree.edge_pn, tree.edge_pw
    edge_rn, edge_rw, edge_p = tree.edge_rn, tree.edge_rw, tree.edge_p
    first = tree.node_first[node]
    count = tree.node_count[node]
    parent_n = node_n[node, 0]
    log_n = math.log(parent_n + 1.0)
    mean = node_n[node, 1] / parent_n if parent_n > 0 else 0.5
    explore = params[R.explore] * math.sqrt(log_n)
    bias = params[R.rave_bias]
    # the move model's exploration term (as in AlphaGo and Pentobi): c P sqrt(N) log(N + 1) / n
    guide = params[R.move_prior] * math.sqrt(parent_n) * log_n
    best = -1e9
    best_e = first
    for e in range(first, first + count):
        visits = edge_n[e]
        pn = edge_pn[e]
        n = visits + pn
        inv_n = 1.0 / n
        q = (edge_w[e] + pn * (mean + edge_pw[e])) * inv_n
        rn = edge_rn[e]
        if rn > 0:
            # (1 - beta) q + beta rw / rn, with beta = rn d, d = 1 / (rn + n + bias rn n)
            d = 1.0 / (rn + n + bias * rn * n)
            q += d * (edge_rw[e] - rn * q)
        v = q + explore / math.sqrt(visits + 1.0) + guide * edge_p[e] * inv_n
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
def _end_playout_turn(t, b, m, last, color, pid):
    """A playout's turn after the policy's choice ``pid`` for ``color`` (``_playout_move``): the piece placed or,
    with none (-1), the colour out of the game. The turn then passes on with ``F.next_turn``, without ``F.play``'s
    check that the next colour can place: that check cost a third to two thirds of a playout's time, and the next
    colour's move list answers it anyway."""
    if pid < 0:
        m[M_VALID] &= ~(1 << color)
    else:
        last[color] = pid
        F.place(t, b, m, color, pid)
    F.next_turn(m)


@njit(cache=True)
def _start(sim, root):
    """Set the simulation's position to the root's."""
    F._copy(sim.b, root.b)
    m, root_m, last, root_last = sim.m, root.m, sim.last, root.last
    for i in range(m.shape[0]):
        m[i] = root_m[i]
    for c in range(4):
        last[c] = root_last[c]


@njit(cache=True)
def expand_root(t, root, params, prior_weights, scratch, tree):
    """Create the root's edges (node 0) with the compiled prior, as the first simulation would."""
    sim, playout, walk = scratch.sim, scratch.playout, scratch.walk
    _start(sim, root)
    return _expand(t, np.int64(0), sim, playout, walk, root.first_cells, params, prior_weights, tree)


@njit(cache=True, nogil=True)  # nogil: a pondering thread runs beside the caller's loop and other engines
def run(t, sims, root, params, prior_weights, scratch, tree):
    """``sims`` simulations from the root position into the tree (node 0 must exist)."""
    sim, playout, walk = scratch.sim, scratch.playout, scratch.walk
    first_cells, b, m, last, lcount = root.first_cells, sim.b, sim.m, sim.last, playout.lcount
    amaf, played, margins = walk.amaf, walk.played, walk.margins
    node_first, node_count, node_n, node_turn = tree.node_first, tree.node_count, tree.node_n, tree.node_turn
    edge_pid, edge_child, edge_n, edge_w = tree.edge_pid, tree.edge_child, tree.edge_n, tree.edge_w
    edge_rn, edge_rw, counters = tree.edge_rn, tree.edge_rw, tree.counters
    path_nodes = np.zeros(256, dtype=np.int32)
    path_edges = np.zeros(256, dtype=np.int32)
    path_colors = np.zeros(256, dtype=np.int32)
    score_w = params[R.score_weight]
    expand_inc = params[R.expand_inc]
    # a playout stopped after a number of moves counts a colour's leaving as one: the turn into it passed as the
    # tree does, so that it stops where it always did
    exact_turns = params[R.playout_moves] > 0
    # > 0 only when threads share the tree: a simulation's visits count as losses until its result is known
    vl = params[R.virtual_loss]
    # threads share the tree: the counts every simulation passes are added atomically (``atomics.add``)
    shared = params[R.shared] > 0
    node_visits = node_n.reshape(-1)  # node i's visits at 2 i, its value sum at 2 i + 1: one index for the atomics
    size_w = np.zeros(6, dtype=np.float64)
    for size in range(6):
        size_w[size] = params[R.size_base] ** size
    for _ in range(sims):
        _start(sim, root)
        n_played = np.int64(0)  # not literal zeros: numba would compile a variant of each callee for them
        ply = np.int64(0)
        depth = 0
        node = np.int64(0)
        # --- selection and expansion
        while not F.is_over(m):
            if atomics.load(node_first, node) < 0:
                # not expanded: expand it here, unless another thread sharing the tree does (play out from here)
                if not _claim(tree, node):
                    break
                if not _expand(t, node, sim, playout, walk, first_cells, params, prior_weights, tree):
                    node_first[node] = -1  # no room: unclaimed
                    break
            if node_count[node] == 0:
                break
            e = _select(node, tree, params)
            path_nodes[depth] = node
            path_edges[depth] = e
            path_colors[depth] = m[M_TURN] & 3
            depth += 1
            if vl > 0:
                atomics.add(node_visits, 2 * node, np.float32(vl))
                atomics.add(edge_n, e, np.float32(vl))
            mover, pid = m[M_TURN] & 3, np.int64(edge_pid[e])
            last[mover] = pid
            n_played = _mark(mover, pid, amaf, played, n_played, ply)
            ply += 1
            child = edge_child[e]
            if child >= 0:
                # the move's turn and who is still in were found when the child was added: F.play's check that
                # the next colour can place (a search of its moves) is not repeated (up to 10 % of a simulation)
                F.place(t, b, m, mover, pid)
                m[M_TURN] = node_turn[child, 0]
                m[M_VALID] = node_turn[child, 1]
                node = child
                continue
            visits = edge_n[e] - vl  # this simulation's own virtual loss not counted
            if visits >= 1.0 + expand_inc * (depth - 1) and counters[0] < node_first.shape[0] and depth < 200:
                F.play(t, b, m, pid, first_cells)
                child = _new_node(tree, e, m)
                if child >= 0:
                    node = child
                    continue
            elif exact_turns:
                F.play(t, b, m, pid, first_cells)
            else:
                # into the playout, which passes the turn without the check (``_end_playout_turn``): a colour
                # without a placement leaves the game at its turn there, with the same turns and score
                _end_playout_turn(t, b, m, last, mover, pid)
            break
        if depth > counters[3]:
            counters[3] = depth
        # --- playout
        for c in range(4):
            lcount[c] = -1
        budget = 1_000_000 if params[R.playout_moves] <= 0 else np.int64(params[R.playout_moves])
        while not F.is_over(m) and n_played < played.shape[0] - 1 and budget > 0:
            budget -= 1
            color = m[M_TURN] & 3
            # a playout's turn in two steps called from here: a function for both in between cost 10-15 % of a
            # playout's time (each call level read two groups' arrays again, a reference count each)
            pid = _playout_move(t, sim, playout, color, root, params, size_w)
            _end_playout_turn(t, b, m, last, color, pid)
            if pid >= 0:
                n_played = _mark(color, pid, amaf, played, n_played, ply)
                ply += 1
        # --- result for team ONE
        if F.is_over(m) or budget > 0:
            diff = F.margin(t, m)
            win = 1.0 if diff > 0 else (0.0 if diff < 0 else 0.5)
            if params[R.score_z] > 0:
                # a bonus by how far above the search's mean margin this one is
                v1 = win + params[R.score_z] * _z_bonus(margins, float(diff))
            else:
                v1 = (1.0 - score_w) * win + score_w * (0.5 + 0.5 * math.tanh(diff / 30.0))
        else:  # a stopped playout: the evaluation's view, as a probability
            value = fast_evaluate(t, b, m, first_cells, params[R.weights :])
            v1 = 1.0 / (1.0 + math.exp(-value / params[R.eval_scale]))
        # --- backpropagation (values for the team that made the move) and RAVE
        visit = 1.0 - vl  # the visit, less what the way down counted already (0 with a virtual loss of 1: no write)
        for d in range(depth):
            node = path_nodes[d]
            e = path_edges[d]
            color = path_colors[d]
            v = v1 if (color & 1) == 0 else 1.0 - v1
            if shared:
                if visit != 0.0:
                    atomics.add(node_visits, 2 * node, np.float32(visit))
                    atomics.add(edge_n, e, np.float32(visit))
                atomics.add(node_visits, 2 * node + 1, np.float32(v))
                atomics.add(edge_w, e, np.float32(v))
            else:
                node_n[node, 0] += visit
                edge_n[e] += visit
                node_n[node, 1] += v
                edge_w[e] += v
            first = node_first[node]  # RAVE: many edges, added without locks (a race may drop one)
            for f in range(first, first + node_count[node]):
                k = amaf[color * NCOUNT + edge_pid[f]]
                if k > d:
                    edge_rn[f] += 1.0
                    edge_rw[f] += v
        atomics.fetch_add(counters, 2, 1)
        for i in range(n_played):
            amaf[played[i]] = 0


@njit(cache=True)
def copy_subtree(root, src, dst):
    """Copy the subtree of node ``root`` of tree ``src`` into tree ``dst``, as its node 0 (breadth first, so the
    copy is compact); sets the copy's node and edge counts."""
    s_first, s_count, s_n, s_child = src.node_first, src.node_count, src.node_n, src.edge_child
    d_first, d_count, d_n, d_child = dst.node_first, dst.node_count, dst.node_n, dst.edge_child
    order = np.empty(src.counters[0], dtype=np.int32)  # old node id of each new node
    order[0] = root
    nodes = 1
    edges = 0
    i = 0
    while i < nodes:
        old = order[i]
        d_n[i, 0] = s_n[old, 0]
        d_n[i, 1] = s_n[old, 1]
        dst.node_turn[i, 0] = src.node_turn[old, 0]
        dst.node_turn[i, 1] = src.node_turn[old, 1]
        first = s_first[old]
        if first < 0:
            d_first[i] = -1
            d_count[i] = 0
        else:
            count = s_count[old]
            d_first[i] = edges
            d_count[i] = count
            # a node's edges are contiguous: copied field by field
            old_edges, new_edges = slice(first, first + count), slice(edges, edges + count)
            dst.edge_pid[new_edges] = src.edge_pid[old_edges]
            dst.edge_n[new_edges] = src.edge_n[old_edges]
            dst.edge_w[new_edges] = src.edge_w[old_edges]
            dst.edge_pn[new_edges] = src.edge_pn[old_edges]
            dst.edge_pw[new_edges] = src.edge_pw[old_edges]
            dst.edge_rn[new_edges] = src.edge_rn[old_edges]
            dst.edge_rw[new_edges] = src.edge_rw[old_edges]
            dst.edge_p[new_edges] = src.edge_p[old_edges]
            for j in range(count):
                child = s_child[first + j]
                if child >= 0:
                    order[nodes] = child
                    d_child[edges + j] = nodes
                    nodes += 1
                else:
                    d_child[edges + j] = -1
            edges += count
        i += 1
    dst.counters[0] = nodes
    dst.counters[1] = edges


@njit(cache=True)
def keep_root_statistics(old_first, old_count, tree):
    """The root (node 0) was expanded afresh (all its moves, new priors): give its edges the visits, values
    and children of the same moves in its old edge list (``old_first``, ``old_count``)."""
    edge_pid, edge_child, edge_n, edge_w = tree.edge_pid, tree.edge_child, tree.edge_n, tree.edge_w
    edge_rn, edge_rw = tree.edge_rn, tree.edge_rw
    first = tree.node_first[0]
    for i in range(first, first + tree.node_count[0]):
        for j in range(old_first, old_first + old_count):
            if edge_pid[j] == edge_pid[i]:
                edge_child[i] = edge_child[j]
                edge_n[i] = edge_n[j]
                edge_w[i] = edge_w[j]
                edge_rn[i] = edge_rn[j]
                edge_rw[i] = edge_rw[j]
                break
