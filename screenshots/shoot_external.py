"""The screenshot of a game against a ``cmd:`` program with its log pane (``e``):

    python -m screenshots.shoot_external [--out screenshots] [--size 140x44]

Plays a few moves (``m``: the AI for you) against the contest-style test client ``tests/ext_client.py``
on an embedded server, opens the pane with its stderr and writes ``12-external-program-log.svg`` / ``.png``
(PNG via ``rsvg-convert``, like ``screenshots.shoot``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from blokus.ai import make_player
from blokus.model.pieces import Shape, Team
from blokus.net.external import HostedGame, HostedSeat
from blokus.net.rooms import Timeouts
from blokus.tui.external import external_app
from blokus.tui.game_screen import GameScreen
from blokus.tui.program_pane import ProgramLog
from screenshots.shoot import _write, main_screen
from tests.tui_helpers import InstantPlayer, settle

CLIENT = Path(__file__).resolve().parents[1] / "tests" / "ext_client.py"


async def shoot(out: Path, size: tuple[int, int]) -> None:
    logs = Path(tempfile.mkdtemp(prefix="blokus-shot-"))
    hosted = HostedGame(
        (
            HostedSeat("you", None, can_timeout=False),
            HostedSeat("ext_client.py", [sys.executable, str(CLIENT), "--seed", "3"]),
        ),
        timeouts=Timeouts(None, None),
        start_piece=Shape.PENTO_V,
        log_dir=logs,
    )
    hosted.start()
    app = external_app(hosted, Team.TWO, player=InstantPlayer("first"), hint_player=make_player("greedy", 1))
    try:
        async with app.run_test(size=size) as pilot:
            screen = main_screen(app, GameScreen)
            for _ in range(600):
                await pilot.pause(0.05)
                if screen.session.is_human_turn() and screen.session.state.turn >= 12:
                    break
                if screen.session.is_human_turn() and not screen.ai.busy:
                    await pilot.press("m")
            pane = screen.query_one(ProgramLog)
            if not pane.has_class("shown"):  # a tall terminal opens it by itself
                await pilot.press("e")
            for _ in range(100):
                await pilot.pause(0.05)
                if pane.lines:
                    break
            await settle(pilot)
            _write(app, out, "12-external-program-log")
    finally:
        hosted.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("screenshots"))
    p.add_argument("--size", default="140x44")
    args = p.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    args.out.mkdir(parents=True, exist_ok=True)
    asyncio.run(shoot(args.out, (width, height)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
