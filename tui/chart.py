"""The game chart: per turn the evaluation, the point difference and each colour's mobility.

Drawn with Textual's own rendering (a focusable widget that renders Rich text), not a plotting
library: one character column per turn (or per group of turns), so a mouse click or the arrow keys
map exactly to a state of the game, the curves tell themselves apart by glyph as well as by colour
(NO_COLOR terminals), and redrawing on every step costs nothing.

Upper plot, in points (team ONE minus team TWO, the scale of ``ai.analysis``): ``◆`` the evaluation,
``•`` the point difference, ``─`` zero. Below, one sparkline row per colour (labelled ``B`` ``Y``
``R`` ``G``): its number of legal placements. The selected turn is a highlighted column.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from blokus.ai.analysis import ChartPoint
from blokus.model.pieces import COLORS
from blokus.tui.colors import (
    CHART_CURSOR_DARK,
    CHART_CURSOR_LIGHT,
    CHART_EVAL,
    CHART_GRID,
    CHART_POINTS,
    DARK,
    LIGHT,
    PIECE_HEX,
)

AXIS = 6  # columns of the value labels on the left
EVAL_GLYPH, POINTS_GLYPH = "◆", "•"
EVAL_COLOUR, POINTS_COLOUR = CHART_EVAL, CHART_POINTS
SPARK = " ▁▂▃▄▅▆▇█"


class GameChart(Widget, can_focus=True):
    """``set_points(points)`` and ``index`` (the selected state); posts :class:`GameChart.Selected`."""

    DEFAULT_CSS = """
    GameChart { height: 14; min-height: 8; border: round $primary-darken-2; padding: 0 0; }
    GameChart:focus { border: round $accent; }
    """
    BINDINGS = [
        Binding("left,h", "move(-1)", "Turn back", show=False),
        Binding("right,l", "move(1)", "Turn forward", show=False),
        Binding("home", "move(-100000)", "First", show=False),
        Binding("end", "move(100000)", "Last", show=False),
    ]

    index: reactive[int] = reactive(0)

    class Selected(Message):
        """The user picked a state in the chart (click, or the arrow keys while focused)."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, classes=classes)
        self.points: list[ChartPoint] = []
        self._cursor = Style()
        self.border_title = "Chart"

    def set_points(self, points: Sequence[ChartPoint]) -> None:
        self.points = list(points)
        self.refresh()

    # --- mapping between columns and states --------------------------------------------------------

    def plot_width(self) -> int:
        return max(1, self.content_size.width - AXIS)

    def index_at(self, column: int) -> int:
        """The state shown in plot column ``column``."""
        n, width = len(self.points), self.plot_width()
        if n <= 1 or width <= 1:
            return 0
        column = max(0, min(column, width - 1))
        return round(column * (n - 1) / (width - 1)) if n > width else min(n - 1, column * (n - 1) // (width - 1))

    def column_of(self, index: int) -> int:
        n, width = len(self.points), self.plot_width()
        if n <= 1:
            return 0
        return round(index * (width - 1) / (n - 1))

    # --- input --------------------------------------------------------------------------------------

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or not self.points or offset.x < AXIS:
            return
        self._select(self.index_at(offset.x - AXIS))

    def action_move(self, delta: int) -> None:
        if self.points:
            self._select(max(0, min(self.index + delta, len(self.points) - 1)))

    def _select(self, index: int) -> None:
        self.index = index
        self.post_message(self.Selected(index))

    # --- drawing ------------------------------------------------------------------------------------

    def render(self) -> Text:
        width, height = self.content_size.width, self.content_size.height
        dark = self.app.current_theme.dark if self.app is not None else True
        label = Style(color=(DARK if dark else LIGHT).label)
        self._cursor = Style(bgcolor=CHART_CURSOR_DARK if dark else CHART_CURSOR_LIGHT)
        out = Text(no_wrap=True, overflow="crop")
        if not self.points or width < AXIS + 4 or height < 5:
            out.append("no chart yet" if not self.points else "chart: too small", label)
            return out
        rows = height - 2  # the legend above, the turn axis below
        mobility_rows = len(COLORS) if rows - len(COLORS) >= 3 else 0
        value_rows = rows - mobility_rows
        columns = self.plot_width()
        picks = [self.index_at(x) for x in range(columns)]
        selected = self.column_of(self.index)

        self._legend(out, label)
        values = [p.evaluation for p in self.points if p.evaluation is not None]
        values += [float(p.point_diff) for p in self.points] + [0.0]
        top, bottom = max(values), min(values)
        grid = self._plot(
            picks,
            value_rows,
            bottom,
            top,
            [
                (EVAL_GLYPH, EVAL_COLOUR, lambda p: p.evaluation),
                (POINTS_GLYPH, POINTS_COLOUR, lambda p: float(p.point_diff)),
            ],
            zero=True,
        )
        self._emit(out, grid, selected, [f"{top:+.0f}", "", f"{bottom:+.0f}"], label)
        if mobility_rows:
            high = max([max(p.mobility) for p in self.points] + [1])
            for c in COLORS:  # one sparkline row per colour: 8 heights per character
                cells = []
                for i in picks:
                    m = self.points[i].mobility[c]
                    cells.append((SPARK[max(1, round(m / high * 8))] if m else " ", PIECE_HEX[c]))
                # the letters line up beside their rows; the scale stands before the first one
                scale = str(high) if high < 1000 else f"{high // 1000}k"
                self._emit(out, [cells], selected, [f"{scale} {c.name[0]}" if c == 0 else c.name[0]], label)
        self._turn_axis(out, picks, label)
        return out

    def _legend(self, out: Text, label: Style) -> None:
        point = self.points[self.index] if 0 <= self.index < len(self.points) else self.points[-1]
        out.append(f"{EVAL_GLYPH} value ", Style(color=EVAL_COLOUR))
        ev = f"{point.evaluation:+.1f}" if point.evaluation is not None else "?"
        out.append(ev + "  ")
        out.append(f"{POINTS_GLYPH} points ", Style(color=POINTS_COLOUR))
        out.append(f"{point.point_diff:+d}  ")
        out.append("moves ", label)
        for c in COLORS:
            out.append(f"{c.name[0]}{point.mobility[c]} ", Style(color=PIECE_HEX[c]))
        out.append(f" turn {point.turn}\n", label)

    def _plot(self, picks: list[int], rows: int, low: float, high: float, series, *, zero: bool):
        """A rows x columns grid of (glyph, colour) cells; later series draw over earlier ones."""
        grid: list[list[tuple[str, str | None]]] = [[(" ", None)] * len(picks) for _ in range(rows)]
        span = (high - low) or 1.0

        def row_of(v: float) -> int:
            return max(0, min(rows - 1, round((high - v) / span * (rows - 1))))

        if zero and low < 0 < high:
            r = row_of(0.0)
            grid[r] = [("─", CHART_GRID)] * len(picks)
        for glyph, colour, value in reversed(series):
            for x, i in enumerate(picks):
                v = value(self.points[i])
                if v is not None:
                    grid[row_of(v)][x] = (glyph, colour)
        return grid

    def _emit(self, out: Text, grid, selected: int, labels: list[str], label: Style) -> None:
        rows = len(grid)
        for r, cells in enumerate(grid):
            text = labels[0] if r == 0 else labels[-1] if r == rows - 1 else ""
            out.append(f"{text:>{AXIS - 1}} ", label)
            for x, (glyph, colour) in enumerate(cells):
                style = Style(color=colour) if colour else Style()
                if x == selected:
                    style += self._cursor
                out.append(glyph, style)
            out.append("\n")

    def _turn_axis(self, out: Text, picks: list[int], label: Style) -> None:
        line = [" "] * len(picks)
        step = 10 if len(picks) >= 40 else 20
        last = -10
        for x, i in enumerate(picks):
            turn = self.points[i].turn
            mark = str(turn)
            if turn // step != last and x + len(mark) <= len(picks) and (x == 0 or line[x - 1] == " "):
                last = turn // step
                line[x : x + len(mark)] = list(mark)
        out.append(f"{'turn':>{AXIS - 1}} " + "".join(line), label)

    def watch_index(self, _old: int, _new: int) -> None:
        self.refresh()
