"""Property tests of the rule engine against a slow, obviously-correct reference."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from blokus.model.moves import SetMove, SkipMove, parse_move
from blokus.model.pieces import Color, Rotation, Shape, orientations
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState, placement_of


def random_state(seed: int, plies: int) -> GameState:
    rng = random.Random(seed)
    state = GameState.new(rng=rng, season=SEASON_2021)
    for _ in range(plies):
        if state.is_over:
            break
        moves = list(state.legal_moves())
        if state.can_skip() and rng.random() < 0.05:
            state.play(SkipMove(state.color))
        else:
            state.play(rng.choice(moves))
    return state


def brute_force_moves(state: GameState, color: Color) -> set[SetMove]:
    """Every (shape, rotation, flip, position) the validator accepts, as a set of distinct moves."""
    probe = state.copy()
    probe.turn = state.turn - (state.turn % 4) + color  # ask as if it were this colour's turn
    found = set()
    for shape in Shape:
        for rot in Rotation:
            for flip in (False, True):
                for x in range(-1, 20):
                    for y in range(-1, 20):
                        move = SetMove(color, shape, rot, flip, x, y)
                        if probe.validate(move) is None:
                            found.add(move)
    return found


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6), plies=st.integers(0, 60))
def test_generator_equals_validator(seed, plies):
    state = random_state(seed, plies)
    color = state.color
    generated = list(state.legal_moves())
    assert len(set(generated)) == len(generated), "every cell set once"
    assert set(generated) == brute_force_moves(state, color)
    for move in generated:  # the engine emits the canonical (rotation, flip) pair
        assert move.canonical() is move or (move.canonical().rotation, move.canonical().flipped) == (
            move.rotation,
            move.flipped,
        )


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), plies=st.integers(0, 90))
def test_apply_then_undo_restores(seed, plies):
    state = random_state(seed, plies)
    if state.is_over:
        return
    before = state.copy()
    rng = random.Random(seed)
    moves = list(state.legal_moves())
    line = []
    for _ in range(6):
        if state.is_over:
            break
        moves = list(state.legal_moves())
        move = rng.choice(moves)
        assert state.validate(move) is None
        state.push(move)
        line.append(move)
    for _ in line:
        state.pop()
    assert state == before and state.last_move == before.last_move


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), plies=st.integers(0, 70))
def test_has_legal_move_agrees_with_list(seed, plies):
    state = random_state(seed, plies)
    for color in Color:
        assert state.has_legal_move(color) == (len(state.legal_placements(color)) > 0)


def test_every_pair_maps_to_the_same_placement():
    for shape in Shape:
        for rot in Rotation:
            for flip in (False, True):
                move = SetMove(Color.RED, shape, rot, flip, 5, 6)
                canon = move.canonical()
                assert canon == move
                assert (canon.rotation, canon.flipped) in [(o.rotation, o.flipped) for o in orientations(shape)]
                assert placement_of(move) == placement_of(canon)


def test_move_text_round_trip():
    state = random_state(3, 30)
    for move in list(state.legal_moves())[:50] + [SkipMove(Color.GREEN)]:
        assert parse_move(str(move)) == move
        assert str(parse_move(str(move))) == str(move)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), plies=st.integers(0, 70))
def test_canonical_pair_round_trips_through_xml(seed, plies):
    from blokus.model.convert import move_from_message, move_to_message, parse_xml, to_xml

    state = random_state(seed, plies)
    if state.is_over:
        return
    moves = list(state.legal_moves())[:40] + [SkipMove(state.color)]
    for move in moves:
        back = move_from_message(parse_xml(to_xml(move_to_message(move, "r", season=SEASON_2021)).encode()))
        assert back == move and str(back) == str(move)  # same cells and the same (rotation, flip) pair
        if isinstance(move, SetMove):
            assert state.validate(back) is None
