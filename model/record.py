"""The one game record: the states of a game in order, and what happened between them.

Live games (TUI, bot, server, arena) append each state with the move that led to it; replays append
states only, and the moves are reconstructed (:func:`events_between`: new cells of one colour = that
SetMove; no new cells = a skip; turn numbers passed over = colours removed). Either way every step holds
at most one :class:`MoveEvent` and then the :class:`ColorRemoved` events, so replays, the server, the
bot, the arena and the TUI read a game the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from blokus.model.convert import derive_set_move
from blokus.model.moves import Move, SetMove, SkipMove
from blokus.model.pieces import COLORS, Color
from blokus.model.season import Season
from blokus.model.state import GameState

# --- events between two states -----------------------------------------------------------------------


@dataclass(frozen=True)
class MoveEvent:
    """The move made at ``turn`` (by ``COLORS[turn % 4]``)."""

    turn: int
    move: Move
    derived: bool = False  # reconstructed from the board: the state's lastMove was missing or disagreed


@dataclass(frozen=True)
class ColorRemoved:
    """``color`` could not place a piece at ``turn`` and left the game (docs/spec/rules.md §9). Not a move."""

    turn: int
    color: Color


ReplayEvent = MoveEvent | ColorRemoved


def events_between(before: GameState, after: GameState) -> tuple[list[ReplayEvent], list[str]]:
    """What happened between two consecutive states: at most one move, then the colour removals.

    * New cells of one colour → that SetMove; the ``lastMove`` of ``after`` is taken when it covers the
      same cells, otherwise the piece is derived from the cells (canonical rotation/flip).
    * No new cells → a skip by ``COLORS[before.turn % 4]`` (older servers repeated the previous
      ``lastMove`` for skips, so it is not trusted).
    * Every turn number in ``(before.turn, after.turn]`` whose colour was valid before and is not
      after → :class:`ColorRemoved` (a number whose colour was already gone is passed over silently;
      the last colour is removed at the final turn itself). Colours missing from ``validColors`` for
      another reason (21.1–21.3.2 emptied it at the round limit) are reported at ``after.turn``.

    Returns the events and warnings about inconsistencies.
    """
    warnings: list[str] = []
    events: list[ReplayEvent] = []
    t0, t1 = before.turn, after.turn
    mover = COLORS[t0 % 4]
    if t1 < t0:
        warnings.append(f"turn goes back from {t0} to {t1}")
    new: dict[Color, set[tuple[int, int]]] = {}
    for x, y, color in after.cells():
        old = before.color_at(x, y)
        if old is None:
            new.setdefault(color, set()).add((x, y))
        elif old != color:
            warnings.append(f"field ({x},{y}) changed from {old.name} to {color.name}")
    removed_cells = len(before.cells()) + sum(len(c) for c in new.values()) - len(after.cells())
    if removed_cells > 0:
        warnings.append(f"{removed_cells} fields disappeared between turn {t0} and turn {t1}")

    if len(new) > 1:
        warnings.append(f"turn {t0}: new fields of several colours {sorted(c.name for c in new)}")
    elif new:
        ((color, cells),) = new.items()
        if color != mover:
            warnings.append(f"turn {t0}: {color.name} placed a piece, but {mover.name} was to move")
        last = after.last_move
        if isinstance(last, SetMove) and last.color == color and last.cells == cells:
            events.append(MoveEvent(t0, last))
        else:
            gone = set(before.pieces_left(color)) - set(after.pieces_left(color))
            move = derive_set_move(color, cells, sorted(gone) or None) or derive_set_move(color, cells)
            if move is None:
                warnings.append(f"turn {t0}: the new {color.name} fields {sorted(cells)} are no piece")
            else:
                if last is not None:
                    warnings.append(f"turn {t0}: lastMove {last} does not match the board; using {move}")
                events.append(MoveEvent(t0, move, derived=True))
    elif t1 > t0:
        skip = SkipMove(mover)
        events.append(MoveEvent(t0, skip, derived=after.last_move != skip))

    events.extend(removals_between(before, after))
    for color in after.valid_colors:
        if not before.is_valid(color):
            warnings.append(f"{color.name} is valid again at turn {t1}")
    return events, warnings


def removals_between(before: GameState, after: GameState) -> list[ColorRemoved]:
    """The colours that left the game between two consecutive states (see :func:`events_between`)."""
    out: list[ColorRemoved] = []
    reported: set[Color] = set()
    for turn in range(before.turn + 1, after.turn + 1):
        color = COLORS[turn % 4]
        if color not in reported and before.is_valid(color) and not after.is_valid(color):
            out.append(ColorRemoved(turn, color))
            reported.add(color)
    for color in before.valid_colors:
        if color not in reported and not after.is_valid(color):
            out.append(ColorRemoved(after.turn, color))
    return out


class GameRecord:
    """States in order (``states``), the events between them (``steps[i]``: ``states[i]`` → ``states[i+1]``)
    and warnings about inconsistencies found while reconstructing moves."""

    def __init__(self, first: GameState | None = None) -> None:
        self.states: list[GameState] = [] if first is None else [first]
        self.steps: list[list[ReplayEvent]] = []
        self.warnings: list[str] = []

    @classmethod
    def from_states(cls, states: Sequence[GameState], moves: Sequence[Move | None] | None = None) -> GameRecord:
        """A record of ``states``; ``moves[i]`` (if given and not None) is the move that led to ``states[i]``."""
        record = cls()
        for index, state in enumerate(states):
            record.append(state, moves[index] if moves is not None and index < len(moves) else None)
        return record

    def append(self, state: GameState, move: Move | None = None) -> None:
        """Add the next state; ``move`` is the move that led to it when known (else reconstructed)."""
        if self.states:
            before = self.states[-1]
            if move is not None:
                events: list[ReplayEvent] = [MoveEvent(before.turn, move), *removals_between(before, state)]
            else:
                events, warnings = events_between(before, state)
                self.warnings.extend(warnings)
            self.steps.append(events)
        self.states.append(state)

    add_state = append

    def truncate(self, length: int) -> None:
        """Keep the first ``length`` states (undo)."""
        del self.states[length:]
        del self.steps[max(0, length - 1) :]

    def __len__(self) -> int:
        return len(self.states)

    @property
    def last(self) -> GameState:
        return self.states[-1]

    @property
    def season(self) -> Season | None:
        return self.states[0].season if self.states else None

    @property
    def events(self) -> list[ReplayEvent]:
        return [event for step in self.steps for event in step]

    @property
    def moves(self) -> list[Move]:
        """Every move of the game in order (passes included)."""
        return [e.move for e in self.events if isinstance(e, MoveEvent)]

    @property
    def removals(self) -> list[ColorRemoved]:
        return [e for e in self.events if isinstance(e, ColorRemoved)]

    def move_before(self, index: int) -> Move | None:
        """The move that led to ``states[index]`` (None for the first state or a step without one)."""
        if index <= 0 or index > len(self.steps):
            return None
        return next((e.move for e in self.steps[index - 1] if isinstance(e, MoveEvent)), None)

    def turn_of_move_before(self, index: int) -> int | None:
        """The turn of the move that led to ``states[index]`` (None: no move led there)."""
        if index <= 0 or index > len(self.steps):
            return None
        return next((e.turn for e in self.steps[index - 1] if isinstance(e, MoveEvent)), None)

    def index_for_turn(self, turn: int) -> int:
        """Stepping to turn ``turn`` shows the first state with ``turn ≥ turn`` (the last if none)."""
        for index, state in enumerate(self.states):
            if state.turn >= turn:
                return index
        return len(self.states) - 1

    index_of_turn = index_for_turn

    def state_at_turn(self, turn: int) -> GameState:
        return self.states[self.index_for_turn(turn)]

    def extend(self, states: Iterable[GameState]) -> None:
        for state in states:
            self.append(state)
