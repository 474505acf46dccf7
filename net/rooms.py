"""Game rooms of the local server: slots, the game on the rule engine, time limits, results.

Behaviour of the official 21.3.3 server (``docs/spec/rules.md`` §8–§14, ``docs/spec/protocol.md`` §2, §5, §13), or of
the 27.0.4 server for a room of season 2027 (``docs/spec/season-2027.md``: result form, violator scores 0, reasons that
name the player, a move that was not requested is a PROCESS_VIOLATION), on the project's rule engine.
A room talks to its clients only through the ``Peer`` interface (``send`` a serialized message,
``close``), so it can be driven without sockets in tests.

Deliberate differences from 21.3.3, all towards 21.4.0 or towards never hanging:

* a move that was not requested is answered with the in-room error and a disconnect, and the
  disconnect ends the game with LEFT (21.3.3 let the game run on until the player timed out, which
  never happens in a slot that cannot time out);
* ``joinRoom`` (21.4.0) is accepted: it takes a free non-reserved slot of the room with that id.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from blokus.ai.arena.adjudication import decided
from blokus.ai.arena.referee import Referee
from blokus.model.moves import Move, MoveMistake
from blokus.model.pieces import Shape, Team
from blokus.model.record import GameRecord
from blokus.model.result import GENERIC_NAMES, Cause, GameResult, end_texts, irregular_result, regular_result
from blokus.model.season import DEFAULT_SEASON, Season
from blokus.model.state import GameState
from blokus.model.text import printable

log = logging.getLogger("blokus.server")

__all__ = ["Cause", "FinishedGame", "GameResult", "Lobby", "Peer", "Reservation", "Room", "RoomSeat", "Timeouts"]

NOT_REQUESTED = "We didn't request a move from you yet."


class Peer(Protocol):
    """A connected client as the room sees it."""

    name: str

    def send(self, xml: str) -> None: ...

    def close(self, reason: str = "") -> None: ...


@dataclass
class RoomSeat:
    team: Team
    display_name: str = DEFAULT_SEASON.join_display_name  # rooms of other seasons fill in their season's name
    can_timeout: bool = True
    reservation: str | None = None
    peer: Peer | None = None
    peer_name: str = ""  # who took the seat (the connection's name): the log's name for a player without one


@dataclass
class Timeouts:
    """Per-move limits in seconds (``None``: off). Injectable so tests need not wait seconds."""

    soft: float | None = DEFAULT_SEASON.soft_timeout_ms / 1000
    hard: float | None = DEFAULT_SEASON.hard_timeout_ms / 1000

    @classmethod
    def of(cls, season: Season) -> Timeouts:
        return cls(season.soft_timeout_ms / 1000, season.hard_timeout_ms / 1000)


@dataclass
class FinishedGame:
    """What the server remembers of a finished game (log line, statistics)."""

    room_id: str
    start_piece: Shape
    names: tuple[str, str]
    result: GameResult | None
    moves: int
    final_turn: int
    latencies: list[float]  # seconds from sending a move request to receiving the move
    started: float
    ended: float
    cancelled: bool = False
    season: Season = DEFAULT_SEASON
    peers: tuple[str, str] = ("", "")  # where the players connected from

    @property
    def players(self) -> tuple[str, str]:
        """The players as the log names them: the display name, or where a player without one (2027's
        ``<join/>``, 2021's "Unknown") connected from."""

        def label(name: str, peer: str) -> str:
            if name and name not in GENERIC_NAMES:
                return name
            return peer or name or "(no name)"

        return label(self.names[0], self.peers[0]), label(self.names[1], self.peers[1])

    def summary(self) -> str:
        dur = self.ended - self.started
        lat = f", max move latency {max(self.latencies) * 1000:.0f} ms" if self.latencies else ""
        one, two = self.players
        head = f"game {self.room_id[:8]} {self.start_piece.name} {one} (ONE) vs {two} (TWO): "
        if self.result is None:
            return head + f"cancelled after {self.moves} moves ({dur:.1f} s)"
        told = end_texts(self.result, None, self.names).summary
        return head + f"{told}, turn {self.final_turn}, {self.moves} moves, {dur:.1f} s{lat}"


class Wire(Protocol):
    """The message serializer the room uses (``net.wire`` in production)."""

    def joined(self, room_id: str) -> str: ...
    def welcome(self, room_id: str, team: Team) -> str: ...
    def memento(self, room_id: str, state: GameState, names: tuple[str, str]) -> str: ...
    def move_request(self, room_id: str) -> str: ...
    def result(self, room_id: str, result: GameResult) -> str: ...
    def room_error(self, room_id: str, message: str, move: Move | None) -> str: ...
    def left(self, room_id: str) -> str: ...
    def paused(self, room_id: str, paused: bool) -> str: ...


class Room:
    """One game: two slots (team ONE first), observers, the state, the pending move request."""

    def __init__(
        self,
        wire: Wire,
        *,
        room_id: str | None = None,
        prepared: bool = False,
        paused: bool = False,
        slots: list[RoomSeat] | None = None,
        start_piece: Shape | None = None,
        rng: random.Random | None = None,
        timeouts: Timeouts | None = None,
        on_finish: Callable[[Room, FinishedGame], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        encoder: Callable[[str, GameState, tuple[str, str]], Awaitable[str]] | None = None,
        season: Season | None = None,
    ) -> None:
        self.wire = wire
        self.season: Season = season if season is not None else getattr(wire, "season", DEFAULT_SEASON)
        self.id = room_id or str(uuid.uuid4())
        self.prepared = prepared
        self.paused = paused
        name = self.season.join_display_name
        self.slots = slots or [RoomSeat(Team.ONE, name), RoomSeat(Team.TWO, name)]
        self.observers: list[Peer] = []
        self.rng = rng or random.Random()
        self.start_piece = start_piece
        # moves made before the first request (an arena's opening, the same for both games of a pair): the game
        # starts from the position after them, and that is the first state the players and the record see
        self.opening: tuple[Move, ...] = ()
        # an arena's room ends a game whose winner can no longer change (never a room of ``blokus serve``)
        self.adjudicate = False
        self.adjudicated = ""  # why it ended early ("" if played out)
        self.timeouts = timeouts or Timeouts()
        self.on_finish = on_finish
        self.clock = clock  # injectable: tests make a move "late" without waiting
        self.encoder = encoder  # async memento serializer (a worker process); None: in the loop
        self._publishing = False
        self.state: GameState | None = None
        self.referee: Referee | None = None  # from the game's start
        self.record = GameRecord()  # every state sent, with the moves (for replays)
        self.history_xml: list[str] = []  # ... as sent (pretty-printed like the replay layout)
        self.result: GameResult | None = None
        self.result_xml: str | None = None
        self.finished = False
        self.moves = 0
        self.latencies: list[float] = []
        self.latency_turns: list[int] = []  # the turn each latency was measured at (the records of a saved game)
        self.started_at = 0.0
        self._pending: Team | None = None  # team asked for a move
        self._requested_at = 0.0
        self._hard_timer: asyncio.Handle | None = None
        self._players_behind = False  # paused: players have not seen the latest state yet

    # --- membership -------------------------------------------------------------------------------

    @property
    def history(self) -> list[GameState]:
        """Every state sent so far."""
        return self.record.states

    @property
    def started(self) -> bool:
        return self.state is not None

    @property
    def is_full(self) -> bool:
        return all(s.peer is not None for s in self.slots)

    @property
    def names(self) -> tuple[str, str]:
        return (self.slots[0].display_name, self.slots[1].display_name)

    def free_slot(self, reservation: str | None = None) -> RoomSeat | None:
        for slot in self.slots:
            if slot.peer is None and (reservation is None or slot.reservation == reservation):
                return slot
        return None

    def open_slot(self) -> RoomSeat | None:
        """A free slot that nobody holds a reservation code for (``joinRoom``: the code holders always
        get their seats)."""
        return next((s for s in self.slots if s.peer is None and not s.reservation), None)

    def slot_of(self, peer: Peer) -> RoomSeat | None:
        return next((s for s in self.slots if s.peer is peer), None)

    def add_player(self, peer: Peer, slot: RoomSeat) -> None:
        """Seat ``peer``; starts the game when the room is full."""
        slot.peer = peer
        slot.peer_name = peer.name
        if not self.prepared:
            peer.send(self.wire.joined(self.id))
        if self.is_full:
            self.start()

    def add_observer(self, peer: Peer) -> None:
        if peer not in self.observers:
            self.observers.append(peer)
        if self.state is not None and not self.finished:
            peer.send(self.wire.memento(self.id, self.state, self.names))

    # --- the game ---------------------------------------------------------------------------------

    def start(self) -> None:
        if self.started:
            return
        piece = self.start_piece or GameState.new(rng=self.rng, season=self.season).start_piece
        self.state = GameState.new(self.season, piece)
        for move in self.opening:
            self.state.play(move)  # checked when the opening was read: IllegalMoveError here is a bug
        self.referee = Referee(self.state, self.timeouts.soft)  # judges every move on this state
        self.started_at = time.monotonic()
        for slot in self.slots:
            peer = slot.peer
            assert peer is not None, "start() runs only when the room is full"
            if self.prepared:
                peer.send(self.wire.joined(self.id))
            peer.send(self.wire.welcome(self.id, slot.team))
        self._publish_state()
        if not self.paused:
            self._request_move()

    def _publish_state(self, xml: str | None = None, state: GameState | None = None, move: Move | None = None) -> None:
        if state is None:
            assert self.state is not None, "states are published only once the game has started"
            state = self.state.copy()
        if xml is None:
            xml = self.wire.memento(self.id, state, self.names)
        self.record.append(state, move)
        self.history_xml.append(xml)
        if self.paused:
            self._players_behind = True
        else:
            for slot in self.slots:
                self._send(slot.peer, xml)
        for peer in self.observers:
            self._send(peer, xml)

    def _request_move(self) -> None:
        assert self.state is not None, "moves are requested only once the game has started"
        team = self.state.team
        slot = self.slots[team]
        if self._players_behind:
            xml = self.history_xml[-1]
            for s in self.slots:
                self._send(s.peer, xml)
            self._players_behind = False
        self._pending = team
        self._requested_at = self.clock()
        self._send(slot.peer, self.wire.move_request(self.id))
        hard = self.timeouts.hard
        if hard is not None and slot.can_timeout:
            self._hard_timer = asyncio.get_running_loop().call_later(hard, self._hard_timeout, team)

    def _cancel_timer(self) -> None:
        if self._hard_timer is not None:
            self._hard_timer.cancel()
            self._hard_timer = None

    def _hard_timeout(self, team: Team) -> None:
        # Judged one loop turn later: a move that arrived in time while the loop was busy has its read
        # scheduled already and is handled first (on_move cancels this handle).
        self._hard_timer = asyncio.get_running_loop().call_soon(self._hard_timeout_now, team)

    def _hard_timeout_now(self, team: Team) -> None:
        self._hard_timer = None
        if self._pending is team and not self.finished:
            log.info("room %s: %s hard timeout", self.id[:8], team.name)
            self._end_irregular(team, Cause.HARD_TIMEOUT, self._reason(Cause.HARD_TIMEOUT, self.slots[team]))

    def on_move(
        self,
        peer: Peer,
        move: Move | None,
        error: str | None = None,
        mistake: MoveMistake | None = None,
        at: float | None = None,
    ) -> None:
        """A move message from ``peer``, which arrived at ``at`` (``clock()`` time; default: now).

        ``move`` None: with ``mistake`` a move that is wrong by its form (a SkipMove without colour is
        WRONG_COLOR), else a message that could not be read (→ LEFT).
        """
        if self.finished:
            return
        slot = self.slot_of(peer)
        if slot is None:
            return
        if self._pending is not slot.team:
            self._send(peer, self.wire.room_error(self.id, NOT_REQUESTED, None))
            if self.season.unrequested_move_violates:  # 27.x: the game is cancelled (docs/spec/season-2027.md §3.5)
                self._end_irregular(
                    slot.team, Cause.PROCESS_VIOLATION, self._reason(Cause.PROCESS_VIOLATION, slot, NOT_REQUESTED)
                )
            else:  # 21.3.3 (towards 21.4.0): error, disconnect, the game is lost (LEFT).
                peer.close(NOT_REQUESTED)
                self.on_leave(peer)
            return
        state, referee = self.state, self.referee
        assert state is not None and referee is not None, "a move was requested, so the game has started"
        elapsed = (self.clock() if at is None else at) - self._requested_at
        self._pending = None
        self._cancel_timer()
        self.latencies.append(elapsed)
        self.latency_turns.append(state.turn)
        if move is None and mistake is None:
            log.info("room %s: unreadable move from %s: %s", self.id[:8], slot.team.name, printable(error))
            peer.close(error or "unreadable move")
            self._end_irregular(slot.team, Cause.LEFT, self._reason(Cause.LEFT, slot, "PROTOCOL_ERROR"))
            return
        ruling = referee.judge(move, elapsed, can_timeout=slot.can_timeout, mistake=mistake)
        if ruling.cause is Cause.SOFT_TIMEOUT:
            log.info("room %s: %s soft timeout (%.0f ms)", self.id[:8], slot.team.name, elapsed * 1000)
            self._end_irregular(slot.team, Cause.SOFT_TIMEOUT, self._reason(Cause.SOFT_TIMEOUT, slot))
            return
        if ruling.mistake is not None:
            self._rule_violation(slot, move, ruling.mistake)
            return
        self.moves += 1  # accepted: the referee has played it on the state
        if self.encoder is None:
            self._publish_state(move=move)
            self._proceed()
        else:  # serialize the state elsewhere; the loop stays free to read other clients' moves on time
            self._publishing = True
            asyncio.get_running_loop().create_task(self._publish_encoded(self.encoder, state.copy(), move))

    async def _publish_encoded(
        self,
        encoder: Callable[[str, GameState, tuple[str, str]], Awaitable[str]],
        state: GameState,
        move: Move | None = None,
    ) -> None:
        try:
            xml = await encoder(self.id, state, self.names)
        except Exception:
            log.exception("room %s: memento encoder failed; encoding in the loop", self.id[:8])
            xml = self.wire.memento(self.id, state, self.names)
        self._publishing = False
        if self.finished:
            return
        self._publish_state(xml, state, move)
        self._proceed()

    def _proceed(self) -> None:
        assert self.state is not None, "a move was made, so the game has started"
        if self.adjudicate and not self.state.is_over:
            self.adjudicated = decided(self.state)
        if self.state.is_over or self.adjudicated:
            self._finish(self._regular_result())
        elif not self.paused:
            self._request_move()

    def _reason(self, cause: Cause, slot: RoomSeat, detail: str = "") -> str:
        """The result reason of an irregular end caused by ``slot`` in this room's season."""
        return self.season.irregular_reason(cause, slot.display_name or slot.team.name, detail)

    def _rule_violation(self, slot: RoomSeat, move: Move | None, mistake: MoveMistake) -> None:
        shown = move if mistake.carries_move else None
        text = self.season.invalid_move_error(slot.display_name, mistake, move)
        xml = self.wire.room_error(self.id, text, shown)
        self._send(slot.peer, xml)
        for peer in self.observers:
            self._send(peer, xml)
        violator = slot.peer
        why = self.state.refusal_text(move, mistake) if move is not None and self.state is not None else mistake.english
        self._end_irregular(
            slot.team,
            Cause.RULE_VIOLATION,
            self._reason(Cause.RULE_VIOLATION, slot, self.season.violation_text(mistake, move)),
        )
        if violator is not None:
            violator.close(f"rule violation: {mistake.name}: {why}")

    def on_leave(self, peer: Peer) -> None:
        """``peer`` disconnected (or was disconnected)."""
        if peer in self.observers:
            self.observers.remove(peer)
        slot = self.slot_of(peer)
        if slot is None:
            return
        if not self.started:
            slot.peer = None  # free the slot; the room waits for another player
            return
        slot.peer = None
        if not self.finished:
            self._end_irregular(slot.team, Cause.LEFT, self._reason(Cause.LEFT, slot))

    # --- admin ------------------------------------------------------------------------------------

    def set_paused(self, paused: bool) -> None:
        if self.finished:
            return
        was = self.paused
        self.paused = paused
        if was != paused and self.season.tells_pause:  # 27.x: observers see the pause state change
            xml = self.wire.paused(self.id, paused)
            for peer in self.observers:
                self._send(peer, xml)
        if (
            was
            and not paused
            and self.state is not None
            and self._pending is None
            and not self._publishing
            and not self.state.is_over
        ):
            self._request_move()

    def step(self, forced: bool = False) -> None:
        if self.finished:
            return
        if self.state is None:  # not started
            if forced and self.is_full:
                self.start()
            return
        if self.paused and self._pending is None and not self._publishing and not self.state.is_over:
            self._request_move()

    def cancel(self) -> None:
        """21.3.3: ``left`` to everyone, no result."""
        if self.finished:
            return
        self._pending = None
        self._cancel_timer()
        self._finish(None)

    # --- the end ----------------------------------------------------------------------------------

    def _points(self) -> tuple[int, int]:
        if self.state is None:
            return (0, 0)
        return (self.state.team_points(Team.ONE), self.state.team_points(Team.TWO))

    def _regular_result(self) -> GameResult:
        return regular_result(self._points(), self.names, self.season)

    def _end_irregular(self, offender: Team, cause: Cause, reason: str) -> None:
        if self.finished:
            return
        self._pending = None
        self._cancel_timer()
        self._finish(irregular_result(offender, cause, reason, self._points(), self.names, self.season))

    def _finish(self, result: GameResult | None) -> None:
        self.finished = True
        self.result = result
        peers = [s.peer for s in self.slots if s.peer is not None] + list(self.observers)
        self.result_xml = None
        if result is not None:
            xml = self.result_xml = self.wire.result(self.id, result)
            for peer in peers:
                self._send(peer, xml)
        xml = self.wire.left(self.id)
        for peer in peers:
            self._send(peer, xml)
        record = FinishedGame(
            room_id=self.id,
            start_piece=self.state.start_piece if self.state else (self.start_piece or Shape.PENTO_L),
            names=self.names,
            result=result,
            moves=self.moves,
            final_turn=self.state.turn if self.state else 0,
            latencies=self.latencies,
            started=self.started_at,
            ended=time.monotonic(),
            cancelled=result is None,
            season=self.season,
            peers=(self.slots[0].peer_name, self.slots[1].peer_name),
        )
        if self.on_finish is not None:
            self.on_finish(self, record)

    def _send(self, peer: Peer | None, xml: str) -> None:
        if peer is not None:
            peer.send(xml)


@dataclass
class Reservation:
    room: Room
    slot: RoomSeat


@dataclass
class Lobby:
    """All rooms of a server, and the reservation codes of prepared games."""

    rooms: dict[str, Room] = field(default_factory=dict)
    reservations: dict[str, Reservation] = field(default_factory=dict)

    def open_join_room(self) -> Room | None:
        """A room created by <join> that waits for a player (the game type is not checked)."""
        for room in self.rooms.values():
            if not room.prepared and not room.started and room.free_slot() is not None:
                return room
        return None

    def add(self, room: Room) -> None:
        self.rooms[room.id] = room
        for slot in room.slots:
            if slot.reservation:
                self.reservations[slot.reservation] = Reservation(room, slot)

    def remove(self, room: Room) -> None:
        self.rooms.pop(room.id, None)
        for slot in room.slots:
            if slot.reservation:
                self.reservations.pop(slot.reservation, None)
