"""The compiled engine (``model.fast``) on positions no game reaches, against the numpy reference (``model.state``).

A state file or a player's unchecked ``push`` can hold any board: random owners on every field (up to the
scattered single cells that give a colour more than 5,000 placements), any hands, turn and colours in the game,
both seasons. On each, both engines must give the same legal placements for every colour, the same scores and
the same bookkeeping, then along a random move sequence and back. Pushes of placements that are not legal (the
player API's ``push`` does not check them) must stay within the arrays: the move lists stay distinct, sorted and
as long as the engine's own count. CI runs this module once with numba's bounds checking on (``.ci/run``).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blokus.cli.moves import main as moves_main
from blokus.model import fast as F
from blokus.model import placements as P
from blokus.model.fast import MAX_MOVES, TABLES, FastState, fields_of
from blokus.model.moves import SkipMove, parse_move
from blokus.model.pieces import SHAPES, Color, Rotation, Shape
from blokus.model.season import SEASON_2021, SEASONS
from blokus.model.state import ALL_SHAPES, GameState, on_reference
from blokus.player import SetMove
from tests.helpers import fixture_path

SEASON_LIST = list(SEASONS.values())
# fuzz sizes (the closing note of issue 49 quotes them): examples per test
BOARDS, SEQUENCES, UNCHECKED = 150, 75, 75


def _same(state: GameState, fast: FastState) -> None:
    assert fast.fields() == fields_of(state)
    assert fast.is_over == state.is_over
    assert fast.color == state.color
    for color in range(4):
        ids = fast.legal_placements(color)
        assert np.array_equal(ids, state.legal_placements(color))
        assert fast.points(color) == state.points(color)


def _hand(rng: random.Random) -> int:
    kind = rng.random()
    if kind < 0.2:
        return ALL_SHAPES  # before its first piece (even with cells on the board: a hand-made file)
    if kind < 0.3:
        return 0  # every piece placed
    return rng.getrandbits(len(SHAPES))


def random_board(seed: int, density: float, season_index: int) -> GameState:
    """Any position: every field owned by a random colour with probability ``density``, random hands, turn, colours
    in the game, start piece and the done/monomino bits."""
    rng = random.Random(seed)
    season = SEASON_LIST[season_index]
    state = on_reference(GameState(rng.choice(list(Shape)), season))
    for cell in range(P.NCELLS):
        if rng.random() < density:
            state.boards[rng.randrange(4)] |= 1 << cell
    state.shapes = [_hand(rng) for _ in range(4)]
    state.turn = rng.randrange(season.turn_limit + 4)
    state.valid = rng.choice((15, 15, rng.randrange(16)))
    state.mono_done = rng.randrange(16)
    state.mono_flag = rng.randrange(16) & state.mono_done
    return state


def scattered(seed: int, season_index: int) -> GameState:
    """Single cells of the colour to move on a random lattice (the positions with the most placements)."""
    rng = random.Random(seed)
    state = on_reference(GameState(Shape.PENTO_L, SEASON_LIST[season_index]))
    step, ox, oy = rng.choice((3, 4, 5, 6)), rng.randrange(3), rng.randrange(3)
    color = rng.randrange(4)
    for y in range(oy, P.N, step):
        for x in range(ox, P.N, step):
            state.boards[color] |= P.bit(x, y)
    state.shapes[color] = ALL_SHAPES & ~(1 << rng.randrange(len(SHAPES)))
    state.turn = color
    return state


boards = st.builds(
    random_board,
    seed=st.integers(0, 2**32 - 1),
    density=st.sampled_from((0.0, 0.03, 0.1, 0.25, 0.5)),
    season_index=st.integers(0, len(SEASON_LIST) - 1),
)
lattices = st.builds(scattered, seed=st.integers(0, 2**32 - 1), season_index=st.integers(0, len(SEASON_LIST) - 1))
positions = st.one_of(boards, lattices)


@settings(max_examples=BOARDS, deadline=None)
@given(state=positions)
def test_any_board_agrees_with_the_reference(state):
    _same(state, FastState.from_state(state))


@settings(max_examples=SEQUENCES, deadline=None)
@given(state=positions, seed=st.integers(0, 2**32 - 1), plies=st.integers(1, 30))
def test_move_sequences_from_any_board_agree_and_undo(state, seed, plies):
    rng = random.Random(seed)
    fast = FastState.from_state(state)
    start = fast.fields()
    pushed = 0
    for _ in range(plies):
        if state.is_over:
            break
        ids = state.legal_placements()
        if not len(ids) or rng.random() < 0.1:
            state.push(SkipMove(state.color))
            fast.push_skip()
        else:
            pid = int(ids[rng.randrange(len(ids))])
            state.push_placement(pid)
            fast.push_placement(pid)
        pushed += 1
        assert fast.fields() == fields_of(state)
        if not state.is_over:  # the colour to move's list at every ply, every colour's at the end
            assert np.array_equal(fast.legal_placements(), state.legal_placements())
    _same(state, fast)
    for _ in range(pushed):
        state.pop()
        fast.pop()
        assert fast.fields() == fields_of(state)
    assert fast.fields() == start


def _check_lists(fast: FastState) -> None:
    """Every colour's move list: distinct placement ids, as many as the engine counts without a list."""
    for color in range(4):
        ids = fast.legal_placements(color)
        assert len(ids) <= MAX_MOVES
        assert np.all(np.diff(ids) > 0) and (not len(ids) or 0 <= ids[0] <= ids[-1] < P.COUNT)
        counted = F.count_moves(TABLES, fast.b, fast.m, color, fast.first_cells, MAX_MOVES + 1)
        assert counted == len(ids)


