"""Differential test: the compiled engine (``model.fast``) against the numpy reference (``model.state``).

Both run the same positions of seeded random games (with skips mixed in, colours removed, games
played to their end): legal placements of every colour, apply/undo, turn/valid bookkeeping and scores.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from blokus.model import fast as F
from blokus.model.fast import FastState, fields_of
from blokus.model.moves import SkipMove
from blokus.model.pieces import Color, Shape
from blokus.model.season import SEASON_2021, SEASON_2027, SEASONS
from blokus.model.state import GameState, on_reference


def _same(state: GameState, fast: FastState) -> None:
    assert fast.fields() == fields_of(state)
    assert fast.is_over == state.is_over
    assert fast.color == state.color
    for color in range(4):
        assert np.array_equal(fast.legal_placements(color), state.legal_placements(color))
        assert fast.points(color) == state.points(color)


@pytest.mark.parametrize("season", SEASONS.values(), ids=SEASONS.keys())
@pytest.mark.parametrize("seed", range(4))
def test_random_games_agree_move_by_move(seed, season):
    rng = random.Random(seed)
    state = on_reference(GameState.new(season, Shape[rng.choice(season.start_pieces)]))
    fast = FastState.from_state(state)
    plies = 0
    while not state.is_over:
        _same(state, fast)
        ids = state.legal_placements()
        if state.can_skip() and rng.random() < 0.15:
            state.push(SkipMove(state.color))
            fast.push_skip()
        else:
            pid = int(ids[rng.randrange(len(ids))])
            state.push_placement(pid)
            fast.push_placement(pid)
        plies += 1
    _same(state, fast)
    # undo all the way back, comparing on the way
    for _ in range(plies):
        state.pop()
        fast.pop()
        assert fast.fields() == fields_of(state)
    assert fast.turn == 0


@pytest.mark.parametrize("season", SEASONS.values(), ids=SEASONS.keys())
def test_fresh_copy_of_a_mid_game_position_agrees(season):
    rng = random.Random(42)
    state = on_reference(GameState.new(season, Shape.PENTO_W))
    while not state.is_over and state.turn < 50:
        ids = state.legal_placements()
        state.push_placement(int(ids[rng.randrange(len(ids))]))
    _same(state, FastState.from_state(state))


def test_last_pieces_bonus_and_removal():
    """A colour holding only the MONO places it (+15 +5) and the colours with no move are removed."""
    hands = {c: [Shape.MONO] for c in Color}
    state = on_reference(
        GameState.from_parts(
            start_piece=Shape.PENTO_L,
            turn=40,
            cells=[(0, 0, Color.BLUE), (19, 0, Color.YELLOW), (19, 19, Color.RED), (0, 19, Color.GREEN)],
            undeployed=hands,
            valid_colors=list(Color),
            season=SEASON_2021,
        )
    )
    fast = FastState.from_state(state)
    _same(state, fast)
    for _ in range(4):
        pid = int(state.legal_placements()[0])
        state.push_placement(pid)
        fast.push_placement(pid)
        _same(state, fast)
    assert state.is_over and state.points(Color.BLUE) == 89 + 15 + 5


def test_first_moves_corner_in_2021_border_in_2027():
    for season in (SEASON_2021, SEASON_2027):
        for shape in season.start_pieces:
            state = on_reference(GameState.new(season, Shape[shape]))
            fast = FastState.from_state(state)
            _same(state, fast)
            assert len(fast.legal_placements()) == len(state.legal_placements()) > 0
    # the 2027 border rule allows far more first placements (PENTO_X is a 2027 start piece)
    assert len(FastState.from_state(on_reference(GameState.new(SEASON_2027, Shape.PENTO_L))).legal_placements()) > 100


def test_the_2027_game_ends_at_turn_96():
    rng = random.Random(3)
    state = on_reference(
        GameState.from_parts(
            start_piece=Shape.PENTO_X,
            turn=92,
            cells=[(0, 0, Color.BLUE)],
            undeployed={c: [Shape.MONO, Shape.DOMINO] for c in Color},
            valid_colors=list(Color),
            season=SEASON_2027,
        )
    )
    fast = FastState.from_state(state)
    _same(state, fast)
    ids = state.legal_placements()
    pid = int(ids[rng.randrange(len(ids))])
    state.push_placement(pid)
    fast.push_placement(pid)
    assert state.is_over and fast.is_over
    _same(state, fast)


@pytest.mark.parametrize("season", SEASONS.values(), ids=SEASONS.keys())
def test_attach_points_are_found_word_by_word_as_cell_by_cell(season):
    # next_attach_point skips the flags 8 cells at a time; it must visit exactly the cells is_attach_point
    # names, for every colour, before and after its first piece, up to the end of a random game
    from blokus.model import fast as F

    rng = random.Random(5)
    state = on_reference(GameState.new(season, Shape.PENTO_W))
    checked = 0
    while True:
        fast = FastState.from_state(state)
        for color in range(4):
            first, _ = F.shapes_to_place(fast.m, color)
            abase = F.ANCH + color * F.NCELLS
            expected = [a for a in range(F.NCELLS) if F.is_attach_point(fast.b, abase, first, fast.first_cells, a)]
            found, a = [], F.next_attach_point(fast.b, abase, first, fast.first_cells, 0)
            while a < F.NCELLS:
                found.append(a)
                a = F.next_attach_point(fast.b, abase, first, fast.first_cells, a + 1)
            assert found == expected
            checked += len(found)
        if state.is_over:
            break
        ids = state.legal_placements()
        state.push_placement(int(ids[rng.randrange(len(ids))]))
    assert checked > 500


@pytest.mark.parametrize(
    "module",
    [
        "blokus.model.fast",
        "blokus.ai.search.fasteval",
        "blokus.ai.search.movefeatures",
        "blokus.ai.search.fastsearch",
        "blokus.ai.search.mcts.kernels",
    ],
)
def test_kernels_read_no_global_array(module):
    # numba copies a global array into the machine code of every kernel that reads it, once per compiled
    # variant (hundreds of MB of cache, minutes of compiling): tables reach the kernels as an argument
    import importlib
    import types

    from numba.core.registry import CPUDispatcher

    mod = importlib.import_module(module)
    kernels = [k for k in vars(mod).values() if isinstance(k, CPUDispatcher) and k.__module__ == module]
    assert len(kernels) >= 3
    for kernel in kernels:
        code = kernel.py_func.__code__
        for name in code.co_names:
            value = kernel.py_func.__globals__.get(name)
            assert not isinstance(value, np.ndarray), f"{kernel.__name__} reads the global array {name}"
            if isinstance(value, types.ModuleType):  # F.TABLE and the like
                arrays = [a for a in code.co_names if isinstance(getattr(value, a, None), np.ndarray)]
                assert not arrays, f"{kernel.__name__} reads the global arrays {arrays} of {value.__name__}"


def test_the_position_reads_the_compiled_arrays_where_they_are():
    from blokus.model import state as S

    assert (S._M_HAND, S._CELL) == (F.M_HAND, F.CELL)
