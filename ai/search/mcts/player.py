"""The MCTS player: the search under a clock, in slices of compiled simulations; pondering; keeping the subtree
of the moves played since the last search."""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from blokus.ai.interface import Engine, StopFlag, TimeKeeper
from blokus.ai.search.book import Book, default_book
from blokus.ai.search.compiled import Kernels
from blokus.ai.search.cores import search_threads
from blokus.ai.search.evaluate import evaluate
from blokus.ai.search.greedy import no_placement_move
from blokus.ai.search.lookahead import LookaheadPlayer
from blokus.ai.search.mcts.buffers import Root, Scratch, Tree
from blokus.ai.search.mcts.kernels import copy_subtree, expand_root, keep_root_statistics, run, seed_rng
from blokus.ai.search.mcts.params import MctsParams
from blokus.ai.search.movefeatures import PRIOR_WEIGHTS
from blokus.ai.search.tables import TABLES
from blokus.model import fast as F
from blokus.model.fast import M_TURN, MAX_MOVES, NCELLS, NSHAPES, P_CELLS, FastState
from blokus.model.moves import Move, SetMove, SkipMove
from blokus.model.state import GameState, move_of_placement, placement_of

# compiled ahead of time in a child process (``ai.search.compiled``); until ready the player answers with the
# Python lookahead search
log = logging.getLogger(__name__)

KERNELS = Kernels(
    "blokus.ai.search.mcts",
    "blokus.ai.search.mcts.kernels",
    "blokus.model.fast",
    "blokus.ai.search.fasteval",
    "blokus.ai.search.movefeatures",
)


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
# the first thread of a parallel search waits this long (real time) for each other thread's last slice
HELPER_JOIN_S = 0.03
# the other threads stop this much earlier than the first, and run this much nicer (Linux: a thread's own nice
# value): on a loaded machine the thread that chooses and returns the move gets the CPU first (a 2-thread series
# against level 7 under load 5-7 had one move of 2.009 s without them)
HELPER_LEAD_S = 0.1
HELPER_NICE = 5


class _Either:
    """A stop flag set when either of two is (a helper thread stops with the search or with the first thread)."""

    def __init__(self, first: StopFlag, second: StopFlag) -> None:
        self.first, self.second = first, second

    def is_set(self) -> bool:
        return self.first.is_set() or self.second.is_set()


