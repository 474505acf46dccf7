"""The AI of a game screen: one question at a time, answered through ``ai.players.controller.decide``.

The answer arrives as an ``AIMoveReady`` message on the screen, always with a legal move (the
controller's fallback replaces a failed, illegal or late answer, and says so in the decision).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

from blokus.ai.interface import Player
from blokus.ai.players.controller import Decision, decide
from blokus.model.moverecords import MoveRecord, engine_report
from blokus.model.moves import describe_move
from blokus.model.pieces import Team
from blokus.model.state import GameState
from blokus.tui.jobs import Jobs
from blokus.tui.messages import AIMoveReady, AIPurpose
from blokus.tui.placing import Ghost
from blokus.tui.session import Feedback, GameSession

log = logging.getLogger(__name__)

EXTRA_CUTOFF_MS = 1000  # without a server clock: how long after the think time the answer may come
CLOCK_MARGIN_MS = 250  # with a server clock: answer this long before it runs out


@dataclass
class AISeats:
    """Who the AI is in a game: the player of each team it may play (its seat, or a human's on autopilot), the
    one that gives hints and plays for the human, its time per move; ``min_delay``: --watch, at least this long
    per move, so that a human can follow; ``ponder``: the AI opponent thinks on during the human's turn;
    ``first_ghost``: the ghost of a colour's first piece moves to the hint's move (``AIPurpose.FIRST_GHOST``)."""

    players: dict[Team, Player] = field(default_factory=dict)
    hint_player: Player | None = None
    move_time_ms: int = 1000
    min_delay: float = 0.0
    ponder: bool = False
    first_ghost: bool = True


class AIRunner:
    """The AI of a game screen (``seats``), one question at a time, run as a job of the screen, whose answer
    comes back to the screen as a message; ``answered`` applies it to the session. ``clock``: the server's clock
    of the move asked for (monotonic start, seconds allowed), or (None, None)."""

    def __init__(self, session: GameSession, seats: AISeats, jobs: Jobs) -> None:
        self.session = session
        self.players = seats.players
        self.hint_player = seats.hint_player
        self.move_time_ms = seats.move_time_ms
        self.min_delay = seats.min_delay
        self.ponder = seats.ponder
        self.first_ghost = seats.first_ghost
        self.jobs = jobs
        self.clock: Callable[[], tuple[float | None, float | None]] = lambda: (None, None)
        self.purpose: AIPurpose | None = None
        self._player: Player | None = None
        self._pondering: Player | None = None
        self._first_ghost_asked = -1  # the timeline length of the turn whose first ghost the hint was asked about
        self._untouched: Ghost | None = None  # that ghost as it started

    @property
    def busy(self) -> bool:
        return self.purpose is not None

    def maybe_start(self) -> None:
        """Ask the AI for the next move if it is the AI's (an AI seat, or a human seat on autopilot); on a human's
        first piece, where the ghost starts (the hint's move)."""
        s = self.session
        if self.busy and self.purpose is not AIPurpose.FIRST_GHOST:
            return
        if not s.wants_ai():
            self._maybe_place_first_ghost()
            return
        player = self.players.get(s.state.team) or self.hint_player
        if player is not None:
            self.think(player, AIPurpose.PLAY)

    def _maybe_place_first_ghost(self) -> None:
        """On a colour's first piece the ghost starts where the hint would put it: the hint player is asked (once
        per turn, without "AI thinking…": the ghost can be moved meanwhile, and then stays where it was put)."""
        s = self.session
        ghost = s.placing.ghost
        index = len(s.timeline)
        if (
            self.busy
            or not self.first_ghost
            or self.hint_player is None
            or ghost is None
            or not s.is_live
            or not s.is_human_turn()
            or not s.state.is_first_move()
            or self._first_ghost_asked == index
        ):
            return
        self._first_ghost_asked = index
        self._untouched = replace(ghost)
        self.think(self.hint_player, AIPurpose.FIRST_GHOST)

    def think(self, player: Player, purpose: AIPurpose) -> None:
        """Ask ``player`` about the live state; with a server clock the answer comes before it runs out."""
        if player is self._pondering:
            self._pondering = None  # its think stops the pondering first
        self.session.ai_thinking = purpose is not AIPurpose.FIRST_GHOST
        self.purpose = purpose
        self._player = player
        clock_started, clock_limit = self.clock()
        started = time.monotonic() if clock_started is None else clock_started
        think_ms = self.move_time_ms
        hard_ms: float = think_ms + EXTRA_CUTOFF_MS
        if clock_limit is not None:
            hard_ms = max(50.0, min(hard_ms, clock_limit * 1000 - CLOCK_MARGIN_MS))
        state, index = self.session.state.copy(), len(self.session.timeline)
        job = partial(self._ask, player, state, index, purpose, started, think_ms, hard_ms)
        self.jobs.start(job, group="ai", exclusive=True)

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
        self.jobs.post(AIMoveReady(decision, index, purpose))

    def answered(self, message: AIMoveReady) -> None:
        """The answer applied to the session (dropped when the game moved on: undo, a new state)."""
        s = self.session
        asked = self._player  # the player that answered: its engine's report goes into the move's record
        self.purpose, self._player, s.ai_thinking = None, None, False
        purpose = message.purpose
        if message.index != len(s.timeline) or (not s.is_live and purpose is not AIPurpose.PLAY):
            return
        failed = f"The AI failed ({message.decision.detail}); " if message.failed else ""
        turn = s.state.turn
        if failed:
            log.error("AI %s: %s", message.decision.source, message.decision.detail)
        if purpose is AIPurpose.HINT:
            if s.is_human_turn():
                s.placing.show_hint(message.move)
        elif purpose is AIPurpose.FIRST_GHOST:
            if not failed and self._untouched is not None:
                s.placing.start_on(message.move, self._untouched)
        elif purpose is AIPurpose.PLAY:
            player = self.players.get(s.state.team)
            if s.wants_ai() and s.make_move(message.move):
                record_decision(s, turn, message.decision, asked)
                s.feedback = Feedback(f"{failed}AI: {describe_move(message.move)}", bool(failed))
                if self.ponder and player is not None and s.is_human_turn() and not s.state.is_over:
                    self._pondering = player  # until the human has moved (its next move stops it) or undo
                    player.start_pondering(s.state)
        elif s.is_human_turn() and s.make_move(message.move):
            record_decision(s, turn, message.decision, asked)
            s.feedback = Feedback(f"{failed}AI played for you: {describe_move(message.move)}", bool(failed))

    def cancel(self) -> None:
        """Stop thinking and pondering (the UI does not wait: a player's next move waits for its stop)."""
        if self._player is not None:
            self._player.cancel()
        self.jobs.cancel("ai")
        self.purpose, self._player, self.session.ai_thinking = None, None, False
        pondering, self._pondering = self._pondering, None
        if pondering is not None:
            pondering.cancel()  # sets its stop flag only


def record_decision(session: GameSession, turn: int, decision: Decision, player: Player | None) -> None:
    """The record of an AI's move at ``turn``: the time it took and what its engine reported (saved games)."""
    info = getattr(player, "last_info", {}) if decision.source == "engine" else {}
    seconds, report = round(max(decision.elapsed, 0.0), 6), engine_report(info)
    session.timeline.move_records[turn] = MoveRecord(turn=turn, seconds=seconds, source=decision.source, info=report)
