"""The TUI against a ``cmd:`` program (``tui.external``): a real process of the contest-style test client
(``tests/ext_client.py``) on the embedded server, driven with Textual's Pilot."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from blokus.model.pieces import Team
from blokus.model.season import season_named
from blokus.net.external import HostedGame, HostedSeat
from blokus.net.rooms import Timeouts
from blokus.tui import game_screen
from blokus.tui.dialogs import EndScreen
from blokus.tui.external import external_app
from blokus.tui.game_screen import GameScreen
from blokus.tui.program_pane import ProgramLog
from blokus.tui.widgets import XmlPane
from tests.helpers import wait_until
from tests.tui_helpers import HoldingPlayer, InstantPlayer

CLIENT = [sys.executable, str(Path(__file__).with_name("ext_client.py"))]
SIZE = (120, 40)


def hosted(tmp_path: Path, flags: list[str], season: str = "2021", join_timeout: float = 120) -> HostedGame:
    game = HostedGame(
        (HostedSeat("you", None, can_timeout=False), HostedSeat("ext_client.py", CLIENT + flags)),
        season=season_named(season),
        timeouts=Timeouts(None, None),
        log_dir=tmp_path,
        join_timeout=join_timeout,
    )
    game.start()
    return game


def end_screen(app) -> EndScreen | None:
    return next((s for s in app.screen_stack if isinstance(s, EndScreen)), None)


async def test_watching_a_program_play_our_ai_with_its_log_pane(tmp_path):
    game = hosted(tmp_path, [], "2027")
    ours = HoldingPlayer(hold_at=8)  # the game stands still at turn 8 until the pane has been looked at
    app = external_app(game, Team.TWO, player=ours, hint_player=InstantPlayer("last"), watch=True)
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.main_screen
            assert isinstance(screen, GameScreen) and screen.program is not None
            await wait_until(ours.holding.is_set, pilot=pilot)
            await wait_until(lambda: screen.program._moves_told > 0, pilot=pilot)  # its moves are told below the board
            assert screen.session.names[Team.TWO] == "ext_client.py"
            assert screen.program.times_text().startswith("last ") and screen.program.times_text().endswith(" ms")
            await pilot.press("e")
            pane = screen.query_one(ProgramLog)
            await wait_until(lambda: any("ext_client: turn" in line for line in pane.lines), pilot=pilot)
            assert pane.has_class("shown") and pane.region.height >= 4
            ours.release()
            await wait_until(lambda: end_screen(app) is not None, pilot=pilot)
            details = end_screen(app).details
            assert "Its output: " in details and "err.log" in details
            assert game.done and game.wait(0).result.regular
    finally:
        ours.release()
        game.close()


async def test_e_before_the_panes_first_look_keeps_the_log_open(tmp_path, monkeypatch):
    """On a tall terminal the pane's first look (a timer tick) opens the program's log in place of the XML
    pane; an `e` pressed before that tick is the user's choice and stays."""
    monkeypatch.setattr(game_screen, "POLL_S", 3600.0)  # the test makes the first tick itself
    game = hosted(tmp_path, ["--misbehave", "never-join"], join_timeout=120)
    app = external_app(game, Team.TWO, player=InstantPlayer("first"), hint_player=InstantPlayer("last"))
    try:
        async with app.run_test(size=(120, 60)) as pilot:
            screen = app.main_screen
            assert isinstance(screen, GameScreen) and screen.program is not None
            await pilot.pause()
            pane, xml = screen.query_one(ProgramLog), screen.query_one(XmlPane)
            assert xml.has_class("shown") and not pane.has_class("shown")
            await pilot.press("e")
            assert pane.has_class("shown")
            screen._follow_program()  # the first tick, after the key
            await pilot.pause()
            assert pane.has_class("shown")
    finally:
        game.close()


