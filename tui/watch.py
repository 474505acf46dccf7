"""``blokus watch`` in the terminal UI: the replay viewer, fed live by ``net.watch.Watcher``.

Before the UI starts, the reservation codes of a prepared game are printed (they stay in the
terminal's scrollback) and the command waits for the first state, i.e. for the two players to join.
Then the viewer follows the game: new states are appended as they arrive; stepping back stops
following (``end`` follows again); the result and its reason appear on the last state; ``ctrl+s``
saves the game as a replay. Without a terminal (or with ``--text``) the moves are printed as lines.
"""

from __future__ import annotations

import sys

from ai.analysis import AnalysisSettings
from model.exits import EXIT_CONNECTION, EXIT_OK, EXIT_PROTOCOL
from model.text import printable
from net.watch import Watcher, WatchFailed, make_watcher, reservation_lines
from tui.replay_screen import ReplayScreen
from tui.replays import ReplayData
from tui.server_link import WatchLink
from tui.session import Timeline


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


async def watch_tui(args, out=sys.stdout, err=sys.stderr) -> int:
    from net.connection import Closed

    watcher = make_watcher(args)
    try:
        await watcher.start()
    except WatchFailed as exc:
        print(f"blokus watch: {exc}", file=err)
        return exc.code
    for line in reservation_lines(watcher) if watcher.reservations else []:
        print(line, file=out)
    print(
        f"watching room {watcher.room_id}: waiting for the first state (the players join) … ctrl+c stops",
        file=out,
        flush=True,
    )
    try:
        async for event in watcher.events():
            if watcher.replay.states:
                break
            if isinstance(event, Closed):
                print(f"blokus watch: {printable(event.reason)} (before the game started)", file=err)
                return EXIT_PROTOCOL if event.reason.startswith("protocol error") else EXIT_CONNECTION
    except BaseException:
        await watcher.close()
        raise
    from tui.app import BlokusApp

    app = BlokusApp(
        lambda: watch_screen(watcher, analyse=args.analyse, time=args.time / 1000, ai=args.ai),
        theme="textual-light" if args.light else "textual-dark",
    )
    try:
        await app.run_async()
    finally:
        await watcher.close()
    if args.save_replay is not None and watcher.replay.states:
        try:
            print(f"replay saved: {watcher.save(args.save_replay)}", file=out)
        except OSError as exc:
            print(f"blokus watch: cannot save the replay: {exc.strerror or exc}", file=err)
            return EXIT_CONNECTION
    return EXIT_OK if app.return_code in (0, None) else int(app.return_code or 1)