def _be_nicer(step: int) -> None:
    """Lower the calling thread's priority by ``step`` (Linux sets a nice value per thread; elsewhere nothing)."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + step))
    except (AttributeError, OSError):  # no per-thread priorities here: the threads run alike
        pass


def counted_simulations(count: int, placed: int) -> int:
    """``MctsParams.count``'s budget for a colour that placed ``placed`` pieces (Pentobi's levels' schedule:
    the simulations get faster as the board fills, so the count grows)."""
    weight = 0.7 * math.exp(0.1 * placed) * {0: 0.2, 1: 0.2, 2: 0.3}.get(placed, 1.0)
    return max(1, math.ceil(count * weight))


@dataclass
class _Worker:
    """One search thread's tree and work arrays (a root-parallel search has one per thread; threads sharing a tree
    search the first worker's, each with its own work arrays)."""

    tree: Tree
    scratch: Scratch
    spare: Tree | None = None  # the other tree when a subtree is kept (copied over)
    searched: FastState | None = None  # the root position of the search in ``tree``

    @classmethod
    def allocate(cls) -> _Worker:
        return cls(Tree.allocate(), Scratch.allocate())


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
        self.threads = search_threads(self.params.threads)
        # allocated here, not in the first timed search (the arrays take memory only where written)
        self.workers = [_Worker.allocate() for _ in range(self.threads)]
        self._pondered = 0  # simulations of the last ponder (thinking on the opponent's time)
        self._stragglers: list[threading.Thread] = []  # helper threads of the last search still in a slice
        self._tree_lock = threading.Lock()  # one search at a time in the trees (a think, a ponder)
        self._failure = ""  # why a helper thread failed ("": none did)
        self.degraded = ""  # the fallback to one thread after a helper failed, as a move's info says it
        self._fallback = LookaheadPlayer(seed, clock=clock)
        # the opening book (read once per process; None: off, or unreadable, which the log says once)
        self.book: Book | None = default_book() if self.params.book else None
        prepare()  # compile in the background from the start, not at the first move

    @property
    def tree(self) -> Tree:
        """The (first thread's) search tree."""
        return self.workers[0].tree

    @property
    def shared(self) -> bool:
        """Whether the threads search one tree (``mcts:shared_tree=1``, more than one thread, no fixed budget: a
        fixed number of simulations is searched a tree a thread, so that it gives the same move every time)."""
        fixed = self.max_simulations is not None or self.params.count > 0
        return self.params.shared_tree and self.threads > 1 and not fixed

    def _trees(self) -> list[Tree]:
        """The trees the last search grew: the first worker's if the threads share it, else one a thread."""
        return [self.workers[0].tree] if self.shared else [w.tree for w in self.workers]

    @property
    def scratch(self) -> Scratch:
        return self.workers[0].scratch

    def think(self, state: GameState, deadline: float, stop: StopFlag) -> Move:
        self.stop_pondering()  # within this move's time: at most one slice of the search
        if self.book is not None:
            move = self.book.lookup(state)  # checked legal; the next search starts afresh (no tree of this move)
            if move is not None:
                self.last_info = {"book": True, "moves": state.legal_move_count()}
                return move
        if not KERNELS.is_ready():  # first start: still compiling
            move = self._fallback.think(state, deadline, stop)
            self.last_info = {**self._fallback.last_info, "fallback": "lookahead (compiling)"}
            return move
        timer = TimeKeeper(self.clock, deadline, stop, self.cpu_clock, reserve=STOP_RESERVE_S)
        color = state.color
        pids = state.legal_placements()
        if state.is_over or not len(pids):
            return no_placement_move(state, self.rng)
        if len(pids) == 1:
            return move_of_placement(color, int(pids[0]))
        with self._tree_lock:
            pondered, self._pondered = self._pondered, 0
            kept = self._search(state, timer)
            root_pids, visits, values = self.root_statistics()
            trees = self._trees()
            sims = sum(int(tree.counters[2]) for tree in trees)
            depth = max(int(tree.counters[3]) for tree in trees)
            value = None
            if not len(root_pids):
                best_pid = int(pids[self.rng.randrange(len(pids))])
            else:
                best = np.lexsort((values, visits))[-1]
                best_pid, value = int(root_pids[best]), float(values[best])
        self.last_info = {
            "simulations": sims,
            "moves": len(pids),
            "time": timer.elapsed(),
            "depth": depth,
            "cpu_share": round(timer.share, 2),
            "kept": kept,
        }
        if value is not None:  # the mean value of the move chosen, for the team to move (the saved game's record)
            self.last_info["value"] = round(value, 3)
        if self.threads > 1:
            self.last_info["threads"] = self.threads
        if self.degraded:
            self.last_info["fallback"] = self.degraded
        if pondered:
            self.last_info["pondered"] = pondered
        return move_of_placement(color, best_pid)

    def root_statistics(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The root moves of the last search, their visits and mean values (for the team to move), summed over
        the threads' trees (the same moves in each)."""
        pids, visits, wins = [], [], []
        for tree in self._trees():
            first, count = int(tree.node_first[0]), int(tree.node_count[0])
            if first >= 0 and count > 0:
                pids.append(tree.edge_pid[first : first + count])
                visits.append(tree.edge_n[first : first + count])
                wins.append(tree.edge_w[first : first + count])
        if not pids:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float32)
        if len(pids) == 1:  # one thread: its own arrays (the same float32 sums as always)
            n, w = visits[0], wins[0]
            return pids[0], n, (w + 1e-3) / (n + 1e-3)
        root_pids, index = np.unique(np.concatenate(pids), return_inverse=True)
        n = np.zeros(len(root_pids), dtype=np.float64)
        w = np.zeros(len(root_pids), dtype=np.float64)
        np.add.at(n, index, np.concatenate(visits))
        np.add.at(w, index, np.concatenate(wins))
        return root_pids, n, (w + 1e-3) / (n + 1e-3)

    def ponder(self, state: GameState, stop: StopFlag) -> None:
        """Grow the tree of ``state`` (the position after our move) while the opponent thinks: until ``stop``,
        ``PONDER_LIMIT_S`` or half the tree's room (the kept subtree is copied at the next move)."""
        if self.max_simulations is not None or self.params.count > 0 or not KERNELS.is_ready():  # a fixed budget
            return
        state = state.copy()
        while not state.is_over and not len(state.legal_placements()):
            state.push(SkipMove(state.color))
        if state.is_over:
            return
        # a think that was given up on (its answer came too late) may still be returning: wait for it
        with self._tree_lock:
            timer = TimeKeeper(self.clock, self.clock() + PONDER_LIMIT_S, stop, self.cpu_clock, reserve=0.0)
            self._search(state, timer, room=0.5)
            self._pondered = sum(int(tree.counters[2]) for tree in self._trees())

    def _search(self, state: GameState, timer: TimeKeeper, room: float = 1.0) -> int:
        """Simulations from ``state`` into the threads' trees (their kept subtrees, if any) until ``timer``
        expires, ``max_simulations`` are done (split among the threads) or ``room`` (a share) of a tree's nodes or
        edges are used. One thread searches in the caller's; more search root-parallel, each its own tree from
        its own random seed; with ``shared_tree``, in the first worker's tree, each with its own work arrays.
        Returns the simulations kept from the last search."""
        self.settle()
        if self._failure:  # a helper of the last search failed after its move was chosen
            self._single_thread()
        root = state.compiled().copy()  # the position's own engine: a snapshot of it roots the tree
        last_root = np.full(4, -1, dtype=np.int32)
        if isinstance(state.last_move, SetMove):
            pid = placement_of(state.last_move)
            if pid is not None:
                last_root[state.last_move.color] = pid
        start = Root.of(root, last_root)
        params = self.params.vector(shared_tree=self.shared, season=state.season)
        seed = self.rng.randrange(2**31)
        searched = self.workers[:1] if self.shared else self.workers
        kept = [self._prepare_tree(worker, state, root, start, params, timer) for worker in searched]
        for worker in self.workers:
            worker.scratch.walk.margins[:] = 0.0
        limit = self.max_simulations
        if self.params.count > 0:
            limit = counted_simulations(self.params.count, NSHAPES - len(state.pieces_left(state.color)))
        n = len(self.workers)
        seed_rng(seed)
        tree = self.workers[0].tree
        if n == 1:
            self._run(tree, self.workers[0].scratch, start, params, timer, room, limit)
            return kept[0]
        if self.shared:  # the tree's count of simulations is the threads' together
            shares = [limit] * n
        else:
            shares = [None if limit is None else limit // n + (i < limit % n) for i in range(n)]
        halt = threading.Event()  # the first thread is done: the others stop at their next slice

        def helper(i: int) -> None:
            try:
                _be_nicer(HELPER_NICE)
                seed_rng((seed + 7919 * i) % 2**31)  # numba's generator is per thread
                stop = _Either(timer.stop, halt)
                deadline = timer.deadline - HELPER_LEAD_S
                own = TimeKeeper(self.clock, deadline, stop, self.cpu_clock, timer.base_reserve)
                worker = self.workers[i]
                self._run(tree if self.shared else worker.tree, worker.scratch, start, params, own, room, shares[i])
            except BaseException as exc:  # noqa: BLE001 - any failure of a helper: the search goes on in one thread
                self._failure = self._failure or f"thread {i + 1} failed: {type(exc).__name__}: {exc}"

        helpers = [threading.Thread(target=helper, args=(i,), daemon=True, name=f"mcts-{i}") for i in range(1, n)]
        started: list[threading.Thread] = []
        try:
            for thread in helpers:
                thread.start()
                started.append(thread)
        except RuntimeError as exc:  # no thread to be had (a process or memory limit)
            halt.set()
            self._failure = f"cannot start a thread: {exc}"
        try:
            self._run(tree, self.workers[0].scratch, start, params, timer, room, shares[0])
        finally:
            if limit is None:
                halt.set()
            for thread in started:  # each stops at its next clock check (a slice of 5-20 ms) ...
                thread.join(HELPER_JOIN_S if limit is None else None)
            # ... or, descheduled on a loaded machine, is left to finish on its own: the move is chosen from what
            # its tree holds now (its root's counts are only read) and the next search waits for it
            self._stragglers = [thread for thread in started if thread.is_alive()]
            if self._failure:
                self._single_thread()
        return sum(kept)

    def settle(self) -> None:
        """Wait for the helper threads of the last search that are still in their last slice (on a loaded machine
        one may run past the move's return): then the tree holds all the search added. The next search does so
        first; a reader of the tree between searches (a test, a tool) does it before."""
        for thread in self._stragglers:
            thread.join()
        self._stragglers = []

    def _single_thread(self) -> None:
        """A helper thread failed: search in one thread from now on (its tree is dropped), and say so once in the
        log and with every move (``last_info["fallback"]``)."""
        if self.threads > 1:
            log.warning("mcts: searching in one thread instead of %d: %s", self.threads, self._failure)
            self.threads, self.workers = 1, self.workers[:1]
            self.degraded = f"mcts 1 thread ({self._failure})"
        self._stragglers = []

    def _prepare_tree(
        self, worker: _Worker, state: GameState, root: FastState, start: Root, params: np.ndarray, timer: TimeKeeper
    ) -> int:
        """Make ``worker``'s tree ready to search ``root`` (its kept subtree, or a new root; the root's moves and
        priors); returns the simulations kept."""
        kept = self._keep_subtree(worker, root) if self.params.reuse else 0
        tree, scratch = worker.tree, worker.scratch
        if kept:
            tree.counters[2:] = 0  # simulations and depth of this search
        else:
            tree.counters[:] = 0
            tree.counters[0] = 1
            tree.node_first[0] = -1
            tree.node_count[0] = 0
            tree.node_n[0] = 0.0  # both columns
        # a kept node lists only the moves its prior did not prune, with the prior of an inner node: the root
        # gets all its moves and the root's priors, with the statistics gathered so far
        old_first, old_count = int(tree.node_first[0]), int(tree.node_count[0])
        if (kept or self.params.root_eval > 0) and expand_root(TABLES, start, params, PRIOR_WEIGHTS, scratch, tree):
            if kept:
                keep_root_statistics(old_first, old_count, tree)
            if self.params.root_eval > 0:
                self._root_prior(state, tree, timer)
        worker.searched = root
        return kept

    def _run(
        self,
        tree: Tree,
        scratch: Scratch,
        start: Root,
        params: np.ndarray,
        timer: TimeKeeper,
        room: float,
        limit: int | None,
    ) -> None:
        """Simulations into ``tree`` (with the work arrays ``scratch``) in slices of 5-20 ms until ``timer``
        expires, ``limit`` simulations are done in the tree or ``room`` of its nodes or edges are used."""
        max_nodes, max_edges = room * len(tree.node_first), room * len(tree.edge_pid)
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

    def _keep_subtree(self, worker: _Worker, root: FastState) -> int:
        """If the worker's last search's tree holds ``root`` (the moves played since its root were searched), make
        that node the tree's root, dropping the rest; returns the simulations kept there (0: start afresh)."""
        searched, worker.searched = worker.searched, None
        tree = worker.tree
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
            spare = worker.spare
            if spare is None:
                spare = Tree.allocate(len(tree.node_first), len(tree.edge_pid))
            copy_subtree(node, tree, spare)
            worker.tree, worker.spare = spare, tree
        return int(worker.tree.node_n[0, 0])

    def _root_prior(self, state: GameState, tree: Tree, timer: TimeKeeper) -> None:
        """Priors of the root moves from the tuned evaluation one ply ahead (the greedy player's view)."""
        first, count = int(tree.node_first[0]), int(tree.node_count[0])
        sign = 1.0 if state.color % 2 == 0 else -1.0
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
    from blokus.model.pieces import Shape

    F.warm_up()
    tree, scratch = Tree.allocate(max_nodes=16, max_edges=2 * MAX_MOVES), Scratch.allocate()
    state = GameState(Shape.PENTO_L)
    state.push_placement(int(state.legal_placements()[0]))
    root = state.compiled()
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
