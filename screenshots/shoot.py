"""Screenshots of the real app, driven by Textual's Pilot, as PNG (Textual's SVG through ``rsvg-convert``).

    python -m screenshots.shoot [--out screenshots] [--size 140x44]      # from the repository root

A development tool (not installed with the package). Writes ``<name>.png`` for: a fresh local game, a
mid-game position with a ghost piece, the replay viewer, network play with the XML pane (against an
in-process ``blokus serve`` on 127.0.0.1), the end screen, the help screen, the replay viewer with the
analysis pane and the chart, and ``blokus watch`` following two bots live.
PNGs need ``rsvg-convert`` (Debian: librsvg2-bin); without it the SVG is kept instead, and it says so.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TypeVar

from textual.screen import Screen

from blokus.model.pieces import Shape
from blokus.tui.app import BlokusApp
from blokus.tui.game_screen import GameScreen
from tests.tui_helpers import InstantPlayer, game_app, settle

GAME1 = Path(__file__).resolve().parents[1] / "tests/fixtures/sc2021/gen-21.3.3-game1-replay-regular-end.xml"


S = TypeVar("S", bound=Screen)


def main_screen(app: BlokusApp, kind: type[S]) -> S:
    """The app's main screen, which the shot expects to be a ``kind``."""
    screen = app.main_screen
    if not isinstance(screen, kind):
        raise TypeError(f"the main screen is a {type(screen).__name__}, not a {kind.__name__}")
    return screen


def _write(app: BlokusApp, out: Path, name: str) -> Path:
    svg = app.export_screenshot(title=f"Blokus — {name.replace('-', ' ')}")
    # Textual's SVG relies on a web font; tell renderers to keep every space where it is.
    svg = svg.replace("<svg ", '<svg xml:space="preserve" ', 1)
    rsvg = shutil.which("rsvg-convert")
    if rsvg is None:
        path = out / f"{name}.svg"
        path.write_text(svg, encoding="utf-8")
        print(f"wrote {path} (no rsvg-convert: SVG instead of PNG)")
        return path
    path = out / f"{name}.png"
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / f"{name}.svg"
        source.write_text(svg, encoding="utf-8")
        subprocess.run([rsvg, "-o", str(path), str(source)], check=True)
    print(f"wrote {path}")
    return path


