"""The MCTS player: the search under a clock, in slices of compiled simulations; pondering; keeping the subtree
of the moves played since the last search."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

import numpy as np

from ai.base import Engine, StopFlag, TimeKeeper
from ai.compiled import Kernels
from ai.evaluate import evaluate
from ai.greedy import no_placement_move
from ai.mcts.buffers import Root, Scratch, Tree
from ai.mcts.kernels import copy_subtree, expand_root, keep_root_statistics, run, seed_rng
from ai.mcts.params import MctsParams
from ai.movefeatures import PRIOR_WEIGHTS
from ai.search import LookaheadPlayer
from ai.tables import TABLES
from model import fast as F
from model.fast import M_TURN, MAX_MOVES, NCELLS, NSHAPES, P_CELLS, FastState
from model.moves import Move, SetMove, SkipMove
from model.state import GameState, move_of_placement, placement_of

# compiled ahead of time in a child process (``ai.compiled``); until ready the player answers with the
# Python lookahead search
KERNELS = Kernels("ai.mcts", "ai.mcts.kernels", "model.fast", "ai.fasteval", "ai.movefeatures")


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
        self.params = params or MctsParams()  # a variant by name: ``mcts:KEY=VALUE,...`` (``ai.make_player``)
        self.max_simulations = max_simulations  # a fixed budget (weaker levels, reproducible tests)
        self.tree = Tree.allocate()  # allocated here, not in the first timed search
        self._spare: Tree | None = None  # the other tree when a subtree is kept (copied over)
        self._searched: FastState | None = None  # the root position of the search in ``self.tree``
        self._pondered = 0  # simulations of the last ponder (thinking on the opponent's time)
        self._tree_lock = threading.Lock()  # one search at a time in the tree (a think, a ponder)
        self.scratch = Scratch.allocate()
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
        scratch.walk.margins[:] = 0.0
        if kept:
            tree.counters[2:] = 0  # simulations and depth of this search
        else:
            tree.counters[:] = 0
            tree.counters[0] = 1
            tree.node_first[0] = -1
            tree.node_count[0] = 0
            tree.node_n[0] = 0.0  # both columns
        start = Root.of(root, last_root)
        params = self.params.vector()
        # a kept node lists only the moves its prior did not prune, with the prior of an inner node: the root
        # gets all its moves and the root's priors, with the statistics gathered so far
        old_first, old_count = int(tree.node_first[0]), int(tree.node_count[0])
        if (kept or self.params.root_eval > 0) and expand_root(TABLES, start, params, PRIOR_WEIGHTS, scratch, tree):
            if kept:
                keep_root_statistics(old_first, old_count, tree)
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
            run(TABLES, budget, start, params, PRIOR_WEIGHTS, scratch, tree)
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
            spare = self._spare if self._spare is not None else Tree.allocate(len(tree.node_first), len(tree.edge_pid))
            copy_subtree(node, tree, spare)
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
    tree, scratch = Tree.allocate(max_nodes=16, max_edges=2 * MAX_MOVES), Scratch.allocate()
    state = GameState(Shape.PENTO_L)
    state.push_placement(int(state.legal_placements()[0]))
    root = FastState.from_state(state)
    tree.node_first[0] = -1
    tree.counters[0] = 1
    seed_rng(0)
    start, params = Root.of(root), MctsParams().vector()
    expand_root(TABLES, start, params, PRIOR_WEIGHTS, scratch, tree)
    run(TABLES, 2, start, params, PRIOR_WEIGHTS, scratch, tree)
    copy = Tree.allocate(max_nodes=16, max_edges=2 * MAX_MOVES)  # keeping a subtree
    copy_subtree(0, tree, copy)
    keep_root_statistics(0, 0, copy)
    F.is_over(root.m)  # following the moves played since the last search
    F.play(TABLES, root.b.copy(), root.m.copy(), int(tree.edge_pid[0]), root.first_cells)
