"""Perft-style tests: the two complete games played by the official 21.3.3 engine (docs/spec/rules.md §15.7).

Before every ply the engine must agree with the official engine on turn, round, colour to move,
validColors and the number of distinct legal SetMoves; after it, on the team points; at the end, on
the final turn, validColors and scores.
"""

from __future__ import annotations

import json
import re

import pytest

from blokus.model.moves import SetMove, SkipMove, parse_move
from blokus.model.pieces import Color, Rotation, Shape, Team
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState
from tests.helpers import fixture_path


def load_tsv(name: str):
    rows, final = [], None
    for line in fixture_path(f"sc2021/{name}").read_text().splitlines():
        if line.startswith("# final:"):
            final = line
        elif line and not line.startswith("#"):
            rows.append(line.split("\t"))
    return rows, final


@pytest.mark.parametrize(
    ("name", "start", "final_turn", "final_valid", "points"),
    [
        ("gen-21.3.3-game1-moves.tsv", Shape.PENTO_L, 65, (), (122, 105)),
        ("gen-21.3.3-game2-moves.tsv", Shape.PENTO_V, 100, tuple(Color), (86, 105)),
    ],
)
def test_official_game(name, start, final_turn, final_valid, points):
    rows, final = load_tsv(name)
    state = GameState.new(SEASON_2021, start)
    for turn, rnd, color, valid, count, move_text, cells, p1, p2 in rows:
        assert state.turn == int(turn)
        assert state.round == int(rnd)
        assert state.color.name == color
        assert ",".join(c.name for c in state.valid_colors) == valid
        assert len(state.legal_moves()) == int(count), f"legal-move count at turn {turn}"
        assert state.has_legal_move()
        parts = move_text.split()
        move = parse_move(move_text if parts[1] == "SKIP" else " ".join(parts[:4] + parts[4].split(",")))
        if isinstance(move, SetMove):
            expected = {tuple(map(int, c)) for c in re.findall(r"\((\d+),(\d+)\)", cells)}
            assert move.cells == expected
            assert move in state.legal_moves()
        state.play(move)
        assert (state.team_points(Team.ONE), state.team_points(Team.TWO)) == (int(p1), int(p2))
    assert state.is_over
    assert state.turn == final_turn and f"turn={final_turn}" in final
    assert state.valid_colors == final_valid
    assert state.outcome().points == points


def test_third_party_complete_game():
    """HenrikThoroe's game: 65 placements, all legal, final board as expected, 145 : 131."""
    data = json.loads(fixture_path("replays/henrikthoroe-swc2021-complete-game.json").read_text())
    state = GameState.new(SEASON_2021, Shape[data["start_piece"]])
    placed = 0
    for m in data["moves"]:
        color = Color[m["color"]]
        if m["type"] == "skip":
            # The source writes skips for colours the server would already have removed.
            if not state.is_over and state.color == color:
                state.play(SkipMove(color))
            continue
        # colours removed by the server consume their turns; the next move must be this colour's
        assert state.color == color
        move = SetMove(color, Shape[m["kind"]], Rotation[m["rotation"]], m["isFlipped"], m["x"], m["y"])
        state.play(move)
        placed += 1
    assert placed == 65
    expected = data["expected_final_board"]
    for color_name, cells in expected.items():
        color = Color[color_name.upper()]
        got = {(x, y) for x, y, c in state.cells() if c == color}
        want = {(c["x"], c["y"]) if isinstance(c, dict) else tuple(c) for c in cells}
        assert got == want, color_name
    assert not any(state.has_legal_move(c) for c in Color)
    assert state.outcome().points == (145, 131)
