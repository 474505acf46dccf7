"""What a newcomer trips over (issue 45): the analysis offered where it is available, no silent wait, the
right words on screen, and no warning on any quick way out."""

from __future__ import annotations

import asyncio
import gc
import sys
import warnings
from pathlib import Path

import pytest
from textual import events

from model.moves import MoveMistake, SetMove
from model.pieces import Rotation, Shape, Team
from model.season import SEASON_2021, SEASON_2027
from tests.helpers import wait_until
from tests.tui_helpers import BlockingPlayer, InstantPlayer, game_app, scripted_net_app, settle
from tui.app import BlokusApp
from tui.colors import DARK
from tui.dialogs import EndScreen, QuitScreen
from tui.game_screen import network_screen
from tui.network import NetworkOptions
from tui.replay_screen import ReplayScreen
from tui.session import GameSession, Ghost, GhostStatus, ghost_word
from tui.status import StatusContext, activity_lines
from tui.widgets import FeedbackView, StatusBar

SIZE = (80, 24)


def status_text(app) -> str:
    return str(app.main_screen.query_one(StatusBar).render())


def feedback_text(app) -> str:
    return str(app.main_screen.query_one(FeedbackView).render())


# --- 2. the analysis is offered -----------------------------------------------------------------------


async def test_the_end_dialog_and_the_status_offer_the_analysis_of_a_local_game():
    app = game_app(Shape.PENTO_L, plies=400)  # played to the end
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, EndScreen) and dialog.can_analyse
        assert "A analyse" in str(dialog.query("Static").last().render())
        await pilot.press("escape")
        assert "A analyse" in status_text(app) and "N new" in status_text(app)
        await pilot.press("A")
        await wait_until(lambda: isinstance(app.screen, ReplayScreen), pilot=pilot)
        assert app.screen.analysis.shown


async def test_a_network_game_once_over_offers_the_analysis():
    app = scripted_net_app(name=None)
    async with app.run_test(size=SIZE) as pilot:
        s = app.main_screen.session
        await wait_until(lambda: s.is_human_turn(), pilot=pilot)
        assert not s.can_analyse()  # not while it runs
        await pilot.press("o")  # the autopilot plays our side to the end
        await wait_until(lambda: isinstance(app.screen, EndScreen), pilot=pilot)
        assert app.screen.can_analyse
        await pilot.press("A")
        await wait_until(lambda: isinstance(app.screen, ReplayScreen), pilot=pilot)
        await pilot.press("q")
        await wait_until(lambda: app.screen is app.main_screen, pilot=pilot)
        assert "A analyse" in status_text(app) and "N new" not in status_text(app)


# --- 3. nothing waits silently ------------------------------------------------------------------------


@pytest.mark.parametrize("key, told", [("m", "the AI is choosing your move"), ("i", "thinking about a hint")])
async def test_m_and_a_hint_show_at_once_that_the_ai_works(key, told):
    slow = BlockingPlayer()
    app = game_app(Shape.PENTO_L, hint=slow, move_time_ms=600_000)  # no fallback on a loaded machine
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press(key)  # the same frame: the AI has not answered (it waits for release())
            assert not slow.go.is_set()
            assert "AI thinking…" in status_text(app) and told in feedback_text(app)
            slow.release()
            await settle(pilot)
            assert "AI thinking…" not in status_text(app)
    finally:
        slow.release()


# --- 4. the words --------------------------------------------------------------------------------------


@pytest.mark.parametrize("season, word", [(SEASON_2021, "not in a board corner"), (SEASON_2027, "not on the border")])
@pytest.mark.parametrize("width", [28, 34, 44, 60, 90])
def test_the_ghost_always_carries_its_legality_word(season, word, width):
    s = GameSession.new_local(Shape.PENTO_S, season=season)
    s.ghost = Ghost(Shape.PENTO_S, Rotation.LEFT, True, 9, 9)  # a first move in the middle of the board
    assert s.placing.status()[0] is GhostStatus.NO_CONTACT
    (line,) = activity_lines(s, StatusContext(DARK, width))
    assert len(line) <= width and line.plain.endswith(word)
    if width >= 60:
        assert line.plain.startswith("PENTO_S 270° flipped @ (9,9)")
    elif width >= 44:
        assert line.plain.startswith("PENTO_S (9,9)")


def test_the_words_of_the_ghost():
    assert ghost_word(GhostStatus.LEGAL, None) == "legal"
    assert ghost_word(GhostStatus.NO_CONTACT, MoveMistake.NO_SHARED_CORNER) == "no corner contact"
    assert ghost_word(GhostStatus.BLOCKED, MoveMistake.OBSTRUCTED) == "not placeable"
    s = GameSession.new_local(Shape.MONO)
    play = s.state.legal_moves()[0]
    s.ghost = Ghost(Shape.MONO, Rotation.RIGHT, True, play.x, play.y)  # turned and flipped: the same cells
    (line,) = activity_lines(s, StatusContext(DARK, 34))
    assert line.plain == f"MONO @ ({play.x},{play.y})  legal"


