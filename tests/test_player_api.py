"""The public player API (``blokus.player``): the same rules as the reference engine, push/pop/copy, moves
as text, and a docstring on every public name."""

from __future__ import annotations

import inspect
import random
from pathlib import Path

import numpy as np
import pytest

import blokus.player as api
from blokus.model.moves import MoveMistake
from blokus.model.state import GameState as ModelState
from blokus.model.state import on_reference
from blokus.player import Color, GameState, Player, Rotation, SetMove, Shape, SkipMove, Team, parse_move


def random_game(season: int, seed: int) -> tuple[GameState, ModelState]:
    """Play a random game on both engines side by side, checking they agree at every turn."""
    rng = random.Random(seed)
    state = GameState.new(season, seed=seed)
    ref = on_reference(state.to_model())
    while not state.is_over:
        moves = state.legal_moves()
        assert set(moves) == set(ref.legal_moves())
        assert len(moves) == state.legal_move_count()
        assert (state.color, state.team, state.turn, state.round) == (
            ref.color,
            ref.team,
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
            assert state.pieces_left(color) == ref.pieces_left(color)
        for team in Team:
            assert state.team_points(team) == ref.team_points(team)
        assert state.winner() == ref.outcome().winner
        assert np.array_equal(state.board(), ref.board())
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
    with pytest.raises(ValueError) as info:  # the server's mistake, and its text as the season words it
        state.play("BLUE MONO NONE false 0 0")
    assert info.value.mistake is MoveMistake.WRONG_SHAPE and str(info.value) == state.season.violation_text(
        MoveMistake.WRONG_SHAPE, info.value.move
    )
    with pytest.raises(ValueError) as info:
        state.play(SkipMove(Color.BLUE))
    assert info.value.mistake is MoveMistake.SKIP_FIRST_TURN
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


def test_every_public_name_and_hook_is_in_the_reference() -> None:
    reference = (Path(__file__).resolve().parents[1] / "docs" / "player-api.md").read_text()
    # every public method and property of Player (answer() too: the generated tests call it)
    members = [name for name, member in vars(api.Player).items() if not name.startswith("_") and callable(member)]
    assert {"calculate_move", "on_update", "while_waiting", "answer", "time_left"} <= set(members)
    assert [name for name in [*api.__all__, *members] if f"`{name}" not in reference] == []


def corners_from_the_board(state: GameState, color: Color) -> list[tuple[int, int]]:
    """The free corners of ``color`` computed from ``board()`` alone (what a team wrote by hand)."""
    board = state.board()
    own = board == color
    free = board < 0
    if not own.any():
        n = len(board)
        if state.season == 2021:
            border = {(0, 0), (n - 1, 0), (0, n - 1), (n - 1, n - 1)}
        else:
            border = {(x, y) for y in range(n) for x in range(n) if x in (0, n - 1) or y in (0, n - 1)}
        return sorted(((x, y) for x, y in border if free[y, x]), key=lambda c: (c[1], c[0]))
    padded = np.pad(own, 1)
    edge = padded[:-2, 1:-1] | padded[2:, 1:-1] | padded[1:-1, :-2] | padded[1:-1, 2:]
    diag = padded[:-2, :-2] | padded[:-2, 2:] | padded[2:, :-2] | padded[2:, 2:]
    ys, xs = np.nonzero(free & diag & ~edge)
    return [(int(x), int(y)) for x, y in zip(xs, ys, strict=True)]


@pytest.mark.parametrize("season", [2021, 2027])
def test_every_colour_has_its_moves_corners_and_the_key_follows_push_and_pop(season: int) -> None:
    rng = random.Random(season)
    state = GameState.new(season, seed=season)
    seen: dict[int, str] = {}
    while not state.is_over:
        ref = on_reference(state.copy())
        for color in Color:
            if color in state.valid_colors:
                moves = state.legal_moves(color)
                assert set(moves) == set(ref.legal_moves(color)) and len(moves) == state.legal_move_count(color)
                if state.pieces_left(color):
                    assert state.corners(color) == corners_from_the_board(state, color)
            else:
                assert state.legal_moves(color) == [] and state.legal_move_count(color) == 0
                assert state.corners(color) == []
        assert state.legal_moves(state.color) == state.legal_moves() and state.corners() == state.corners(state.color)
        # the key kept by push/pop is the key of the same position built from scratch, and tells positions apart
        key = state.key()
        assert key == on_reference(ref.copy()).key() and hash(state) == hash(key) and 0 <= key < 2**64
        assert seen.setdefault(key, str(state) + str(state.turn)) == str(state) + str(state.turn)
        move = rng.choice(state.legal_moves())
        state.push(move)
        assert state.key() != key
        state.pop()
        assert state.key() == key
        state.push(move)
    assert state.legal_moves(Color.BLUE) == [] and state.corners(Color.GREEN) == []
    with pytest.raises(ValueError, match="not a colour"):
        state.legal_moves("BLUE")  # type: ignore[arg-type]


def test_equal_positions_are_equal_whatever_the_order_of_their_moves() -> None:
    """BLUE's pieces of rounds 2 and 3 swapped: the same position, the same key; the last move is no part of it."""
    rng = random.Random(5)
    for _ in range(50):  # random games until one allows the swap (the first one almost always does)
        state = GameState.new(2021, start_piece="PENTO_L", seed=5)
        played = []
        while state.turn < 12:
            move = rng.choice(state.legal_moves())
            played.append(move)
            state.push(move)
        swapped = played[:4] + [played[8]] + played[5:8] + [played[4]] + played[9:]
        other = GameState.new(2021, start_piece="PENTO_L")
        try:
            for move in swapped:
                other.play(move)
        except ValueError:
            continue
        assert other == state and other.key() == state.key() and hash(other) == hash(state)
        assert other.last_move == state.last_move and len({state, other}) == 1
        other.pop()
        assert other != state and other.key() != state.key()
        break
    else:
        pytest.fail("no random game allowed the swap")
    # the game's fixed facts are part of the position
    empty = GameState.new(2021, start_piece="PENTO_L")
    assert empty == GameState.new(2021, start_piece="PENTO_L")
    assert empty != GameState.new(2027, start_piece="PENTO_L")
    assert empty.key() != GameState.new(2027, start_piece="PENTO_L").key()
    assert empty.key() != GameState.new(2021, start_piece="PENTO_V").key()


def test_enums_read_as_their_names_are_true_and_still_index() -> None:
    state = GameState.new(2021, start_piece="PENTO_L")
    assert (f"{state.color}", str(state.team), format(Shape.MONO), f"{Rotation.NONE:>6}") == (
        "BLUE",
        "ONE",
        "MONO",
        "  NONE",
    )
    assert all(bool(member) for enum in (Color, Team, Shape, Rotation) for member in enum)
    assert (f"{Color.RED:d}", f"{Team.TWO:d}", Color.GREEN.index, Shape.PENTO_Y.index) == ("2", "1", 3, 20)
    assert ["b", "y", "r", "g"][Color.RED] == "r" and Color(2) is Color.RED and Team.ONE == 0
    assert repr(Color.BLUE) == "<Color.BLUE: 0>"
    # a win of team ONE is a winner: BLUE places, nobody else has a piece on the board yet
    state.play("BLUE PENTO_L NONE false 0 0")
    winner = state.winner()
    assert winner is Team.ONE
    if not winner:
        pytest.fail("a win of team ONE tested false")


def test_a_hand_made_state_past_turn_511_has_a_key() -> None:
    """A state file may say any turn: the key takes it modulo its table (no IndexError), equality stays exact."""
    far, near = ModelState.new(start_piece=Shape.PENTO_L), ModelState.new(start_piece=Shape.PENTO_L)
    far.turn, near.turn = 600, 600 - 512
    a, b = far, near
    assert a.key() == b.key() and a != b  # the same table entry, yet not the same position
