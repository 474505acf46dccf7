"""The MCTS player's opening book: positions of the first turns, each with one move found by a long search of our
own engine (``tuning/build_book.py``; no other program's data).

A position is keyed up to the 8 symmetries of the board (colours unchanged, the rules do not see them): the key is
the smallest of its 8 images' keys, and the move is stored in the frame of that image. A lookup maps the move back
to the real frame and has the rule engine check it: a move that is not legal is never returned.

The file (``ai/search/book/book.txt``, package data) is text, one entry a line::

    # blokus opening book ...
    KEY<TAB>MOVE<TAB>PATH  # comment (the search's visit share and value)

KEY is :func:`position_key`, MOVE the book move in the key's frame (``str(move)``), PATH the moves that reach a
position of that key (``; `` between them, ``-`` for none), so that every entry can be replayed and checked
(:func:`verify_entry`). The file is read bounded; a malformed line is a :class:`BookError` naming file and line.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from blokus.model import placements as P
from blokus.model.files import read_text_bounded
from blokus.model.moves import Move, SetMove, parse_move
from blokus.model.pieces import Cell
from blokus.model.state import GameState, move_of_placement

log = logging.getLogger(__name__)

BOOK_PATH = Path(__file__).with_name("book") / "book.txt"
MAX_BOOK_BYTES = 1 << 20  # the shipped book is tens of KB
MAX_ENTRIES = 20_000
MAX_LINE = 2000
MAX_PATH_MOVES = 8
HEADER = "# blokus opening book: KEY<TAB>MOVE<TAB>PATH  # comment (ai/search/book.py)"

N = P.N
_LAST = N - 1

# the 8 symmetries of the square board, as maps of a cell (x, y); index 0 is the identity
SYMMETRIES: tuple[Callable[[int, int], Cell], ...] = (
    lambda x, y: (x, y),
    lambda x, y: (_LAST - x, y),
    lambda x, y: (x, _LAST - y),
    lambda x, y: (_LAST - x, _LAST - y),
    lambda x, y: (y, x),
    lambda x, y: (_LAST - y, x),
    lambda x, y: (y, _LAST - x),
    lambda x, y: (_LAST - y, _LAST - x),
)
# each symmetry's cell map as a table over the cell indices (y * 20 + x)
_CELL_MAP: tuple[tuple[int, ...], ...] = tuple(
    tuple(s(i % N, i // N)[1] * N + s(i % N, i // N)[0] for i in range(P.NCELLS)) for s in SYMMETRIES
)


def _inverse(k: int) -> int:
    table = _CELL_MAP[k]
    return next(j for j in range(8) if all(_CELL_MAP[j][table[i]] == i for i in range(P.NCELLS)))


INVERSE: tuple[int, ...] = tuple(_inverse(k) for k in range(8))


class BookError(ValueError):
    """A book file that cannot be used: one line naming the file (and the line)."""


def _cells_of(board: int) -> list[int]:
    out = []
    while board:
        low = board & -board
        out.append(low.bit_length() - 1)
        board ^= low
    return out


def transform_board(board: int, k: int) -> int:
    """A bitboard under symmetry ``k``."""
    table = _CELL_MAP[k]
    return sum(1 << table[i] for i in _cells_of(board))


def transform_move(move: Move, k: int) -> Move:
    """``move`` under symmetry ``k``: its cells mapped, then the placement with those cells found in the
    placement tables (so the server's rotation and flip conventions are the tables', not re-derived here)."""
    if not isinstance(move, SetMove):
        return move
    mask = sum(1 << _CELL_MAP[k][y * N + x] for x, y in move.cells)
    anchor = mask.bit_length() - 1
    for pid in P.BY_CELL[anchor]:
        if P.MASKS[pid] == mask and P.P_SHAPE_LIST[pid] == move.shape:
            return move_of_placement(move.color, pid)
    raise ValueError(f"{move}: no placement of its shape covers the cells of its image")  # a move off the board


def _key_of(state: GameState, boards: Iterable[int]) -> str:
    cells = "/".join(".".join(f"{i:03x}" for i in sorted(_cells_of(b))) for b in boards)
    hands = ".".join(f"{s:06x}" for s in state.shapes)
    return (
        f"{state.season.name}:{state.start_piece.name}:{state.turn}:{state.valid:x}:{state.mono_flag:x}:"
        f"{hands}:{cells or '-'}"
    )


def canonical(state: GameState) -> tuple[str, int]:
    """The position's book key (the smallest of its 8 images' keys) and the symmetry that maps the position to
    that image."""
    boards = state.boards
    return min((_key_of(state, (transform_board(b, k) for b in boards)), k) for k in range(8))


def position_key(state: GameState) -> str:
    """The book key of a position: equal for a position and each of its 8 images."""
    return canonical(state)[0]


@dataclass(frozen=True)
class Entry:
    key: str
    move: Move  # in the key's frame
    path: tuple[Move, ...]  # moves that reach a position of this key from the start
    comment: str = ""
    line: int = 0

    def text(self) -> str:
        path = "; ".join(str(m) for m in self.path) or "-"
        return f"{self.key}\t{self.move}\t{path}" + (f"  # {self.comment}" if self.comment else "")


class Book:
    """Book entries by key."""

    def __init__(self, entries: Iterable[Entry] = (), source: str = "") -> None:
        self.entries: dict[str, Entry] = {}
        self.source = source
        for entry in entries:
            self.entries.setdefault(entry.key, entry)

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, key: object) -> bool:
        return key in self.entries

    def lookup(self, state: GameState) -> Move | None:
        """The book move of ``state`` in its own frame if the position is in the book and the move is legal there;
        None otherwise."""
        if state.turn > 8 or state.is_over:  # the book holds the first turns only: no key to build later
            return None
        key, k = canonical(state)
        entry = self.entries.get(key)
        if entry is None:
            return None
        try:
            move = transform_move(entry.move, INVERSE[k])
        except ValueError:
            return None
        if not state.is_legal(move):
            log.warning("book %s:%d: the move %s is not legal in its position: ignored", self.source, entry.line, move)
            return None
        return move


def parse_entry(text: str, line: int = 0) -> Entry:
    """One line of a book (without the newline); ValueError saying what is wrong."""
    body, _, comment = text.partition("#")
    parts = body.strip().split("\t")
    if len(parts) != 3:
        raise ValueError("expected KEY<TAB>MOVE<TAB>PATH")
    key, move_text, path_text = (p.strip() for p in parts)
    if not key or len(key.split(":")) != 7:
        raise ValueError(f"not a book key: {key[:40]!r}")
    move = parse_move(move_text)
    moves = [] if path_text == "-" else [part.strip() for part in path_text.split(";")]
    if len(moves) > MAX_PATH_MOVES:
        raise ValueError(f"{len(moves)} moves in the path: at most {MAX_PATH_MOVES}")
    return Entry(key, move, tuple(parse_move(m) for m in moves), comment.strip(), line)


def read_book(path: Path) -> Book:
    """The book of a file; :class:`BookError` for a file that cannot be read or a malformed line."""
    try:
        text = read_text_bounded(path, MAX_BOOK_BYTES)
    except ValueError as exc:
        raise BookError(str(exc)) from None
    entries: list[Entry] = []
    for number, raw in enumerate(text.splitlines(), 1):
        if len(raw) > MAX_LINE:
            raise BookError(f"{path}:{number}: a line of {len(raw)} characters: at most {MAX_LINE}")
        if not raw.partition("#")[0].strip():
            continue
        if len(entries) == MAX_ENTRIES:
            raise BookError(f"{path}: more than {MAX_ENTRIES} entries")
        try:
            entries.append(parse_entry(raw, number))
        except ValueError as exc:
            raise BookError(f"{path}:{number}: {exc}") from None
    return Book(entries, str(path))


def verify_entry(entry: Entry) -> str | None:
    """Why an entry is wrong (its path does not replay legal, reaches another key, or its move is not legal
    there), None if it is right."""
    season, piece = entry.key.split(":")[:2]
    try:
        state = GameState.new(season, piece)
        for move in entry.path:
            state.play(move)
    except ValueError as exc:
        return f"the path does not replay: {exc}"
    key, k = canonical(state)
    if key != entry.key:
        return "the path reaches another position"
    move = transform_move(entry.move, INVERSE[k])
    return None if state.is_legal(move) else f"the move {move} is not legal there"


def format_header(comment: str = "") -> str:
    return "\n".join([HEADER, *(f"# {c}" for c in comment.splitlines() if c)]) + "\n"


_DEFAULT: Book | None = None
_DEFAULT_FAILED = False


def default_book() -> Book | None:
    """The shipped book, read once per process; None (said once in the log) if it cannot be read."""
    global _DEFAULT, _DEFAULT_FAILED
    if _DEFAULT is None and not _DEFAULT_FAILED:
        try:
            _DEFAULT = read_book(BOOK_PATH)
        except BookError as exc:
            _DEFAULT_FAILED = True
            log.warning("opening book not used, the player searches instead: %s", exc)
    return _DEFAULT


__all__ = ["Book", "BookError", "Entry", "canonical", "default_book", "position_key", "read_book"]
