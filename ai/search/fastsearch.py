"""The lookahead search (``ai.search.lookahead``) in compiled code: the same pruned alpha-beta, ~30 times faster.

The algorithm is the one of ``ai.search.lookahead`` — at every node the legal placements are ranked by a cheap
static score, the best ``prefilter`` are applied and evaluated, the ``width`` best of those are searched
deeper; iterative deepening over the ``root_width`` best root moves — but positions are the compiled
engine's arrays (``model.fast``) and the evaluation is ``ai.search.fasteval``. The compiled code releases the
GIL and polls a stop flag that a watchdog thread sets at the deadline (or when the caller cancels), so
the search stays anytime and cancellable.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from blokus.ai.interface import Engine, StopFlag, TimeKeeper
from blokus.ai.search import fasteval as FE
from blokus.ai.search.compiled import Kernels
from blokus.ai.search.evaluate import TUNED_WEIGHTS, Weights
from blokus.ai.search.greedy import no_placement_move
from blokus.ai.search.lookahead import LookaheadPlayer
from blokus.ai.search.tables import T_P_AWK, T_P_CENTRE, TABLES
from blokus.model import fast as F
from blokus.model import numba_cache  # noqa: F401  (before any kernel: where numba caches them)
from blokus.model import placements as P
from blokus.model.fast import (
    ALL_SHAPES,
    ANCH,
    CORNERS_W,
    FORB,
    FSTRIDE,
    M_HAND,
    M_TURN,
    M_VALID,
    MAX_MOVES,
    NCELLS,
    T_CORNERS,
    T_PSIZE,
)
from blokus.model.moves import Move
from blokus.model.state import GameState, move_of_placement

ABORTED = 1e30  # returned through the recursion once the stop flag is set
MAX_PLY = 32
MAX_KEEP = 64  # the largest prefilter


@dataclass
class FastSearchParams:
    root_width: int = 20
    width: int = 6
    prefilter: int = 14
    max_depth: int = 24
    # once the search reaches the end of the game with time to spare (the endgame), it starts again
    # wider: (root width, width, prefilter) per round; the last round is (nearly) a full-width search
    widening: tuple[tuple[int, int, int], ...] = ((40, 12, 28), (80, 24, MAX_KEEP), (MAX_MOVES, MAX_KEEP, MAX_KEEP))
    # widen the opponent's replies too (exact minimax to the end), or only our own moves: against a
    # fallible opponent the narrow replies (the plausible ones) predict better than the worst case
    widen_opponents: bool = False
    # near the root the static prefilter is a poor guide (the evaluation ranks the best reply far better)
    # while there are few nodes: at plies below ``shallow_plies`` at least ``shallow_prefilter`` moves are
    # evaluated (0: off)
    shallow_plies: int = 0
    shallow_prefilter: int = MAX_KEEP


@njit(cache=True)
def static_score(t, tf, b, m, color, pid, opp_anchor, mark):
    """``ai.search.evaluate.static_scores`` of one placement (``opp_anchor[q] == mark``: an opponent's anchor; ``tf``:
    ``t.view(np.float64)``)."""
    fbase = FORB + color * FSTRIDE
    corners = 0
    for j in range(CORNERS_W):
        q = t[T_CORNERS + CORNERS_W * pid + j]
        if q >= NCELLS:
            break
        if b[fbase + q] == 0:
            corners += 1
    blocked = F.cells_marked(t, pid, opp_anchor, mark)
    fade = max(0.0, 1.0 - m[M_TURN] / 40.0)
    size = np.float64(t[T_PSIZE + pid])
    centre = np.float64(t[T_P_CENTRE + pid])
    return 1.6 * size + tf[T_P_AWK + pid] + 0.7 * corners + 1.2 * blocked + 0.3 * fade * centre


@njit(cache=True)
def _mark_opp_anchors(b, m, color, opp_anchor, mark):
    for opp in range(4):
        if (opp & 1) == (color & 1) or not (m[M_VALID] >> opp) & 1 or m[M_HAND + opp] == ALL_SHAPES:
            continue
        base = ANCH + opp * NCELLS
        for q in range(NCELLS):
            if b[base + q]:
                opp_anchor[q] = mark


# The kernels take their arrays in named groups (numba named tuples, RESULTS §32): a field is read by name, so
# two arrays of one type cannot be swapped.


class Ctx(NamedTuple):
    """Work arrays of one search: the position stack, move buffers per ply, marks, counters."""

    stack_b: np.ndarray
    stack_m: np.ndarray
    moves: np.ndarray
    cand: np.ndarray
    cand_score: np.ndarray
    seen: np.ndarray
    opp_anchor: np.ndarray
    counters: np.ndarray  # stamp, nodes, nodes cut off by the depth limit
    flag: np.ndarray  # set to 1: stop
    frame_f: np.ndarray
    frame_i: np.ndarray

    @classmethod
    def allocate(cls) -> Ctx:
        return cls(
            stack_b=np.empty((MAX_PLY + 1, F.BSIZE), dtype=np.uint8),
            stack_m=np.empty((MAX_PLY + 1, F.MSIZE), dtype=np.int64),
            moves=np.empty((MAX_PLY, MAX_MOVES), dtype=np.int32),
            cand=np.empty((MAX_PLY, MAX_KEEP), dtype=np.int32),
            cand_score=np.empty((MAX_PLY, MAX_KEEP), dtype=np.float64),
            seen=np.zeros(P.COUNT, dtype=np.int32),
            opp_anchor=np.zeros(NCELLS + 1, dtype=np.int64),
            counters=np.zeros(3, dtype=np.int64),
            flag=np.zeros(1, dtype=np.int64),
            frame_f=np.zeros((MAX_PLY + 1, 3), dtype=np.float64),
            frame_i=np.zeros((MAX_PLY + 1, 4), dtype=np.int64),
        )


class Position(NamedTuple):
    """The searched position (``model.fast``'s arrays): changed by the search, restored before it returns."""

    b: np.ndarray
    m: np.ndarray
    first_cells: np.ndarray

    @classmethod
    def of(cls, fs: F.FastState) -> Position:
        return cls(fs.b, fs.m, fs.first_cells)


class Valuation(NamedTuple):
    """How positions are valued: the evaluation's weights, for the root team (``team``; ``sign`` = +1 for
    team one, -1 for team two)."""

    w: np.ndarray
    team: int
    sign: float


class Widths(NamedTuple):
    """How wide the search goes: ``limits[1]`` = (prefilter, width) at the root team's nodes, ``limits[0]`` at
    the opponent's; ``shallow`` = (plies, prefilter): the least prefilter at plies below ``plies``."""

    limits: np.ndarray
    shallow: np.ndarray


@njit(cache=True, nogil=True)
def scored_children(t, pos, val, ply, limit, ctx):
    """Fill ``cand[ply, :k]``/``cand_score[ply, :k]`` with the best ``limit`` placements by static score and
    their values after the move (for the root team: ``sign`` * evaluation); return k (-1: stopped)."""
    b, m, first_cells, w, sign = pos.b, pos.m, pos.first_cells, val.w, val.sign
    stack_b, stack_m, moves, cand, cand_score = ctx.stack_b, ctx.stack_m, ctx.moves, ctx.cand, ctx.cand_score
    seen, opp_anchor, counters, flag = ctx.seen, ctx.opp_anchor, ctx.counters, ctx.flag
    color = m[M_TURN] & 3
    counters[0] += 1
    n = F.gen_moves(t, b, m, color, first_cells, moves[ply], seen, counters[0])
    if n == 0:
        return 0
    row = moves[ply]
    if n > limit:
        counters[0] += 1
        mark = counters[0]
        _mark_opp_anchors(b, m, color, opp_anchor, mark)
        tf = t.view(np.float64)
        # keep the ``limit`` best by static score (insertion into a short sorted list)
        k = 0
        for i in range(n):
            s = static_score(t, tf, b, m, color, np.int64(row[i]), opp_anchor, mark)
            if k == limit and s <= cand_score[ply, k - 1]:
                continue
            j = k if k < limit else limit - 1
            while j > 0 and cand_score[ply, j - 1] < s:
                cand_score[ply, j] = cand_score[ply, j - 1]
                cand[ply, j] = cand[ply, j - 1]
                j -= 1
            cand_score[ply, j] = s
            cand[ply, j] = row[i]
            if k < limit:
                k += 1
    else:
        k = n
        for i in range(n):
            cand[ply, i] = row[i]
    for i in range(k):
        if (i & 7) == 7 and flag[0]:
            return -1
        F.push(t, b, m, stack_b, stack_m, ply, np.int64(cand[ply, i]), first_cells)
        cand_score[ply, i] = FE.leaf_value(t, b, m, first_cells, w, sign)
        F.restore(b, m, stack_b, stack_m, ply)
    counters[1] += k
    return k


@njit(cache=True, nogil=True)
def _sort_children(cand, cand_score, ply, k, descending):
    for i in range(1, k):
        s = cand_score[ply, i]
        p = cand[ply, i]
        j = i
        while j > 0 and ((cand_score[ply, j - 1] < s) if descending else (cand_score[ply, j - 1] > s)):
            cand_score[ply, j] = cand_score[ply, j - 1]
            cand[ply, j] = cand[ply, j - 1]
            j -= 1
        cand_score[ply, j] = s
        cand[ply, j] = p


@njit(cache=True, nogil=True)
def alphabeta(t, pos, val, widths, depth, alpha, beta, ply0, ctx):
    """Minimax value (for the root team) of the current, not finished position, ``depth`` plies deep;
    ``ABORTED`` once the stop flag is set (the position is then restored too). ``widths``: how many moves
    are evaluated and searched at each node (``Widths``).

    Written as a loop over an explicit stack (``frame_f``: alpha, beta, best; ``frame_i``: depth left,
    children to search, next child, maximizing) rather than by recursion: numba's on-disk cache cannot
    hold a recursive function safely."""
    b, m, first_cells, w, team, sign = pos.b, pos.m, pos.first_cells, val.w, val.team, val.sign
    limits, shallow = widths.limits, widths.shallow
    stack_b, stack_m, cand, cand_score = ctx.stack_b, ctx.stack_m, ctx.cand, ctx.cand_score
    counters, flag, frame_f, frame_i = ctx.counters, ctx.flag, ctx.frame_f, ctx.frame_i
    ply = ply0
    frame_f[ply, 0] = alpha
    frame_f[ply, 1] = beta
    frame_i[ply, 0] = depth
    v = 0.0
    while True:
        # --- enter the node at ``ply`` (the current position)
        k = -1
        maximize = (m[M_TURN] & 1) == team
        side = 1 if maximize else 0
        prefilter = limits[side, 0]
        if ply < shallow[0] and prefilter < shallow[1]:
            prefilter = shallow[1]
        if not flag[0]:
            k = scored_children(t, pos, val, ply, prefilter, ctx)
        if k < 0:
            if ply > ply0:
                F.restore(b, m, stack_b, stack_m, ply0)
            return ABORTED
        descend = False
        if k == 0:  # only with a hand-built state: the colour can only skip
            v = FE.leaf_value(t, b, m, first_cells, w, sign)
        else:
            _sort_children(cand, cand_score, ply, k, maximize)
            if frame_i[ply, 0] <= 1:
                v = cand_score[ply, 0]
                counters[2] += 1
            else:
                frame_f[ply, 2] = -1e18 if maximize else 1e18
                frame_i[ply, 1] = min(limits[side, 1], k)
                frame_i[ply, 2] = 0
                frame_i[ply, 3] = 1 if maximize else 0
                descend = True
        # --- go down to the next child, or hand a finished node's value up
        while True:
            if descend:
                F.push(t, b, m, stack_b, stack_m, ply, np.int64(cand[ply, frame_i[ply, 2]]), first_cells)
                if not F.is_over(m):
                    ply += 1
                    frame_f[ply, 0] = frame_f[ply - 1, 0]
                    frame_f[ply, 1] = frame_f[ply - 1, 1]
                    frame_i[ply, 0] = frame_i[ply - 1, 0] - 1
                    break
                child = FE.leaf_value(t, b, m, first_cells, w, sign)
                F.restore(b, m, stack_b, stack_m, ply)
            else:
                if ply == ply0:
                    return v
                ply -= 1
                F.restore(b, m, stack_b, stack_m, ply)
                child = v
            if frame_i[ply, 3]:
                if child > frame_f[ply, 2]:
                    frame_f[ply, 2] = child
                if frame_f[ply, 2] > frame_f[ply, 0]:
                    frame_f[ply, 0] = frame_f[ply, 2]
            else:
                if child < frame_f[ply, 2]:
                    frame_f[ply, 2] = child
                if frame_f[ply, 2] < frame_f[ply, 1]:
                    frame_f[ply, 1] = frame_f[ply, 2]
            frame_i[ply, 2] += 1
            if frame_f[ply, 0] >= frame_f[ply, 1] or frame_i[ply, 2] >= frame_i[ply, 1]:
                v = frame_f[ply, 2]
                descend = False
            else:
                descend = True


@njit(cache=True, nogil=True)
def root_values(t, pos, val, pids, out, ctx):
    """The value (for the root team) after each root move, into ``out``; False if stopped."""
    b, m, first_cells, w, sign = pos.b, pos.m, pos.first_cells, val.w, val.sign
    stack_b, stack_m, flag = ctx.stack_b, ctx.stack_m, ctx.flag
    for i in range(pids.shape[0]):
        if (i & 15) == 15 and flag[0]:
            return False
        F.push(t, b, m, stack_b, stack_m, np.int64(0), np.int64(pids[i]), first_cells)
        out[i] = FE.leaf_value(t, b, m, first_cells, w, sign)
        F.restore(b, m, stack_b, stack_m, np.int64(0))
    return True


@njit(cache=True, nogil=True)
def search_move(t, pos, val, widths, pid, depth, alpha, ctx):
    """The value of root move ``pid`` searched ``depth`` plies (the move included)."""
    b, m, first_cells = pos.b, pos.m, pos.first_cells
    F.push(t, b, m, ctx.stack_b, ctx.stack_m, np.int64(0), pid, first_cells)
    if F.is_over(m):
        v = FE.leaf_value(t, b, m, first_cells, val.w, val.sign)
    else:
        v = alphabeta(t, pos, val, widths, depth - 1, alpha, 1e18, np.int64(1), ctx)
    F.restore(b, m, ctx.stack_b, ctx.stack_m, np.int64(0))
    return v


class _Watchdog:
    """Sets the search's stop flag when the time keeper says so (polled every few milliseconds)."""

    def __init__(self, timer: TimeKeeper, flag: np.ndarray) -> None:
        self.timer = timer
        self.flag = flag
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, name="blokus-search-watchdog", daemon=True)

    def _run(self) -> None:
        while not self.done.wait(0.003):
            if self.timer.expired():
                self.flag[0] = 1
                return

    def __enter__(self) -> _Watchdog:
        self.flag[0] = 1 if self.timer.expired() else 0
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()


