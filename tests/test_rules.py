"""The rule examples of docs/spec/rules.md §15 (official plugin tests and official engine output)."""

from __future__ import annotations

import random

import pytest

from blokus.model.moves import IllegalMoveError, MoveMistake, SetMove, SkipMove
from blokus.model.pieces import Color, Rotation, Shape, Team, orientations, transform
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState

B, Y, R, G = Color.BLUE, Color.YELLOW, Color.RED, Color.GREEN
NONE, RIGHT, MIRROR, LEFT = Rotation.NONE, Rotation.RIGHT, Rotation.MIRROR, Rotation.LEFT
M = MoveMistake


def mv(color, shape, rotation=NONE, flipped=False, x=0, y=0):
    return SetMove(color, Shape[shape] if isinstance(shape, str) else shape, rotation, flipped, x, y)


def u4() -> GameState:
    state = GameState.new(SEASON_2021, Shape.PENTO_U)
    for move in (
        mv(B, "PENTO_U", NONE, False, 0, 0),
        mv(Y, "PENTO_U", NONE, False, 17, 0),
        mv(R, "PENTO_U", MIRROR, False, 17, 18),
        mv(G, "PENTO_U", MIRROR, False, 0, 18),
    ):
        state.play(move)
    return state


def test_u4_position():
    state = u4()
    assert (state.turn, state.round, state.color) == (4, 2, B)
    rows = state.render().splitlines()
    assert rows[0] == "B.B..............Y.Y"
    assert rows[1] == "BBB..............YYY"
    assert rows[18] == "GGG..............RRR"
    assert rows[19] == "G.G..............R.R"
    assert all(set(row) == {"."} for row in rows[2:18])


@pytest.mark.parametrize(
    ("case", "move", "expected"),
    [
        ("F1", mv(R, "MONO", NONE, False, 0, 0), M.WRONG_COLOR),
        ("F2", mv(R, "PENTO_U", NONE, False, 0, 0), M.WRONG_COLOR),
        ("F3", SkipMove(R), M.WRONG_COLOR),
        ("F4", SkipMove(B), M.SKIP_FIRST_TURN),
        ("F5", mv(B, "PENTO_S", NONE, False, 0, 0), M.WRONG_SHAPE),
        ("F6", mv(B, "MONO", NONE, False, -1, 2), M.WRONG_SHAPE),
        ("F7", mv(B, "PENTO_U", NONE, False, -1, -1), M.OUT_OF_BOUNDS),
        ("F8", mv(B, "PENTO_U", NONE, False, -1, 0), M.OUT_OF_BOUNDS),
        ("F9", mv(B, "PENTO_U", NONE, False, 10, 10), M.NOT_IN_CORNER),
        ("F10", mv(B, "PENTO_U", NONE, False, 0, 0), None),
        ("F11", mv(B, "PENTO_U", MIRROR, False, 0, 0), None),
    ],
)
def test_first_moves(case, move, expected):
    assert GameState.new(SEASON_2021, Shape.PENTO_U).validate(move) is expected, case


def test_f10_f11_cells():
    assert mv(B, "PENTO_U", NONE, False, 0, 0).cells == {(0, 0), (2, 0), (0, 1), (1, 1), (2, 1)}
    assert mv(B, "PENTO_U", MIRROR, False, 0, 0).cells == {(0, 0), (1, 0), (2, 0), (0, 1), (2, 1)}


def test_f12_f13_any_free_corner():
    state = GameState.new(SEASON_2021, Shape.PENTO_U)
    assert len(state.legal_moves()) == 16
    seq = [
        (mv(B, "PENTO_U", NONE, False, 17, 0), {(17, 0), (19, 0), (17, 1), (18, 1), (19, 1)}),
        (mv(Y, "PENTO_U", RIGHT, False, 18, 17), {(18, 17), (19, 17), (18, 18), (18, 19), (19, 19)}),
        (mv(R, "PENTO_U", NONE, False, 0, 18), {(0, 18), (2, 18), (0, 19), (1, 19), (2, 19)}),
        (mv(G, "PENTO_U", NONE, True, 0, 0), {(0, 0), (2, 0), (0, 1), (1, 1), (2, 1)}),
    ]
    for move, cells in seq:
        assert move.cells == cells
        state.play(move)


