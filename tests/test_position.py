"""One position class (docs/position.md): ``blokus.player.GameState`` is ``model.state.GameState``, on the compiled
engine underneath once numba has loaded and on the reference engine before; played in lockstep, both engines
underneath answer alike, key a position by one Zobrist key, and refuse a move with one IllegalMoveError."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

import blokus.player
from blokus.model.moves import IllegalMoveError, MoveMistake, SetMove, SkipMove
from blokus.model.pieces import Color, Rotation, Shape, Team
from blokus.model.season import SEASON_2021, SEASON_2027, Season
from blokus.model.state import GameState, on_reference


def _alike(compiled: GameState, reference: GameState) -> None:
    """Every query of the two positions gives the same answer."""
    for color in Color:
        assert compiled.legal_move_count(color) == reference.legal_move_count(color) == len(compiled.legal_moves(color))
        assert compiled.legal_moves(color) == reference.legal_moves(color)
        assert np.array_equal(compiled.legal_placements(color), reference.legal_placements(color))
        assert compiled.corners(color) == reference.corners(color)
        assert compiled.has_legal_move(color) == reference.has_legal_move(color)
        assert compiled.points(color) == reference.points(color)
        assert compiled.pieces_left(color) == reference.pieces_left(color)
    assert (compiled.turn, compiled.color, compiled.valid_colors, compiled.is_over, compiled.last_move) == (
        reference.turn,
        reference.color,
        reference.valid_colors,
        reference.is_over,
        reference.last_move,
    )
    assert compiled.key() == reference.key() and compiled == reference and hash(compiled) == hash(reference)
    assert np.array_equal(compiled.board(), reference.board()) and str(compiled) == str(reference)
    assert (compiled.boards, compiled.shapes, compiled.mono_done, compiled.mono_flag) == (
        reference.boards,
        reference.shapes,
        reference.mono_done,
        reference.mono_flag,
    )


def test_the_player_api_position_is_the_one_class() -> None:
    assert blokus.player.GameState is GameState
    state = GameState.new(2027, seed=1)
    assert state.legal_moves() and state._fast is not None  # numba has loaded (blokus.player): compiled underneath
    reference = on_reference(GameState.new(2027, seed=1))
    assert reference.legal_moves() == state.legal_moves() and reference._fast is None
    assert reference.copy()._fast is None and state.to_model() == state and state.to_model() is not state


@pytest.mark.parametrize("season", [2021, 2027])
def test_both_engines_underneath_answer_alike_along_a_game(season: int) -> None:
    rng = random.Random(season)
    compiled, reference = GameState.new(season, seed=3), on_reference(GameState.new(season, seed=3))
    assert compiled.season is reference.season and isinstance(compiled.season, Season)
    played = []
    while not compiled.is_over:
        _alike(compiled, reference)
        move = rng.choice(compiled.legal_moves())
        compiled.push(move)
        reference.push(move)
        played.append(move)
    _alike(compiled, reference)
    assert compiled.outcome() == reference.outcome() and compiled.winner() == reference.winner()
    for move in reversed(played[-5:]):  # pop gives back the move it undoes
        assert compiled.pop() == move == reference.pop()
        _alike(compiled, reference)


def test_the_compiled_engine_is_built_late_kept_in_step_and_dropped_below_its_start() -> None:
    """Pushes before the first query go to the reference; the compiled engine built then follows push and pop, the
    reference's board catches up when read, a pop below where the engine was built drops it; copies and pickles
    carry the position whatever engine holds it."""
    rng = random.Random(7)
    compiled, reference = GameState.new(2027, "PENTO_L"), on_reference(GameState.new(2027, "PENTO_L"))
    for _ in range(6):  # on the reference only: nothing asked yet
        move = rng.choice(reference.legal_moves())
        compiled.push(move)
        reference.push(move)
    assert compiled._fast is None
    _alike(compiled, reference)
    assert compiled._fast is not None  # built at the first query
    for _ in range(8):
        move = rng.choice(compiled.legal_moves())
        compiled.push(move)
        reference.push(move)
        assert compiled.key() == reference.key()  # the key follows without reading the board
    assert len(compiled._lag) == 8  # the reference's board is behind ...
    twin = compiled.copy()
    assert pickle.loads(pickle.dumps(compiled)) == reference  # ... a pickle carries the position all the same
    _alike(compiled, reference)  # ... and catches up when read
    _alike(twin, reference.copy())
    for _ in range(10):  # back below where the compiled engine was built
        assert compiled.pop() == reference.pop()
        assert compiled.turn == reference.turn and compiled.key() == reference.key()
    assert compiled._fast is None
    _alike(compiled, reference)
    move = compiled.legal_moves()[0]
    compiled.push(move)
    reference.push(move)
    _alike(compiled, reference)
    compiled.turn = reference.turn = reference.turn + 4  # a field set by hand: the compiled engine is built anew
    _alike(compiled, reference)
    with pytest.raises(IndexError):
        twin.pop()  # a copy's history starts empty


def test_equal_positions_whatever_the_moves_and_never_across_seasons_or_start_pieces() -> None:
    a = GameState.new(2021, "PENTO_L")
    blue = a.legal_moves()[0]
    a.push(blue)
    yellow = a.legal_moves()[0]
    a.push(yellow)
    b = GameState.new(SEASON_2021, Shape.PENTO_L)
    b.push(blue)
    b.push(yellow)
    assert a == b and hash(a) == hash(b) and a.key() == b.key()
    b.pop()
    b.push(b.legal_moves()[1])
    assert a != b and a.key() != b.key()
    assert GameState.new(2021, "PENTO_L") != GameState.new(2027, "PENTO_L")
    assert GameState.new(2021, "PENTO_L").key() != GameState.new(2027, "PENTO_L").key()
    assert GameState.new(2021, "PENTO_L") != GameState.new(2021, "PENTO_V")
    assert GameState.new(SEASON_2027).season == 2027 and str(SEASON_2027) == "2027"


def test_one_illegal_move_error_names_the_rule_broken() -> None:
    model, api = on_reference(GameState.new(2027, "PENTO_L")), GameState.new(2027, "PENTO_L")
    inside = SetMove(Color.BLUE, Shape.PENTO_L, Rotation.NONE, False, 5, 5)  # off the border: the 2027 first move
    for state in (model, api):
        with pytest.raises(IllegalMoveError) as info:
            state.play(inside)
        assert isinstance(info.value, ValueError) and info.value.move == inside
        assert info.value.mistake is MoveMistake.NOT_ON_BORDER and info.value.rule == MoveMistake.NOT_ON_BORDER.english
        with pytest.raises(ValueError):  # a text that is no move
            state.play("BLUE NOTHING")
    for state in (model, api):
        with pytest.raises(IllegalMoveError) as info:
            state.push(SkipMove(Color.RED))
        assert info.value.mistake is MoveMistake.WRONG_COLOR
        with pytest.raises(IllegalMoveError) as info:
            state.push(SetMove(Color.BLUE, Shape.PENTO_L, Rotation.NONE, False, 19, 19))
        assert info.value.mistake is MoveMistake.OUT_OF_BOUNDS
    model.play(str(model.legal_moves()[0]))  # play from text
    assert model.turn == 1 and model.last_move == model.pop()
    over = GameState.new(2021, "PENTO_L")
    over.valid = 0
    with pytest.raises(IllegalMoveError) as info:
        over.play(SkipMove(Color.BLUE))
    assert info.value.mistake is None and info.value.rule == "the game is over"
    assert over.legal_moves(Color.BLUE) == [] and over.legal_move_count() == 0 and over.corners() == []
    assert over.winner() is None and over.outcome().points == (0, 0) and over.team_points(Team.ONE) == 0
