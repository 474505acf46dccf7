"""Game sessions without Textual: the state of a game as the UI shows it.

A session holds the timeline of states (every state after every move), who plays which team, the
piece the human is placing (the *ghost*), the autopilot switches, and the view position when the
user steps back through the history. Widgets only read it; the app calls its methods on key presses
and runs the AI when ``wants_ai()`` says so. Nothing here imports Textual, so it is tested directly.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from blokus.model import placements as P
from blokus.model.moverecords import MoveRecord
from blokus.model.moves import IllegalMoveError, Move, MoveMistake, SkipMove
from blokus.model.pieces import Color, Shape, Team
from blokus.model.record import ColorRemoved, GameRecord, MoveEvent, events_between
from blokus.model.result import EndTexts, GameResult, end_texts, state_result
from blokus.model.season import DEFAULT_SEASON, Season
from blokus.model.state import GameState
from blokus.tui.placing import REFUSAL, Feedback, Ghost, GhostStatus, Placement, classify, describe_move, ghost_word

N = P.N
__all__ = [
    "Aborted",
    "Feedback",
    "GameSession",
    "Ghost",
    "GhostStatus",
    "LogEntry",
    "Placement",
    "SeatKind",
    "Timeline",
    "classify",
    "describe_move",
    "ghost_word",
]


class SeatKind(Enum):
    HUMAN = "human"
    AI = "ai"
    REMOTE = "remote"  # the opponent on a server


@dataclass(frozen=True)
class Aborted:
    """A game that ended without a result: the connection failed or closed first."""

    title: str  # 'Game aborted'
    reason: str  # 'The connection ended before a result: …'


@dataclass(frozen=True)
class LogEntry:
    """One line of the move log: a move, a pass, or a colour that left the game."""

    index: int  # the state this entry leads to (timeline index)
    turn: int
    color: Color
    kind: str  # "move" | "skip" | "removed"
    text: str


def move_between(prev: GameState, cur: GameState) -> Move | None:
    """The move that led from ``prev`` to ``cur`` (``model.record.events_between``)."""
    events, _ = events_between(prev, cur)
    return next((e.move for e in events if isinstance(e, MoveEvent)), None)


def removal_text(color: Color) -> str:
    return f"{color.name} cannot place a piece and leaves the game"


def step_entries(index: int, events: list) -> list[LogEntry]:
    """Log entries for the events of the step leading to timeline position ``index``."""
    out: list[LogEntry] = []
    for e in events:
        if isinstance(e, MoveEvent):
            kind = "skip" if isinstance(e.move, SkipMove) else "move"
            out.append(LogEntry(index, e.turn, e.move.color, kind, describe_move(e.move)))
        elif isinstance(e, ColorRemoved):
            out.append(LogEntry(index, e.turn, e.color, "removed", removal_text(e.color)))
    return out


# --- the timeline (shared by live games and replays) ------------------------------------------------


class Timeline(GameRecord):
    """The game record (``model.record``) as the TUI shows it: plus the lines of the move log, and the record of each
    move made here (``move_records``, by turn: the seconds since the state before it; the AI's runner adds what its
    engine reported), saved beside the replay."""

    def __init__(self, first: GameState | None = None) -> None:
        super().__init__(first)
        self.move_records: dict[int, MoveRecord] = {}
        self.turn_began = time.monotonic()  # when the last state came (the colour to move got its turn)

    def append(self, state: GameState, move: Move | None = None) -> None:
        now = time.monotonic()
        if move is not None and self.states:  # a move made here (a state from a server says nothing of its time)
            turn, seconds = self.states[-1].turn, round(max(now - self.turn_began, 0.0), 6)
            self.move_records[turn] = MoveRecord(turn=turn, seconds=seconds, source="human")
        super().append(state, move)
        self.turn_began = now

    def truncate(self, length: int) -> None:
        super().truncate(length)
        self.turn_began = time.monotonic()  # undo: the colour to move starts again

    @classmethod
    def of(cls, record: GameRecord) -> Timeline:
        """A timeline sharing the states and events of ``record`` (a loaded replay)."""
        timeline = cls()
        timeline.states, timeline.steps, timeline.warnings = record.states, record.steps, record.warnings
        return timeline

    @property
    def entries(self) -> list[LogEntry]:
        return [entry for index, events in enumerate(self.steps, start=1) for entry in step_entries(index, events)]


# --- the game session ------------------------------------------------------------------------------


@dataclass
class GameSession:
    """A game as the TUI plays it: local (human/AI/hotseat) or on a server (REMOTE opponent). The piece the
    human places is its ``placing`` (a ``Placement``)."""

    timeline: Timeline
    seats: dict[Team, SeatKind]
    names: dict[Team, str] = field(default_factory=lambda: {Team.ONE: "you", Team.TWO: "AI"})
    local: bool = True  # undo is only possible in local games
    autopilot: set[Team] = field(default_factory=set)
    view: int | None = None  # timeline index being viewed, None = live
    show_overlay: bool = False
    feedback: Feedback = field(default_factory=Feedback)
    ai_thinking: bool = False
    end: GameResult | Aborted | None = None  # a network game's end (a local game's result is its board's)
    # Network games: moves go to ``send`` instead of the local state; the server answers with a state.
    send: Callable[[Move], None] | None = None
    move_requested: bool = False  # the server asked us for a move and we have not answered yet
    started: bool = True  # False until a server sent the first state (the board is a placeholder)
    placing: Placement = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.placing = Placement(self)

    @property
    def ghost(self) -> Ghost | None:
        """The piece being placed (``placing.ghost``)."""
        return self.placing.ghost

    @ghost.setter
    def ghost(self, ghost: Ghost | None) -> None:
        self.placing.ghost = ghost

    @classmethod
    def new_local(
        cls,
        start_piece: Shape | None,
        human: Team | None = Team.ONE,
        hotseat: bool = False,
        seed: int | None = None,
        names: dict[Team, str] | None = None,
        season: Season = DEFAULT_SEASON,
    ) -> GameSession:
        state = GameState.new(season, start_piece, seed)
        if hotseat:
            seats = {Team.ONE: SeatKind.HUMAN, Team.TWO: SeatKind.HUMAN}
        elif human is None:
            seats = {Team.ONE: SeatKind.AI, Team.TWO: SeatKind.AI}
        else:
            seats = {human: SeatKind.HUMAN, human.opponent: SeatKind.AI}
        if names is None:
            names = {
                t: (
                    "you"
                    if s is SeatKind.HUMAN and not hotseat
                    else f"player {t.name}"
                    if s is SeatKind.HUMAN
                    else "AI"
                )
                for t, s in seats.items()
            }
        session = cls(Timeline(state), seats, names)
        session.begin_turn()
        return session

    # --- reading ----------------------------------------------------------------------------------

    @property
    def state(self) -> GameState:
        """The live state."""
        return self.timeline.last

    @property
    def shown_index(self) -> int:
        return len(self.timeline) - 1 if self.view is None else self.view

    @property
    def shown(self) -> GameState:
        """The state on the screen (the live one unless the user stepped back)."""
        return self.timeline.states[self.shown_index]

    @property
    def is_live(self) -> bool:
        return self.view is None

    def _team_deciding(self) -> Team | None:
        """The team whose move this client decides now, or None (game over, or not requested yet)."""
        if self.ended:
            return None
        if self.send is not None and not self.move_requested:
            return None
        return self.state.team

    def is_human_turn(self) -> bool:
        """The human decides the next move (not the AI, not autopilot, not a remote opponent)."""
        team = self._team_deciding()
        return team is not None and self.seats[team] is SeatKind.HUMAN and team not in self.autopilot

    def wants_ai(self) -> bool:
        """The next move is the AI's: an AI seat, or a human seat on autopilot."""
        team = self._team_deciding()
        if team is None:
            return False
        return self.seats[team] is SeatKind.AI or (self.seats[team] is SeatKind.HUMAN and team in self.autopilot)

    def human_teams(self) -> list[Team]:
        return [t for t, s in self.seats.items() if s is SeatKind.HUMAN]

    def begin_turn(self) -> None:
        """Called after every state change: drop a ghost that no longer fits the turn; pre-select the
        start piece on a colour's first move (the only legal choice)."""
        st = self.state
        if not self.is_human_turn():
            self.ghost = None
            return
        color = st.color
        if self.ghost is not None and not st.has_shape(color, self.ghost.shape):
            self.ghost = None
        if st.is_first_move(color):
            if self.ghost is None or self.ghost.shape != st.start_piece:
                self.ghost = self.placing.new_ghost(st.start_piece)

    def apply(self, move: Move) -> None:
        """Play a move on the live state (raises ``IllegalMoveError``) and append it to the timeline.

        In a network game the move is checked again and sent; the server's next state applies it."""
        if self.send is not None:
            mistake = self.state.validate(move)
            if mistake is not None:
                raise IllegalMoveError(mistake, move, self.state.season.violation_text(mistake, move))
            self.move_requested = False
            self.ghost = None
            self.view = None
            self.send(move)
            return
        st = self.state.copy()
        st.play(move)
        self.timeline.append(st, move)
        if self.view is not None:
            self.view = None
        self.begin_turn()

    # --- human actions (each returns a short message for the status line) --------------------------

    def refusal(self) -> str | None:
        """Why the human cannot act now (an earlier state shown, the game over, not their turn), or None."""
        if not self.is_live:
            return "you are viewing an earlier state; press g to return to the live game"
        if self.ended:
            return "the game is over"
        if not self.is_human_turn():
            return "it is not your turn"
        return None

    def make_move(self, move: Move) -> bool:
        """Play a move chosen for the human (AI suggestion, network); explains a refusal."""
        try:
            self.apply(move)
        except ValueError as exc:  # an IllegalMoveError names the rule broken
            reason = exc.rule if isinstance(exc, IllegalMoveError) else str(exc)
            self.feedback = Feedback(f"{REFUSAL}{reason}.", True)
            return False
        return True

    def can_pass(self) -> bool:
        return self.refusal() is None and self.state.can_skip()

    def pass_turn(self) -> Move | None:
        if (msg := self.refusal()) is not None:
            self.feedback = Feedback(msg, True)
            return None
        if not self.state.can_skip():
            self.feedback = Feedback(f"{REFUSAL}{MoveMistake.SKIP_FIRST_TURN.english}.", True)
            return None
        move = SkipMove(self.state.color)
        self.apply(move)
        self.feedback = Feedback(describe_move(move))
        return move

    def can_undo(self) -> bool:
        return self.local and len(self.timeline) > 1 and bool(self.human_teams())

    def undo(self) -> bool:
        """Take back moves until a human is to move again (the AI's answer goes too)."""
        if not self.can_undo():
            self.feedback = Feedback("nothing to undo" if self.local else "undo is only possible in local games", True)
            return False
        n = len(self.timeline) - 1
        while n > 0:
            n -= 1
            st = self.timeline.states[n]
            if self.seats[st.team] is SeatKind.HUMAN and st.team not in self.autopilot:
                break
        self.timeline.truncate(n + 1)
        self.view = None
        self.end = None
        self.ghost = None
        self.begin_turn()
        self.feedback = Feedback(f"undone: back to turn {self.state.turn}")
        return True

    def toggle_autopilot(self, team: Team | None = None) -> bool:
        """Switch the AI on/off for a human team (default: the human team to move, else the first one)."""
        if team is None:
            humans = self.human_teams()
            if not humans:
                return False
            cur = self.state.team
            team = cur if cur in humans else humans[0]
        if self.seats.get(team) is not SeatKind.HUMAN:
            return False
        if team in self.autopilot:
            self.autopilot.discard(team)
            self.feedback = Feedback(f"autopilot off for team {team.name}")
        else:
            self.autopilot.add(team)
            self.ghost = None
            colors = " and ".join(c.name for c in team.colors)
            self.feedback = Feedback(f"autopilot on for team {team.name}: the AI plays {colors}")
        self.begin_turn()
        return True

    # --- viewing the history ----------------------------------------------------------------------

    def step_view(self, delta: int) -> None:
        idx = max(0, min(self.shown_index + delta, len(self.timeline) - 1))
        self.view = None if idx == len(self.timeline) - 1 else idx

    def go_live(self) -> None:
        self.view = None

    # --- the result -------------------------------------------------------------------------------

    def has_game(self) -> bool:
        """There is a real game to save (not the placeholder before a server's first state)."""
        return self.started

    def can_analyse(self) -> bool:
        """The analysis (``A``) is offered: a game with moves that is over (not while it runs: the CPU)."""
        return self.has_game() and len(self.timeline) > 1 and self.ended

    @property
    def ended(self) -> bool:
        """The game is over: on the board, by a server's result, or aborted."""
        return self.end is not None or self.state.is_over

    def final_result(self) -> GameResult | None:
        """The server's result, else the board's once the game is over (None while it runs or when aborted)."""
        if self.end is None and self.state.is_over:
            return state_result(self.state, (self.names.get(Team.ONE, "ONE"), self.names.get(Team.TWO, "TWO")))
        return self.end if isinstance(self.end, GameResult) else None

    def end_texts(self) -> EndTexts | None:
        """How the game ended, in every form (``model.result.end_texts``); None while it runs."""
        if isinstance(self.end, Aborted):
            return EndTexts(self.end.title, self.end.title, (self.end.reason,), self.end.reason)
        result = self.final_result()
        return None if result is None else end_texts(result, self.state, self.names)
