"""The player API's implementation: a team's ``Player`` base class and the ``GameState`` it searches on.

The public face is ``blokus.player`` (it re-exports these names with the reference in
``docs/player-api.md``). They live here, below ``net`` and ``cli``, so that ``ai.players.pyplayer`` (the loader of
``py:PATH[:CLASS]`` players) can build them while imports keep pointing one way.

``GameState`` is a thin façade over the compiled engine (``model.state.GameState.compiled()``, a
``model.fast.FastState``, private underneath: legal moves of any colour, push/pop, scores in numba), in the one
vocabulary of ``model.state.GameState`` (docs/position.md), with the same 64-bit Zobrist key (``model.zobrist``)
kept by push/pop (``key()``), and the moves of
``model.moves`` (``SetMove``/``SkipMove``, printed and parsed by ``str(move)``/``parse_move``); the exact
reference engine (``model.state.GameState``) checks moves in ``play``/``is_legal`` and is what ``to_model()``
returns.
"""

from __future__ import annotations

import operator
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import numpy as np

from blokus.model import fast as F
from blokus.model import placements as P
from blokus.model.moves import IllegalMoveError, Move, MoveMistake, SetMove, SkipMove, as_move, parse_move
from blokus.model.pieces import COLORS, SHAPES, Color, Shape, Team
from blokus.model.season import DEFAULT_SEASON, Season
from blokus.model.state import ALL_COLORS, Outcome
from blokus.model.state import GameState as ModelState
from blokus.model.zobrist import Z_MONO, Z_PLACE, Z_TURN, Z_VALID, board_key

if TYPE_CHECKING:
    from blokus.model.result import GameResult

__all__ = ["GameState", "Player", "move_of_text"]

# The SetMove of (colour, placement id), built once, and the placement id of each such move: the legal move
# list and push() are dictionary look-ups, not geometry.
_MOVES: list[list[SetMove | None]] = [[None] * P.COUNT for _ in COLORS]
_PID: dict[SetMove, int] = {}


def _move(color: int, pid: int) -> SetMove:
    move = _MOVES[color][pid]
    if move is None:
        o = P.ORIENTATIONS[P.P_ORIENT[pid]]
        move = SetMove(COLORS[color], o.shape, o.rotation, o.flipped, int(P.P_X[pid]), int(P.P_Y[pid]))
        _MOVES[color][pid] = move
        _PID[move] = pid
    return move


def _pid(move: SetMove) -> int | None:
    """The placement id of ``move`` (any rotation/flip pair that gives the same cells), None if off the board."""
    pid = _PID.get(move)
    if pid is None:
        from blokus.model.state import placement_of

        pid = placement_of(move)
    return pid


