"""The game state and the rules: legal moves, validation, applying and undoing moves, scoring.

Exactly as the official servers judge (docs/spec/rules.md §6–§12; docs/spec/season-2027.md §1 for 2027). The season
profile (``model.season``) travels with the state: it decides the first-move cells, the start-piece pool and the
turn limit. Boards are Python-int bitboards (one per colour, bit ``y * 20 + x``); move generation uses the
placement tables of ``model.placements``. ``GameState`` is the one position class (docs/position.md), the player
API's too (``blokus.player.GameState``): once numba has loaded, its move lists, counts, corners and push/pop run on
the compiled engine (``model.fast``) underneath, and this reference engine keeps judging moves.
"""

from __future__ import annotations

import operator
import random
import sys
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple, cast

import numpy as np

from blokus.model import placements as P
from blokus.model.moves import IllegalMoveError, Move, MoveMistake, SetMove, SkipMove, as_move, parse_move
from blokus.model.pieces import ALL_PLACED_BONUS, COLORS, MONO_LAST_BONUS, SHAPES, TOTAL_SQUARES, Color, Shape, Team
from blokus.model.season import DEFAULT_SEASON, Season, season_named
from blokus.model.zobrist import Z_MONO, Z_PLACE, Z_TURN, Z_VALID, board_key

if TYPE_CHECKING:
    from blokus.model.fast import FastState

