"""The board widget: 20×20 fields with coordinates, in three sizes that follow the terminal.

* ``Scale.HALF`` — one column and half a line per field (half blocks: two board rows per terminal
  line), 26×12 cells: the board, both shape panels, status and footer fit 80×24. Column numbers are
  two header lines (tens, units); the left label names the upper row of a line, the right label the
  lower one.
* ``Scale.LETTERS`` — one column and one line per field, 26×20, no column numbers: under ``NO_COLOR``, where a
  half block has no room for a letter and the board would show only greys, a game at 80×24 takes this one (the
  status shrinks to two lines; ``tui.layout``), so that every field carries its colour's letter.
* ``Scale.NORMAL`` — two columns and one line per field (square on most terminals), 46×22.
* ``Scale.LARGE`` — four columns and two lines per field, 86×42 (large terminals, e.g. 200×60).

It uses Textual's Line API: ``render_line`` returns a cached ``Strip`` per line, and ``show`` compares
the new field keys with the old ones and refreshes only the lines that changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from blokus.model import placements as P
from blokus.model.moves import SetMove
from blokus.model.pieces import Color
from blokus.model.season import FirstMove
from blokus.model.state import GameState
from blokus.tui.colors import DARK, LETTER, Palette, mix, palette_for
from blokus.tui.messages import BoardClicked, BoardHover, BoardWheel
from blokus.tui.session import GameSession, GhostStatus

N = P.N
LABEL_W = 3  # "19 " left, " 19" right
BOTTOM_HEADER = 2  # the column numbers below the board (NORMAL and LARGE scale)
NO_STYLE = Style()  # blank lines carry a style: NO_COLOR's monochrome filter reads the colour of every segment


class Scale(Enum):
    """Terminal columns and lines per field (HALF: half a line)."""

    HALF = (1, 0)
    LETTERS = (1, 1)
    NORMAL = (2, 1)
    LARGE = (4, 2)

    @property
    def field_width(self) -> int:
        return self.value[0]

    @property
    def header_lines(self) -> int:
        return 2 if self is Scale.HALF else 0 if self is Scale.LETTERS else 1

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of the widget in terminal cells."""
        width = 2 * LABEL_W + N * self.field_width
        if self is Scale.HALF:
            return width, N // 2 + 2
        if self is Scale.LETTERS:
            return width, N
        return width, N * self.value[1] + 2

    def lines_of_row(self, y: int) -> range:
        """The terminal lines that show board row ``y``."""
        if self is Scale.HALF:
            return range(2 + y // 2, 3 + y // 2)
        h = self.value[1]
        top = 1 + y * h if self.header_lines else y
        return range(top, top + h)


HEIGHT = Scale.NORMAL.size[1]  # the usual height (tests)


@dataclass(frozen=True)
class BoardView:
    """What the board shows: a state, the last move, the ghost and the overlay."""

    state: GameState
    last_move: SetMove | None = None
    ghost_cells: tuple[tuple[int, int], ...] = ()
    ghost_color: Color | None = None
    ghost_status: GhostStatus | None = None
    overlay: int = 0  # bitboard of fields to mark for the colour to move
    overlay_color: Color | None = None

    @classmethod
    def of_session(cls, s: GameSession) -> BoardView:
        """A game's board: the shown state, the move before it, the ghost with its state, the overlay."""
        last = s.timeline.move_before(s.shown_index)
        gs = s.placing.status()
        ghost = tuple(s.ghost.cells()) if gs is not None and s.ghost is not None else ()
        overlay = s.placing.overlay_cells() if s.show_overlay else 0
        color = s.shown.color
        return cls(s.shown, last if isinstance(last, SetMove) else None, ghost, color, gs and gs[0], overlay, color)


# A field's key: (kind, colour index or -1). Kinds: e empty, k corner, o overlay, p piece, l last move,
# gB/gF/gL ghost blocked/fits/legal.
Key = tuple[str, int]
_GHOST_KIND = {GhostStatus.BLOCKED: "gB", GhostStatus.NO_CONTACT: "gF", GhostStatus.LEGAL: "gL"}


def field_keys(view: BoardView) -> list[tuple[Key, ...]]:
    """The key of every field, row by row."""
    st = view.state
    arr = st.board()
    # where first pieces go: 2021's corners always; 2027's border while the colour to move opens
    marks = st.season.first_move_cells
    if st.season.first_move is not FirstMove.CORNER and (st.is_over or not st.is_first_move()):
        marks = 0
    rows: list[list[Key]] = []
    for y in range(N):
        row_vals = arr[y].tolist()
        row: list[Key] = []
        for x in range(N):
            v = row_vals[x]
            if v >= 0:
                row.append(("p", v))
            elif marks >> (y * N + x) & 1:
                row.append(("k", -1))
            else:
                row.append(("e", (x + y) & 1))
        rows.append(row)
    bb = view.overlay
    oc = int(view.overlay_color) if view.overlay_color is not None else -1
    while bb:
        low = bb & -bb
        i = low.bit_length() - 1
        x, y = i % N, i // N
        if rows[y][x][0] in "ek":
            rows[y][x] = ("o", oc)
        bb ^= low
    if view.last_move is not None:
        c = int(view.last_move.color)
        for x, y in view.last_move.cells:
            if 0 <= x < N and 0 <= y < N:
                rows[y][x] = ("l", c)
    if view.ghost_cells and view.ghost_status is not None and view.ghost_color is not None:
        kind, gc = _GHOST_KIND[view.ghost_status], int(view.ghost_color)
        for x, y in view.ghost_cells:
            if 0 <= x < N and 0 <= y < N:
                rows[y][x] = (kind, gc)
    return [tuple(r) for r in rows]


def field_segment(key: Key, pal: Palette, width: int) -> Segment:
    """One field at NORMAL/LARGE scale: ``width`` columns of glyphs (letters for the colours under NO_COLOR)."""
    kind, v = key
    color = Color(v) if v >= 0 else None
    if kind == "e":
        return Segment(" " * width, Style(bgcolor=pal.empty_b if v else pal.empty_a))
    if kind == "k":
        return Segment("◆" * width, Style(color=pal.corner, bgcolor=pal.empty_a))
    if kind == "o":
        fg = pal.piece(color) if color is not None else pal.label
        return Segment("·" * width, Style(color=fg, bgcolor=pal.empty_a, bold=True))
    assert color is not None
    letter = LETTER[color] if pal.mono else " "
    if kind == "p":
        return Segment(letter * width, Style(color=pal.on_piece(color), bgcolor=pal.piece(color)))
    if kind == "l":
        glyph = letter.lower() if pal.mono else "▪"
        return Segment(glyph * width, Style(color=pal.on_piece(color), bgcolor=pal.piece(color), bold=True))
    if kind == "gB":
        return Segment("╳" * width, Style(color=pal.blocked_fg, bgcolor=pal.blocked_bg, bold=True))
    if kind == "gF":
        return Segment("░" * width, Style(color=pal.piece(color), bgcolor=pal.ghost_fit(color)))
    glyph = "▣" if width == 1 else ("[" + "]" * (width - 1)) if width == 2 else "[" + " " * (width - 2) + "]"
    return Segment(glyph, Style(color=pal.on_ghost(color), bgcolor=pal.ghost_legal(color), bold=True))


def field_colour(key: Key, pal: Palette) -> str:
    """The single colour of a field at HALF scale (half a character cell has no room for a glyph)."""
    kind, v = key
    color = Color(v) if v >= 0 else None
    if kind == "e":
        return pal.empty_b if v else pal.empty_a
    if kind == "k":
        return pal.dim_text
    if kind == "o":
        return mix(pal.piece(color), pal.empty_a, 0.7) if color is not None else pal.label
    assert color is not None
    if kind == "p":
        return pal.piece(color)
    if kind == "l":
        return pal.last_move(color)
    if kind == "gB":
        return pal.blocked_bg
    if kind == "gF":
        return pal.ghost_fit(color)
    return pal.ghost_legal(color)


class Board(Widget):
    """The board at one of three scales (``set_scale``); mouse: hover, click, right-click, wheel."""

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.scale = Scale.NORMAL
        self._rows: list[tuple[Key, ...]] = [()] * N
        self._strips: dict[object, Strip] = {}
        self._palette: Palette = DARK
        self._cursor: tuple[int, int] | None = None
        self.renders = 0  # render_line calls (the benchmark reads it)

    # --- data -------------------------------------------------------------------------------------

    def set_scale(self, scale: Scale) -> None:
        if scale is not self.scale:
            self.scale = scale
            self._strips.clear()
            self.refresh(layout=True)

    def show(self, view: BoardView) -> None:
        """Compute field keys and repaint only the lines that changed."""
        rows = field_keys(view)
        palette = palette_for(self.app) if self.is_attached else DARK
        if palette != self._palette:
            self._palette = palette
            self._strips.clear()
            self._rows = [()] * N
            self.refresh()
        width = self.size.width or self.scale.size[0]
        for y in range(N):
            if rows[y] != self._rows[y]:
                self._rows[y] = rows[y]
                for line in self.scale.lines_of_row(y):
                    self.refresh(Region(0, line, width, 1))

    # --- rendering --------------------------------------------------------------------------------

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return self.scale.size[0]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self.scale.size[1]

    def render_line(self, y: int) -> Strip:
        self.renders += 1
        scale = self.scale
        width, height = scale.size
        if y < scale.header_lines:
            return self._header(y)
        if y == height - 1 and scale.header_lines == 1:
            return self._header(BOTTOM_HEADER)
        if scale is Scale.HALF:
            if y - 2 < N // 2:
                return self._half_line(y - 2)
            return Strip.blank(width, NO_STYLE)
        row, sub = divmod(y - scale.header_lines, scale.value[1])
        if 0 <= row < N:
            return self._row(row, sub)
        return Strip.blank(width, NO_STYLE)

    def _header(self, line: int) -> Strip:
        """Header ``line`` (0, and 1 at HALF scale) above the board, or ``BOTTOM_HEADER`` below it."""
        strip = self._strips.get(("header", line))
        if strip is None:
            pal = self._palette
            a = Style(color=pal.label, bgcolor=pal.frame)
            b = Style(color=pal.corner, bgcolor=pal.frame, bold=True)  # alternate tones keep "101112" readable
            w = self.scale.field_width
            segs = [Segment(" " * LABEL_W, a)]
            for x in range(N):
                if self.scale is Scale.HALF:
                    text = (str(x // 10) if x % 10 == 0 and x else " ") if line == 0 else str(x % 10)
                    segs.append(Segment(text, b if x >= 10 else a))
                elif self.scale is Scale.NORMAL and (x >= 10 and x % 2 == 0 if line == 0 else x >= 9 and x % 2):
                    # two columns per field leave no gap between "9", "10" and "11": from there on the top
                    # line numbers the odd columns, the bottom line the even ones (every number stands free)
                    segs.append(Segment(" " * w, a))
                else:
                    segs.append(Segment(f"{x:>2}".center(w), b if x % 2 else a))
            segs.append(Segment(" " * LABEL_W, a))
            strip = Strip(segs, self.scale.size[0])
            self._strips[("header", line)] = strip
        return strip

    def _label(self, y: int, right: bool) -> Segment:
        pal = self._palette
        style = Style(color=pal.corner if y % 2 else pal.label, bgcolor=pal.frame, bold=bool(y % 2))
        return Segment(f" {y:<2}" if right else f"{y:>2} ", style)

    def _row(self, y: int, sub: int) -> Strip:
        keys = self._rows[y]
        width = self.scale.size[0]
        if not keys:
            return Strip.blank(width, NO_STYLE)
        cache_key = (self.scale, y, sub, keys)
        strip = self._strips.get(cache_key)
        if strip is None:
            pal = self._palette
            blank = Segment(" " * LABEL_W, Style(bgcolor=pal.frame))
            segs = [self._label(y, False) if sub == 0 else blank]
            segs += [field_segment(key, pal, self.scale.field_width) for key in keys]
            segs.append(self._label(y, True) if sub == 0 else blank)
            strip = self._remember(cache_key, Strip(segs, width).simplify())
        return strip

    def _half_line(self, line: int) -> Strip:
        upper, lower = self._rows[2 * line], self._rows[2 * line + 1]
        width = self.scale.size[0]
        if not upper or not lower:
            return Strip.blank(width, NO_STYLE)
        cache_key = (Scale.HALF, line, upper, lower)
        strip = self._strips.get(cache_key)
        if strip is None:
            pal = self._palette
            segs = [self._label(2 * line, False)]
            for top, bottom in zip(upper, lower, strict=True):
                segs.append(Segment("▀", Style(color=field_colour(top, pal), bgcolor=field_colour(bottom, pal))))
            segs.append(self._label(2 * line + 1, True))
            strip = self._remember(cache_key, Strip(segs, width).simplify())
        return strip

    def _remember(self, key: object, strip: Strip) -> Strip:
        if len(self._strips) > 4000:
            self._strips.clear()
        self._strips[key] = strip
        return strip

    # --- mouse ------------------------------------------------------------------------------------

    def field_at(self, cx: int, cy: int) -> tuple[int, int] | None:
        """The field under terminal cell (cx, cy) of the widget (HALF: the upper of the two rows)."""
        scale = self.scale
        if cx < LABEL_W:
            return None
        x = (cx - LABEL_W) // scale.field_width
        top = scale.header_lines
        y = (cy - 2) * 2 if scale is Scale.HALF else (cy - top) // scale.value[1] if cy >= top else -1
        if not (0 <= x < N and 0 <= y < N):
            return None
        return x, y

    def on_mouse_move(self, event: events.MouseMove) -> None:
        field = self.field_at(event.x, event.y)
        if field is not None and field != self._cursor:
            self._cursor = field
            self.post_message(BoardHover(*field))

    def on_click(self, event: events.Click) -> None:
        field = self.field_at(event.x, event.y)
        if field is not None:
            self.post_message(BoardClicked(field[0], field[1], event.button))

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        self.post_message(BoardWheel(1))

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        self.post_message(BoardWheel(-1))
