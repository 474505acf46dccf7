"""The TUI against a team's ``py:`` player (``blokus --opponent py:PATH --watch``): our bot plays the team's
class on the embedded server (strict), and its bug is named in the end dialog."""

from __future__ import annotations

import textwrap
from pathlib import Path

from blokus.ai.players.registry import parse_player
from blokus.model.pieces import Team
from blokus.model.season import season_named
from blokus.net.external import HostedGame, HostedSeat, check_program, program_command
from blokus.net.rooms import Timeouts
from blokus.tui.external import external_app
from blokus.tui.game_screen import GameScreen
from tests.helpers import wait_until
from tests.test_external_tui import end_screen
from tests.tui_helpers import InstantPlayer

PLAYER = """
from blokus.player import Move, Player


class Buggy(Player):
    def calculate_move(self) -> Move:
        if self.game_state.round >= 3:
            raise ZeroDivisionError("my bug in round 3")
        return max(self.game_state.legal_moves(), key=lambda move: move.shape.size)
"""


async def test_a_py_player_plays_in_the_tui_and_its_bug_is_a_named_forfeit(tmp_path: Path) -> None:
    path = tmp_path / "buggy.py"
    path.write_text(textwrap.dedent(PLAYER))
    spec = parse_player(f"py:{path}")
    check_program(spec)
    assert spec.label == "buggy.py"
    game = HostedGame(
        (HostedSeat("you", None, can_timeout=False), HostedSeat("buggy.py", program_command(spec))),
        season=season_named("2027"),
        timeouts=Timeouts(None, None),
        log_dir=tmp_path,
        join_timeout=120,
    )
    game.start()
    app = external_app(game, Team.TWO, player=InstantPlayer("first"), hint_player=InstantPlayer("last"), watch=True)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = app.main_screen
            assert isinstance(screen, GameScreen) and screen.program is not None
            await wait_until(lambda: end_screen(app) is not None, pilot=pilot, timeout=300)
            details = end_screen(app).details
            assert "buggy.py: crashed (exit 4)" in details and "ZeroDivisionError" in details
            assert "your player failed at turn" in details
    finally:
        game.close()
    (err_log,) = [p for p in tmp_path.glob("*.err.log") if "buggy" in p.name]
    text = err_log.read_text()
    assert text.count("Traceback") == 1 and 'buggy.py", line 8, in calculate_move' in text