# (x, y) of every cell index
_XY: list[tuple[int, int]] = [(i % P.N, i // P.N) for i in range(P.NCELLS)]


def move_of_text(text: str) -> Move:
    """Parse a move in its one printed form (``str(move)``): ``BLUE PENTO_L RIGHT false 3 0`` or ``BLUE SKIP``.

    COLOR SHAPE ROTATION FLIPPED X Y: ROTATION is NONE, RIGHT (90° clockwise), MIRROR (180°) or LEFT
    (270°); FLIPPED is true or false (mirrored left-right before the rotation); (X, Y) is the top-left
    corner of the placed piece's bounding box. Raises ``ValueError`` for anything else.
    """
    return parse_move(text)


class GameState:
    """A Blokus position on the compiled engine: what a player's search needs.

    Build one with ``GameState.new(season=2027)`` (tests, experiments) — a player gets one in
    ``Player.on_update``. It is mutable: ``push(move)`` applies a legal move, ``pop()`` takes it back, and
    ``copy()`` gives an independent position. Colours move in the order BLUE, YELLOW, RED, GREEN; team ONE
    plays BLUE and RED, team TWO YELLOW and GREEN. A colour that cannot place any more leaves the game
    (the server's rule), so the colour to move always has a legal placement until the game is over.
    """

    __slots__ = ("_engine", "_season", "_start_piece", "_last_moves", "_keys")

    def __init__(self, state: ModelState) -> None:
        """The position of a ``model.state.GameState`` (the project's reference engine)."""
        self._engine = state.compiled()
        self._season: Season = state.season
        self._start_piece = state.start_piece
        self._last_moves: list[Move | None] = [state.last_move]
        # per pushed move: the key's board part (see key())
        self._keys: list[int] = [board_key(state.season, state.start_piece, state.boards, state.shapes)]

    @classmethod
    def new(
        cls,
        season: Season | int | str = DEFAULT_SEASON,
        start_piece: Shape | str | None = None,
        seed: int | None = None,
        *,
        rng: random.Random | None = None,
    ) -> GameState:
        """A new game of ``season`` (2027, the current contest season, unless 2021 is asked for). Without
        ``start_piece`` it is drawn from the season's pool as the server does (reproducibly with ``seed``)."""
        return cls(ModelState.new(season, start_piece, seed, rng=rng))

    def copy(self) -> GameState:
        """An independent copy (its own undo history starts empty)."""
        other = GameState.__new__(GameState)
        other._engine = self._engine.copy()
        other._season = self._season
        other._start_piece = self._start_piece
        other._last_moves = [self._last_moves[-1]]
        other._keys = [self._keys[-1]]
        return other

    # --- who is to move ---------------------------------------------------------------------------

    @property
    def color(self) -> Color:
        """The colour to move (socha: ``current_color()``)."""
        return COLORS[self._engine.color]

    @property
    def team(self) -> Team:
        """The team to move: ``Team.ONE`` (BLUE and RED) or ``Team.TWO`` (YELLOW and GREEN)."""
        return Team(self._engine.color & 1)

    @property
    def turn(self) -> int:
        """The turn number (0 at the start; +1 per move, and +1 for each colour that leaves the game)."""
        return self._engine.turn

    @property
    def round(self) -> int:
        """The round: 1 + turn // 4."""
        return 1 + self._engine.turn // 4

    @property
    def season(self) -> Season:
        """The season's profile: 2021 (first piece in a corner, 25 rounds) or 2027 (first piece on the border, 24
        rounds); it equals its year (``state.season == 2027``, ``season.year``)."""
        return self._season

    @property
    def start_piece(self) -> Shape:
        """The shape every colour must place first."""
        return self._start_piece

    @property
    def last_move(self) -> Move | None:
        """The move that led to this position (None at the start)."""
        return self._last_moves[-1]

    @property
    def valid_colors(self) -> tuple[Color, ...]:
        """The colours still in the game."""
        valid = self._engine.valid
        return tuple(c for c in COLORS if valid >> c & 1)

    @property
    def is_over(self) -> bool:
        """Whether the game is over (no colour can place, or the round limit is reached)."""
        return self._engine.is_over

    # --- moves ------------------------------------------------------------------------------------

    def legal_moves(self, color: Color | None = None) -> list[SetMove]:
        """Every distinct legal placement of the colour to move, or of ``color`` as if it were to move.

        Each move is one object per (colour, placement): cheap to list, to compare and to ``push``. A
        skip is never needed: a colour that cannot place leaves the game. Empty once the game is over and
        for a colour out of the game. Another colour's moves are for evaluating (its mobility, its threats):
        only the colour to move may ``push``.
        """
        c = self._colour_in_game(color)
        if c < 0:
            return []
        table = _MOVES[c]
        ids = self._engine.legal_placements(c).tolist()
        return [table[pid] or _move(c, pid) for pid in ids]

    def legal_move_count(self, color: Color | None = None) -> int:
        """``len(legal_moves(color))`` without building the moves (a colour's mobility, compiled)."""
        c = self._colour_in_game(color)
        return 0 if c < 0 else self._engine.legal_move_count(c)

    def has_legal_move(self, color: Color | None = None) -> bool:
        """Whether ``color`` (default: the colour to move) can place any piece, whether or not it is still in the
        game (stops at the first one found)."""
        c = self._engine.color if color is None else int(color)
        return bool(F.has_move(F.TABLES, self._engine.b, self._engine.m, c, self._engine.first_cells))

    def corners(self, color: Color | None = None) -> list[tuple[int, int]]:
        """The free corners of ``color`` (default: the colour to move): the cells (x, y) its next piece may
        touch by a corner — free, diagonal to one of its pieces and not next to one. Before its first piece,
        the free cells of the season's first-move rule (2021: the board's corners; 2027: the border). Sorted by
        y, then x; empty once the game is over and for a colour out of the game."""
        c = self._colour_in_game(color)
        if c < 0:
            return []
        return [_XY[i] for i in self._engine.corners(c).tolist()]

    def _colour_in_game(self, color: Color | None) -> int:
        """The index of ``color`` (default: the colour to move), -1 if it cannot move (out, or the game is over)."""
        turn, valid, _, _, _, limit = self._engine.m[: F.M_HAND].tolist()  # one read: this runs at every leaf
        if color is None:
            c = turn & 3
        else:
            try:
                c = operator.index(color)
            except TypeError:
                c = -1
            if not 0 <= c < 4:
                raise ValueError(f"not a colour: {color!r} (Color.BLUE, YELLOW, RED or GREEN)")
        return c if valid >> c & 1 and turn < limit else -1

    def is_legal(self, move: Move) -> bool:
        """Whether ``move`` may be played now (exactly as the server judges it). Fields may be numpy
        integers or plain ints for the enums; ``ValueError`` for an object that is no move."""
        move = as_move(move, "is_legal got")
        return not self.is_over and self.to_model().validate(move) is None

    def push(self, move: Move) -> None:
        """Apply ``move``, which must be legal (from ``legal_moves()``; ``play`` checks it). ``pop()`` undoes it.

        Raises ``IllegalMoveError`` (a ``ValueError``) for a move of another colour or off the board; for speed
        nothing else is checked (an illegal placement gives a position no game can reach; memory-safe all the same:
        the engine's arrays hold every position's moves, tests/test_engine_fuzz.py).
        """
        move = as_move(move, "push got")
        color = self._engine.color
        if move.color != color:
            raise IllegalMoveError(MoveMistake.WRONG_COLOR, move, f"{move}: {COLORS[color].name} is to move")
        if isinstance(move, SkipMove):
            self._engine.push_skip()
            self._keys.append(self._keys[-1])
        else:
            pid = _pid(move)
            if pid is None:
                raise IllegalMoveError(MoveMistake.OUT_OF_BOUNDS, move, f"{move}: off the board")
            self._engine.push_placement(pid)
            self._keys.append(self._keys[-1] ^ Z_PLACE[color][pid])
        self._last_moves.append(move)

    def play(self, move: Move | str) -> None:
        """Check and apply ``move`` (or its text): ``IllegalMoveError`` (a ``ValueError``) naming the server's mistake
        (``.mistake``) if it is illegal."""
        move = parse_move(move) if isinstance(move, str) else as_move(move, "play got")
        if self.is_over:
            raise IllegalMoveError(None, move, f"{move}: the game is over")
        mistake = self.to_model().validate(move)
        if mistake is not None:
            raise IllegalMoveError(mistake, move, f"{move}: {mistake.name} ({mistake.english})")
        self.push(move)

    def pop(self) -> Move | None:
        """Undo the last ``push``/``play`` and return its move (``IndexError`` if there is none to undo)."""
        if len(self._last_moves) <= 1:
            raise IndexError("pop from a position without pushed moves")
        self._engine.pop()
        self._keys.pop()
        return self._last_moves.pop()

    # --- identity -----------------------------------------------------------------------------------

    def key(self) -> int:
        """A 64-bit Zobrist key of the position (for a transposition table), kept up to date by push/pop.

        Equal positions have equal keys whatever the order of their moves: the position is the board, the
        pieces left, the turn (so the colour to move), the colours still in the game, who placed the MONO
        last, the start piece and the season — not the last move. Different positions get different keys
        but for a chance of about 2^-64 per pair. The same in every process and run.
        """
        turn, valid, _, mono = self._engine.m[:4].tolist()  # F.M_TURN, M_VALID, M_MONO_DONE, M_MONO_FLAG
        return self._keys[-1] ^ Z_TURN[turn & 511] ^ Z_VALID[valid & 15] ^ Z_MONO[mono & 15]  # zobrist.position_key

    def __hash__(self) -> int:
        """``hash(key())``: positions hash by their key (a pushed move changes it: store ``key()`` or a ``copy()``)."""
        return hash(self.key())

    def __eq__(self, other: object) -> bool:
        """The same position (see ``key()``), whatever the moves that led to it."""
        if not isinstance(other, GameState):
            return NotImplemented
        a, b = self._engine, other._engine
        return (
            self._season == other._season
            and a.m.tobytes() == b.m.tobytes()
            and a.b[F.CELL : F.CELL + F.NCELLS].tobytes() == b.b[F.CELL : F.CELL + F.NCELLS].tobytes()
        )

    # --- points and pieces ------------------------------------------------------------------------

    def points(self, color: Color) -> int:
        """Points of ``color`` now: squares placed, +15 when all 21 pieces are placed, +5 more if the last was MONO."""
        return self._engine.points(int(color))

    def team_points(self, team: Team) -> int:
        """Points of ``team`` (its two colours)."""
        a, b = Team(team).colors
        return self._engine.points(int(a)) + self._engine.points(int(b))

    def winner(self) -> Team | None:
        """The team with more points (None on equal points); the game's winner once ``is_over``."""
        one, two = self.team_points(Team.ONE), self.team_points(Team.TWO)
        return None if one == two else Team.ONE if one > two else Team.TWO

    def outcome(self) -> Outcome:
        """The winner (None on a tie) and the points of team ONE and team TWO."""
        one, two = self.team_points(Team.ONE), self.team_points(Team.TWO)
        return Outcome(None if one == two else Team.ONE if one > two else Team.TWO, (one, two))

    def pieces_left(self, color: Color) -> tuple[Shape, ...]:
        """The shapes ``color`` has not placed yet."""
        hand = int(self._engine.m[F.M_HAND + int(color)])
        return tuple(s for s in SHAPES if hand >> s & 1)

    def board(self) -> np.ndarray:
        """The board as a new 20×20 ``int8`` array indexed ``[y, x]``: the colour's number, or -1 for empty."""
        owner = self._engine.b[F.CELL : F.CELL + F.NCELLS]
        return (owner.astype(np.int8) - 1).reshape(F.N, F.N)

    # --- conversions ------------------------------------------------------------------------------

    def to_model(self) -> ModelState:
        """This position as the project's reference ``model.state.GameState`` (for its rule checks and tools)."""
        fast = self._engine
        state = ModelState(self._start_piece, self._season)
        state.turn = fast.turn
        state.valid = fast.valid & ALL_COLORS
        state.boards = fast.boards()
        state.shapes = fast.shapes()
        state.mono_done = int(fast.m[F.M_MONO_DONE])
        state.mono_flag = int(fast.m[F.M_MONO_FLAG])
        state.last_move = self.last_move
        return state

    def __str__(self) -> str:
        """The board as text (B, Y, R, G; ``.`` empty), row 0 on top."""
        return "\n".join("".join(".BYRG"[v + 1] for v in row) for row in self.board())

    def __repr__(self) -> str:
        return (
            f"<GameState {self.season} turn={self.turn} round={self.round} to_move={self.color.name} "
            f"start={self._start_piece.name}>"
        )


class StopSignal(Protocol):
    """What ``while_waiting`` gets: ``is_set()`` is true once it should return (a ``threading.Event``)."""

    def is_set(self) -> bool:
        """True once ``while_waiting`` should return."""
        ...


class Player:
    """The base class of your player: subclass it and write ``calculate_move``.

    Shaped like the official ``socha`` client's ``IClientHandler``: ``on_update(state)`` gets the position
    before each of your moves (the default keeps it as ``self.game_state``), ``calculate_move()`` returns
    your move, ``on_game_over(result)`` gets the result. ``time_left()`` says how many seconds of the move's
    think time are left. Optional hooks: ``while_waiting(stop)`` (think on the opponent's time),
    ``on_game_joined(room_id)``, ``on_error(message)``. ``blokus bot --player FILE``, ``python FILE -h HOST
    -p PORT -r CODE`` (with :func:`blokus.player.run` at its end) and ``blokus arena py:FILE ...`` load your
    class.
    """

    game_state: GameState | None = None

    #: your team (set before your first move)
    team: Team | None = None

    _deadline: float | None = None  # time.monotonic() value, set by the loader before each calculate_move
    _stop: Callable[[], bool] | None = None  # the answer is no longer wanted

    def on_update(self, state: GameState) -> None:
        """Called with the current position before every ``calculate_move`` (your colour is to move).
        The default keeps it as ``self.game_state``."""
        self.game_state = state

    def calculate_move(self) -> Move:
        """Return a legal move for the colour to move in ``self.game_state`` before ``time_left()`` runs out.

        Any problem (an exception, an illegal move, a late answer) is replaced by a legal move by
        ``blokus bot`` (and counted in its summary); ``--strict`` and the arena judge it as the contest does.
        """
        raise NotImplementedError("write calculate_move in your Player subclass")

    def on_game_over(self, result: GameResult) -> None:  # noqa: B027 - optional hook
        """Called once with the result (``result.winner``, ``result.points(team)``, ``result.reason``)."""

    def while_waiting(self, stop: StopSignal) -> None:  # noqa: B027 - optional hook
        """Think on the opponent's time: called in a thread of its own after each of your moves, with
        ``self.game_state`` the position after it. Return soon after ``stop.is_set()`` becomes true (the next
        move is asked, or the game ends): check it often, e.g. once per node of your search. Keep what you
        learn (a transposition table, a tree) for your next ``calculate_move``. An exception is shown on
        stderr and costs no move; a hook that ignores the stop only slows your next move, which the bot
        answers in time anyway (a fallback move, counted)."""

    def on_game_joined(self, room_id: str) -> None:  # noqa: B027 - optional hook
        """Called once the game is joined, with the server's room id (before the first position)."""

    def on_error(self, message: str) -> None:  # noqa: B027 - optional hook
        """Called with the text of an error the server sent (its German text, as received)."""

    def answer(self, state: GameState, seconds: float = 1.6) -> Move:
        """What the bot does for each move, for your tests and experiments: ``on_update(state)``, then
        ``calculate_move()`` with ``seconds`` to think (``time_left()`` counts them down)."""
        self._deadline = time.monotonic() + seconds
        self._stop = None
        self.on_update(state)
        return self.calculate_move()

    def time_left(self) -> float:
        """Seconds left to think about this move (0 once the time is up or the answer is no longer wanted)."""
        if self._deadline is None:
            return float("inf")
        if self._stop is not None and self._stop():
            return 0.0
        return max(0.0, self._deadline - time.monotonic())
