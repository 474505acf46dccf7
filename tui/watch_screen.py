"""The live viewer of ``blokus watch``: a replay viewer whose game grows while it is shown."""

from __future__ import annotations

from textual.binding import Binding

from ai.analysis import AnalysisSettings
from model import server_texts
from model.text import printable
from net.connection import Closed, GameOver, ServerError, StateChanged
from net.watch import Watcher
from tui.jobs import start_job
from tui.replay_screen import ReplayScreen
from tui.replays import REPLAY_DIR, ReplayData
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


class WatchScreen(ReplayScreen):
    """Follows the newest state unless the user stepped back (``end`` follows again)."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", tooltip="save the game so far as a replay under replays/"),
    ]

    def __init__(
        self, watcher: Watcher, *, analyse: bool = False, time: float | None = None, ai: str | None = None
    ) -> None:
        settings = (
            AnalysisSettings(engine=ai or "", time_per_position=time) if time else AnalysisSettings(engine=ai or "")
        )
        super().__init__(live_data(watcher), analyse=analyse, analysis_settings=settings)
        self.watcher = watcher
        self.live = True  # the connection is open
        self._shown_states = len(self.timeline)

    def on_mount(self) -> None:
        super().on_mount()
        self.index = len(self.timeline) - 1
        start_job(self, self._follow, group="watch")
        self.notify(f"watching room {self.watcher.room_id} live", timeout=4)

    async def _follow(self) -> None:
        watcher = self.watcher
        async for event in watcher.events():
            if isinstance(event, StateChanged):
                self._states_added()
            elif isinstance(event, GameOver):
                self.replay.result = event.result
                self.analysis_game_changed(final=True)
                self.refresh_view()
            elif isinstance(event, ServerError):
                self.notify(f"server: {printable(server_texts.shown(event.message))}", severity="warning", timeout=8)
            elif isinstance(event, Closed):
                self.live = self.replay.live = False
                if watcher.result is None:
                    self.notify(f"{printable(event.reason)} (before the game was over)", severity="error", timeout=12)
                self.analysis_game_changed(final=True)
                self.refresh_view()

    def _states_added(self) -> None:
        """The shared record grew: follow the newest state, unless the user stepped back."""
        following = self.index >= self._shown_states - 1
        self._shown_states = len(self.timeline)
        self.analysis_game_changed(final=False)
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
