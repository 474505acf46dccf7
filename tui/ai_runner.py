"""Runs the AI for a screen: one question at a time, answered through ``ai.controller.decide``.

The answer arrives as an ``AIMoveReady`` message on the screen, always with a legal move (the
controller's fallback replaces a failed, illegal or late answer, and says so in the decision).
"""

from __future__ import annotations

import asyncio
import time
from functools import partial

from textual.screen import Screen

from ai.base import Player
from ai.controller import decide
from model.state import GameState
from tui.jobs import start_job
from tui.messages import AIMoveReady, AIPurpose

EXTRA_CUTOFF_MS = 1000  # without a server clock: how long after the think time the answer may come
CLOCK_MARGIN_MS = 250  # with a server clock: answer this long before it runs out


class AIRunner:
    def __init__(self, screen: Screen, move_time_ms: int, min_delay: float = 0.0) -> None:
        self.screen = screen
        self.move_time_ms = move_time_ms
        self.min_delay = min_delay  # --watch: at least this long per move, so that a human can follow
        self.purpose: AIPurpose | None = None
        self._player: Player | None = None

    @property
    def busy(self) -> bool:
        return self.purpose is not None

    def start(
        self,
        player: Player,
        state: GameState,
        index: int,
        purpose: AIPurpose,
        *,
        clock_started: float | None = None,
        clock_limit: float | None = None,
    ) -> None:
        """Ask ``player`` for a move in ``state`` (timeline position ``index``). With a server clock
        (``clock_started`` monotonic, ``clock_limit`` seconds) the answer comes before it runs out."""
        self.purpose = purpose
        self._player = player
        started = time.monotonic() if clock_started is None else clock_started
        think_ms = self.move_time_ms
        hard_ms: float = think_ms + EXTRA_CUTOFF_MS
        if clock_limit is not None:
            hard_ms = max(50.0, min(hard_ms, clock_limit * 1000 - CLOCK_MARGIN_MS))
        job = partial(self._ask, player, state.copy(), index, purpose, started, think_ms, hard_ms)
        start_job(self.screen, job, group="ai", exclusive=True)

    async def _ask(
        self,
        player: Player,
        state: GameState,
        index: int,
        purpose: AIPurpose,
        started: float,
        think_ms: float,
        hard_ms: float,
    ) -> None:
        decision = await decide(player, state, started, think_ms=think_ms, hard_ms=hard_ms)
        if purpose is AIPurpose.PLAY and self.min_delay:
            wait = self.min_delay - (time.monotonic() - started)
            if wait > 0:
                await asyncio.sleep(wait)
        self.screen.post_message(AIMoveReady(decision, index, purpose))

    def finished(self) -> None:
        self.purpose = None
        self._player = None

    def cancel(self) -> None:
        if self._player is not None:
            self._player.cancel()
        self.screen.workers.cancel_group(self.screen, "ai")
        self.finished()
