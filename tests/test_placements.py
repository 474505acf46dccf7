"""The placement tables (model/placements.py, built with numpy at every start) against their definition:
every orientation of every shape at every position, each table read from the same placement."""

from __future__ import annotations

import numpy as np

from blokus.model import placements as P
from blokus.model.pieces import SHAPES, orientations


def test_every_placement_is_one_orientation_at_one_position_and_each_table_agrees() -> None:
    expected = [
        (oi, x, y, frozenset((y + dy) * P.N + x + dx for dx, dy in o.cells))
        for oi, o in enumerate(o for s in SHAPES for o in orientations(s))
        for y in range(P.N - o.height + 1)
        for x in range(P.N - o.width + 1)
    ]
    assert P.COUNT == len(expected) == len(P.MASKS)
    for pid, (oi, x, y, cells) in enumerate(expected):
        assert (int(P.P_ORIENT[pid]), int(P.P_X[pid]), int(P.P_Y[pid])) == (oi, x, y)
        assert P.P_SHAPE_LIST[pid] == P.P_SHAPE[pid] == P.ORIENTATIONS[oi].shape
        assert P.MASKS[pid] == sum(1 << c for c in cells)
        row = P.P_CELLS[pid].tolist()
        assert row == sorted(cells) + [P.NCELLS] * (5 - len(cells))
        assert P.placement_id(oi, x, y) == pid
    assert (P.MASK_WORDS == np.stack([P.to_words(m) for m in P.MASKS])).all()


def test_each_cell_lists_the_placements_covering_it_in_ascending_order() -> None:
    covering: list[list[int]] = [[] for _ in range(P.NCELLS)]
    for pid, mask in enumerate(P.MASKS):
        for cell, bit in enumerate(reversed(bin(mask)[2:])):
            if bit == "1":
                covering[cell].append(pid)
    assert list(P.BY_CELL) == covering
    assert [ids.tolist() for ids in P.BY_CELL_NP] == covering
    assert all(ids.dtype == np.int32 for ids in P.BY_CELL_NP)


def test_the_evaluations_placement_tables_are_the_bitboards_own():
    """``evaluate``'s per-placement tables, built in numpy at import, equal what the bitboards say placement by
    placement: the new corners (diagonal neighbours off the placement and its edge neighbours) and the cells
    in the centre's two rings."""
    from blokus.ai.search import evaluate as E

    corners = [E.diag(m) & ~E.edge(m) & ~m for m in P.MASKS]
    assert np.array_equal(E.CORNER_WORDS, E._words(corners))
    centre = [(m & E.CENTRE_IN).bit_count() + (m & E.CENTRE_MID).bit_count() for m in P.MASKS]
    assert E.P_CENTRE.tolist() == centre
    assert max(bb.bit_count() for bb in corners) == 8 and min(bb.bit_count() for bb in corners) == 1  # ranges