# compiled ahead of time in a child process (``ai.search.compiled``); until ready the player answers with the
# Python lookahead search
KERNELS = Kernels("blokus.ai.search.fastsearch", "blokus.model.fast", "blokus.ai.search.fasteval")


class FastLookaheadPlayer(Engine):
    """The default AI (``lookahead``): the compiled search with the phased, outcome-fitted weights."""

    name = "lookahead"

    def __init__(
        self,
        seed: int | None = None,
        *,
        weights: Weights | None = None,
        params: FastSearchParams | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        super().__init__(seed, clock=clock)
        self.weights = weights or TUNED_WEIGHTS
        self.params = params or FastSearchParams()
        self.ctx = Ctx.allocate()
        self._fallback = LookaheadPlayer(seed, clock=clock)
        # the watchdog thread asks the time keeper, so the CPU share is the process's (the search itself
        # runs without the GIL)
        self.cpu_clock = time.process_time

    def think(self, state: GameState, deadline: float, stop: StopFlag) -> Move:
        if not KERNELS.prepare():  # first start: compiling in the background (started by the first move)
            self._fallback.clock = self.clock
            move = self._fallback.think(state, deadline, stop)
            self.last_info = {**self._fallback.last_info, "fallback": "Python lookahead (compiling)"}
            return move
        return self.think_compiled(state, deadline, stop)

    def think_compiled(self, state: GameState, deadline: float, stop: StopFlag) -> Move:
        """``think`` with the compiled kernels, ready or not (``warm_up`` compiles them this way)."""
        timer = TimeKeeper(self.clock, deadline, stop, self.cpu_clock)
        color = state.color
        pids = state.legal_placements()
        if state.is_over or not len(pids):
            return no_placement_move(state, self.rng)
        pos = Position.of(state.compiled().copy())  # the search writes in its arrays
        team = color % 2
        val = Valuation(FE.weight_vector(self.weights), team, 1.0 if team == 0 else -1.0)
        p = self.params
        ctx = self.ctx
        ctx.counters[1] = 0
        best_pid = int(pids[self.rng.randrange(len(pids))])
        depth_done = width_done = 0
        with _Watchdog(timer, ctx.flag):
            values = np.empty(len(pids))
            root_pids = pids.astype(np.int32)
            if root_values(TABLES, pos, val, root_pids, values, ctx):
                jitter = np.array([self.rng.random() * 1e-6 for _ in range(len(pids))])
                order = np.argsort(-(values + jitter), kind="stable")
                ranked = [int(root_pids[i]) for i in order]
                best_pid, depth_done = ranked[0], 1
                ctx.counters[1] += len(pids)
                turns_left = state.season.turn_limit - state.turn
                rounds = [(p.root_width, p.width, p.prefilter), *p.widening]
                shallow = np.array([p.shallow_plies, min(p.shallow_prefilter, MAX_KEEP)], dtype=np.int64)
                for round_no, (root_width, width, prefilter) in enumerate(rounds if len(ranked) > 1 else ()):
                    to_the_end = False
                    opponent = (prefilter, width) if p.widen_opponents or round_no == 0 else (p.prefilter, p.width)
                    # the kernels' arrays hold MAX_KEEP candidates and MAX_PLY plies: wider or deeper settings are cut
                    limits = np.minimum(np.array([opponent, (prefilter, width)], dtype=np.int64), MAX_KEEP)
                    widths = Widths(limits, shallow)
                    for depth in range(2, min(p.max_depth, MAX_PLY) + 1):
                        ranked, complete = self._iteration(pos, val, widths, ranked[:root_width], depth, ranked)
                        if round_no == 0:
                            best_pid = ranked[0]
                        if not complete:
                            break
                        if depth >= turns_left or ctx.counters[2] == 0:  # every line reaches the end of the game
                            # a wider round overrules the narrower one only with lines to the end
                            best_pid, depth_done, width_done = ranked[0], depth, width
                            to_the_end = True
                            break
                        if round_no == 0:
                            depth_done, width_done = depth, width
                    if not to_the_end:
                        break
        self.last_info = {
            "depth": depth_done,
            "width": width_done,
            "nodes": int(ctx.counters[1]),
            "moves": len(pids),
            "time": timer.elapsed(),
            "cpu_share": round(timer.share, 2),
        }
        return move_of_placement(color, best_pid)

    def _iteration(
        self, pos: Position, val: Valuation, widths: Widths, candidates: list[int], depth: int, ranked: list[int]
    ) -> tuple[list[int], bool]:
        """One root iteration; returns the new ranking and whether it completed (as ``ai.search.lookahead``)."""
        ctx = self.ctx
        results: list[tuple[float, int]] = []
        ctx.counters[2] = 0
        alpha = -1e18
        complete = True
        for pid in candidates:
            v = search_move(TABLES, pos, val, widths, pid, depth, alpha, ctx)
            if v == ABORTED:
                complete = False
                break
            results.append((v, pid))
            if v > alpha:
                alpha = v
        if not complete and len(results) < 2:
            return ranked, False
        results.sort(key=lambda t: -t[0])
        searched = [pid for _, pid in results]
        seen = set(searched)
        return searched + [pid for pid in ranked if pid not in seen], complete


def warm_up() -> None:
    """Compile (or load from numba's cache) every kernel of the search: a two-ply think without a clock."""
    from blokus.model.pieces import Shape

    state = GameState(Shape.PENTO_L)
    state.push_placement(int(state.legal_placements()[0]))
    player = FastLookaheadPlayer(0, params=FastSearchParams(root_width=2, max_depth=3))
    player.think_compiled(state, time.monotonic() + 3600.0, threading.Event())
