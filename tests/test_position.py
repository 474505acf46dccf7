"""One position vocabulary (docs/position.md): the model's GameState and the player API's say the same things in the
same words, key a position by one Zobrist key, and refuse a move with one IllegalMoveError."""

from __future__ import annotations

import random

import pytest

from blokus.model.moves import IllegalMoveError, MoveMistake, SetMove, SkipMove
from blokus.model.pieces import Color, Rotation, Shape
from blokus.model.season import SEASON_2021, SEASON_2027, Season
from blokus.model.state import GameState
from blokus.player import GameState as ApiState


@pytest.mark.parametrize("season", [2021, 2027])
def test_both_classes_answer_alike_along_a_game(season: int) -> None:
    rng = random.Random(season)
    model, api = GameState.new(season, seed=3), ApiState.new(season, seed=3)
    assert model.season is api.season and isinstance(model.season, Season) and model.start_piece == api.start_piece
    played = []
    while not model.is_over:
        for color in Color:
            assert model.legal_move_count(color) == api.legal_move_count(color) == len(api.legal_moves(color))
            assert model.corners(color) == api.corners(color)
            assert model.has_legal_move(color) == api.has_legal_move(color)
        assert list(model.legal_moves()) == api.legal_moves()
        assert model.key() == api.key() and model.turn == api.turn and model.color == api.color
        move = rng.choice(api.legal_moves())
        model.push(move)
        api.push(move)
        played.append(move)
    assert api.is_over and model.outcome() == api.outcome() and model.winner() == api.winner()
    assert model.key() == api.key()
    for move in reversed(played[-5:]):  # pop gives back the move it undoes
        assert model.pop() == move == api.pop()
        assert model.key() == api.key()


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
    model, api = GameState.new(2027, "PENTO_L"), ApiState.new(2027, "PENTO_L")
    inside = SetMove(Color.BLUE, Shape.PENTO_L, Rotation.NONE, False, 5, 5)  # off the border: the 2027 first move
    for state in (model, api):
        with pytest.raises(IllegalMoveError) as info:
            state.play(inside)
        assert isinstance(info.value, ValueError) and info.value.move == inside
        assert info.value.mistake is MoveMistake.NOT_ON_BORDER and info.value.rule == MoveMistake.NOT_ON_BORDER.english
        with pytest.raises(ValueError):  # a text that is no move
            state.play("BLUE NOTHING")
    with pytest.raises(IllegalMoveError) as info:
        api.push(SkipMove(Color.RED))
    assert info.value.mistake is MoveMistake.WRONG_COLOR
    model.play(str(model.legal_moves()[0]))  # play from text
    assert model.turn == 1 and model.last_move == model.pop()
    over = GameState.new(2021, "PENTO_L")
    over.valid = 0
    with pytest.raises(IllegalMoveError) as info:
        over.play(SkipMove(Color.BLUE))
    assert info.value.mistake is None and info.value.rule == "the game is over"
    assert over.legal_moves(Color.BLUE) == [] and over.legal_move_count() == 0 and over.corners() == []
    assert over.winner() is None and over.outcome().points == (0, 0)
