"""Snapshot tests of the main screens (pytest-textual-snapshot). Update with ``--snapshot-update``.

Deterministic: fixed start pieces, stub players that answer at once, fixed terminal size, no clocks.
"""

from __future__ import annotations

import pytest

from blokus.model.pieces import Shape
from blokus.tui.app import BlokusApp
from blokus.tui.replay_screen import ReplayScreen
from blokus.tui.replays import load_replay
from tests.helpers import fixture_path, wait_until
from tests.tui_helpers import game_app, scripted_net_app, settle

SIZE = (140, 44)


def test_snapshot_new_game(snap_compare):
    assert snap_compare(game_app(Shape.PENTO_L), terminal_size=SIZE, run_before=settle)


def test_snapshot_mid_game_ghost_states(snap_compare):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("tab", "tab", "tab", "tab", "d", "f", "v")  # TETRO_O? cycle, rotate, flip, overlay
        await pilot.press("left", "left", "up")

    assert snap_compare(game_app(Shape.PENTO_V, plies=14), terminal_size=SIZE, run_before=run_before)


def test_snapshot_blocked_ghost_light_theme(snap_compare):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("tab", "H", "H", "K", "K")  # MONO onto BLUE's start piece: not placeable

    assert snap_compare(
        game_app(Shape.PENTO_L, plies=4, theme="textual-light"), terminal_size=SIZE, run_before=run_before
    )


def test_snapshot_help(snap_compare):
    assert snap_compare(game_app(Shape.PENTO_L), terminal_size=SIZE, press=["question_mark"])


def test_snapshot_end_screen(snap_compare):
    async def run_before(pilot):
        await pilot.press("o")
        s = pilot.app.main_screen.session
        for _ in range(400):
            await settle(pilot)
            if s.state.is_over:
                break
        await pilot.pause()

    assert snap_compare(game_app(Shape.PENTO_L, plies=52), terminal_size=SIZE, run_before=run_before)


def test_snapshot_replay_viewer(snap_compare):
    data = load_replay(fixture_path("sc2021/gen-21.3.3-game1-replay-regular-end.xml"))

    async def run_before(pilot):
        await pilot.press("end", "left", "left", "left")

    assert snap_compare(BlokusApp(lambda: ReplayScreen(data)), terminal_size=SIZE, run_before=run_before)


def test_snapshot_replay_end_with_result(snap_compare):
    data = load_replay(fixture_path("sc2021/gen-21.3.3-game2-replay-round-limit-end.xml"))
    assert snap_compare(BlokusApp(lambda: ReplayScreen(data)), terminal_size=SIZE, press=["end"])


def test_snapshot_network_with_xml_pane(snap_compare):
    """Network play with a scripted connection (same messages as a server, no sockets, no clock)."""

    async def run_before(pilot):
        s = pilot.app.main_screen.session
        await wait_until(s.is_human_turn, pilot=pilot)
        await pilot.press("m")
        await wait_until(lambda: s.is_human_turn() and s.state.turn >= 2, pilot=pilot)
        await pilot.press("tab", "tab")

    app = scripted_net_app()
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


SIZES = [(80, 24), (120, 40), (200, 60)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_game_at_every_size(snap_compare, size):
    """Board, both shape panels, status and footer at 80×24 (half-block board), 120×40, 200×60 (large board)."""

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("tab", "tab", "d")

    assert snap_compare(game_app(Shape.PENTO_V, plies=14), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_replay_at_every_size(snap_compare, size):
    data = load_replay(fixture_path("sc2021/gen-21.3.3-game1-replay-regular-end.xml"))
    assert snap_compare(BlokusApp(lambda: ReplayScreen(data, start_turn=40)), terminal_size=size)