async def test_a_crash_of_the_program_is_named_in_the_end_dialog(tmp_path):
    game = hosted(tmp_path, ["--misbehave", "crash", "--at", "1"])
    app = external_app(game, Team.TWO, player=InstantPlayer("first"), hint_player=InstantPlayer("last"))
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = app.main_screen
            await wait_until(lambda: screen.session.is_human_turn(), pilot=pilot)
            await pilot.press("m")  # the AI plays our first move; the program crashes on its first
            await wait_until(lambda: end_screen(app) is not None, pilot=pilot)
            dialog = end_screen(app)
            assert "ext_client.py: crashed (exit 3) at turn 1: ext_client: simulated crash at turn 1" in dialog.details
            assert "wins" in dialog.title_text
    finally:
        game.close()


async def test_an_illegal_move_of_the_program_is_named_with_its_rule(tmp_path):
    game = hosted(tmp_path, ["--misbehave", "illegal", "--at", "2"])
    app = external_app(game, Team.TWO, player=InstantPlayer("first"), hint_player=InstantPlayer("last"), watch=True)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(lambda: end_screen(app) is not None, pilot=pilot)
            details = end_screen(app).details
            assert "ext_client.py: illegal move at turn " in details and ": GREEN " in details and "(" in details
    finally:
        game.close()


@pytest.mark.parametrize("no_color", [False, True])  # NO_COLOR: the empty board is drawn through its filter
async def test_a_program_that_never_joins_is_named_in_the_end_dialog(tmp_path, monkeypatch, no_color):
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    # 6 s: our own side (the app, started after the game) must join first even on a loaded machine
    game = hosted(tmp_path, ["--misbehave", "never-join"], join_timeout=6)
    app = external_app(game, Team.TWO, player=InstantPlayer("first"), hint_player=InstantPlayer("last"))
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(lambda: end_screen(app) is not None, pilot=pilot)
            dialog = end_screen(app)
            assert dialog.title_text == "Game over — ext_client.py did not play"
            assert "ext_client.py: did not join within 6 s" in dialog.details
    finally:
        game.close()


def test_the_command_line_starts_the_program_on_the_other_seat(tmp_path, monkeypatch):
    from blokus.cli.play import main as play_main
    from blokus.cli.play import play_options
    from blokus.tui.external import build_external_app

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    program = f"cmd:{sys.executable} {CLIENT[1]} --misbehave never-join"
    args = play_options(["--opponent", program, "--team", "TWO", "--watch", "--no-timeout", "--season", "2027"])
    app, game = build_external_app(args)
    try:
        assert game.seats[0].name == "ext_client.py" and game.seats[0].command is not None
        assert game.seats[1].command is None and not game.seats[1].can_timeout
        assert game.timeouts.soft is None and game.season.year == 2027
        assert app.main_screen is None and game.programs[Team.ONE].err_path.parent == tmp_path / "blokus" / "programs"
    finally:
        game.close()
    assert game.programs[Team.ONE].exit_code() is not None  # stopped with the app
    assert play_main(["--opponent", "cmd:./no/such/start.sh"]) == 2


async def test_the_footer_against_a_program_is_never_cut(tmp_path):
    """At 80×24 the footer has no room for "e Program log" beside the keys of playing: it leaves it out (e works,
    ? lists it) instead of ending in a cut "e P"; from 92 columns it is there (issue 64)."""
    from textual.widgets._footer import FooterKey

    from tests.tui_helpers import footer_keys_visible

    game = hosted(tmp_path, ["--misbehave", "never-join"], join_timeout=120)
    app = external_app(game, Team.TWO, player=InstantPlayer("first"), hint_player=InstantPlayer("last"))
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            keys = await footer_keys_visible(pilot)
            cut = [k.key for k in app.screen.query(FooterKey) if k.region.width and k.region.right > app.size.width]
            assert {"q", "question_mark"} <= keys and "e" not in keys and not cut
            await pilot.resize_terminal(120, 40)
            await pilot.pause()
            assert "e" in await footer_keys_visible(pilot)
    finally:
        game.close()