def test_a_move_is_named_without_turns_that_change_nothing():
    from model.moves import describe_move

    assert describe_move(SetMove(Team.ONE.colors[0], Shape.PENTO_I, Rotation.LEFT, True, 3, 4)) == (
        "BLUE PENTO_I 90° @ (3,4)"
    )
    assert describe_move(SetMove(Team.ONE.colors[0], Shape.PENTO_S, Rotation.LEFT, True, 3, 4)) == (
        "BLUE PENTO_S 270° flipped @ (3,4)"
    )


async def test_waiting_for_an_opponent_while_the_room_is_not_full():
    from net.rooms import Timeouts
    from net.server import GameServer, ServerConfig

    server = GameServer(ServerConfig(host="127.0.0.1", port=0, timeouts=Timeouts(None, None)))
    await server.start()
    task = asyncio.create_task(server.serve_forever())
    try:
        app = BlokusApp(
            lambda: network_screen(
                NetworkOptions(
                    "127.0.0.1", server.port, player=InstantPlayer(), hint_player=InstantPlayer(), stamp=lambda: ""
                )
            )
        )
        async with app.run_test(size=SIZE) as pilot:
            screen = app.main_screen
            await wait_until(lambda: screen.link.joined, pilot=pilot)
            await pilot.pause()
            assert "waiting for an opponent …" in status_text(app)
            assert "waiting for the server" not in status_text(app)
    finally:
        task.cancel()
        await server.close()


def test_watching_names_our_ai_not_you(tmp_path, monkeypatch):
    """``blokus --watch --opponent cmd:…``: our seat is played by the AI, so it is not "you"."""
    from tui import external
    from tui.launch import PlayOptions

    monkeypatch.setattr(external, "program_log_dir", lambda: tmp_path)
    from ai.players import parse_player

    client = parse_player(f"cmd:{sys.executable} {Path(__file__).with_name('ext_client.py')}")
    args = PlayOptions(opponent=client, time_limit=None, seed=1, ai=parse_player("random"), watch=True)
    app, hosted = external.build_external_app(args)
    try:
        screen = app._make_screen()
        assert screen.link.name == "AI random" and hosted.seats[0].name == "AI"
        assert screen.session.names[Team.ONE] == "AI random"
    finally:
        hosted.close()


# --- 5. no warning on a quick way out ------------------------------------------------------------------


QUICK_EXITS = [
    ["enter", "q", "y"],  # a move, then quit at once (the AI starts thinking in the same frame)
    ["enter", "q", "u", "e", "s"],  # "question" typed after a move: q asks, s saves and quits
    ["m", "q", "y"],
    ["i", "q", "y"],
    ["enter", "ctrl+q"],
    ["o", "ctrl+c", "q"],
]


@pytest.mark.parametrize("keys", QUICK_EXITS, ids=" ".join)
@pytest.mark.parametrize("opponent", ["instant", "blocking"])
async def test_no_warning_on_a_quick_way_out(keys, opponent, tmp_path):
    player = InstantPlayer() if opponent == "instant" else BlockingPlayer()
    app = game_app(
        Shape.PENTO_L, opponent=player, hint=player, save_replay=lambda session, traffic: str(tmp_path / "x")
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            for key in keys:  # all in one frame, as a terminal delivers fast typing
                app.post_message(events.Key(key, key if len(key) == 1 else None))
            await wait_until(lambda: app._exit or isinstance(app.screen, QuitScreen), pilot=pilot)
            if not app._exit:
                await pilot.press("y")
        if isinstance(player, BlockingPlayer):
            player.release()
        gc.collect()
    assert not [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


async def test_no_warning_when_a_network_game_is_left_at_once():
    app = scripted_net_app(name=None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with app.run_test(size=SIZE) as pilot:
            for key in ("m", "q", "y"):
                app.post_message(events.Key(key, key))
            await wait_until(lambda: app._exit or isinstance(app.screen, QuitScreen), pilot=pilot)
            if not app._exit:
                await pilot.press("y")
        gc.collect()
    assert not [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


def test_blank_board_lines_carry_a_style_for_no_color():
    """NO_COLOR's monochrome filter reads every segment's colour: a blank line without a style crashed the
    game against a cmd: program at 120×40 (``AttributeError: 'NoneType' object has no attribute 'color'``)."""
    from tui.board import Board, Scale

    for scale in Scale:
        board = Board()
        board.scale = scale
        strip = board.render_line(scale.size[1] + 5)  # below the board: a blank line
        assert all(segment.style is not None for segment in strip)
