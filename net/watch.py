"""``blokus watch``: observe a live game on a game server with the administrator protocol.

``<authenticate password/>``, then either ``<observe roomId/>`` of a running room, or first
``<prepare>`` (two reserved slots; the server answers ``<prepared>`` with the reservation codes the
two players join with) and then ``observe``. The server then sends every memento, error and the
result of the room (docs/spec/protocol.md §5, docs/spec/season-2027.md §3.7). :class:`Watcher` turns that into a growing
game record (``model.replay.Replay``: states, moves, removals, result) that the text output here
(:class:`TextReport`) and the TUI's live viewer show, that can be analysed while the game runs, and saved as a
replay. ``cli.watch`` drives both, says what went wrong (:class:`WatchFailed`) and picks the exit code.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from blokus.model import convert
from blokus.model import messages as M
from blokus.model.moverecords import MoveRecord, measured_records, write_records
from blokus.model.moves import describe_move
from blokus.model.pieces import Team
from blokus.model.replay import ColorRemoved, MoveEvent, Replay, new_replay_path
from blokus.model.result import result_to_data
from blokus.model.season import DEFAULT_SEASON, GAME_TYPE, SEASONS, Season, season_of_game_type
from blokus.net.connection import (
    Closed,
    Connection,
    ConnectionFailed,
    Event,
    GameOver,
    Left,
    Observed,
    Prepared,
    ServerError,
    StateChanged,
)

if TYPE_CHECKING:
    from blokus.ai.interface import Engine

log = logging.getLogger("blokus.watch")

ANSWER_TIMEOUT = 15.0  # seconds to wait for <prepared> / <observed>
AFTER_RESULT = 2.0  # seconds to wait for <left> after the result before leaving on our own
MAX_STATES = 1000  # states kept of one game (a real game has at most ~100): memory stays bounded
MAX_ERRORS = 100  # server error messages kept
GAME_TYPES = {name: season.game_type for name, season in SEASONS.items()}


class WatchFailed(Exception):
    """Watching cannot start or went wrong: one line for the user; ``connection``: the connection failed (no
    server, lost), else the server did not answer as a game server does."""

    def __init__(self, reason: str, *, connection: bool = False) -> None:
        super().__init__(reason)
        self.connection = connection


@dataclass(frozen=True)
class WatchOptions:
    """What ``blokus watch`` was asked (``cli.watch`` turns the command line into it)."""

    host: str
    port: int
    password: str
    room: str | None = None
    prepare: tuple[str, str] | None = None  # two player names: prepare a game for them and watch it
    season: Season = DEFAULT_SEASON  # the game type of a prepared game
    analyse: bool = False  # analyse every move as it is played
    time_ms: int = 300  # analysis: engine time per position
    ai: str | None = None  # analysis engine (None: the default)
    save_replay: Path | None = None  # write the game as a replay into this folder at the end


class Watcher:
    """One administrator connection observing one room; ``replay`` grows as the states arrive."""

    def __init__(
        self,
        host: str,
        port: int,
        password: str,
        *,
        room: str | None = None,
        prepare: tuple[str, str] | None = None,
        game_type: str = GAME_TYPE,
        on_traffic: Callable[[str, str], None] | None = None,
        connect_timeout: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if (room is None) == (prepare is None):
            raise ValueError("give either a room id or two player names to prepare a game")
        self.host, self.port = host, port
        self.password = password
        self.room_id = room
        self.prepare_names = prepare
        self.game_type = game_type
        self.conn = Connection(host, port, on_traffic=on_traffic, connect_timeout=connect_timeout)
        self.replay = Replay()
        self.reservations: tuple[str, ...] = ()
        self.result: convert.GameResult | None = None
        self.errors: list[str] = []  # server error messages in the room (invalid moves ...)
        self.closed: Closed | None = None
        self._overflow = False
        self._clock = clock
        self._arrived: dict[int, float] = {}  # turn -> when its state arrived (the moves' times, as observed)
        if prepare is not None:
            self.replay.names = prepare

    # --- starting ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect, authenticate, prepare (if asked), observe. Raises :class:`WatchFailed`."""
        try:
            await self.conn.open()
        except ConnectionFailed as exc:
            raise WatchFailed(str(exc), connection=True) from None
        try:
            await self.conn.send_message(M.Authenticate(password=self.password))
            if self.prepare_names is not None:
                season = season_of_game_type(self.game_type) or DEFAULT_SEASON
                reserved = True if season.slot_reserved_attribute else None
                slots = [M.Slot(display_name=name, can_timeout=True, reserved=reserved) for name in self.prepare_names]
                await self.conn.send_message(M.Prepare(game_type=self.game_type, pause=False, slots=slots))
                prepared = await self._answer(Prepared, "prepare")
                self.room_id, self.reservations = prepared.room_id, prepared.reservations
            assert self.room_id is not None
            self.replay.room_id = self.room_id
            await self.conn.send_message(M.Observe(room_id=self.room_id))
            await self._answer(Observed, "observe")
        except ConnectionError as exc:
            await self.conn.close()
            raise WatchFailed(str(exc), connection=True) from None
        except WatchFailed:
            await self.conn.close()
            raise

    async def _answer(self, kind: type[Event], request: str):
        """Wait for the answer to an admin request; room messages that come first are kept."""
        loop = asyncio.get_running_loop()
        end = loop.time() + ANSWER_TIMEOUT
        while True:
            remaining = end - loop.time()
            if remaining <= 0:
                raise WatchFailed(
                    f"no answer to {request} from {self.host}:{self.port} within "
                    f"{ANSWER_TIMEOUT:g} s (is it a game server, and the password right?)"
                )
            try:
                event = await asyncio.wait_for(self.conn.next_event(), remaining)
            except TimeoutError:
                continue
            if isinstance(event, kind):
                return event
            if isinstance(event, Closed):
                if event.reason.startswith(("protocol error", "connection lost")):
                    raise WatchFailed(
                        f"{request} failed: {event.reason}", connection=not event.reason.startswith("protocol")
                    )
                hint = "wrong --password?" if request == "prepare" or self.prepare_names is None else ""
                if request == "observe" and self.prepare_names is None:
                    hint = "wrong --password, or no room with that id?"
                hint = f" ({hint})" if hint else ""
                raise WatchFailed(f"{request} failed: the server closed the connection{hint}")
            if isinstance(event, ServerError) and event.lobby:
                raise WatchFailed(f"{request} refused by the server: {event.message}")
            self._apply(event)

    # --- the game ---------------------------------------------------------------------------------

    def _apply(self, event: Event) -> bool:
        """Update the record; False for events that change nothing (a repeated state)."""
        if isinstance(event, StateChanged):
            last = self.replay.states[-1] if self.replay.states else None
            if last is not None and last.key() == event.state.key():
                return False  # the same state again (e.g. after a pause)
            if len(self.replay.states) >= MAX_STATES:  # a game has ~100 states: a server gone wrong
                if not self._overflow:
                    self._overflow = True
                    self.errors.append(f"more than {MAX_STATES} states: further states ignored")
                return False
            if any(event.names):
                self.replay.names = event.names
            self.replay.add_state(event.state)
            self._arrived.setdefault(event.state.turn, self._clock())
            return True
        if isinstance(event, GameOver):
            self.result = event.result
            self.replay.result_message = result_to_data(event.result, self.season)
            return True
        if isinstance(event, ServerError):
            if len(self.errors) < MAX_ERRORS:
                self.errors.append(event.message)
            return True
        if isinstance(event, Closed):
            self.closed = event
            return True
        return isinstance(event, Left)

    async def events(self) -> AsyncIterator[Event]:
        """The room's events, after the record was updated with each; ends with :class:`Closed`."""
        while True:
            if self.result is not None:
                try:
                    event = await asyncio.wait_for(self.conn.next_event(), AFTER_RESULT)
                except TimeoutError:  # some servers do not send <left> to observers
                    await self.conn.close()
                    continue
            else:
                event = await self.conn.next_event()
            if self._apply(event):
                yield event
            if isinstance(event, Closed):
                return

    async def close(self) -> None:
        await self.conn.close()

    @property
    def over(self) -> bool:
        return self.result is not None or bool(self.replay.states and self.replay.states[-1].is_over)

    @property
    def season(self) -> Season:
        """The watched game's season: its states', else the prepared game type's."""
        if self.replay.states:
            return self.replay.states[-1].season
        return season_of_game_type(self.game_type) or DEFAULT_SEASON

    def save(self, directory: Path) -> Path:
        """Write the game so far as an official replay into ``directory``."""
        directory.mkdir(parents=True, exist_ok=True)
        path = new_replay_path(directory, self.replay.names, self.season)
        saved = self.replay.save(path)
        records = self.move_records()
        if records:
            write_records(saved, records)
        return saved

    def move_records(self) -> list[MoveRecord]:
        """Each move's time as this observer saw it: from the state that asked for it to the state it made (the
        server's and the network's time included; a client reports nothing of its search)."""
        states, arrived = self.replay.states, self._arrived
        timings = [
            (event.turn, arrived[after.turn] - arrived[before.turn], "observed")
            for before, after, step in zip(states, states[1:], self.replay.steps, strict=False)
            if before.turn in arrived and after.turn in arrived
            for event in step
            if isinstance(event, MoveEvent)
        ]
        return measured_records((turn for turn, _, _ in timings), timings)


