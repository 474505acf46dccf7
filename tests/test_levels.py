"""The five playing strengths of local games (``ai.players.registry.LEVELS``)."""

from __future__ import annotations

import random

import pytest

from blokus.ai.players.registry import LEVELS, PlayerNameError, parse_player
from blokus.model.pieces import Shape
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState


@pytest.mark.parametrize("level", LEVELS)
def test_every_level_plays_legal_moves(level):
    rng = random.Random(level)
    state = GameState.new(SEASON_2021, Shape.PENTO_U)
    player = make_level(level, seed=level)
    for _ in range(3):
        if state.is_over:
            break
        move = player.choose_move_sync(state, move_time=0.5)
        state.play(move)
        for _ in range(3):  # the other colours move at random
            if state.is_over:
                break
            ids = state.legal_placements()
            state.push_placement(int(ids[rng.randrange(len(ids))]))
    assert player.name == f"level{level}"


def test_levels_1_and_2_are_noisy_and_level_4_answers_quickly():
    state = GameState.new(SEASON_2021, Shape.PENTO_U)
    for _ in range(8):
        state.push_placement(int(state.legal_placements()[0]))
    moves = {make_level(1, seed).choose_move_sync(state, move_time=0.5) for seed in range(8)}
    assert len(moves) > 1  # the noise makes it play different moves
    assert len({make_level(2, seed).choose_move_sync(state, move_time=0.5) for seed in range(8)}) > 1
    player = make_level(4, 1)
    player.choose_move_sync(state, move_time=30.0)
    assert player.last_info["time"] < 2.0  # capped at 0.4 s (with room for a loaded machine)


def make_level(level: int, seed: int | None = None):
    return parse_player(f"level{level}").build(seed)


def test_unknown_level():
    with pytest.raises(PlayerNameError, match="level must be one of 1, 2, 3, 4, 5"):
        make_level(6)