def test_error_texts():
    state = GameState.new(SEASON_2021, Shape.PENTO_U)
    with pytest.raises(IllegalMoveError) as err:
        state.play(mv(R, "PENTO_U", NONE, False, 0, 0))
    assert str(err.value) == "Die Farbe des Zuges ist nicht an der Reihe bei Zug 'Setze PENTO_U(Farbe Rot)[0,0]'"
    with pytest.raises(IllegalMoveError) as err:
        state.play(SkipMove(B))
    assert str(err.value) == "Der erste Zug muss einen Stein setzen bei Zug 'Farbe Blau setzt aus'"
    with pytest.raises(IllegalMoveError) as err:
        state.play(mv(B, "PENTO_S", NONE, False, 0, 0))
    assert str(err.value) == "Der erste Zug muss den festgelegten Spielstein setzen"
    assert SEASON_2021.violation_text(M.OBSTRUCTED, mv(R, "PENTO_I", NONE, False, 19, 17)) == (
        "Der Spielstein würde eine andere Farbe überlagern bei Zug 'Setze PENTO_I(Farbe Rot)[19,17]'"
    )
    assert mv(B, "PENTO_V", RIGHT, True, 1, 2).german() == "Setze PENTO_V(Farbe Blau, gedreht um 90°, gespiegelt)[1,2]"


W1 = [
    ((0, 0), NONE),
    ((0, 0), MIRROR),
    ((17, 0), RIGHT),
    ((17, 0), LEFT),
    ((17, 17), NONE),
    ((17, 17), MIRROR),
    ((0, 17), RIGHT),
    ((0, 17), LEFT),
]


def test_w1_to_w5_opening_sets():
    state = GameState.new(SEASON_2021, Shape.PENTO_W)
    expected = {mv(B, "PENTO_W", rot, False, *pos) for pos, rot in W1}
    assert set(state.legal_moves()) == expected
    plays = [
        mv(B, "PENTO_W", NONE, False, 0, 0),
        mv(Y, "PENTO_W", RIGHT, False, 17, 0),
        mv(R, "PENTO_W", NONE, False, 17, 17),
    ]
    remaining = W1[2:]
    for move in plays:
        state.play(move)
        color = state.color
        assert set(state.legal_moves()) == {mv(color, "PENTO_W", rot, False, *pos) for pos, rot in remaining}
        remaining = remaining[2:]
    for start in Shape:  # W5: generator ⊆ validator, on every fresh state
        fresh = GameState.new(SEASON_2021, start)
        assert all(fresh.validate(m) is None for m in fresh.legal_moves())


@pytest.mark.parametrize(
    ("case", "move", "expected"),
    [
        ("L1", mv(B, "PENTO_U", NONE, False, 3, 2), M.DUPLICATE_SHAPE),
        ("L2", mv(B, "MONO", NONE, False, 10, 10), M.NO_SHARED_CORNER),
        ("L3", mv(B, "MONO", NONE, False, 1, 0), M.TOUCHES_SAME_COLOR),
        ("L4", mv(B, "MONO", NONE, False, 0, 0), M.OBSTRUCTED),
        ("L5", mv(B, "MONO", NONE, False, 1, 1), M.OBSTRUCTED),
        ("L6", mv(B, "MONO", NONE, False, 17, 0), M.OBSTRUCTED),
        ("L7", mv(B, "MONO", NONE, False, 1, 2), M.TOUCHES_SAME_COLOR),
        ("L8", mv(B, "MONO", NONE, False, 3, 2), None),
        ("L10", SkipMove(B), None),
        ("L11", mv(B, "TETRO_O", LEFT, True, 3, 2), None),
    ],
)
def test_later_moves(case, move, expected):
    assert u4().validate(move) is expected, case


def test_l9_either_step4_mistake():
    assert u4().validate(mv(B, "DOMINO", NONE, False, -1, 2)) in (M.TOUCHES_SAME_COLOR, M.OUT_OF_BOUNDS)


def test_l12_count():
    assert len(u4().legal_moves()) == 120


def i4() -> GameState:
    state = GameState.new(SEASON_2021, Shape.PENTO_I)
    state.play(mv(B, "PENTO_I", RIGHT, True, 0, 0))
    state.turn = 4  # the official test advances the turn counter three times without moves
    return state


