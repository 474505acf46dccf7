"""Widgets around the board: shape panels, status lines, the move log, the raw XML pane."""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import events
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from blokus.ai.analysis import Mark
from blokus.model.pieces import SHAPES, Color, Shape, orientations
from blokus.model.state import GameState
from blokus.tui.colors import Palette, palette_for
from blokus.tui.messages import ShapePicked
from blokus.tui.session import GameSession, LogEntry

# --- shape panels ----------------------------------------------------------------------------------


def _display_cells(shape: Shape) -> tuple[tuple[int, int], ...]:
    """A wide orientation of the shape (fewer lines in the panel)."""
    for o in orientations(shape):
        if o.width >= o.height:
            return o.cells
    return orientations(shape)[0].cells


def mini_lines(cells: tuple[tuple[int, int], ...]) -> list[str]:
    """A shape drawn with half blocks: one column and half a line per field."""
    w = 1 + max(x for x, _ in cells)
    h = 1 + max(y for _, y in cells)
    cs = set(cells)
    lines = []
    for top in range(0, h, 2):
        line = ""
        for x in range(w):
            a, b = (x, top) in cs, (x, top + 1) in cs
            line += "█" if a and b else "▀" if a else "▄" if b else " "
        lines.append(line)
    return lines


def block_lines(cells: tuple[tuple[int, int], ...]) -> list[str]:
    """A shape drawn with full blocks: two columns and a line per field, as on the large board."""
    w = 1 + max(x for x, _ in cells)
    h = 1 + max(y for _, y in cells)
    cs = set(cells)
    return ["".join("██" if (x, y) in cs else "  " for x in range(w)) for y in range(h)]


MINIS: dict[Shape, list[str]] = {s: mini_lines(_display_cells(s)) for s in SHAPES}
BLOCKS: dict[Shape, list[str]] = {s: block_lines(_display_cells(s)) for s in SHAPES}


def _flow(
    shapes: list[Shape], drawings: dict[Shape, list[str]], width: int, gap_x: int, gap_y: int
) -> list[tuple[int, int, Shape]]:
    """(column, line, shape) of the shapes, flowing left to right in ``width`` columns."""
    out = []
    x = line = row_h = 0
    for shape in shapes:
        lines = drawings[shape]
        w = len(lines[0])
        if x and x + w > width:
            line += row_h + gap_y
            x = row_h = 0
        out.append((x, line, shape))
        x += w + gap_x
        row_h = max(row_h, len(lines))
    return out


def large_panel_lines(width: int) -> int:
    """Lines a shape panel needs for all 21 shapes in full blocks in ``width`` columns (title included)."""
    placed = _flow(list(SHAPES), BLOCKS, width, 2, 1)
    return 1 + max(line + len(BLOCKS[s]) for _, line, s in placed)


@dataclass(frozen=True)
class PanelView:
    color: Color
    remaining: frozenset[Shape]
    placeable: frozenset[Shape]
    selected: Shape | None
    to_move: bool
    out: bool  # no longer in validColors
    points: int

    @classmethod
    def of_state(cls, st: GameState, color: Color, placeable: frozenset[Shape] | None = None) -> PanelView:
        """``color``'s panel in ``st`` (``placeable``: the shapes it can place now; default: every one it has)."""
        remaining = frozenset(st.pieces_left(color))
        usable = (remaining if placeable is None else placeable) if st.is_valid(color) else frozenset()
        to_move = not st.is_over and color == st.color
        return cls(color, remaining, usable, None, to_move, not st.is_valid(color), st.points(color))

    @classmethod
    def of_session(cls, s: GameSession, color: Color) -> PanelView:
        """A game's panel: the shown state, the shapes placeable now, the piece being placed selected."""
        shown = s.shown
        view = cls.of_state(
            shown, color, frozenset(s.placing.placeable_shapes(color)) if shown.is_valid(color) else None
        )
        selected = s.ghost.shape if s.ghost is not None and s.is_live and color == shown.color else None
        return replace(view, selected=selected)


