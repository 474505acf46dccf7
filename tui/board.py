"""The board widget: 20×20 fields, two terminal columns each, coordinates on all four edges.

It uses Textual's Line API: ``render_line`` returns a cached ``Strip`` per row, and ``show`` compares
the new field keys with the old ones and refreshes only the rows that changed (moving the ghost one
field repaints a handful of lines, not the whole board).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from model import placements as P
from model.moves import SetMove
from model.pieces import Color
from model.season import FirstMove
from model.state import GameState
from tui.colors import BLOCKED_BG, BLOCKED_FG, DARK, LIGHT, Palette
from tui.messages import BoardClicked, BoardHover, BoardWheel
from tui.session import GhostStatus

N = P.N
LABEL_W = 3  # "19 " left, " 19" right
WIDTH = LABEL_W * 2 + 2 * N
HEIGHT = N + 2


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


# A field's key: (kind, colour index or -1). Kinds: e empty, k corner, o overlay, p piece, l last move,
# gB/gF/gL ghost blocked/fits/legal.
Key = tuple[str, int]


class Board(Widget):
    DEFAULT_CSS = """
    Board {
        width: 46;
        height: 22;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._rows: list[tuple[Key, ...]] = [()] * N
        self._strips: dict[int, Strip] = {}
        self._palette: Palette = DARK
        self._cursor: tuple[int, int] | None = None
        self.renders = 0  # render_line calls (the benchmark reads it)

    # --- data -------------------------------------------------------------------------------------

    def show(self, view: BoardView) -> None:
        """Compute field keys and repaint only the rows that changed."""
        st = view.state
        arr = st.board_array()
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
        if view.overlay:
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
            kind = {GhostStatus.BLOCKED: "gB", GhostStatus.NO_CONTACT: "gF", GhostStatus.LEGAL: "gL"}[
                view.ghost_status]
            gc = int(view.ghost_color)
            for x, y in view.ghost_cells:
                if 0 <= x < N and 0 <= y < N:
                    rows[y][x] = (kind, gc)
        palette = LIGHT if self._is_light() else DARK
        if palette is not self._palette:
            self._palette = palette
            self._strips.clear()
            self._rows = [()] * N
            self.refresh()
        width = self.size.width or WIDTH
        for y in range(N):
            new = tuple(rows[y])
            if new != self._rows[y]:
                self._rows[y] = new
                self.refresh(Region(0, y + 1, width, 1))

    def _is_light(self) -> bool:
        try:
            return not self.app.current_theme.dark
        except Exception:  # not mounted yet
            return False

    # --- rendering --------------------------------------------------------------------------------

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return WIDTH

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return HEIGHT

    def render_line(self, y: int) -> Strip:
        self.renders += 1
        if y == 0 or y == HEIGHT - 1:
            return self._header()
        if 1 <= y <= N:
            return self._row(y - 1)
        return Strip.blank(self.size.width)

    def _header(self) -> Strip:
        strip = self._strips.get(-1)
        if strip is None:
            pal = self._palette
            a = Style(color=pal.label, bgcolor=pal.frame)
            b = Style(color=pal.corner, bgcolor=pal.frame, bold=True)  # alternate tones keep "101112" readable
            segs = [Segment(" " * LABEL_W, a)]
            segs += [Segment(f"{x:>2}", b if x % 2 else a) for x in range(N)]
            segs.append(Segment(" " * LABEL_W, a))
            strip = Strip(segs, WIDTH)
            self._strips[-1] = strip
        return strip

    def _row(self, y: int) -> Strip:
        keys = self._rows[y]
        if not keys:
            return Strip.blank(WIDTH)
        cache_key = hash((y, keys))
        strip = self._strips.get(cache_key)
        if strip is not None:
            return strip
        pal = self._palette
        label = Style(color=pal.corner if y % 2 else pal.label, bgcolor=pal.frame, bold=bool(y % 2))
        segs = [Segment(f"{y:>2} ", label)]
        for key in keys:
            segs.append(self._field(key, pal))
        segs.append(Segment(f" {y:<2}", label))
        strip = Strip(segs, WIDTH).simplify()
        if len(self._strips) > 4000:
            self._strips.clear()
        self._strips[cache_key] = strip
        return strip

    @staticmethod
    def _field(key: Key, pal: Palette) -> Segment:
        kind, v = key
        if kind == "e":
            return Segment("  ", Style(bgcolor=pal.empty_b if v else pal.empty_a))
        if kind == "k":
            return Segment("◆◆", Style(color=pal.corner, bgcolor=pal.empty_a))
        color = Color(v) if v >= 0 else None
        if kind == "o":
            fg = pal.piece(color) if color is not None else pal.label
            return Segment("··", Style(color=fg, bgcolor=pal.empty_a, bold=True))
        assert color is not None
        if kind == "p":
            return Segment("  ", Style(bgcolor=pal.piece(color)))
        if kind == "l":
            fg = "#000000" if color in (Color.YELLOW, Color.GREEN) else "#ffffff"
            return Segment("▪▪", Style(color=fg, bgcolor=pal.piece(color), bold=True))
        if kind == "gB":
            return Segment("╳╳", Style(color=BLOCKED_FG, bgcolor=BLOCKED_BG, bold=True))
        if kind == "gF":
            return Segment("░░", Style(color=pal.piece(color), bgcolor=pal.ghost_fit(color)))
        return Segment("[]", Style(color="#000000", bgcolor=pal.ghost_legal(color), bold=True))

    # --- mouse ------------------------------------------------------------------------------------

    def _field_at(self, event: events.MouseEvent) -> tuple[int, int] | None:
        x = (event.x - LABEL_W) // 2
        y = event.y - 1
        if event.x < LABEL_W or not (0 <= x < N and 0 <= y < N):
            return None
        return x, y

    def on_mouse_move(self, event: events.MouseMove) -> None:
        field = self._field_at(event)
        if field is not None and field != self._cursor:
            self._cursor = field
            self.post_message(BoardHover(*field))

    def on_click(self, event: events.Click) -> None:
        field = self._field_at(event)
        if field is not None:
            self.post_message(BoardClicked(field[0], field[1], event.button))

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        self.post_message(BoardWheel(1))

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        self.post_message(BoardWheel(-1))
