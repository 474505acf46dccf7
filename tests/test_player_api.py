"""The public player API (``blokus.player``): the same rules as the reference engine, push/pop/copy, moves
as text, and a docstring on every public name."""

from __future__ import annotations

import inspect
import random

import numpy as np
import pytest

import blokus.player as api
from blokus.player import Color, GameState, Player, SetMove, Shape, SkipMove, Team, parse_move
from model.state import GameState as ModelState


def random_game(season: int, seed: int) -> tuple[GameState, ModelState]:
    """Play a random game on both engines side by side, checking they agree at every turn."""
    rng = random.Random(seed)
    state = GameState.new(season, seed=seed)
    ref = state.to_model()
    while not state.is_over:
        moves = state.legal_moves()
        assert set(moves) == set(ref.legal_moves())
        assert len(moves) == state.legal_move_count()
        assert (state.color, state.team, state.turn, state.round) == (
            ref.current_color,
            ref.current_team,
            ref.turn,
            ref.round,
        )
        move = rng.choice(moves)
        state.push(move)
        ref.play(move)
    assert ref.is_over
    return state, ref


@pytest.mark.parametrize("season", [2021, 2027])
def test_whole_games_agree_with_the_reference_engine(season: int) -> None:
    for seed in range(2):
        state, ref = random_game(season, seed)
        assert state.season == season
        assert state.legal_moves() == [] and state.legal_move_count() == 0
        for color in Color:
            assert state.points(color) == ref.points(color)
            assert state.pieces_left(color) == ref.undeployed(color)
        for team in Team:
            assert state.team_points(team) == ref.team_points(team)
        assert state.winner() == ref.outcome().winner
        assert np.array_equal(state.board(), ref.board_array())
        assert state.to_model() == ref


def test_pop_restores_and_copy_is_independent() -> None:
    state = GameState.new(2027, start_piece="PENTO_X", seed=1)
    for _ in range(9):
        state.push(state.legal_moves()[-1])
    before = (str(state), state.turn, state.legal_moves(), state.last_move)
    twin = state.copy()
    move = state.legal_moves()[3]
    state.push(move)
    assert state.last_move == move and str(state) != before[0]
    assert str(twin) == before[0]  # the copy did not move
    assert state.pop() == move
    assert (str(state), state.turn, state.legal_moves(), state.last_move) == before
    with pytest.raises(IndexError):
        twin.pop()  # a copy's history starts empty


def test_push_refuses_another_colour_and_play_names_the_mistake() -> None:
    state = GameState.new(2021, start_piece=Shape.PENTO_L, seed=0)
    with pytest.raises(ValueError, match="BLUE is to move"):
        state.push(SetMove(Color.RED, Shape.PENTO_L))
    with pytest.raises(ValueError, match="WRONG_SHAPE"):
        state.play("BLUE MONO NONE false 0 0")
    with pytest.raises(ValueError, match="SKIP_FIRST_TURN"):
        state.play(SkipMove(Color.BLUE))
    assert not state.is_legal(SetMove(Color.BLUE, Shape.PENTO_L, x=5, y=5))
    state.play("BLUE PENTO_L NONE false 0 0")
    assert state.color is Color.YELLOW and state.board()[0, 0] == Color.BLUE


def test_moves_print_and_parse_in_one_form() -> None:
    state = GameState.new(2027, seed=4)
    for move in state.legal_moves():
        assert parse_move(str(move)) == move
    assert str(parse_move("green skip")) == "GREEN SKIP"
    with pytest.raises(ValueError):
        parse_move("BLUE PENTO_L sideways false 0 0")


def test_player_base_class_keeps_the_state_and_the_time() -> None:
    player = Player()
    state = GameState.new(2021, seed=0)
    player.on_update(state)
    assert player.game_state is state
    assert player.time_left() == float("inf")
    with pytest.raises(NotImplementedError):
        player.calculate_move()


def test_every_public_name_has_a_docstring() -> None:
    missing = []
    for name in api.__all__:
        obj = getattr(api, name)
        if name == "Move":  # a type alias (SetMove | SkipMove): documented in the module and the reference
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") or attr in getattr(obj, "__members__", {}):
                    continue
                target = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                if callable(target) and not (target.__doc__ or "").strip():
                    missing.append(f"{name}.{attr}")
    assert missing == []
