"""The game state and the rules: legal moves, validation, applying and undoing moves, scoring.

Exactly as the official servers judge (docs/spec/rules.md §6–§12; docs/spec/season-2027.md §1 for 2027). The season
profile (``model.season``) travels with the state: it decides the first-move cells, the start-piece pool and the
turn limit. Boards are Python-int bitboards (one per colour, bit ``y * 20 + x``); move generation uses the
placement tables of ``model.placements``. Its vocabulary is the player API's ``GameState``'s (docs/position.md): the
same names, the same Zobrist key (``model.zobrist``); ``compiled()`` gives the position on the compiled engine.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, NamedTuple, cast

import numpy as np

from blokus.model import placements as P
from blokus.model.moves import IllegalMoveError, Move, MoveMistake, SetMove, SkipMove, parse_move
from blokus.model.pieces import ALL_PLACED_BONUS, COLORS, MONO_LAST_BONUS, SHAPES, TOTAL_SQUARES, Color, Shape, Team
from blokus.model.season import DEFAULT_SEASON, Season, season_named
from blokus.model.zobrist import board_key, position_key

if TYPE_CHECKING:
    from blokus.model.fast import FastState

ALL_SHAPES = (1 << len(SHAPES)) - 1  # bit s set: shape s not yet placed
ALL_COLORS = 0b1111
_SIZES = [s.size for s in SHAPES]


class Outcome(NamedTuple):
    winner: Team | None  # None on a draw
    points: tuple[int, int]  # team ONE, team TWO


class _Undo(NamedTuple):
    turn: int
    valid: int
    last_move: Move | None
    boards: tuple[int, ...]
    shapes: tuple[int, ...]
    mono_done: int
    mono_flag: int


class GameState:
    """A position. Mutable for speed (``push``/``pop``); ``copy()`` for an independent one."""

    __slots__ = (
        "season",
        "start_piece",
        "turn",
        "valid",
        "last_move",
        "boards",
        "shapes",
        "mono_done",
        "mono_flag",
        "_stack",
    )

    def __init__(self, start_piece: Shape, season: Season = DEFAULT_SEASON) -> None:
        self.season = season
        self.start_piece = Shape(start_piece)
        self.turn = 0
        self.valid = ALL_COLORS  # bit c: colour c still in the game (``validColors``)
        self.last_move: Move | None = None
        self.boards = [0, 0, 0, 0]  # bitboard per colour
        self.shapes = [ALL_SHAPES] * 4  # undeployed shapes per colour, bit per shape
        self.mono_done = 0  # bit c: colour c has placed all pieces (``lastMoveMono`` has an entry)
        self.mono_flag = 0  # bit c: ... and its last piece was the MONO
        self._stack: list[_Undo] = []

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
        state = cls(start_piece, season)
        state.turn = int(turn)
        for x, y, color in cells:
            if not (0 <= x < P.N and 0 <= y < P.N):
                raise ValueError(f"field ({x},{y}) is outside the board")
            state.boards[color] |= P.bit(x, y)
        for color in COLORS:
            state.shapes[color] = sum(1 << s for s in set(undeployed.get(color, ())))
        state.valid = sum(1 << c for c in set(valid_colors))
        state.last_move = last_move
        for color, was_mono in (last_mono or {}).items():
            state.mono_done |= 1 << color
            if was_mono:
                state.mono_flag |= 1 << color
        return state

    def copy(self) -> GameState:
        other = GameState.__new__(GameState)
        other.season = self.season
        other.start_piece = self.start_piece
        other.turn = self.turn
        other.valid = self.valid
        other.last_move = self.last_move
        other.boards = self.boards[:]
        other.shapes = self.shapes[:]
        other.mono_done = self.mono_done
        other.mono_flag = self.mono_flag
        other._stack = []
        return other

    def compiled(self) -> FastState:
        """This position on the compiled engine (``model.fast``: the search's arrays, legal moves and push/pop in
        numba), the engine underneath the player API's ``GameState`` and the AI's searches; this class is the
        reference engine that serves before numba has loaded (numba is imported at the first call)."""
        from blokus.model.fast import FastState

        return FastState.from_state(self)

    # --- derived values ---------------------------------------------------------------------------

    @property
    def round(self) -> int:
        return 1 + self.turn // 4

    @property
    def color(self) -> Color:
        return COLORS[self.turn & 3]

    @property
    def team(self) -> Team:
        return self.color.team

    @property
    def valid_colors(self) -> tuple[Color, ...]:
        return tuple(c for c in COLORS if self.valid >> c & 1)

    def is_valid(self, color: Color) -> bool:
        return bool(self.valid >> color & 1)

    @property
    def is_over(self) -> bool:
        return self.valid == 0 or self.turn >= self.season.turn_limit

    def pieces_left(self, color: Color) -> tuple[Shape, ...]:
        bits = self.shapes[color]
        return tuple(s for s in SHAPES if bits >> s & 1)

    def has_shape(self, color: Color, shape: Shape) -> bool:
        return bool(self.shapes[color] >> shape & 1)

    def is_first_move(self, color: Color | None = None) -> bool:
        """True while the colour still holds all 21 shapes (``GameRuleLogic.isFirstMove``)."""
        return self.shapes[self.color if color is None else color] == ALL_SHAPES

    @property
    def last_mono(self) -> dict[Color, bool]:
        return {c: bool(self.mono_flag >> c & 1) for c in COLORS if self.mono_done >> c & 1}

    @property
    def occupied(self) -> int:
        b = self.boards
        return b[0] | b[1] | b[2] | b[3]

    def color_at(self, x: int, y: int) -> Color | None:
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
        """A 20×20 int8 array indexed [y, x]: colour index, or -1 for an empty field."""
        arr = np.full(P.NCELLS, -1, dtype=np.int8)
        for color in COLORS:
            arr[
                np.unpackbits(P.to_words(self.boards[color]).view(np.uint8), bitorder="little")[: P.NCELLS].astype(bool)
            ] = color
        return arr.reshape(P.N, P.N)

    # --- scoring (docs/spec/rules.md §11–§12) ---------------------------------------------------------------

    def points(self, color: Color) -> int:
        bits = self.shapes[color]
        if bits == 0:
            return TOTAL_SQUARES + ALL_PLACED_BONUS + (MONO_LAST_BONUS if self.mono_flag >> color & 1 else 0)
        return TOTAL_SQUARES - sum(_SIZES[s] for s in range(len(SHAPES)) if bits >> s & 1)

    def team_points(self, team: Team) -> int:
        a, b = team.colors
        return self.points(a) + self.points(b)

    def winner(self) -> Team | None:
        """The team with more points (None on equal points); the game's winner once ``is_over``."""
        return self.outcome().winner

    def outcome(self) -> Outcome:
        one, two = self.team_points(Team.ONE), self.team_points(Team.TWO)
        winner = None if one == two else (Team.ONE if one > two else Team.TWO)
        return Outcome(winner, (one, two))

    # --- move generation --------------------------------------------------------------------------

    def _anchors_and_forbidden(self, color: int) -> tuple[int, int]:
        """Cells a new piece must cover one of, and cells it must not cover."""
        own = self.boards[color]
        occ = self.occupied
        edge = P.edge_neighbours(own)  # none before a colour's first piece, except in a hand-made state file
        if self.shapes[color] == ALL_SHAPES:
            return self.season.first_move_cells & ~occ, occ | edge
        return P.diagonal_neighbours(own) & ~edge & ~occ, occ | edge

    def _available_shapes(self, color: int) -> int:
        if self.shapes[color] == ALL_SHAPES:
            return 1 << self.start_piece
        return self.shapes[color]

    def legal_placements(self, color: Color | int | None = None) -> np.ndarray:
        """Sorted ids (``model.placements``) of every distinct legal placement of ``color``.

        The colour defaults to the colour to move; for another colour the answer is "what it could
        place if it were its turn" (used by evaluation and the UI).
        """
        color = self.color if color is None else color
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

    def _in_game(self, color: Color | None) -> Color | None:
        """``color`` (default: the colour to move) if it may still move: in the game, and the game not over."""
        color = self.color if color is None else Color(color)
        return color if self.valid >> color & 1 and not self.is_over else None

    def legal_moves(self, color: Color | None = None) -> LegalMoves:
        """Every distinct legal SetMove of ``color`` (default: the colour to move, or another as if it were to move),
        lazily built; none once the game is over and for a colour out of the game."""
        c = self._in_game(color)
        if c is None:
            return LegalMoves(self.color if color is None else Color(color), np.empty(0, dtype=np.int32))
        return LegalMoves(c, self.legal_placements(c))

    def legal_move_count(self, color: Color | None = None) -> int:
        """``len(legal_moves(color))``."""
        c = self._in_game(color)
        return 0 if c is None else len(self.legal_placements(c))

    def has_legal_move(self, color: Color | None = None) -> bool:
        """Whether ``color`` (default: the colour to move) can place any piece, whether or not it is still in the
        game (early exit; cheaper than counting)."""
        color = self.color if color is None else color
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
        if c is None or not self.shapes[c]:
            return []
        anchors, _ = self._anchors_and_forbidden(c)
        out = []
        while anchors:
            low = anchors & -anchors
            i = low.bit_length() - 1
            out.append((i % P.N, i // P.N))
            anchors ^= low
        return out

    def can_skip(self) -> bool:
        """A SkipMove of the colour to move is legal (always, except on its first move)."""
        return not self.is_over and not self.is_first_move()

    # --- validation (docs/spec/rules.md §6.4) ---------------------------------------------------------------

    def validate(self, move: Move) -> MoveMistake | None:
        """The mistake the official server would report for ``move``, or None if it is legal."""
        color = self.color
        if move.color != color:
            return MoveMistake.WRONG_COLOR
        first = self.is_first_move(color)
        if isinstance(move, SkipMove):
            return MoveMistake.SKIP_FIRST_TURN if first else None
        if first:
            if move.shape != self.start_piece:
                return MoveMistake.WRONG_SHAPE
        elif not self.shapes[color] >> move.shape & 1:
            return MoveMistake.DUPLICATE_SHAPE
        own = self.boards[color]
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
        if isinstance(move, str):
            move = parse_move(move)
        if self.is_over:
            raise IllegalMoveError(None, move, "the game is over")
        mistake = self.validate(move)
        if mistake is not None:
            raise IllegalMoveError(mistake, move, self.season.violation_text(mistake, move))
        self.push(move)

    def _undo_record(self) -> _Undo:
        """What ``pop`` needs to restore the position as it is now."""
        return _Undo(
            self.turn,
            self.valid,
            self.last_move,
            tuple(self.boards),
            tuple(self.shapes),
            self.mono_done,
            self.mono_flag,
        )

    def push(self, move: Move) -> None:
        """Apply a move that is known to be legal (no validation), recording how to undo it."""
        self._stack.append(self._undo_record())
        if isinstance(move, SetMove):
            color = move.color
            mask = 0
            for x, y in move.cells:
                mask |= P.bit(x, y)
            self._place(color, move.shape, mask)
        self.last_move = move
        self._advance_and_remove()

    def push_placement(self, pid: int) -> None:
        """Apply legal placement ``pid`` for the colour to move (the search's fast path)."""
        self._stack.append(self._undo_record())
        color = self.color
        self._place(color, P.P_SHAPE_LIST[pid], P.MASKS[pid])
        self.last_move = move_of_placement(color, pid)
        self._advance_and_remove()

    def _place(self, color: int, shape: int, mask: int) -> None:
        self.boards[color] |= mask
        self.shapes[color] &= ~(1 << shape)
        if self.shapes[color] == 0:
            self.mono_done |= 1 << color
            if shape == Shape.MONO:
                self.mono_flag |= 1 << color

    def _advance(self) -> None:
        if not self.valid:
            return
        self.turn += 1
        while not self.valid >> (self.turn & 3) & 1:
            self.turn += 1

    def _advance_and_remove(self) -> None:
        self._advance()
        # Remove colours that cannot place a piece; removals consume turn numbers (docs/spec/rules.md §9).
        while self.valid and not self.has_legal_move(self.color):
            self.valid &= ~(1 << (self.turn & 3))
            self._advance()

    def pop(self) -> Move | None:
        """Undo the last ``push`` and return its move (``IndexError`` if there is none to undo)."""
        if not self._stack:
            raise IndexError("pop from a position without pushed moves")
        move = self.last_move
        u = self._stack.pop()
        self.turn, self.valid, self.last_move = u.turn, u.valid, u.last_move
        self.boards[:] = u.boards
        self.shapes[:] = u.shapes
        self.mono_done, self.mono_flag = u.mono_done, u.mono_flag
        return move

    # --- comparison -------------------------------------------------------------------------------

    def key(self) -> int:
        """The 64-bit Zobrist key of the position (``model.zobrist``): the board, the pieces left, the turn, the
        colours in the game, who placed the MONO last, the start piece and the season; not the last move. Equal
        positions have equal keys whatever the order of their moves; the player API's ``GameState.key()`` of the
        same position is the same number."""
        board = board_key(self.season, self.start_piece, self.boards, self.shapes)
        return position_key(board, self.turn, self.valid, self.mono_flag)

    def __eq__(self, other: object) -> bool:
        """The same position: exactly the fields ``key()`` covers (so equal positions have equal keys), whatever the
        moves that led to it."""
        if not isinstance(other, GameState):
            return NotImplemented
        return (
            self.turn == other.turn
            and self.valid == other.valid
            and self.boards == other.boards
            and self.shapes == other.shapes
            and self.mono_flag == other.mono_flag
            and self.start_piece == other.start_piece
            and self.season == other.season
        )

    def __hash__(self) -> int:
        return hash(self.key())

    def __repr__(self) -> str:
        return (
            f"<GameState {self.season.name} turn={self.turn} round={self.round} to_move={self.color.name} "
            f"valid={[c.name for c in self.valid_colors]} start={self.start_piece.name}>"
        )

    def render(self) -> str:
        """A plain-text board (B/Y/R/G, '.' empty), row 0 at the top; handy in tests and logs."""
        arr = self.board()
        return "\n".join("".join(".BYRG"[v + 1] for v in row) for row in arr)


_MOVE_CACHE: dict[tuple[int, int], SetMove] = {}


def move_of_placement(color: Color, pid: int) -> SetMove:
    """The SetMove (canonical rotation/flip pair) of placement ``pid`` in ``color``."""
    key = (color, pid)
    move = _MOVE_CACHE.get(key)
    if move is None:
        o = P.ORIENTATIONS[P.P_ORIENT[pid]]
        move = SetMove(Color(color), o.shape, o.rotation, o.flipped, int(P.P_X[pid]), int(P.P_Y[pid]))
        if len(_MOVE_CACHE) < 200_000:
            _MOVE_CACHE[key] = move
    return move


def placement_of(move: SetMove) -> int | None:
    """The placement id of a SetMove, or None if some cell is off the board."""
    rel = tuple(sorted(((x - move.x, y - move.y) for x, y in move.cells), key=lambda c: (c[1], c[0])))
    min_x = min(x for x, _ in move.cells)
    min_y = min(y for _, y in move.cells)
    return (
        P.placement_id(P.orientation_index(move.shape, rel), min_x, min_y)
        if (min_x, min_y) == (move.x, move.y)
        else None
    )


class LegalMoves:
    """A lazy view of the legal SetMoves of one colour: ``len`` is cheap, moves are built on demand."""

    __slots__ = ("color", "ids")

    def __init__(self, color: Color, ids: np.ndarray) -> None:
        self.color = color
        self.ids = ids

    def __len__(self) -> int:
        return len(self.ids)

    def __bool__(self) -> bool:
        return len(self.ids) > 0

    def __iter__(self) -> Iterator[SetMove]:
        color = self.color
        for pid in self.ids.tolist():
            yield move_of_placement(color, pid)

    def __getitem__(self, index: int) -> SetMove:
        return move_of_placement(self.color, int(self.ids[index]))

    def __contains__(self, move: object) -> bool:
        if not isinstance(move, SetMove) or move.color != self.color:
            return False
        pid = placement_of(move)
        if pid is None:
            return False
        i = int(np.searchsorted(self.ids, pid))
        return i < len(self.ids) and int(self.ids[i]) == pid

    def __repr__(self) -> str:
        return f"<LegalMoves {self.color.name}: {len(self)}>"
