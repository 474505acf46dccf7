"""The live viewer of ``blokus watch``: a replay viewer whose game grows while it is shown."""

from __future__ import annotations

from textual.binding import Binding

from ai.analysis import replay_moves
from net.connection import Closed, GameOver, ServerError, StateChanged
from net.watch import Watcher
from tui.replay_screen import ReplayScreen
from tui.replays import REPLAY_DIR, ReplayData
from tui.session import Timeline


def live_data(watcher: Watcher) -> ReplayData:
    replay = watcher.replay
    timeline = Timeline.from_states(replay.states, [None, *replay_moves(replay)])
    return ReplayData(timeline, tuple(replay.names), watcher.result, [], False,  # type: ignore[arg-type]
                      f"{watcher.host}:{watcher.port}", watcher.room_id or "")


class WatchScreen(ReplayScreen):
    """Follows the newest state unless the user stepped back (``end`` follows again)."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", tooltip="save the game so far as a replay under replays/"),
    ]

    def __init__(self, watcher: Watcher, *, analyse: bool = False, time: float | None = None,
                 ai: str | None = None) -> None:
        super().__init__(live_data(watcher))
        self.watcher = watcher
        self.live = True  # the connection is open
        self.want_analysis = analyse
        self.analysis_time = time
        self.analysis_ai = ai

    def on_mount(self) -> None:
        super().on_mount()
        self.index = len(self.timeline) - 1
        self.run_worker(self._follow(), group="watch", exit_on_error=False)
        self.notify(f"watching room {self.watcher.room_id} live", timeout=4)

    async def _follow(self) -> None:
        watcher = self.watcher
        async for event in watcher.events():
            if isinstance(event, StateChanged):
                self._add_states()
            elif isinstance(event, GameOver):
                self.replay.result = event.result
                self.refresh_view()
            elif isinstance(event, ServerError):
                self.notify(f"server: {event.message}", severity="warning", timeout=8)
            elif isinstance(event, Closed):
                self.live = False
                if watcher.result is None:
                    self.notify(f"{event.reason} (before the game was over)", severity="error", timeout=12)
                self.refresh_view()

    def _add_states(self) -> None:
        replay = self.watcher.replay
        following = self.index >= len(self.timeline) - 1
        moves = replay_moves(replay)
        while len(self.timeline) < len(replay.states):
            i = len(self.timeline)
            self.timeline.append(replay.states[i], moves[i - 1])
        if following:
            self.index = len(self.timeline) - 1  # refreshes the view
        else:
            self.refresh_view()

    def action_save(self) -> None:
        try:
            path = self.watcher.save(REPLAY_DIR)
        except OSError as exc:
            self.notify(f"cannot save: {exc.strerror or exc}", severity="error")
            return
        self.notify(f"saved {path}")

    def action_quit(self) -> None:
        self.watcher.conn.close_on_left = True
        super().action_quit()