ALL_SHAPES = (1 << len(SHAPES)) - 1  # bit s set: shape s not yet placed
ALL_COLORS = 0b1111
_SIZES = [s.size for s in SHAPES]
# the squares of the shapes left, by seven bits of a hand at a time (``points``: three look-ups)
_LEFT = [[sum(_SIZES[7 * part + s] for s in range(7) if bits >> s & 1) for bits in range(128)] for part in range(3)]
_M_HAND, _CELL = 6, 4 * ((P.NCELLS + 1 + 7) // 8 * 8) + 4 * P.NCELLS  # model.fast.M_HAND, CELL (a test compares)


class Outcome(NamedTuple):
    winner: Team | None  # None on a draw
    points: tuple[int, int]  # team ONE, team TWO


# What ``pop`` restores of the position's own fields (the board's undo is the engines'): the turn, the colours in the
# game, the last move, mono_done, mono_flag and the key's board part. A plain tuple: a NamedTuple's constructor is a
# Python call, a tenth of a push.
_Undo = tuple[int, int, "Move | None", int, int, "int | None"]


_FAST: ModuleType | None = None  # blokus.model.fast once it has been imported: numba has loaded


def _compiled_engine() -> ModuleType | None:
    """The compiled engine's module if numba has loaded (someone imported ``model.fast``), else None."""
    global _FAST
    if _FAST is None:
        module = sys.modules.get("blokus.model.fast")
        if module is not None and getattr(module, "LOADED", False):
            _FAST = module
    return _FAST


class GameState:
    """A position: the one class (docs/position.md), for the model, the AI, the TUI and a team's player.

    Mutable for speed (``push``/``pop``); ``copy()`` for an independent one. Two engines are underneath, both
    private: the reference engine (Python-int bitboards, ``boards``/``shapes``: exact, what checks moves) and,
    once numba has loaded (``model.fast`` imported), the compiled engine (``model.fast.FastState``), built at the
    first legal-move query and then pushed and popped in step; the moves' list, counts, corners and push/pop use
    it. The reference's board then follows lazily: the placements pushed since are applied when it is read.
    """

    __slots__ = (
        "season",
        "start_piece",
        "last_move",
        "_turn",
        "_valid",
        "_mono_done",
        "_mono_flag",
        "_boards",
        "_shapes",
        "_lag",
        "_ref_undo",
        "_stack",
        "_fast",
        "_fast_base",
        "_board_key",
        "_reference_only",
    )

    def __init__(self, start_piece: Shape, season: Season = DEFAULT_SEASON) -> None:
        self.season = season
        self.start_piece = Shape(start_piece)
        self.last_move: Move | None = None
        self._turn = 0
        self._valid = ALL_COLORS  # bit c: colour c still in the game (``validColors``)
        self._mono_done = 0  # bit c: colour c has placed all pieces (``lastMoveMono`` has an entry)
        self._mono_flag = 0  # bit c: ... and its last piece was the MONO
        self._boards = [0, 0, 0, 0]  # the reference's bitboard per colour
        self._shapes = [ALL_SHAPES] * 4  # ... and undeployed shapes per colour, bit per shape
        self._lag: list[tuple[int, int]] = []  # (colour, placement or -1) pushed on the compiled engine only
        self._ref_undo: list[tuple[tuple[int, ...], tuple[int, ...]]] = []  # the reference's boards and shapes
        self._stack: list[_Undo] = []
        self._fast: FastState | None = None  # the compiled engine, in step (None: not built)
        self._fast_base = 0  # the pushes already made when it was built (a pop below them drops it)
        self._board_key: int | None = None  # the key's board part, kept by push/pop once asked for
        self._reference_only = False  # never build the compiled engine (``on_reference``: the engines' tests)

    # --- construction -----------------------------------------------------------------------------

    @classmethod
    def new(
        cls,
        season: Season | int | str = DEFAULT_SEASON,
        start_piece: Shape | str | None = None,
        seed: int | None = None,
        *,
        rng: random.Random | None = None,
    ) -> GameState:
        """A new game of ``season`` (a ``Season``, or its year or name). Without ``start_piece`` (a ``Shape`` or its
        name) one is drawn from the season's pool as the server does: reproducibly with ``seed`` or ``rng``."""
        profile = season if isinstance(season, Season) else season_named(season)
        if start_piece is None:
            draw = rng if rng is not None else random.Random(seed) if seed is not None else random
            start_piece = Shape[draw.choice(profile.start_pieces)]
        elif isinstance(start_piece, str):
            start_piece = Shape.parse(start_piece)
        return cls(start_piece, profile)

    @classmethod
    def from_parts(
        cls,
        *,
        start_piece: Shape,
        turn: int,
        cells: Iterable[tuple[int, int, Color]],
        undeployed: Mapping[Color, Iterable[Shape]],
        valid_colors: Iterable[Color],
        last_move: Move | None = None,
        last_mono: Mapping[Color, bool] | None = None,
        season: Season = DEFAULT_SEASON,
    ) -> GameState:
        """A position from its fields as the server sends them (the wire code, state files)."""
        state = cls(start_piece, season)
        state._turn = int(turn)
        for x, y, color in cells:
            if not (0 <= x < P.N and 0 <= y < P.N):
                raise ValueError(f"field ({x},{y}) is outside the board")
            state._boards[color] |= P.bit(x, y)
        for color in COLORS:
            state._shapes[color] = sum(1 << s for s in set(undeployed.get(color, ())))
        state._valid = sum(1 << c for c in set(valid_colors))
        state.last_move = last_move
        for color, was_mono in (last_mono or {}).items():
            state._mono_done |= 1 << color
            if was_mono:
                state._mono_flag |= 1 << color
        return state

    def copy(self) -> GameState:
        """An independent position equal to this one (its undo history starts empty)."""
        other = GameState.__new__(GameState)
        other.season = self.season
        other.start_piece = self.start_piece
        other.last_move = self.last_move
        other._turn = self._turn
        other._valid = self._valid
        other._mono_done = self._mono_done
        other._mono_flag = self._mono_flag
        other._boards = self._boards[:]
        other._shapes = self._shapes[:]
        other._lag = self._lag[:]
        other._ref_undo = []
        other._stack = []
        fast = self._fast
        other._fast = None if fast is None else fast.copy()
        other._fast_base = 0
        other._board_key = self._board_key
        other._reference_only = self._reference_only
        return other

    def to_model(self) -> GameState:
        """A copy (``copy()``): the player API's façade of old gave the model's position this way; it is one class
        now."""
        return self.copy()

    def compiled(self) -> FastState:
        """This position's compiled engine (``model.fast``: the search's arrays), in step with it (numba is loaded
        at the first call): read it, or ``copy()`` it to write; the position pushes and pops it."""
        import blokus.model.fast  # noqa: F401  (loads numba: from now on every position may use it)

        return cast("FastState", self._engine())

    # --- the engines underneath ---------------------------------------------------------------------

    def _engine(self) -> FastState | None:
        """The compiled engine in step with this position (built now if need be), None before numba has loaded."""
        fast = self._fast
        if fast is None:
            module = None if self._reference_only else _compiled_engine()
            if module is None:
                return None
            self._sync()
            fast = self._fast = module.FastState.from_state(self)
            self._fast_base = len(self._stack)
        return fast

    def _sync(self) -> None:
        """Bring the reference's board up to date: apply the placements pushed on the compiled engine alone."""
        lag = self._lag
        if not lag:
            return
        boards, shapes, undo = self._boards, self._shapes, self._ref_undo
        masks, shape_of = P.MASKS, P.P_SHAPE_LIST
        for color, pid in lag:
            undo.append((tuple(boards), tuple(shapes)))
            if pid >= 0:
                boards[color] |= masks[pid]
                shapes[color] &= ~(1 << shape_of[pid])
        lag.clear()

    def _edited(self) -> None:
        """A field was set by hand: the reference holds the position; the compiled engine is built anew."""
        self._sync()
        self._fast = None
        self._board_key = None

    def _hand(self, color: int) -> int:
        """The shapes ``color`` has not placed (bits)."""
        fast = self._fast
        if fast is not None:
            return int(fast.m[_M_HAND + color])
        self._sync()
        return self._shapes[color]

    # --- the fields ---------------------------------------------------------------------------------
    # Read freely; set by assignment (a test's hand-made position): an edit in place of ``boards`` or ``shapes``
    # is seen only before the first query of the position.

    @property
    def turn(self) -> int:
        """The turn number (0 at the start; +1 per move, and +1 for each colour that leaves the game)."""
        return self._turn

    @turn.setter
    def turn(self, value: int) -> None:
        self._edited()
        self._turn = int(value)

    @property
    def valid(self) -> int:
        """The colours still in the game, bit per colour (``validColors``)."""
        return self._valid

    @valid.setter
    def valid(self, value: int) -> None:
        self._edited()
        self._valid = int(value)

    @property
    def mono_done(self) -> int:
        """Bit c: colour c has placed all its pieces."""
        return self._mono_done

    @mono_done.setter
    def mono_done(self, value: int) -> None:
        self._edited()
        self._mono_done = int(value)

    @property
    def mono_flag(self) -> int:
        """Bit c: colour c has placed all its pieces, the MONO last."""
        return self._mono_flag

    @mono_flag.setter
    def mono_flag(self, value: int) -> None:
        self._edited()
        self._mono_flag = int(value)

    @property
    def boards(self) -> list[int]:
        """The bitboard per colour (bit ``y * 20 + x``)."""
        self._sync()
        return self._boards

    @boards.setter
    def boards(self, value: list[int]) -> None:
        self._edited()
        self._boards = list(value)

    @property
    def shapes(self) -> list[int]:
        """The shapes each colour has not placed, bit per shape."""
        self._sync()
        return self._shapes

    @shapes.setter
    def shapes(self, value: list[int]) -> None:
        self._edited()
        self._shapes = list(value)

    # --- derived values ---------------------------------------------------------------------------

    @property
    def round(self) -> int:
        """The round: 1 + turn // 4."""
        return 1 + self._turn // 4

    @property
    def color(self) -> Color:
        """The colour to move (BLUE, YELLOW, RED, GREEN in turn)."""
        return COLORS[self._turn & 3]

    @property
    def team(self) -> Team:
        """The team to move: ``Team.ONE`` (BLUE and RED) or ``Team.TWO`` (YELLOW and GREEN)."""
        return COLORS[self._turn & 3].team

    @property
    def valid_colors(self) -> tuple[Color, ...]:
        """The colours still in the game."""
        return tuple(c for c in COLORS if self._valid >> c & 1)

    def is_valid(self, color: Color) -> bool:
        """Whether ``color`` is still in the game."""
        return bool(self._valid >> color & 1)

    @property
    def is_over(self) -> bool:
        """Whether the game is over (no colour can place, or the turn limit is reached)."""
        return self._valid == 0 or self._turn >= self.season.turn_limit

    def pieces_left(self, color: Color) -> tuple[Shape, ...]:
        """The shapes ``color`` has not placed yet."""
        bits = self._hand(color)
        return tuple(s for s in SHAPES if bits >> s & 1)

    def has_shape(self, color: Color, shape: Shape) -> bool:
        """Whether ``color`` has not placed ``shape`` yet."""
        return bool(self._hand(color) >> shape & 1)

    def is_first_move(self, color: Color | None = None) -> bool:
        """True while the colour still holds all 21 shapes (``GameRuleLogic.isFirstMove``)."""
        return self._hand(self._turn & 3 if color is None else color) == ALL_SHAPES

    @property
    def last_mono(self) -> dict[Color, bool]:
        """Per colour that has placed all its pieces: whether the MONO was its last (``lastMoveMono``)."""
        return {c: bool(self._mono_flag >> c & 1) for c in COLORS if self._mono_done >> c & 1}

    @property
    def occupied(self) -> int:
        """The occupied cells (a bitboard)."""
        b = self.boards
        return b[0] | b[1] | b[2] | b[3]

    def color_at(self, x: int, y: int) -> Color | None:
        """The colour on field (x, y), None if it is empty."""
        m = P.bit(x, y)
        for color in COLORS:
            if self.boards[color] & m:
                return color
        return None

    def cells(self) -> list[tuple[int, int, Color]]:
        """Occupied fields row by row (y outer, x inner), as the server writes the board."""
        out = []
        occ = self.occupied
        while occ:
            low = occ & -occ
            i = low.bit_length() - 1
            out.append((i % P.N, i // P.N, cast(Color, self.color_at(i % P.N, i // P.N))))  # occupied: a colour
            occ ^= low
        return out

    def board(self) -> np.ndarray:
        """The board as a new 20×20 ``int8`` array indexed ``[y, x]``: the colour's number, or -1 for empty."""
        fast = self._fast
        if fast is not None:
            return (fast.b[_CELL : _CELL + P.NCELLS].astype(np.int8) - 1).reshape(P.N, P.N)
        arr = np.full(P.NCELLS, -1, dtype=np.int8)
        for color in COLORS:
            arr[
                np.unpackbits(P.to_words(self._boards[color]).view(np.uint8), bitorder="little")[: P.NCELLS].astype(
                    bool
                )
            ] = color
        return arr.reshape(P.N, P.N)

    # --- scoring (docs/spec/rules.md §11–§12) ---------------------------------------------------------------

    def points(self, color: Color) -> int:
        """Points of ``color`` now: squares placed, +15 when all 21 pieces are placed, +5 more if the last was
        the MONO."""
        if not 0 <= color < 4:
            raise ValueError(f"not a colour: {color!r} (Color.BLUE, YELLOW, RED or GREEN)")
        bits = self._hand(color)
        if bits == 0:
            return TOTAL_SQUARES + ALL_PLACED_BONUS + (MONO_LAST_BONUS if self._mono_flag >> color & 1 else 0)
        return TOTAL_SQUARES - _LEFT[0][bits & 127] - _LEFT[1][bits >> 7 & 127] - _LEFT[2][bits >> 14]

    def team_points(self, team: Team) -> int:
        """Points of ``team`` (its two colours)."""
        a, b = Team(team).colors
        return self.points(a) + self.points(b)

    def winner(self) -> Team | None:
        """The team with more points (None on equal points); the game's winner once ``is_over``."""
        return self.outcome().winner

    def outcome(self) -> Outcome:
        """The winner (None on a tie) and the points of team ONE and team TWO."""
        one, two = self.team_points(Team.ONE), self.team_points(Team.TWO)
        winner = None if one == two else (Team.ONE if one > two else Team.TWO)
        return Outcome(winner, (one, two))

    # --- move generation --------------------------------------------------------------------------

    def _anchors_and_forbidden(self, color: int) -> tuple[int, int]:
        """Cells a new piece must cover one of, and cells it must not cover (the reference, in step)."""
        boards = self._boards
        own = boards[color]
        occ = boards[0] | boards[1] | boards[2] | boards[3]
        edge = P.edge_neighbours(own)  # none before a colour's first piece, except in a hand-made state file
        if self._shapes[color] == ALL_SHAPES:
            return self.season.first_move_cells & ~occ, occ | edge
        return P.diagonal_neighbours(own) & ~edge & ~occ, occ | edge

    def _available_shapes(self, color: int) -> int:
        if self._shapes[color] == ALL_SHAPES:
            return 1 << self.start_piece
        return self._shapes[color]

    def _colour(self, color: Color | int | None) -> int:
        """The index of ``color`` (default: the colour to move); ``ValueError`` for anything but a colour."""
        if color is None:
            return self._turn & 3
        try:
            c = operator.index(color)
        except TypeError:
            c = -1
        if not 0 <= c < 4:
            raise ValueError(f"not a colour: {color!r} (Color.BLUE, YELLOW, RED or GREEN)")
        return c

    def legal_placements(self, color: Color | int | None = None) -> np.ndarray:
        """Sorted ids (``model.placements``) of every distinct legal placement of ``color``.

        The colour defaults to the colour to move; for another colour the answer is "what it could
        place if it were its turn" (used by evaluation and the UI).
        """
        c = self._colour(color)
        fast = self._engine()
        if fast is not None:
            return fast.legal_placements(c)
        return self._reference_placements(c)

    def _reference_placements(self, color: int) -> np.ndarray:
        anchors, forbidden = self._anchors_and_forbidden(color)
        avail = self._available_shapes(color)
        if not anchors or not avail:
            return np.empty(0, dtype=np.int32)
        parts = []
        while anchors:
            low = anchors & -anchors
            parts.append(P.by_cell_and_shapes(low.bit_length() - 1, avail))
            anchors ^= low
        cand = np.concatenate(parts) if len(parts) > 1 else parts[0]
        blocked = P.forbidden_array(forbidden)[P.P_CELLS[cand]].any(axis=1)
        return np.unique(cand[~blocked])

    def _in_game(self, color: Color | int | None) -> int:
        """The index of ``color`` (default: the colour to move), -1 if it cannot move (out, or the game is over)."""
        c = self._colour(color)
        return c if self._valid >> c & 1 and self._turn < self.season.turn_limit else -1

    def legal_moves(self, color: Color | None = None) -> list[SetMove]:
        """Every distinct legal placement of the colour to move, or of ``color`` as if it were to move, in placement
        order: one SetMove object per colour and placement (cheap to list, compare and push). A skip is never needed:
        a colour that cannot place leaves the game. Empty once the game is over and for a colour out of the game."""
        c = self._in_game(color)
        if c < 0:
            return []
        fast = self._engine()
        ids = fast.legal_placements(c) if fast is not None else self._reference_placements(c)
        table = _MOVES[c]
        return [table[pid] or move_of_placement(c, pid) for pid in ids.tolist()]

    def legal_move_count(self, color: Color | None = None) -> int:
        """``len(legal_moves(color))`` without building the moves."""
        c = self._in_game(color)
        if c < 0:
            return 0
        fast = self._engine()
        return fast.legal_move_count(c) if fast is not None else len(self._reference_placements(c))

    def has_legal_move(self, color: Color | None = None) -> bool:
        """Whether ``color`` (default: the colour to move) can place any piece, whether or not it is still in the
        game (stops at the first one found)."""
        c = self._colour(color)
        fast = self._engine()
        if fast is not None:
            module = cast(ModuleType, _FAST)
            return bool(module.has_move(module.TABLES, fast.b, fast.m, c, fast.first_cells))
        return self._reference_has_move(c)

    def _reference_has_move(self, color: int) -> bool:
        anchors, forbidden = self._anchors_and_forbidden(color)
        avail = self._available_shapes(color)
        if not avail:
            return False
        masks, shape_of = P.MASKS, P.P_SHAPE_LIST
        while anchors:
            low = anchors & -anchors
            for pid in P.BY_CELL[low.bit_length() - 1]:
                if avail >> shape_of[pid] & 1 and not masks[pid] & forbidden:
                    return True
            anchors ^= low
        return False

    def corners(self, color: Color | None = None) -> list[tuple[int, int]]:
        """The free corners (x, y) of ``color`` (default: the colour to move), where its next piece may touch it by
        a corner: free, diagonal to one of its pieces and not next to one; before its first piece the free cells of
        the season's first-move rule. Sorted by y, then x; none for a colour without pieces left or out of the
        game, and once the game is over."""
        c = self._in_game(color)
        if c < 0:
            return []
        fast = self._engine()
        if fast is not None:
            return [_XY[i] for i in fast.corners(c).tolist()]
        if not self._shapes[c]:
            return []
        anchors, _ = self._anchors_and_forbidden(c)
        out = []
        while anchors:
            low = anchors & -anchors
            out.append(_XY[low.bit_length() - 1])
            anchors ^= low
        return out

    def can_skip(self) -> bool:
        """A SkipMove of the colour to move is legal (always, except on its first move)."""
        return not self.is_over and not self.is_first_move()

    # --- validation (docs/spec/rules.md §6.4) ---------------------------------------------------------------

    def validate(self, move: Move) -> MoveMistake | None:
        """The mistake the official server would report for ``move``, or None if it is legal (the reference
        engine judges)."""
        self._sync()
        color = self.color
        if move.color != color:
            return MoveMistake.WRONG_COLOR
        first = self.is_first_move(color)
        if isinstance(move, SkipMove):
            return MoveMistake.SKIP_FIRST_TURN if first else None
        if first:
            if move.shape != self.start_piece:
                return MoveMistake.WRONG_SHAPE
        elif not self._shapes[color] >> move.shape & 1:
            return MoveMistake.DUPLICATE_SHAPE
        own = self._boards[color]
        occ = self.occupied
        own_edge = P.edge_neighbours(own)
        covered = 0
        for x, y in move.sorted_cells():
            if not (0 <= x < P.N and 0 <= y < P.N):
                return MoveMistake.OUT_OF_BOUNDS
            m = P.bit(x, y)
            if occ & m:
                return MoveMistake.OBSTRUCTED
            if own_edge & m:
                return MoveMistake.TOUCHES_SAME_COLOR
            covered |= m
        if first:
            season = self.season
            return None if covered & season.first_move_cells else season.first_move_mistake
        return None if covered & P.diagonal_neighbours(own) else MoveMistake.NO_SHARED_CORNER

    def is_legal(self, move: Move) -> bool:
        """Whether ``move`` may be played now (exactly as the server judges it). Fields may be numpy integers or
        plain ints for the enums; ``ValueError`` for an object that is no move."""
        move = as_move(move, "is_legal got")
        return not self.is_over and self.validate(move) is None

    def refusal_text(self, move: Move, mistake: MoveMistake | None = None) -> str:
        """Why ``move`` is refused in this position, the rule and the fields it is about, in English: the one
        text the arena, the bot, the server's log and the TUI show (e.g. "the piece touches a piece of its
        own colour along an edge at (18,19)"). ``mistake``: as found when it was refused (default: now)."""
        mistake = mistake if mistake is not None else self.validate(move)
        if mistake is None:
            return "the move is legal"
        fields = self.refused_fields(move, mistake) if isinstance(move, SetMove) else []
        shown = " ".join(f"({x},{y})" for x, y in fields[:5])
        return mistake.english + (f" at {shown}" if shown else "")

    def refused_fields(self, move: SetMove, mistake: MoveMistake) -> list[tuple[int, int]]:
        """The fields of ``move`` that ``mistake`` is about (off the board, taken, touching its own colour
        along an edge), in reading order; empty where no field is to blame."""
        cells = sorted(move.cells, key=lambda c: (c[1], c[0]))
        on_board = [(x, y) for x, y in cells if 0 <= x < P.N and 0 <= y < P.N]
        if mistake is MoveMistake.OUT_OF_BOUNDS:
            return [c for c in cells if c not in on_board]
        if mistake is MoveMistake.OBSTRUCTED:
            return [c for c in on_board if self.occupied & P.bit(*c)]
        if mistake is MoveMistake.TOUCHES_SAME_COLOR:
            edge = P.edge_neighbours(self.boards[move.color])
            return [c for c in on_board if edge & P.bit(*c)]
        return []

    # --- applying moves (docs/spec/rules.md §8–§10) ---------------------------------------------------------

    def play(self, move: Move | str) -> None:
        """Validate and apply a move (or its text, ``parse_move``); raises ``IllegalMoveError`` naming the official
        mistake (``ValueError`` for a text that is no move)."""
        move = parse_move(move) if isinstance(move, str) else as_move(move, "play got")
        if self.is_over:
            raise IllegalMoveError(None, move, "the game is over")
        mistake = self.validate(move)
        if mistake is not None:
            raise IllegalMoveError(mistake, move, self.season.violation_text(mistake, move))
        self._push(move.color, -1 if isinstance(move, SkipMove) else cast(int, placement_of(move)), move)

    def push(self, move: Move) -> None:
        """Apply ``move``, which must be legal (from ``legal_moves()``; ``play`` checks it); ``pop()`` undoes it.

        Raises ``IllegalMoveError`` (a ``ValueError``) for a move of another colour or off the board; for speed
        nothing else is checked (an illegal placement gives a position no game can reach; memory-safe all the same:
        the compiled engine's arrays hold every position's moves, tests/test_engine_fuzz.py).
        """
        move = as_move(move, "push got")
        color = self._turn & 3
        if move.color != color:
            raise IllegalMoveError(MoveMistake.WRONG_COLOR, move, f"{move}: {COLORS[color].name} is to move")
        if isinstance(move, SkipMove):
            self._push(color, -1, move)
            return
        pid = placement_of(move)
        if pid is None:
            raise IllegalMoveError(MoveMistake.OUT_OF_BOUNDS, move, f"{move}: off the board")
        self._push(color, pid, move)

    def push_placement(self, pid: int) -> None:
        """Apply legal placement ``pid`` for the colour to move (the search's fast path)."""
        color = self._turn & 3
        self._push(color, pid, move_of_placement(COLORS[color], pid))

    def _push(self, color: int, pid: int, move: Move) -> None:
        """Placement ``pid`` (-1: a skip) of ``color``, the colour to move: on the compiled engine if it is built
        (the reference's board follows when read), else on the reference."""
        key = self._board_key
        self._stack.append((self._turn, self._valid, self.last_move, self._mono_done, self._mono_flag, key))
        if key is not None and pid >= 0:
            self._board_key = key ^ Z_PLACE[color][pid]
        fast = self._fast
        if fast is not None:
            fast.push_placement(pid)
            self._turn, self._valid, self._mono_done, self._mono_flag = fast.m[:4].tolist()  # M_TURN ... M_MONO_FLAG
            self._lag.append((color, pid))
        else:
            self._ref_undo.append((tuple(self._boards), tuple(self._shapes)))
            if pid >= 0:
                self._place(color, P.P_SHAPE_LIST[pid], P.MASKS[pid])
            self._advance_and_remove()
        self.last_move = move

    def _place(self, color: int, shape: int, mask: int) -> None:
        self._boards[color] |= mask
        self._shapes[color] &= ~(1 << shape)
        if self._shapes[color] == 0:
            self._mono_done |= 1 << color
            if shape == Shape.MONO:
                self._mono_flag |= 1 << color

    def _advance(self) -> None:
        if not self._valid:
            return
        self._turn += 1
        while not self._valid >> (self._turn & 3) & 1:
            self._turn += 1

    def _advance_and_remove(self) -> None:
        self._advance()
        # Remove colours that cannot place a piece; removals consume turn numbers (docs/spec/rules.md §9).
        while self._valid and not self._reference_has_move(self._turn & 3):
            self._valid &= ~(1 << (self._turn & 3))
            self._advance()

    def pop(self) -> Move | None:
        """Undo the last ``push``/``play`` and return its move (``IndexError`` if there is none to undo)."""
        if not self._stack:
            raise IndexError("pop from a position without pushed moves")
        move = self.last_move
        u = self._stack.pop()
        self._turn, self._valid, self.last_move, self._mono_done, self._mono_flag, self._board_key = u
        if self._lag:
            self._lag.pop()
        else:
            boards, shapes = self._ref_undo.pop()
            self._boards[:] = boards
            self._shapes[:] = shapes
        fast = self._fast
        if fast is not None:
            if len(self._stack) >= self._fast_base:
                fast.pop()
            else:  # built after this push: built anew when next asked
                self._fast = None
        return move

    # --- comparison -------------------------------------------------------------------------------

    def key(self) -> int:
        """The 64-bit Zobrist key of the position (``model.zobrist``), kept up to date by push/pop: the board, the
        pieces left, the turn, the colours in the game, who placed the MONO last, the start piece and the season;
        not the last move. Equal positions have equal keys whatever the order of their moves (different ones
        share one with a chance of about 2⁻⁶⁴ a pair); the same in every process and run."""
        board = self._board_key
        if board is None:
            self._sync()
            board = self._board_key = board_key(self.season, self.start_piece, self._boards, self._shapes)
        return board ^ Z_TURN[self._turn & 511] ^ Z_VALID[self._valid & 15] ^ Z_MONO[self._mono_flag & 15]

    def __eq__(self, other: object) -> bool:
        """The same position: exactly the fields ``key()`` covers (so equal positions have equal keys), whatever the
        moves that led to it."""
        if not isinstance(other, GameState):
            return NotImplemented
        self._sync()
        other._sync()
        return (
            self._turn == other._turn
            and self._valid == other._valid
            and self._boards == other._boards
            and self._shapes == other._shapes
            and self._mono_flag == other._mono_flag
            and self.start_piece == other.start_piece
            and self.season == other.season
        )

    def __hash__(self) -> int:
        """``hash(key())`` (a pushed move changes it: store ``key()`` or a ``copy()``)."""
        return hash(self.key())

    def __getstate__(self) -> tuple[None, dict[str, object]]:
        """Pickled (to a worker process) as the reference holds it: the compiled engine is built there if asked."""
        self._sync()
        fields = {name: getattr(self, name) for name in GameState.__slots__}
        return None, {**fields, "_fast": None, "_fast_base": 0}

    def __repr__(self) -> str:
        return (
            f"<GameState {self.season.name} turn={self._turn} round={self.round} to_move={self.color.name} "
            f"valid={[c.name for c in self.valid_colors]} start={self.start_piece.name}>"
        )

    def render(self) -> str:
        """A plain-text board (B/Y/R/G, '.' empty), row 0 at the top; handy in tests and logs."""
        arr = self.board()
        return "\n".join("".join(".BYRG"[v + 1] for v in row) for row in arr)

    def __str__(self) -> str:
        """The board as text (B, Y, R, G; ``.`` empty), row 0 on top (``render()``)."""
        return self.render()


_XY: list[tuple[int, int]] = [(i % P.N, i // P.N) for i in range(P.NCELLS)]  # (x, y) of every cell index


def on_reference(state: GameState) -> GameState:
    """``state``, from now on on the reference engine alone, even once numba has loaded (the engines' equality
    tests play one position on each engine); its copies too."""
    state._edited()
    state._reference_only = True
    return state


# The SetMove of (colour, placement id), built once, and the placement id of each such move: the legal move
# list and push() are look-ups, not geometry.
_MOVES: list[list[SetMove | None]] = [[None] * P.COUNT for _ in COLORS]
_PID: dict[SetMove, int] = {}


def move_of_placement(color: Color | int, pid: int) -> SetMove:
    """The SetMove (canonical rotation/flip pair) of placement ``pid`` in ``color``."""
    move = _MOVES[color][pid]
    if move is None:
        o = P.ORIENTATIONS[P.P_ORIENT[pid]]
        move = SetMove(COLORS[color], o.shape, o.rotation, o.flipped, int(P.P_X[pid]), int(P.P_Y[pid]))
        _MOVES[color][pid] = move
        _PID[move] = pid
    return move


def placement_of(move: SetMove) -> int | None:
    """The placement id of a SetMove (any rotation/flip pair that gives the same cells), None if some cell is off
    the board."""
    pid = _PID.get(move)
    if pid is not None:
        return pid
    rel = tuple(sorted(((x - move.x, y - move.y) for x, y in move.cells), key=lambda c: (c[1], c[0])))
    min_x = min(x for x, _ in move.cells)
    min_y = min(y for _, y in move.cells)
    return (
        P.placement_id(P.orientation_index(move.shape, rel), min_x, min_y)
        if (min_x, min_y) == (move.x, move.y)
        else None
    )
