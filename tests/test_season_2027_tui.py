"""``blokus --season 2027`` in the terminal: the first-move ghost and overlay follow the border rule,
PENTO_X can be the start piece, the round count is out of 24; 2027 replays load."""

from __future__ import annotations

import pytest

from blokus.cli.play import main as play_main
from blokus.cli.play import play_options
from blokus.model.moves import MoveMistake
from blokus.model.pieces import Shape
from blokus.model.season import SEASON_2027
from blokus.tui.launch import build_local_app
from blokus.tui.session import GhostStatus
from tests.tui_helpers import exit_code, keep_logging, screen_of  # noqa: F401  (keep_logging: an autouse fixture)

SIZE = (140, 44)


async def test_local_2027_game_with_x_start_and_border_rule():
    args = play_options(["--season", "2027", "--start-piece", "PENTO_X", "--opponent", "random", "--move-time", "50"])
    app = build_local_app(args)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        s = screen.session
        assert s.state.season is SEASON_2027 and s.ghost.shape is Shape.PENTO_X
        assert "2027 · Round 1/24" in str(screen.query_one("#status").render())  # the season is on screen
        await pilot.press("K", "K", "K", "K", "H", "H", "H", "H", "L", "l", "l", "l")  # to (8, 0)
        await pilot.press("J", "J", "J", "J")  # the X (3 high) down to the bottom edge: y = 17
        assert s.ghost.y == 17 and s.placing.status() == (GhostStatus.LEGAL, None)
        await pilot.press("k", "k")  # off the border
        assert s.placing.status() == (GhostStatus.NO_CONTACT, MoveMistake.NOT_ON_BORDER)
        assert "not on the border" in str(screen.query_one("#status").render())
        overlay = s.placing.overlay_cells()
        border_only = SEASON_2027.first_move_cells
        # every field the X can cover touches the border ring within its reach (rows/columns 0-2, 17-19)
        assert overlay and overlay & border_only and s.placing.overlay_cells().bit_count() > 4 * 4
        await pilot.press("j", "j", "enter")
        assert s.state.turn >= 1 and s.timeline.move_before(1).shape is Shape.PENTO_X


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--season", "2026"], "unknown season"),
        (["--season", "2021", "--start-piece", "PENTO_X"], "never a start piece in 2021"),
    ],
)
def test_bad_season_options_are_one_line(argv, message, capsys):
    assert exit_code(play_main, argv) == 2
    assert message in capsys.readouterr().err


def test_a_2027_replay_loads_in_the_viewer(tmp_path):
    import random

    from blokus.model.moves import SkipMove
    from blokus.model.replay import write_replay
    from blokus.model.result import regular_result
    from blokus.model.state import GameState
    from blokus.tui.replays import load_replay, result_texts

    rng = random.Random(3)
    state = GameState.new(SEASON_2027, Shape.PENTO_X)
    states = [state.copy()]
    while not state.is_over:
        moves = state.legal_moves()
        state.play(moves[rng.randrange(len(moves))] if len(moves) else SkipMove(state.color))
        states.append(state.copy())
    final = states[-1]
    result = regular_result(final.outcome().points, ("ann", "ben"), SEASON_2027)
    path = write_replay(tmp_path / "r.xml", states, result, names=("ann", "ben"))
    assert 'startTeam="ONE"' in path.read_text() and "Siegpunkte" in path.read_text()
    data = load_replay(path)
    assert data.timeline.states[-1].season is SEASON_2027 and len(data.timeline) == len(states)
    assert data.result.names == ("ann", "ben") and data.result.regular
    assert data.names == ("ann", "ben")  # 2027 states carry no names: the viewer takes the result's
    title, lines = result_texts(data.result, data.timeline.states[-1], {})
    assert title.startswith("Game over") and any(line.startswith("Regular end") for line in lines)


def test_a_2027_rule_violation_is_explained_in_english():
    from blokus.model.moves import SetMove
    from blokus.model.pieces import Color, Rotation, Team
    from blokus.model.result import Cause, irregular_result
    from blokus.model.state import GameState
    from blokus.tui.replays import result_texts

    move = SetMove(Color.BLUE, Shape.PENTO_L, Rotation.NONE, False, 6, 6)
    reason = SEASON_2027.irregular_reason(
        Cause.RULE_VIOLATION, "alice", SEASON_2027.violation_text(MoveMistake.NOT_ON_BORDER, move)
    )
    result = irregular_result(Team.ONE, Cause.RULE_VIOLATION, reason, (0, 0), ("alice", "bob"), SEASON_2027)
    title, lines = result_texts(result, GameState.new(SEASON_2027, Shape.PENTO_L), {})
    assert title == "Game over — team TWO (YELLOW+GREEN, bob) wins 0 : 0"
    assert any("NOT_ON_BORDER: the first piece must touch the edge of the board" in line for line in lines)
