"""``blokus watch`` in the terminal UI: the replay viewer, fed live by ``net.watch.Watcher``.

Before the UI starts, the reservation codes of a prepared game are printed (they stay in the
terminal's scrollback) and the command waits for the first state, i.e. for the two players to join.
Then the viewer follows the game: new states are appended as they arrive; stepping back stops
following (``end`` follows again); the result and its reason appear on the last state; ``ctrl+s``
saves the game as a replay. Without a terminal (or with ``--text``) the moves are printed as lines.
``cli.watch`` starts the watcher, says what goes wrong and decides the exit code.
"""

from __future__ import annotations

from blokus.ai.analysis import AnalysisSettings
from blokus.net.watch import Watcher, WatchOptions
from blokus.tui.app import BlokusApp
from blokus.tui.replay_screen import ReplayScreen
from blokus.tui.replays import ReplayData
from blokus.tui.server_link import WatchLink
from blokus.tui.session import Timeline


def live_data(watcher: Watcher) -> ReplayData:
    """The viewer's data sharing the watcher's game record: it grows as the states arrive."""
    replay = watcher.replay
    return ReplayData(
        Timeline.of(replay),
        replay.names,
        watcher.result,
        source=f"{watcher.host}:{watcher.port}",
        room_id=watcher.room_id or "",
        live=True,
    )


def watch_screen(
    watcher: Watcher, *, analyse: bool = False, time: float | None = None, ai: str | None = None
) -> ReplayScreen:
    """The replay viewer of a game watched live (``time``: seconds of analysis per position, ``ai``: its engine)."""
    settings = AnalysisSettings(engine=ai or "", time_per_position=time) if time else AnalysisSettings(engine=ai or "")
    return ReplayScreen(live_data(watcher), analyse=analyse, analysis_settings=settings, link=WatchLink(watcher))


def watch_app(watcher: Watcher, options: WatchOptions, *, light: bool = False) -> BlokusApp:
    """The app of the live viewer, once the watcher has the first state."""
    return BlokusApp(
        lambda: watch_screen(watcher, analyse=options.analyse, time=options.time_ms / 1000, ai=options.ai),
        theme="textual-light" if light else "textual-dark",
    )