class ShapePanel(Widget):
    """The remaining shapes of one colour as small polyominoes; click one to select it."""

    def __init__(self, color: Color, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.color = color
        self.compact = False  # small terminals: pieces closer together
        self.large = False  # large terminals: pieces in full blocks, as on the large board
        self.view: PanelView | None = None
        self._hitboxes: list[tuple[int, int, int, int, Shape]] = []

    def show(self, view: PanelView) -> None:
        if view != self.view:
            self.view = view
            self.refresh(layout=True)

    def _palette(self) -> Palette:
        return palette_for(self.app)

    def _layout(self, width: int) -> list[tuple[int, int, Shape]]:
        """(column, line, shape) of every remaining shape, flowing left to right."""
        assert self.view is not None
        gap_x, gap_y = (1, 0) if self.compact else (2, 1)
        return _flow([s for s in SHAPES if s in self.view.remaining], self.drawings, width, gap_x, gap_y)

    @property
    def drawings(self) -> dict[Shape, list[str]]:
        return BLOCKS if self.large else MINIS

    def get_content_height(self, container, viewport, width: int) -> int:
        if self.view is None:
            return 1
        placed = self._layout(max(width, 6))
        head = 2 if self.view.out else 1
        if not placed:
            return head + 1
        return head + max(line + len(self.drawings[s]) for _, line, s in placed)

    def render(self) -> Text:
        if self.view is None:
            return Text("")
        v = self.view
        pal = self._palette()
        width = max(self.content_size.width, 6)
        color_hex = pal.piece(v.color)
        title = Text()
        marker = "▶ " if v.to_move else "  "
        title.append(marker, Style(color=color_hex, bold=True))
        title.append(v.color.name, Style(color=pal.piece_text(v.color), bold=True))
        title.append(f"  {v.points} pts", Style(color=pal.label))
        if v.out:
            title.append("\n")
            fg, bg = pal.badge
            title.append(" OUT: no move possible ", Style(color=fg, bgcolor=bg, bold=True))
        placed = self._layout(width)
        height = max((line + len(self.drawings[s]) for _, line, s in placed), default=1)
        blank = Style()
        grid = [[(" ", blank)] * width for _ in range(height)]
        self._hitboxes = []
        for x0, line0, shape in placed:
            lines = self.drawings[shape]
            if v.out or shape not in v.placeable:
                fg = pal.piece_dim(v.color)
            elif not v.to_move:
                fg = pal.piece_mid(v.color)
            else:
                fg = color_hex
            selected = shape == v.selected
            st = Style(color=fg, bgcolor=pal.selected_bg if selected else None, reverse=selected and pal.mono)
            for dy, text in enumerate(lines):
                for dx, ch in enumerate(text):
                    if x0 + dx < width:
                        grid[line0 + dy][x0 + dx] = (ch, st)
                if selected and self.large:  # full blocks hide the background: a column of it either side
                    for x in (x0 - 1, x0 + len(text)):
                        if 0 <= x < width:
                            grid[line0 + dy][x] = (" ", st)
            self._hitboxes.append((x0, line0 + (2 if v.out else 1), len(lines[0]), len(lines), shape))
        out = Text()
        out.append_text(title)
        for row in grid:
            out.append("\n")
            run, run_style = "", None
            for ch, st in row:  # one span per run of equal style
                if st is run_style or st == run_style:
                    run += ch
                else:
                    if run:
                        out.append(run, run_style)
                    run, run_style = ch, st
            if run:
                out.append(run, run_style)
        if not placed:
            out.append("all pieces placed", Style(color=pal.label))
        return out

    def on_click(self, event: events.Click) -> None:
        x, y = event.x - self.styles.padding.left, event.y
        for x0, y0, w, h, shape in self._hitboxes:
            if x0 <= x < x0 + w and y0 <= y < y0 + h:
                self.post_message(ShapePicked(shape))
                return


# --- status lines ----------------------------------------------------------------------------------


class StatusBar(Static):
    """Fixed-height status lines: a line that is too long is cut with "…", never wrapped (a wrapped line
    would push the last status line out of view)."""

    _line_count = 0

    def show(self, text: Text) -> None:
        """New status lines; the layout is only redone when their number changes."""
        lines = text.plain.count("\n") + 1
        self.update(text, layout=lines != self._line_count)
        self._line_count = lines


class FeedbackView(Static):
    """The answer to the last action (red and bold for a refusal or an error)."""

    _told = ""

    def tell(self, text: str, error: bool, one_line: bool) -> None:
        """Show ``text``; where the view has one line (beside the letter board) a long error is a notice as well."""
        if text != self._told:
            self._told = text
            if one_line and error and len(text) > self.content_size.width:
                self.notify(text, severity="error")
        self.update(text)
        self.set_class(error, "error")


# --- move log --------------------------------------------------------------------------------------


class MoveLog(OptionList):
    """The moves, passes and colour removals; the entry of the shown state is highlighted."""

    can_focus = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = "Moves"
        self._entries: list[LogEntry] = []
        self._marks: dict[int, Mark] = {}
        self._notes: dict[int, str] = {}

    def set_marks(self, marks: dict[int, Mark]) -> None:
        """Analysis marks (``?``/``??``) by the index of the state a move led to."""
        if marks != self._marks:
            self._marks = dict(marks)
            self._redraw_in_place()

    def set_notes(self, notes: dict[int, str]) -> None:
        """Short figures beside the moves (a saved game's per-move records), by the turn of the move."""
        if notes != self._notes:
            self._notes = dict(notes)
            self._redraw_in_place()

    def _redraw_in_place(self) -> None:
        """Every entry drawn anew, the highlighted one kept."""
        highlighted = self.highlighted
        self.retheme()
        self.highlighted = highlighted

    def set_entries(self, entries: list[LogEntry], current_index: int | None) -> None:
        if entries != self._entries:
            if entries[: len(self._entries)] == self._entries and self._entries:
                new = entries[len(self._entries) :]
            else:
                self.clear_options()
                new = entries
            self._entries = list(entries)
            self.add_options([self._option(e) for e in new])
        self.highlight_index(current_index)

    def highlight_index(self, timeline_index: int | None) -> None:
        """Highlight the last entry leading to timeline position ``timeline_index``."""
        target = None
        if timeline_index is not None:
            for i, e in enumerate(self._entries):
                if e.index <= timeline_index:
                    target = i
        self.highlighted = target
        if target is not None:
            self.scroll_to_highlight()

    def retheme(self) -> None:
        """Rebuild the entries in the colours of the current theme."""
        entries, self._entries = self._entries, []
        self.clear_options()
        if entries:
            self.set_entries(entries, None)

    def _option(self, e: LogEntry) -> Option:
        """Turn number, then the entry; a long entry wraps under its text, not under the number."""
        pal = palette_for(self.app)
        style = Style(color=pal.piece_text(e.color), bold=e.kind == "move")
        if e.kind == "removed":
            style = Style(color=pal.piece_text(e.color), italic=True)
        row = Table.grid(padding=(0, 1, 0, 0), expand=True)
        row.add_column(width=3, justify="right", no_wrap=True)
        row.add_column(ratio=1)
        text = Text(e.text, style)
        mark = self._marks.get(e.index) if e.kind != "removed" else None
        if mark:
            text.append(f" {mark}", Style(color=pal.bad if mark is Mark.BLUNDER else pal.warn, bold=True))
        note = self._notes.get(e.turn) if e.kind != "removed" else None
        if note:  # right-aligned in a column of its own, so that the moves stay in line
            row.add_column(width=max(map(len, self._notes.values())), justify="right", no_wrap=True)
            row.add_row(Text(str(e.turn), Style(color=pal.label)), text, Text(note, Style(color=pal.label)))
        else:
            row.add_row(Text(str(e.turn), Style(color=pal.label)), text)
        return Option(row)


def pretty_xml(xml: str) -> tuple[str, str | None]:
    """Indented XML for display, and a parse problem (None if it is well-formed)."""
    from lxml import etree

    raw = xml.strip()
    if raw.startswith("<protocol") and raw.endswith(">") and "</protocol>" not in raw or raw == "</protocol>":
        return raw, None  # the stream's opening / closing tag
    try:
        element = etree.fromstring(raw.encode("utf-8"), etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as exc:
        return raw, f"not well-formed: {exc}"
    return etree.tostring(element, pretty_print=True, encoding="unicode").strip(), None


class XmlPane(OptionList):
    """Raw XML in (◀) and out (▶), newest at the bottom."""

    can_focus = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = "XML  ◀ in  ▶ out"
        self.count = 0

    def add_note(self, text: str) -> None:
        """A problem with a message (not understood, unreadable), highlighted."""
        self.add_option(Option(Text(f"!! {text}", Style(color=palette_for(self.app).bad, bold=True))))
        self.count += 1
        self.highlighted = self.count - 1
        self.scroll_end(animate=False)

    def add_message(self, direction: str, xml: str, stamp: str = "", problem: str | None = None) -> None:
        pal = palette_for(self.app)
        arrow = "◀" if direction == "in" else "▶"
        head = Text(f"{arrow} {stamp}{len(xml.encode())} B", Style(color=pal.label))
        text, bad = pretty_xml(xml)
        if bad and problem is None:
            problem = bad
        body = Text(text, Style(color=pal.xml_in if direction == "in" else pal.xml_out))
        if problem:
            body.append(f"\n!! {problem}", Style(color=pal.bad, bold=True))
        self.add_option(Option(Text.assemble(head, "\n", body)))
        self.count += 1
        self.highlighted = self.count - 1
        self.scroll_end(animate=False)