def test_l13_to_l15():
    state = i4()
    assert mv(B, "PENTO_I", RIGHT, True, 0, 0).cells == {(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)}
    assert len(state.pieces_left(B)) == 20
    assert state.validate(mv(B, "PENTO_I", RIGHT, True, 0, 0)) is M.DUPLICATE_SHAPE
    assert len(state.pieces_left(B)) == 20
    state.play(SkipMove(B))
    assert state.last_move == SkipMove(B)


def test_x1_to_x6_transformations():
    for shape in Shape:
        assert set(transform(shape, NONE, False)) == set(shape.base_cells)
    assert mv(R, "TRIO_L", NONE, True, 2, 2).cells == {(3, 2), (2, 3), (3, 3)}
    pieces = {mv(B, "TETRO_O", rot, flip, 7, 12) for rot in Rotation for flip in (False, True)}
    assert len(pieces) == 1
    pairs = {
        s: [(o.rotation, o.flipped) for o in orientations(Shape[s])] for s in ("MONO", "DOMINO", "TRIO_L", "TETRO_O")
    }
    assert pairs == {
        "MONO": [(NONE, False)],
        "DOMINO": [(NONE, False), (RIGHT, False)],
        "TRIO_L": [(NONE, False), (NONE, True), (RIGHT, False), (RIGHT, True)],
        "TETRO_O": [(NONE, False)],
    }
    assert RIGHT.rotate(RIGHT) is MIRROR and MIRROR.rotate(MIRROR) is NONE
    assert MIRROR.rotate(RIGHT) is LEFT and RIGHT.rotate(LEFT) is NONE and LEFT.rotate(LEFT) is MIRROR


# Appendix A of the rules the project follows (the official server's PieceShape.kt, 21.x): for every shape the
# (rotation, flip) pairs the server keeps in its `variants` map, in insertion order, and the cells of all eight
# transformations (rotate -> normalise -> flip -> normalise), in the column order of COLUMNS below. A cell is
# two digits "xy"; a transformation lists its cells row by row.
APPENDIX_A = {
    "MONO": ("NONE", "00 00 00 00 00 00 00 00"),
    "DOMINO": ("NONE, RIGHT", "0010 0010 0001 0001 0010 0010 0001 0001"),
    "TRIO_L": ("NONE, NONE+flip, RIGHT, RIGHT+flip", "000111 100111 001001 001011 001011 001001 100111 000111"),
    "TRIO_I": ("NONE, RIGHT", "000102 000102 001020 001020 000102 000102 001020 001020"),
    "TETRO_O": ("NONE", "00100111 00100111 00100111 00100111 00100111 00100111 00100111 00100111"),
    "TETRO_T": (
        "NONE, RIGHT, RIGHT+flip, MIRROR",
        "00102011 00102011 10011112 00011102 10011121 10011121 00011102 10011112",
    ),
    "TETRO_I": ("NONE, RIGHT", "00010203 00010203 00102030 00102030 00010203 00010203 00102030 00102030"),
    "TETRO_L": (
        "NONE, NONE+flip, RIGHT, RIGHT+flip, MIRROR, MIRROR+flip, LEFT, LEFT+flip",
        "00010212 10110212 00102001 00102021 00101112 00100102 20011121 00011121",
    ),
    "TETRO_Z": (
        "NONE, NONE+flip, RIGHT, RIGHT+flip",
        "00101121 10200111 10011102 00011112 00101121 10200111 10011102 00011112",
    ),
    "PENTO_L": (
        "NONE, NONE+flip, RIGHT, RIGHT+flip, MIRROR, MIRROR+flip, LEFT, LEFT+flip",
        "0001020313 1011120313 0010203001 0010203031 0010111213 0010010203 3001112131 0001112131",
    ),
    "PENTO_T": (
        "NONE, RIGHT, RIGHT+flip, MIRROR",
        "0010201112 0010201112 2001112122 0001112102 1011021222 1011021222 0001112102 2001112122",
    ),
    "PENTO_V": (
        "NONE, NONE+flip, RIGHT, RIGHT+flip",
        "0001021222 2021021222 0010200102 0010202122 0010202122 0010200102 2021021222 0001021222",
    ),
    "PENTO_S": (
        "NONE, NONE+flip, RIGHT, RIGHT+flip, MIRROR, MIRROR+flip, LEFT, LEFT+flip",
        "1020300111 0010202131 0001111213 1001110203 2030011121 0010112131 0001021213 1011021203",
    ),
    "PENTO_Z": (
        "NONE, NONE+flip, RIGHT, RIGHT+flip",
        "0010111222 1020110212 2001112102 0001112122 0010111222 1020110212 2001112102 0001112122",
    ),
    "PENTO_I": (
        "NONE, RIGHT",
        "0001020304 0001020304 0010203040 0010203040 0001020304 0001020304 0010203040 0010203040",
    ),
    "PENTO_P": (
        "NONE, NONE+flip, RIGHT, RIGHT+flip, MIRROR, MIRROR+flip, LEFT, LEFT+flip",
        "0010011102 0010011112 0010201121 0010200111 1001110212 0001110212 0010011121 1020011121",
    ),
    "PENTO_W": (
        "NONE, NONE+flip, RIGHT, RIGHT+flip",
        "0001111222 2011210212 1020011102 0010112122 0010112122 1020011102 2011210212 0001111222",
    ),
    "PENTO_U": (
        "NONE, RIGHT, RIGHT+flip, MIRROR",
        "0020011121 0020011121 0010010212 0010110212 0010200121 0010200121 0010110212 0010010212",
    ),
    "PENTO_R": (
        "NONE, NONE+flip, RIGHT, RIGHT+flip, MIRROR, MIRROR+flip, LEFT, LEFT+flip",
        "2001112112 0001112112 1001111222 1011210212 1001112102 1001112122 0010112112 1020011112",
    ),
    "PENTO_X": ("NONE", "1001112112 1001112112 1001112112 1001112112 1001112112 1001112112 1001112112 1001112112"),
    "PENTO_Y": (
        "NONE, NONE+flip, RIGHT, RIGHT+flip, MIRROR, MIRROR+flip, LEFT, LEFT+flip",
        "1001111213 0001110203 2001112131 1001112131 0001021203 1011021213 0010203011 0010203021",
    ),
}
COLUMNS = [
    (NONE, False),
    (NONE, True),
    (RIGHT, False),
    (RIGHT, True),
    (MIRROR, False),
    (MIRROR, True),
    (LEFT, False),
    (LEFT, True),
]


