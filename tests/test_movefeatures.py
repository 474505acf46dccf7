"""``ai.search.movefeatures``: the move model's features against a plain-Python reading of the board."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from blokus.ai.search import movefeatures as MF
from blokus.ai.search.tables import TABLES
from blokus.model import placements as P
from blokus.model.fast import FastState
from blokus.model.pieces import Shape
from blokus.model.season import SEASON_2021, SEASONS
from blokus.model.state import GameState

N = P.N


def _nb(q: int, steps) -> list[int]:
    x, y = q % N, q // N
    return [(y + dy) * N + x + dx for dx, dy in steps if 0 <= x + dx < N and 0 <= y + dy < N]


def edges(q: int) -> list[int]:
    return _nb(q, ((1, 0), (-1, 0), (0, 1), (0, -1)))


def diagonals(q: int) -> list[int]:
    return _nb(q, ((1, 1), (-1, 1), (1, -1), (-1, -1)))


def cells_of(pid: int) -> list[int]:
    return [int(q) for q in P.P_CELLS[pid] if q < P.NCELLS]


def reference(state: GameState, last: list[int], pid: int) -> np.ndarray:
    """The features of placement ``pid`` for the colour to move, read off the board cell by cell."""
    owner = state.board().reshape(-1)
    color = state.color
    partner = (color + 2) % 4
    opps = [c for c in range(4) if c % 2 != color % 2]

    def forbidden(c: int, q: int) -> bool:
        return owner[q] != -1 or any(owner[e] == c for e in edges(q))

    def corner(c: int, q: int) -> bool:  # a free attach point of colour c
        return not forbidden(c, q) and any(owner[d] == c for d in diagonals(q))

    block = set()
    for c in opps:
        for q in range(P.NCELLS):
            if corner(c, q):
                block.add(q)
                block.update(e for e in edges(q) if not forbidden(c, e))
    local = set()
    for c in opps:
        if last[c] >= 0:
            for q in cells_of(last[c]):
                for d in diagonals(q):
                    if corner(c, d):
                        local.add(d)
                        local.update(e for e in edges(d) if not forbidden(c, e))
    cells = cells_of(pid)
    ring = {e for q in cells for e in edges(q)} - set(cells)
    corners = {d for q in cells for d in diagonals(q)} - set(cells) - ring
    f = np.zeros(MF.NFEAT)
    f[MF.X_BLOCK] = sum(q in block for q in cells)
    f[MF.X_PARTNER_SPOT] = sum(corner(partner, q) for q in cells)
    for q in ring:
        if owner[q] == partner:
            f[MF.X_ADJ_PARTNER] += 1
        elif owner[q] != -1:
            f[MF.X_ADJ_OPP] += 1
        elif forbidden(color, q):
            f[MF.X_ADJ_SHADOW] += 1
        elif corner(color, q):
            f[MF.X_ADJ_OWN_CORNER] += 1
        else:
            f[MF.X_ADJ_FREE] += 1
    for q in corners:
        if forbidden(color, q):
            f[MF.X_CORNER_OWN if owner[q] == color else MF.X_CORNER_DEAD] += 1
        else:
            f[MF.X_CORNER_FREE0 + sum(not forbidden(color, e) for e in edges(q))] += 1
            f[MF.X_CORNER_PARTNER] += corner(partner, q)
    f[MF.X_LOCAL] = any(q in local for q in cells)
    if len(cells) >= 2:
        f[MF.X_SIZE2 + len(cells) - 2] = 1
    centre = (N - 1) / 2
    f[MF.X_CENTRE] = min(max(math.hypot(q % N - centre, q // N - centre), 2.0) for q in cells) / 10
    return f


@pytest.mark.parametrize("seed,turns", [(1, 9), (2, 22), (3, 35), (4, 50)])
def test_features_match_the_board(seed, turns):
    rng = random.Random(seed)
    state = GameState.new(SEASON_2021, Shape.PENTO_W)
    last = [-1] * 4
    while state.turn < turns and not state.is_over:
        ids = state.legal_placements()
        pid = int(ids[rng.randrange(len(ids))])
        last[state.color] = pid
        state.push_placement(pid)
    pids = state.legal_placements()
    assert len(pids)
    got = MF.features_of(FastState.from_state(state), state.color, np.array(last), pids)
    sample = rng.sample(range(len(pids)), min(40, len(pids)))
    for i in sample:
        np.testing.assert_allclose(got[i], reference(state, last, int(pids[i])), err_msg=f"placement {pids[i]}")
    if 20 <= turns <= 40:  # the middle game is not trivial: blocking, contact and open corners all occur
        assert got[:, MF.X_BLOCK].max() > 0 and got[:, MF.X_ADJ_OPP].max() > 0 and got[:, MF.X_CORNER_FREE2 :].max() > 0


@pytest.mark.parametrize("turn", [10, 30, 38])
@pytest.mark.parametrize("season", SEASONS.values(), ids=SEASONS.keys())
def test_logits_follow_the_weights_of_the_turn(season, turn):
    """``move_logits`` sums per-cell weights worked out once a call: the features' dot product with the turn's
    weights (between two fitted phases), for every legal placement, the last placements known."""
    state = GameState.new(season, Shape.PENTO_W)
    rng = random.Random(turn)
    last = np.full(4, -1, dtype=np.int32)
    while state.turn < turn:
        ids = state.legal_placements()
        last[state.color] = int(ids[rng.randrange(len(ids))])
        state.push_placement(int(last[state.color]))
    fs = FastState.from_state(state)
    pids = fs.legal_placements().astype(np.int32)
    assert len(pids) > 5
    feats = MF.features_of(fs, state.color, last, pids)
    out = np.zeros(len(pids))
    cells = np.full((4, P.NCELLS + 1), 7.0)  # left over from an earlier call: must not count
    for _ in range(2):
        MF.move_logits(
            TABLES,
            fs.b,
            fs.m,
            int(state.color),
            last,
            pids,
            len(pids),
            MF.PRIOR_WEIGHTS,
            np.zeros(P.NCELLS + 1, dtype=np.uint8),
            np.zeros(P.NCELLS + 1, dtype=np.int32),
            cells,
            out,
        )
        table = MF.PRIOR_WEIGHTS
        k = max(0, int(np.searchsorted(table[:, 0], state.turn, side="right")) - 1)  # before the first phase: it
        w = table[k, 1:]
        if k + 1 < len(table) and state.turn > table[k, 0]:  # between two phases: linear
            a = (state.turn - table[k, 0]) / (table[k + 1, 0] - table[k, 0])
            w = (1 - a) * table[k, 1:] + a * table[k + 1, 1:]
        np.testing.assert_allclose(out, feats @ w, rtol=1e-9, atol=1e-9)
    # for fewer placements than KEEP_CELL_WEIGHTS the cells' weights are not kept: the same sums
    few = np.zeros(min(len(pids), MF.KEEP_CELL_WEIGHTS - 1))
    args = (MF.PRIOR_WEIGHTS, np.zeros(P.NCELLS + 1, dtype=np.uint8), np.zeros(P.NCELLS + 1, dtype=np.int32), cells)
    MF.move_logits(TABLES, fs.b, fs.m, int(state.color), last, pids, len(few), *args, few)
    np.testing.assert_array_equal(few, out[: len(few)])  # the same terms added in the same order
