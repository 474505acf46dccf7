"""Game sessions without Textual: the state of a game as the UI shows it.

A session holds the timeline of states (every state after every move), who plays which team, the
piece the human is placing (the *ghost*), the autopilot switches, and the view position when the
user steps back through the history. Widgets only read it; the app calls its methods on key presses
and runs the AI when ``wants_ai()`` says so. Nothing here imports Textual, so it is tested directly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from model import placements as P
from model.moves import InvalidMove, Move, MoveMistake, SetMove, SkipMove
from model.pieces import Color, Rotation, Shape, Team, transform
from model.record import ColorRemoved, GameRecord, MoveEvent, events_between
from model.season import DEFAULT_SEASON, Season
from model.state import GameState, move_of_placement

N = P.N


class GhostStatus(Enum):
    """The three states of the ghost piece (ux-notes §3)."""

    BLOCKED = "not placeable"
    NO_CONTACT = "no corner contact"
    LEGAL = "legal"


class Seat(Enum):
    HUMAN = "human"
    AI = "ai"
    REMOTE = "remote"  # the opponent on a server


@dataclass(frozen=True)
class LogEntry:
    """One line of the move log: a move, a pass, or a colour that left the game."""

    index: int  # the state this entry leads to (timeline index)
    turn: int
    color: Color
    kind: str  # "move" | "skip" | "removed"
    text: str


def describe_move(move: Move) -> str:
    if isinstance(move, SkipMove):
        return f"{move.color.name} passed"
    rot = "" if move.rotation == Rotation.NONE else f" {Rotation(move.rotation).name}"
    flip = " flipped" if move.flipped else ""
    return f"{move.color.name} {move.shape.name}{rot}{flip} @ ({move.x},{move.y})"


def move_between(prev: GameState, cur: GameState) -> Move | None:
    """The move that led from ``prev`` to ``cur`` (``model.record.events_between``)."""
    events, _ = events_between(prev, cur)
    return next((e.move for e in events if isinstance(e, MoveEvent)), None)


REFUSAL = "Not allowed: "


def cells_text(state: GameState, move: SetMove, mistake: MoveMistake) -> str:
    """The fields a refused placement is about, e.g. " at (4,5) (6,5)" (empty when no field is to blame)."""
    cells = sorted(move.cells, key=lambda c: (c[1], c[0]))
    on_board = [(x, y) for x, y in cells if 0 <= x < N and 0 <= y < N]
    if mistake is MoveMistake.OUT_OF_BOUNDS:
        bad = [c for c in cells if c not in on_board]
    elif mistake is MoveMistake.OBSTRUCTED:
        bad = [c for c in on_board if state.occupied & P.bit(*c)]
    elif mistake is MoveMistake.TOUCHES_SAME_COLOR:
        edge = P.edge_neighbours(state.boards[move.color])
        bad = [c for c in on_board if edge & P.bit(*c)]
    else:
        return ""
    shown = " ".join(f"({x},{y})" for x, y in bad[:5])
    return f" at {shown}" if shown else ""


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


# --- the ghost piece --------------------------------------------------------------------------------


@dataclass
class Ghost:
    """The piece being placed: shape, rotation, flip, and the top-left corner of its bounding box."""

    shape: Shape
    rotation: Rotation = Rotation.NONE
    flipped: bool = False
    x: int = 0
    y: int = 0

    @property
    def rel_cells(self) -> tuple[tuple[int, int], ...]:
        return transform(self.shape, self.rotation, self.flipped)

    @property
    def size(self) -> tuple[int, int]:
        cells = self.rel_cells
        return 1 + max(x for x, _ in cells), 1 + max(y for _, y in cells)

    def cells(self) -> list[tuple[int, int]]:
        return [(self.x + dx, self.y + dy) for dx, dy in self.rel_cells]

    def move(self, color: Color) -> SetMove:
        return SetMove(color, self.shape, self.rotation, self.flipped, self.x, self.y)

    def clamp(self) -> None:
        """Keep the whole piece on the board."""
        w, h = self.size
        self.x = max(0, min(self.x, N - w))
        self.y = max(0, min(self.y, N - h))

    def rotate(self, quarter_turns: int) -> None:
        """Rotate on screen: +1 clockwise, -1 counter-clockwise, 2 = 180°.

        The server flips after rotating, so on a flipped piece a clockwise turn on screen is a LEFT
        rotation of the unflipped shape.
        """
        step = -quarter_turns if self.flipped else quarter_turns
        self.rotation = Rotation((self.rotation + step) % 4)
        self.clamp()

    def flip(self) -> None:
        self.flipped = not self.flipped
        self.clamp()


def classify(state: GameState, move: SetMove) -> tuple[GhostStatus, MoveMistake | None]:
    mistake = state.validate(move)
    if mistake is None:
        return GhostStatus.LEGAL, None
    if mistake in (MoveMistake.NOT_IN_CORNER, MoveMistake.NOT_ON_BORDER, MoveMistake.NO_SHARED_CORNER):
        return GhostStatus.NO_CONTACT, mistake
    return GhostStatus.BLOCKED, mistake


# --- the timeline (shared by live games and replays) ------------------------------------------------


class Timeline(GameRecord):
    """The game record (``model.record``) as the TUI shows it: plus the lines of the move log."""

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
class Feedback:
    """A one-line message for the user (the result of the last action)."""

    text: str = ""
    error: bool = False


@dataclass
class GameSession:
    """A game as the TUI plays it: local (human/AI/hotseat) or on a server (REMOTE opponent)."""

    timeline: Timeline
    seats: dict[Team, Seat]
    names: dict[Team, str] = field(default_factory=lambda: {Team.ONE: "you", Team.TWO: "AI"})
    local: bool = True  # undo is only possible in local games
    autopilot: set[Team] = field(default_factory=set)
    ghost: Ghost | None = None
    view: int | None = None  # timeline index being viewed, None = live
    show_overlay: bool = False
    feedback: Feedback = field(default_factory=Feedback)
    ai_thinking: bool = False
    end_reason: str | None = None  # set for irregular ends (network) or when the game is over
    result_text: str | None = None
    result: object | None = None  # model.convert.GameResult from a server
    # Network games: moves go to ``send`` instead of the local state; the server answers with a state.
    send: Callable[[Move], None] | None = None
    move_requested: bool = False  # the server asked us for a move and we have not answered yet
    started: bool = True  # False until a server sent the first state (the board is a placeholder)

    @classmethod
    def new_local(cls, start_piece: Shape | None, human: Team | None = Team.ONE, hotseat: bool = False,
                  seed: int | None = None, names: dict[Team, str] | None = None,
                  season: Season = DEFAULT_SEASON) -> GameSession:
        import random

        state = GameState.new(start_piece, rng=random.Random(seed) if seed is not None else None, season=season)
        if hotseat:
            seats = {Team.ONE: Seat.HUMAN, Team.TWO: Seat.HUMAN}
        elif human is None:
            seats = {Team.ONE: Seat.AI, Team.TWO: Seat.AI}
        else:
            seats = {human: Seat.HUMAN, human.opponent: Seat.AI}
        if names is None:
            names = {t: ("you" if s is Seat.HUMAN and not hotseat else
                         f"player {t.name}" if s is Seat.HUMAN else "AI") for t, s in seats.items()}
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
        st = self.state
        if st.is_over or self.end_reason:
            return None
        if self.send is not None and not self.move_requested:
            return None
        return st.current_team

    def is_human_turn(self) -> bool:
        """The human decides the next move (not the AI, not autopilot, not a remote opponent)."""
        team = self._team_deciding()
        return team is not None and self.seats[team] is Seat.HUMAN and team not in self.autopilot

    def wants_ai(self) -> bool:
        """The next move is the AI's: an AI seat, or a human seat on autopilot."""
        team = self._team_deciding()
        if team is None:
            return False
        return self.seats[team] is Seat.AI or (self.seats[team] is Seat.HUMAN and team in self.autopilot)

    def human_teams(self) -> list[Team]:
        return [t for t, s in self.seats.items() if s is Seat.HUMAN]

    def ghost_status(self) -> tuple[GhostStatus, MoveMistake | None] | None:
        if self.ghost is None or not self.is_human_turn() or not self.is_live:
            return None
        return classify(self.state, self.ghost.move(self.state.current_color))

    def placeable_shapes(self, color: Color | None = None) -> set[Shape]:
        """Shapes of ``color`` (default: the colour to move) with at least one legal placement now."""
        st = self.shown
        color = st.current_color if color is None else color
        if not st.is_valid(color) or st.is_over:
            return set()
        ids = st.legal_placements(color)
        return {Shape(int(s)) for s in set(P.P_SHAPE[ids].tolist())}

    def overlay_cells(self) -> int:
        """Bitboard of the cells the colour to move may cover with a legal placement (selected shape only
        when one is selected)."""
        st = self.state
        if st.is_over or not self.is_live:
            return 0
        key = (id(st), st.turn, None if self.ghost is None else self.ghost.shape)
        cached = self.__dict__.get("_overlay_cache")
        if cached is not None and cached[0] == key:
            return cached[1]
        bb = self._overlay(st)
        self.__dict__["_overlay_cache"] = (key, bb)
        return bb

    def _overlay(self, st: GameState) -> int:
        ids = st.legal_placements()
        if self.ghost is not None:
            ids = ids[P.P_SHAPE[ids] == int(self.ghost.shape)]
        bb = 0
        for pid in ids.tolist():
            bb |= P.MASKS[pid]
        return bb

    # --- turn handling ----------------------------------------------------------------------------

    def begin_turn(self) -> None:
        """Called after every state change: drop a ghost that no longer fits the turn; pre-select the
        start piece on a colour's first move (the only legal choice)."""
        st = self.state
        if not self.is_human_turn():
            self.ghost = None
            return
        color = st.current_color
        if self.ghost is not None and not st.has_shape(color, self.ghost.shape):
            self.ghost = None
        if st.is_first_move(color):
            if self.ghost is None or self.ghost.shape != st.start_piece:
                self.ghost = self._new_ghost(st.start_piece)

    def _new_ghost(self, shape: Shape) -> Ghost:
        """A ghost of ``shape``: where the previous ghost of this turn was, else at a legal placement near
        the colour's last piece (on a first move: near the top-left corner), unrotated if one such placement
        exists."""
        old = self.ghost
        if old is not None:
            g = Ghost(shape, x=old.x, y=old.y)
            g.clamp()
            return g
        st = self.state
        color = st.current_color
        ids = st.legal_placements(color)
        ids = ids[P.P_SHAPE[ids] == int(shape)]
        if not len(ids):
            return Ghost(shape, x=N // 2 - 2, y=N // 2 - 2)
        last = self.last_cells(color)
        cx = sum(x for x, _ in last) / len(last) if last else 0.0
        cy = sum(y for _, y in last) / len(last) if last else 0.0
        moves = [move_of_placement(color, int(pid)) for pid in ids.tolist()]

        def distance(m: SetMove) -> tuple[bool, float]:
            return (m.rotation != Rotation.NONE or m.flipped), (m.x - cx) ** 2 + (m.y - cy) ** 2

        best = min(moves, key=distance)
        return Ghost(shape, best.rotation, best.flipped, best.x, best.y)

    def last_cells(self, color: Color) -> list[tuple[int, int]]:
        """The cells of ``color``'s most recent piece (empty before its first move)."""
        for move in reversed(self.timeline.moves):
            if isinstance(move, SetMove) and move.color == color:
                return list(move.cells)
        return []

    def apply(self, move: Move) -> None:
        """Play a move on the live state (raises ``InvalidMove``) and append it to the timeline.

        In a network game the move is checked again and sent; the server's next state applies it."""
        if self.send is not None:
            mistake = self.state.validate(move)
            if mistake is not None:
                raise InvalidMove(mistake, move)
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

    def _require_turn(self) -> str | None:
        if not self.is_live:
            return "you are viewing an earlier state; press g to return to the live game"
        if self.state.is_over or self.end_reason:
            return "the game is over"
        if not self.is_human_turn():
            return "it is not your turn"
        return None

    def select(self, shape: Shape) -> bool:
        if self._require_turn():
            return False
        st = self.state
        if not st.has_shape(st.current_color, shape):
            self.feedback = Feedback(f"{shape.name} has already been placed", True)
            return False
        if st.is_first_move() and shape != st.start_piece:
            self.feedback = Feedback(f"the first move must place the start piece {st.start_piece.name}", True)
            return False
        if shape not in self.placeable_shapes():
            self.feedback = Feedback(f"{shape.name} cannot be placed anywhere now", True)
            return False
        if self.ghost is None or self.ghost.shape != shape:
            self.ghost = self._new_ghost(shape)
        self.feedback = Feedback()
        return True

    def cycle(self, step: int) -> bool:
        """Select the next (+1) or previous (-1) shape that can be placed now."""
        if (msg := self._require_turn()) is not None:
            self.feedback = Feedback(msg, True)
            return False
        shapes = sorted(self.placeable_shapes())
        if not shapes:
            return False
        if self.state.is_first_move():
            self.feedback = Feedback(f"on a first move only the start piece {self.state.start_piece.name} can be "
                                     "placed", True)
            return False
        if self.ghost is None:
            shape = shapes[0] if step > 0 else shapes[-1]
        else:
            cur = int(self.ghost.shape)
            later = [s for s in shapes if (s - cur) * step > 0]
            if later:
                shape = min(later) if step > 0 else max(later)
            else:
                shape = shapes[0] if step > 0 else shapes[-1]
        return self.select(shape)

    def deselect(self) -> None:
        if self._require_turn() is not None or self.ghost is None:
            return
        if self.state.is_first_move():
            self.feedback = Feedback(f"on a first move the start piece {self.state.start_piece.name} is the only "
                                     "choice", True)
            return
        self.ghost = None
        self.feedback = Feedback("piece put back")

    def move_ghost(self, dx: int, dy: int) -> bool:
        if self.ghost is None:
            return False
        g = self.ghost
        g.x += dx
        g.y += dy
        g.clamp()
        return True

    def rotate(self, quarter_turns: int) -> bool:
        if self.ghost is None:
            return False
        self.ghost.rotate(quarter_turns)
        return True

    def flip(self) -> bool:
        if self.ghost is None:
            return False
        self.ghost.flip()
        return True

    def place(self) -> Move | None:
        """Play the ghost if it is legal; otherwise explain the broken rule. Returns the move played."""
        if (msg := self._require_turn()) is not None:
            self.feedback = Feedback(msg, True)
            return None
        if self.ghost is None:
            self.feedback = Feedback("select a piece first (tab / n)", True)
            return None
        move = self.ghost.move(self.state.current_color)
        try:
            self.apply(move)
        except InvalidMove as exc:
            self.feedback = Feedback(f"{REFUSAL}{exc.mistake.english}{cells_text(self.state, move, exc.mistake)}.",
                                     True)
            return None
        self.feedback = Feedback(f"placed {describe_move(move)}")
        return move

    def make_move(self, move: Move) -> bool:
        """Play a move chosen for the human (AI suggestion, network); explains a refusal."""
        try:
            self.apply(move)
        except (InvalidMove, ValueError) as exc:
            reason = exc.mistake.english if isinstance(exc, InvalidMove) else str(exc)
            self.feedback = Feedback(f"{REFUSAL}{reason}.", True)
            return False
        return True

    def can_pass(self) -> bool:
        return self._require_turn() is None and self.state.can_skip()

    def pass_turn(self) -> Move | None:
        if (msg := self._require_turn()) is not None:
            self.feedback = Feedback(msg, True)
            return None
        if not self.state.can_skip():
            self.feedback = Feedback(f"{REFUSAL}{MoveMistake.SKIP_FIRST_TURN.english}.", True)
            return None
        move = SkipMove(self.state.current_color)
        self.apply(move)
        self.feedback = Feedback(describe_move(move))
        return move

    def show_hint(self, move: Move) -> None:
        """Show an AI suggestion as the ghost."""
        if isinstance(move, SkipMove):
            self.feedback = Feedback("hint: pass")
            return
        self.ghost = Ghost(move.shape, move.rotation, move.flipped, move.x, move.y)
        self.feedback = Feedback(f"hint: {describe_move(move)} (enter places it)")

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
            if self.seats[st.current_team] is Seat.HUMAN and st.current_team not in self.autopilot:
                break
        self.timeline.truncate(n + 1)
        self.view = None
        self.end_reason = None
        self.result_text = None
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
            cur = self.state.current_team
            team = cur if cur in humans else humans[0]
        if self.seats.get(team) is not Seat.HUMAN:
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

    def forget_stale_refusal(self) -> bool:
        """After the ghost moved: drop a refusal about its old position (True if one was dropped)."""
        if self.feedback.error and self.feedback.text.startswith(REFUSAL):
            self.feedback = Feedback()
            return True
        return False

    def short_outcome(self) -> str:
        """'Game over — ONE wins 61 : 58' (the status line)."""
        if self.result_text:
            return self.result_text
        winner, (one, two) = self.state.outcome()
        return f"Game over — {'draw' if winner is None else winner.name + ' wins'} {one} : {two}"

    def end_details(self) -> str:
        """Score, points per colour, why the game ended, how long it was (the end dialog of a local game)."""
        st = self.state
        one, two = st.team_points(Team.ONE), st.team_points(Team.TWO)
        details = [f"Score: ONE (BLUE+RED) {one} : {two} TWO (YELLOW+GREEN)",
                   "   ".join(f"{c.name} {st.points(c)}" for c in Color)]
        if self.end_reason:
            details.append(self.end_reason)
        elif st.turn >= st.season.turn_limit:
            details.append(f"Regular end: the round limit ({st.season.round_limit} rounds) was reached.")
        else:
            details.append("Regular end: no colour can place a piece.")
        details.append(f"{len(self.timeline.moves)} moves, final turn {st.turn}.")
        return "\n".join(details)

    def outcome_text(self) -> str:
        """'Game over — team ONE (BLUE+RED, you) wins 61 : 58' or a draw."""
        if self.result_text:
            return self.result_text
        st = self.state
        winner, (one, two) = st.outcome()
        if winner is None:
            return f"Game over — draw, {one} : {two}"
        colors = "+".join(c.name for c in winner.colors)
        return f"Game over — team {winner.name} ({colors}, {self.names[winner]}) wins {one} : {two}"