@settings(max_examples=UNCHECKED, deadline=None)
@given(state=positions, seed=st.integers(0, 2**32 - 1), plies=st.integers(1, 30))
def test_unchecked_pushes_of_any_placement_stay_in_bounds(state, seed, plies):
    # what the player API's push allows: placements that overlap, touch their own colour, repeat a shape
    rng = random.Random(seed)
    fast = FastState.from_state(state)
    start = fast.fields()
    for _ in range(plies):
        fast.push_placement(rng.randrange(P.COUNT) if rng.random() < 0.9 else -1)
        _check_lists(fast)
    for _ in range(plies):
        fast.pop()
    assert fast.fields() == start


def test_the_player_api_push_of_illegal_moves_is_memory_safe():
    # the crash: BLUE's monominoes pushed unchecked on scattered fields (the others skip) until its move
    # list outgrew the old buffer; on free fields the reference can rebuild the position (an overlap would not)
    api = GameState.new(2021, "PENTO_L", seed=1)  # on the compiled engine (numba has loaded)
    for x, y in [(x, y) for y in range(1, 20, 5) for x in range(1, 20, 5)]:
        api.push(SetMove(Color.BLUE, Shape.MONO, Rotation.NONE, False, x, y))
        while api.color != Color.BLUE:
            api.push(SkipMove(api.color))
        moves = api.legal_moves()
        assert api.legal_move_count() == len(moves) == len(set(moves))
        assert [str(m) for m in moves] == [str(m) for m in on_reference(api.copy()).legal_moves()]
    assert api.legal_move_count() == 5506  # more than the old buffer held (4,096)
    with pytest.raises(ValueError, match="no placement"):
        FastState.from_state(api.to_model()).push_placement(P.COUNT)
    with pytest.raises(IndexError):
        FastState.from_state(api.to_model()).pop()


@pytest.mark.parametrize("season", ["2021", "2027"])
def test_blokus_moves_lists_every_move_of_the_scattered_cells_position(season, capsys):
    path = fixture_path(f"engine/scattered-cells-{season}.xml")
    assert moves_main([str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    reference = on_reference(
        GameState.new(SEASON_2021, Shape.PENTO_L)
    )  # the same position, built on the reference engine
    reference.season = SEASONS[season]
    for y in range(1, 20, 5):
        for x in range(1, 20, 5):
            reference.boards[Color.BLUE] |= P.bit(x, y)
    reference.shapes[Color.BLUE] = ALL_SHAPES & ~(1 << Shape.MONO)
    expected = {str(move) for move in reference.legal_moves()}
    assert len(lines) == len(set(lines)) == len(expected) == 5506
    assert {str(parse_move(line)) for line in lines} == expected
    assert moves_main(["--count", str(path)]) == 0
    assert capsys.readouterr().out == "5506\n"