def test_appendix_a_all_168_transformations():
    assert list(APPENDIX_A) == [s.name for s in Shape]
    for name, (canonical, cells) in APPENDIX_A.items():
        shape = Shape[name]
        for (rot, flip), text in zip(COLUMNS, cells.split(), strict=True):
            want = tuple((int(text[i]), int(text[i + 1])) for i in range(0, len(text), 2))
            assert transform(shape, rot, flip) == want, (name, rot, flip)
        want_pairs = [(Rotation[p.split("+")[0]], p.endswith("+flip")) for p in canonical.split(", ")]
        assert [(o.rotation, o.flipped) for o in orientations(shape)] == want_pairs, name


def test_scoring():
    def state_with(undeployed, mono):
        return GameState.from_parts(
            start_piece=Shape.PENTO_L,
            turn=0,
            cells=[],
            undeployed={B: undeployed},
            valid_colors=list(Color),
            last_mono={B: mono} if not undeployed else {},
            season=SEASON_2021,
        )

    assert state_with([], True).points(B) == 109
    assert state_with([], False).points(B) == 104
    assert state_with(list(Shape), False).points(B) == 0
    assert state_with([Shape.MONO, Shape.PENTO_W, Shape.TETRO_I], False).points(B) == 79


def test_g1_everyone_skips_until_round_limit():
    state = GameState.new(SEASON_2021, Shape.PENTO_P)
    for _ in range(4):
        state.play(next(iter(state.legal_moves())))
    while not state.is_over:
        state.play(SkipMove(state.color))
    assert (state.turn, state.round) == (100, 26)
    assert isinstance(state.last_move, SkipMove)
    with pytest.raises(ValueError):
        state.play(SkipMove(state.color))
    assert state.outcome().winner is None


def test_g2_random_games_are_consistent():
    rng = random.Random(7)
    for _ in range(5):
        state = GameState.new(rng=rng, season=SEASON_2021)
        while not state.is_over:
            moves = list(state.legal_moves())
            assert moves, "a colour to move always has a placement (others were removed)"
            state.play(rng.choice(moves))
        one, two = state.team_points(Team.ONE), state.team_points(Team.TWO)
        assert state.outcome().points == (one, two)
        assert state.outcome().winner == (None if one == two else Team.ONE if one > two else Team.TWO)