# --- the text output -----------------------------------------------------------------------------------


class TextReport:
    """One line per move (optionally with its analysis), removals, errors and the result."""

    def __init__(self, watcher: Watcher, out: TextIO, *, analyse_time: float | None = None, ai: str = "") -> None:
        self.watcher = watcher
        self.out = out
        self.steps_done = 0
        self.analyse_time = analyse_time
        self.ai = ai
        self._engine: Engine | None = None
        self._stop = threading.Event()

    def print(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    async def update(self) -> None:
        """Print what is new in the record (analysing each move first, if asked)."""
        replay = self.watcher.replay
        while self.steps_done < len(replay.steps):
            i = self.steps_done
            before, after = replay.states[i], replay.states[i + 1]
            for event in replay.steps[i]:
                if isinstance(event, MoveEvent):
                    note = await self._analysis(before, event.move, i) if self.analyse_time else ""
                    one, two = after.team_points(Team.ONE), after.team_points(Team.TWO)
                    self.print(
                        f"turn {event.turn:>3}  {event.move.color.name:<6}  "
                        f"{describe_move(event.move, color=False):<28}  ONE {one:>3} : {two:<3} TWO{note}"
                    )
                elif isinstance(event, ColorRemoved):
                    self.print(f"turn {event.turn:>3}  {event.color.name} cannot place a piece and leaves the game")
            self.steps_done += 1

    async def _analysis(self, state, move, index: int) -> str:
        from blokus.ai.analysis import AnalysisSettings, analyse_position

        settings = AnalysisSettings(engine=self.ai, time_per_position=self.analyse_time or 0.3)
        if self._engine is None:
            self._engine = settings.engine_spec().build(seed=0)
        if state.is_over or move.color != state.color:
            return ""
        try:
            p = await asyncio.to_thread(analyse_position, state, move, index, self._engine, settings, self._stop)
        except Exception as exc:  # the search was stopped (quit), or the move did not fit the state
            log.info("no analysis of turn %d: %s", state.turn, exc)
            return ""
        if p.forced:
            return "  (forced)"
        text = f"  value {p.value_played:+.1f}"
        if p.loss > 0:
            text += f"  loss {p.loss:.1f} {p.mark}".rstrip() + f"  best {describe_move(p.best, color=False)}"
        return text

    def stop(self) -> None:
        self._stop.set()


def make_watcher(options: WatchOptions, on_traffic: Callable[[str, str], None] | None = None) -> Watcher:
    return Watcher(
        options.host,
        options.port,
        options.password,
        room=options.room,
        prepare=options.prepare,
        game_type=options.season.game_type,
        on_traffic=on_traffic,
    )


def reservation_lines(watcher: Watcher) -> list[str]:
    """How to start the two players of a prepared game."""
    lines = [f"prepared room {watcher.room_id} on {watcher.host}:{watcher.port}"]
    names = watcher.prepare_names or ("", "")
    for team, name, code in zip(Team, names, watcher.reservations, strict=False):
        lines.append(f"  {team.name} {name}: {code}    blokus bot -h {watcher.host} -p {watcher.port} -r {code}")
    return lines
