"""The MCTS's arrays, in named groups that the kernels take whole (a field is read by name, so two arrays of one
type cannot be swapped): the tree, the work arrays of a search, the root position."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from blokus.ai.search.tables import TABLES
from blokus.model import fast as F
from blokus.model.fast import MAX_MOVES, NCELLS, P_CELLS

NCOUNT = P_CELLS.shape[0]  # placements


class Tree(NamedTuple):
    """Preallocated tree arrays (nodes and edges), reused between moves."""

    node_first: np.ndarray  # first edge; -1: not expanded
    node_count: np.ndarray
    node_n: np.ndarray  # (node, 2): visits, value sum for the team to move
    node_turn: np.ndarray  # (node, 2): the turn and the colours still in (``model.fast``'s meta) at the node
    edge_pid: np.ndarray
    edge_child: np.ndarray
    edge_n: np.ndarray  # real visits
    edge_w: np.ndarray  # value sum for the team that moved
    edge_pn: np.ndarray  # prior: virtual visits ...
    edge_pw: np.ndarray  # ... at the node's mean value plus this (<= 0)
    edge_rn: np.ndarray  # RAVE visits
    edge_rw: np.ndarray
    edge_p: np.ndarray  # probability by the move model (move_prior > 0)
    counters: np.ndarray  # nodes used, edges used, simulations, max depth

    # a search of 1.6 s adds up to ~650,000 edges on a slow machine (bench/bench_mcts.py: ~80 per simulation
    # in the middle game); the arrays take memory only where written
    @classmethod
    def allocate(cls, max_nodes: int = 200_000, max_edges: int = 4_000_000) -> Tree:
        def edges(dtype: type) -> np.ndarray:
            return np.zeros(max_edges, dtype=dtype)

        return cls(
            node_first=np.zeros(max_nodes, dtype=np.int32),
            node_count=np.zeros(max_nodes, dtype=np.int32),
            node_n=np.zeros((max_nodes, 2), dtype=np.float32),
            node_turn=np.zeros((max_nodes, 2), dtype=np.int32),
            edge_pid=edges(np.int32),
            edge_child=edges(np.int32),
            edge_n=edges(np.float32),
            edge_w=edges(np.float32),
            edge_pn=edges(np.float32),
            edge_pw=edges(np.float32),
            edge_rn=edges(np.float32),
            edge_rw=edges(np.float32),
            edge_p=edges(np.float32),
            counters=np.zeros(4, dtype=np.int64),
        )


class Sim(NamedTuple):
    """The simulation's position: ``model.fast``'s board and meta arrays, the last placement per colour."""

    b: np.ndarray
    m: np.ndarray
    last: np.ndarray  # -1: none (the move model's local points, the playout's move lists)

    @classmethod
    def allocate(cls) -> Sim:
        return cls(np.zeros(F.BSIZE, dtype=np.uint8), np.zeros(F.MSIZE, dtype=np.int64), np.full(4, -1, dtype=np.int32))


class Playout(NamedTuple):
    """The playout policy's arrays (and move generation's marks, which the expansion shares)."""

    weights: np.ndarray  # the candidates' running weights; the expansion's move-model logits
    seen: np.ndarray  # move generation's marks ...
    stamp: np.ndarray  # ... and their stamp (also the marks of ``local``)
    local: np.ndarray  # stamp: cell is an opponent's new attach point
    lists: np.ndarray  # move list per colour
    lcount: np.ndarray  # its length; -1: not built yet in this playout
    cands: np.ndarray  # the candidates

    @classmethod
    def allocate(cls) -> Playout:
        return cls(
            weights=np.zeros(MAX_MOVES, dtype=np.float64),
            seen=np.zeros(NCOUNT, dtype=np.int32),
            stamp=np.zeros(1, dtype=np.int64),
            local=np.zeros(NCELLS + 1, dtype=np.int32),
            lists=np.zeros((4, MAX_MOVES), dtype=np.int32),
            lcount=np.full(4, -1, dtype=np.int32),
            cands=np.zeros(MAX_MOVES, dtype=np.int32),
        )


class Walk(NamedTuple):
    """What a simulation's way down the tree and back uses: the expansion's move list and the move model's
    arrays, the RAVE marks, the statistics of the margins."""

    moves: np.ndarray
    marks: np.ndarray  # the move model's work arrays
    mscratch: np.ndarray
    cells: np.ndarray  # the move model's weights per cell (``MF.move_logits``)
    amaf: np.ndarray  # ply + 1 at which (colour, pid) was first played
    played: np.ndarray  # (colour * NCOUNT + pid) of this simulation
    margins: np.ndarray  # the search's final margins: count, mean, sum of squares

    @classmethod
    def allocate(cls) -> Walk:
        return cls(
            moves=np.zeros(MAX_MOVES, dtype=np.int32),
            marks=np.zeros(NCELLS + 1, dtype=np.uint8),
            mscratch=np.zeros(NCELLS + 1, dtype=np.int32),
            cells=np.zeros((4, NCELLS + 1), dtype=np.float64),
            amaf=np.zeros(4 * NCOUNT, dtype=np.int32),
            played=np.zeros(512, dtype=np.int64),
            margins=np.zeros(3, dtype=np.float64),
        )


class Scratch(NamedTuple):
    """Work arrays of one search, in the groups the kernels take: a hot kernel gets only the arrays it uses (an
    array passed costs a little at every call, RESULTS §32)."""

    sim: Sim
    playout: Playout
    walk: Walk

    @classmethod
    def allocate(cls) -> Scratch:
        return cls(Sim.allocate(), Playout.allocate(), Walk.allocate())


class Root(NamedTuple):
    """The searched position: where every simulation starts, with every colour's legal placements there (a
    playout's move lists start from them: RESULTS §37)."""

    b: np.ndarray
    m: np.ndarray
    first_cells: np.ndarray
    last: np.ndarray  # the last placement per colour (-1: none known)
    lists: np.ndarray  # (colour, MAX_MOVES): the legal placements per colour, ...
    lcount: np.ndarray  # ... and how many

    @classmethod
    def of(cls, position: F.FastState, last: np.ndarray | None = None) -> Root:
        no_last = np.full(4, -1, dtype=np.int32)
        lists = np.zeros((4, MAX_MOVES), dtype=np.int32)
        lcount = np.zeros(4, dtype=np.int64)
        seen = np.zeros(NCOUNT, dtype=np.int32)
        # in the generation's order (by attach point), not sorted as ``position.legal_placements`` gives them:
        # playouts from sorted lists took 5-7 % longer a move at turns 24-40 (bench/bench_mcts.py --playouts)
        for color in range(4):
            lcount[color] = F.gen_moves(
                TABLES, position.b, position.m, color, position.first_cells, lists[color], seen, color + 1
            )
        return cls(position.b, position.m, position.first_cells, no_last if last is None else last, lists, lcount)
