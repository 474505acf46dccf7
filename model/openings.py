"""Opening suites: the positions a test series starts its game pairs from (``blokus arena --openings FILE``).

An opening is a season, a start piece and the first moves (possibly none). Both games of a pair start from
it, the seats swapped, as fastchess and cutechess-cli play an opening book with ``-repeat``. The file is text,
one opening a line (documented in docs/openings.md)::

    # blokus openings: SEASON START_PIECE: MOVE; MOVE; ...
    2027 PENTO_L: BLUE PENTO_L NONE false 0 4; YELLOW PENTO_V RIGHT false 17 0
    2021 PENTO_Y

A move is written as ``str(move)`` writes it (``COLOR SHAPE ROTATION FLIPPED X Y`` or ``COLOR SKIP``).
``#`` starts a comment; blank lines are skipped. Every opening is replayed by the rule engine when it is
read: a line that is not an opening, or whose moves are not legal in turn, is an :class:`OpeningsError`
naming the file, the line and why. The file is bounded (size, lines, moves per opening).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from blokus.model.files import read_text_bounded
from blokus.model.moves import IllegalMoveError, Move, parse_move
from blokus.model.pieces import Shape
from blokus.model.season import Season, season_named
from blokus.model.state import GameState

MAX_FILE_BYTES = 4 << 20  # thousands of openings of a few moves each fit in far less
MAX_OPENINGS = 10_000
MAX_MOVES = 40  # an opening is the start of a game (2021 games are ~84 turns long)
HEADER = "# blokus openings: SEASON START_PIECE: MOVE; MOVE; ... (docs/openings.md)"


class OpeningsError(ValueError):
    """A file of openings that cannot be used: one line for the user."""


@dataclass(frozen=True)
class Opening:
    season: Season
    start_piece: Shape
    moves: tuple[Move, ...] = ()

    def position(self) -> GameState:
        """The position after the opening's moves (each checked by the rule engine: ``IllegalMoveError``)."""
        state = GameState.new(self.season, self.start_piece)
        for move in self.moves:
            state.play(move)
        return state

    def line(self) -> str:
        head = f"{self.season.name} {self.start_piece.name}"
        return f"{head}: {'; '.join(str(m) for m in self.moves)}" if self.moves else head


def parse_opening(text: str) -> Opening:
    """One line of an openings file (without its comment); ValueError saying what is wrong."""
    head, _, tail = text.partition(":")
    words = head.split()
    if len(words) != 2:
        raise ValueError("expected 'SEASON START_PIECE' before the moves")
    try:
        season = season_named(words[0])
    except KeyError:
        raise ValueError(f"unknown season {words[0]!r}; choose 2021 or 2027") from None
    try:
        piece = Shape.parse(words[1])
    except (KeyError, ValueError):
        raise ValueError(f"unknown start piece {words[1]!r}") from None
    if piece.name not in season.start_pieces:
        raise ValueError(f"{piece.name} is no start piece of season {season.name}")
    parts = [part.strip() for part in tail.split(";")] if tail.strip() else []
    if len(parts) > MAX_MOVES:
        raise ValueError(f"{len(parts)} moves: at most {MAX_MOVES}")
    opening = Opening(season, piece, tuple(parse_move(part) for part in parts))
    state = GameState.new(season, piece)
    for number, move in enumerate(opening.moves, 1):
        if state.is_over:
            raise ValueError(f"move {number}: the game is over")
        try:
            state.play(move)
        except IllegalMoveError as exc:  # the game is not over here: a mistake names the rule
            rule = exc.mistake.name if exc.mistake else exc.rule
            raise ValueError(f"move {number} ({move}) is illegal: {rule}") from None
    if state.is_over:
        raise ValueError("the game is over after these moves")
    return opening


def read_openings(path: Path, season: Season | None = None) -> list[Opening]:
    """The openings of a file, in order; with ``season``, every one must be of it. OpeningsError otherwise."""
    try:
        text = read_text_bounded(path, MAX_FILE_BYTES)
    except ValueError as exc:
        raise OpeningsError(str(exc)) from None
    openings: list[Opening] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.partition("#")[0].strip()
        if not line:
            continue
        if len(openings) == MAX_OPENINGS:
            raise OpeningsError(f"{path}: more than {MAX_OPENINGS} openings")
        try:
            opening = parse_opening(line)
        except ValueError as exc:
            raise OpeningsError(f"{path}:{number}: {exc}") from None
        if season is not None and opening.season != season:
            raise OpeningsError(f"{path}:{number}: an opening of season {opening.season.name}, not {season.name}")
        openings.append(opening)
    if not openings:
        raise OpeningsError(f"{path}: no opening in the file")
    return openings


def format_openings(openings: Iterable[Opening], comment: str = "") -> str:
    """The text of an openings file (``read_openings`` reads it back)."""
    lines = [HEADER, *(f"# {c}" for c in comment.splitlines() if c)]
    return "\n".join([*lines, *(o.line() for o in openings)]) + "\n"