async def shoot_local(out: Path, size: tuple[int, int]) -> None:
    app = game_app(Shape.PENTO_L)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        _write(app, out, "01-new-game")

    app = game_app(Shape.PENTO_V, plies=14)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        for key in ("tab",) * 18 + ("d", "f"):
            await pilot.press(key)
        screen = main_screen(app, GameScreen)
        s = screen.session
        g = s.ghost
        if g is None:
            raise RuntimeError("tab selected no piece")
        # move the ghost to a legal spot with keys: walk the positions until the ghost turns legal
        legal = [
            m
            for m in s.state.legal_moves()
            if m.shape == g.shape and (m.rotation, m.flipped) == (g.rotation, g.flipped)
        ]
        if legal:
            target = legal[len(legal) // 2]
            dx, dy = target.x - g.x, target.y - g.y
            keys = ["right" if dx > 0 else "left"] * abs(dx) + ["down" if dy > 0 else "up"] * abs(dy)
            for key in keys:
                await pilot.press(key)
        await pilot.press("v")
        await pilot.pause()
        _write(app, out, "02-mid-game-ghost")
        await pilot.press("o")  # autopilot to the end
        for _ in range(400):
            await settle(pilot)
            if s.state.is_over:
                break
        await pilot.pause()
        _write(app, out, "05-end-screen")
        await pilot.press("enter", "question_mark")
        await pilot.pause()
        _write(app, out, "06-help")


async def shoot_replay(out: Path, size: tuple[int, int]) -> None:
    from blokus.tui.replay_screen import ReplayScreen
    from blokus.tui.replays import load_replay

    data = load_replay(GAME1)
    app = BlokusApp(lambda: ReplayScreen(data))
    async with app.run_test(size=size) as pilot:
        await pilot.press("t", "5", "9", "enter")
        await pilot.pause()
        _write(app, out, "03-replay-viewer")


async def shoot_analysis(out: Path, size: tuple[int, int]) -> None:
    """The replay viewer with the analysis pane (best move as ghost, loss, marks) and the chart."""
    from blokus.tui.replay_screen import ReplayScreen
    from blokus.tui.replays import load_replay

    data = load_replay(GAME1)
    app = BlokusApp(lambda: ReplayScreen(data, analyse=True))
    async with app.run_test(size=size) as pilot:
        screen = main_screen(app, ReplayScreen)
        for _ in range(3000):  # the default analysis: ~25 s the first time, then from the cache
            await pilot.pause(0.05)
            if screen.analysis.runner.complete:
                break
        await pilot.press("t", "2", "0", "enter", "c")
        await pilot.pause(0.3)
        _write(app, out, "07-analysis-and-chart")


async def shoot_watch(out: Path, size: tuple[int, int]) -> None:
    """blokus watch: a prepared game on an in-process blokus serve, two bots playing, watched live."""
    from blokus.cli.bot import bot_lines, parse_options
    from blokus.net.bot import Bot
    from blokus.net.rooms import Timeouts
    from blokus.net.server import GameServer, ServerConfig
    from blokus.net.watch import Watcher
    from blokus.tui.replay_screen import ReplayScreen
    from blokus.tui.watch import watch_screen

    server = GameServer(
        ServerConfig(
            host="127.0.0.1", port=0, password="pw", timeouts=Timeouts(None, None), start_piece=Shape.PENTO_Z, seed=5
        )
    )
    await server.start()
    serving = asyncio.create_task(server.serve_forever())
    watcher = Watcher("127.0.0.1", server.port, "pw", prepare=("alice", "bob"))
    await watcher.start()
    bots = [
        asyncio.create_task(
            Bot(
                parse_options(
                    ["-h", "127.0.0.1", "-p", str(server.port), "-r", code, "--ai", ai, "--move-time", "150"]
                    + ["--engine", "thread"]
                ),
                lines=bot_lines(),
            ).run()
        )
        for code, ai in zip(watcher.reservations, ("lookahead", "greedy"), strict=True)
    ]
    try:
        async for _ in watcher.events():
            if watcher.replay.states:
                break
        app = BlokusApp(lambda: watch_screen(watcher))
        async with app.run_test(size=size) as pilot:
            screen = main_screen(app, ReplayScreen)
            for _ in range(3000):
                await pilot.pause(0.02)
                if len(screen.timeline) >= 34:
                    break
            await pilot.press("c")
            await pilot.pause(0.3)
            _write(app, out, "08-watch-live")
            await pilot.press("q")
    finally:
        await watcher.close()
        for bot in bots:
            bot.cancel()
        serving.cancel()
        await server.close()


async def shoot_network(out: Path, size: tuple[int, int]) -> None:
    from blokus.net.connection import Closed, Connection, GameOver, MoveRequested
    from blokus.net.rooms import Timeouts
    from blokus.net.server import GameServer, ServerConfig
    from blokus.tui.game_screen import GameScreen, network_screen
    from blokus.tui.network import NetworkOptions
    from tests.tui_helpers import first_move

    server = GameServer(
        ServerConfig(host="127.0.0.1", port=0, timeouts=Timeouts(None, None), start_piece=Shape.PENTO_Z, seed=3)
    )
    await server.start()
    serving = asyncio.create_task(server.serve_forever())

    async def opponent() -> None:
        conn = Connection("127.0.0.1", server.port)
        await conn.open()
        await conn.join()
        async for event in conn:
            if isinstance(event, MoveRequested) and event.state is not None:
                await conn.send_move(first_move(event.state))
            elif isinstance(event, GameOver | Closed):
                break
        await conn.close()

    app = BlokusApp(
        lambda: network_screen(
            NetworkOptions(
                "127.0.0.1",
                server.port,
                player=InstantPlayer("first"),
                hint_player=InstantPlayer("last"),
                name="alice",
                clock_limit=None,
            )
        )
    )
    try:
        async with app.run_test(size=size) as pilot:
            opp = asyncio.create_task(opponent())
            s = main_screen(app, GameScreen).session
            for _ in range(300):
                await pilot.pause(0.02)
                if s.is_human_turn():
                    break
            await pilot.press("m")
            for _ in range(300):
                await pilot.pause(0.02)
                if s.is_human_turn() and s.state.turn >= 2:
                    break
            await pilot.press("m")
            for _ in range(300):
                await pilot.pause(0.02)
                if s.is_human_turn() and s.state.turn >= 4:
                    break
            await pilot.press("tab", "tab", "tab", "tab")
            await pilot.pause()
            _write(app, out, "04-network-xml-pane")
            await pilot.press("q")
            opp.cancel()
    finally:
        serving.cancel()
        await server.close()


async def shoot_sizes(out: Path) -> None:
    """The same mid-game position at 80×24 (half-block board), at 200×60 (large board), and at 120×40
    under NO_COLOR (letters on the pieces, grey levels)."""
    import os

    for name, size, no_color in (
        ("09-small-terminal-80x24", (80, 24), False),
        ("10-large-terminal-200x60", (200, 60), False),
        ("11-no-color-120x40", (120, 40), True),
    ):
        if no_color:
            os.environ["NO_COLOR"] = "1"  # Textual reads it when the app is made
        try:
            app = game_app(Shape.PENTO_V, plies=14)
        finally:
            os.environ.pop("NO_COLOR", None)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await pilot.press("tab", "tab", "d")
            await pilot.pause()
            _write(app, out, name)


async def main_async(out: Path, size: tuple[int, int]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    await shoot_sizes(out)
    await shoot_local(out, size)
    await shoot_replay(out, size)
    await shoot_analysis(out, size)
    await shoot_watch(out, size)
    await shoot_network(out, size)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m screenshots.shoot", description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("screenshots"))
    p.add_argument("--size", default="140x44", help="terminal size WIDTHxHEIGHT")
    args = p.parse_args(argv)
    w, h = (int(v) for v in args.size.lower().split("x"))
    asyncio.run(main_async(args.out, (w, h)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
