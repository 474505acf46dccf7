"""The TUI against a ``cmd:`` program (``tui.external``): a real process of the contest-style test client
(``tests/ext_client.py``) on the embedded server, driven with Textual's Pilot."""

from __future__ import annotations

import sys
from pathlib import Path

from model.pieces import Team
from model.season import season_named
from net.external import HostedGame, Seat
from net.rooms import Timeouts
from tests.tui_helpers import InstantPlayer
from tui.dialogs import EndScreen
from tui.external import ExternalGameScreen, external_app
from tui.program_pane import ProgramLog

CLIENT = [sys.executable, str(Path(__file__).with_name("ext_client.py"))]
SIZE = (120, 40)


def hosted(tmp_path: Path, flags: list[str], season: str = "2021", join_timeout: float = 120) -> HostedGame:
    game = HostedGame(
        (Seat("you", None, can_timeout=False), Seat("ext_client.py", CLIENT + flags)),
        season=season_named(season),
        timeouts=Timeouts(None, None),
        log_dir=tmp_path,
        join_timeout=join_timeout,
    )
    game.start()
    return game


async def wait_for(pilot, cond, steps: int = 3000) -> None:
    """Until ``cond()`` (a generous cap: a whole game of two quick players under load)."""
    for _ in range(steps):
        if cond():
            await pilot.pause()
            return
        await pilot.pause(0.05)
    raise AssertionError("condition not reached")


def end_screen(app) -> EndScreen | None:
    return next((s for s in app.screen_stack if isinstance(s, EndScreen)), None)


async def test_watching_a_program_play_our_ai_with_its_log_pane(tmp_path):
    game = hosted(tmp_path, [], "2027")
    app = external_app(game, Team.TWO, player=InstantPlayer("first"), hint_player=InstantPlayer("last"), watch=True)
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.main_screen
            assert isinstance(screen, ExternalGameScreen)
            await wait_for(pilot, lambda: screen.session.started and screen.session.state.turn >= 6)
            assert screen.session.names[Team.TWO] == "ext_client.py"
            assert screen._moves_told > 0  # each of its moves was told below the board, with its time
            assert screen.times_text().startswith("last ") and screen.times_text().endswith(" ms")
            await pilot.press("e")
            pane = screen.query_one(ProgramLog)
            await wait_for(pilot, lambda: any("ext_client: turn" in line for line in pane.lines))
            assert pane.has_class("shown") and pane.region.height >= 4
            await wait_for(pilot, lambda: end_screen(app) is not None)
            details = end_screen(app).details
            assert "Its output: " in details and "err.log" in details
            assert game.done and game.wait(0).result.regular
    finally:
        game.close()


async def test_a_crash_of_the_program_is_named_in_the_end_dialog(tmp_path):
    game = hosted(tmp_path, ["--misbehave", "crash", "--at", "1"])
    app = external_app(game, Team.TWO, player=InstantPlayer("first"), hint_player=InstantPlayer("last"))
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = app.main_screen
            await wait_for(pilot, lambda: screen.session.is_human_turn())
            await pilot.press("m")  # the AI plays our first move; the program crashes on its first
            await wait_for(pilot, lambda: end_screen(app) is not None)
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
            await wait_for(pilot, lambda: end_screen(app) is not None)
            details = end_screen(app).details
            assert "ext_client.py: illegal move: GREEN " in details and "(" in details
    finally:
        game.close()


async def test_a_program_that_never_joins_is_named_in_the_end_dialog(tmp_path):
    game = hosted(tmp_path, ["--misbehave", "never-join"], join_timeout=2)
    app = external_app(game, Team.TWO, player=InstantPlayer("first"), hint_player=InstantPlayer("last"))
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: end_screen(app) is not None)
            dialog = end_screen(app)
            assert dialog.title_text == "Game over — ext_client.py did not play"
            assert "ext_client.py: did not join within 2 s" in dialog.details
    finally:
        game.close()


def test_the_command_line_starts_the_program_on_the_other_seat(tmp_path, monkeypatch):
    from cli.play import main as play_main
    from cli.play import play_parser
    from tui.external import build_external_app

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    program = f"cmd:{sys.executable} {CLIENT[1]} --misbehave never-join"
    args = play_parser().parse_args(
        ["--opponent", program, "--team", "TWO", "--watch", "--no-timeout", "--season", "2027"]
    )
    app, game = build_external_app(args)
    try:
        assert game.seats[0].name == "ext_client.py" and game.seats[0].command is not None
        assert game.seats[1].command is None and not game.seats[1].can_timeout
        assert game.timeouts.soft is None and game.season.year == 2027
        assert (
            app.main_screen is None and game.programs[Team.ONE].err_path.parent == tmp_path / "blokus-tui" / "programs"
        )
    finally:
        game.close()
    assert game.programs[Team.ONE].exit_code() is not None  # stopped with the app
    assert play_main(["--opponent", "cmd:./no/such/start.sh"]) == 2
