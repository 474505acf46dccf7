"""The three-column board layout shared by the game and the replay screens, and how it fits the terminal.

``plan_layout`` picks the board scale and the columns from the terminal size: the largest board that
leaves room for the status lines, the feedback and the footer; the move list only where it fits beside
two shape panels; a notice only below what cannot work at all (``MIN_WIDTH`` × ``MIN_HEIGHT``).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.events import Resize
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Static

from model.pieces import Color
from tui.board import Board, Scale
from tui.widgets import MoveLog, ShapePanel, StatusBar, XmlPane, large_panel_lines

MIN_WIDTH, MIN_HEIGHT = 40, 20  # below this nothing useful fits: a notice instead
STATUS_LINES = 4  # status lines (a fifth only on narrow centre columns, where the board is small)
BELOW_BOARD = 2  # feedback lines
FOOTER = 1
CENTRE_MIN = 34  # columns of the centre column (status lines)
SIDE_MIN = 20  # columns of a shape panel column
LOG_WIDTH = 38
LARGE_LOG_WIDTH = 44  # blokus.tcss: .-large #log-column
XML_HEIGHT = 14
XML_MIN_HEIGHT = 6  # below this the XML pane is not worth its lines: it closes (the board first)
COMPACT_STATUS_LINES = 3  # the replay viewer's status at its shortest: the turn, the score, the move


@dataclass(frozen=True)
class LayoutPlan:
    scale: Scale
    centre: int  # columns of the centre column
    panels: bool  # the two shape-panel columns
    log: bool  # the move list
    too_small: bool


def plan_layout(width: int, height: int, reserved_lines: int = 0) -> LayoutPlan:
    """The layout for a terminal of ``width`` × ``height`` (``reserved_lines``: e.g. the XML pane)."""
    if width < MIN_WIDTH or height < MIN_HEIGHT:
        return LayoutPlan(Scale.HALF, CENTRE_MIN, False, False, True)
    free = height - reserved_lines - STATUS_LINES - BELOW_BOARD - FOOTER
    scale = Scale.HALF
    for candidate in (Scale.LARGE, Scale.NORMAL):
        board_w, board_h = candidate.size
        if board_h <= free and board_w + 2 + 2 * SIDE_MIN <= width:
            scale = candidate
            break
    centre = max(scale.size[0] + (0 if scale is Scale.HALF else 2), CENTRE_MIN)
    panels = width >= centre + 2 * SIDE_MIN
    log = panels and width >= centre + 2 * (SIDE_MIN + 2) + LOG_WIDTH
    return LayoutPlan(scale, centre, panels, log, False)


def side_content_width(width: int, plan: LayoutPlan) -> int:
    """Columns inside a shape panel (the two side columns share what the centre and the log leave)."""
    log = (LARGE_LOG_WIDTH if plan.scale is Scale.LARGE else LOG_WIDTH) if plan.log else 0
    return (width - plan.centre - log) // 2 - 2  # the panel's padding


def compose_board_layout(
    below_board: Widget, status: StatusBar | None = None, board: Board | None = None
) -> ComposeResult:
    """Panels of team ONE | ``status``, board, ``below_board`` | panels of team TWO | move list (ux-notes §1)."""
    with Horizontal(id="main"):
        with Vertical(classes="side", id="team-one"):
            yield ShapePanel(Color.BLUE, id="panel-BLUE")
            yield ShapePanel(Color.RED, id="panel-RED")
        with Vertical(id="centre"):
            yield status or StatusBar(id="status")
            yield board or Board(id="board")
            yield below_board
        with Vertical(classes="side", id="team-two"):
            yield ShapePanel(Color.YELLOW, id="panel-YELLOW")
            yield ShapePanel(Color.GREEN, id="panel-GREEN")
        with Vertical(id="log-column"):
            yield MoveLog(id="log")
    yield XmlPane(id="xml")
    yield Static(id="too-small")
    yield Footer()


class BoardLayout(Screen):
    """A screen built with ``compose_board_layout``: fits it to the terminal, repaints on a theme change.

    Subclasses implement ``refresh_view``."""

    AUTO_FOCUS = None
    status_room: int | None = None  # lines left for the status above the board (the replay viewer fits to it)

    def refresh_view(self) -> None:
        raise NotImplementedError

    def reserved_lines(self, width: int, height: int) -> int:
        """Lines a subclass keeps below the board layout (the replay viewer's analysis area)."""
        return 0

    def min_centre_lines(self) -> int:
        """Lines the centre column needs at the least: the status (a fifth line on narrow columns), the
        half-block board with its coordinates, the lines below it. The panes below get only what is left."""
        return STATUS_LINES + 1 + Scale.HALF.size[1] + BELOW_BOARD

    def toggle_xml(self) -> None:
        """The XML pane on or off; where the terminal is too short for it below the board, say so."""
        pane = self.query_one(XmlPane)
        pane.toggle_class("shown")
        wanted = pane.has_class("shown")
        width, height = self.app.size
        self.fit_to(width, height)
        if wanted and not pane.has_class("shown"):
            need = FOOTER + self.reserved_lines(width, height) + self.min_centre_lines() + XML_MIN_HEIGHT
            self.notify(
                f"The XML pane needs a terminal of at least {need} lines (this one has {height}).", severity="warning"
            )

    def on_mount(self) -> None:
        self.fit_to(self.app.size.width, self.app.size.height)
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def on_resize(self, event: Resize) -> None:
        self.fit_to(event.size.width, event.size.height)

    def fit_to(self, width: int, height: int) -> None:
        reserved = self.reserved_lines(width, height)
        xml = self.query_one(XmlPane)
        if xml.has_class("shown"):  # the board first: the XML pane gets the lines the board leaves
            lines = min(XML_HEIGHT, height - FOOTER - reserved - self.min_centre_lines())
            if lines < XML_MIN_HEIGHT:
                xml.remove_class("shown")
            else:
                xml.styles.height = lines
                reserved += lines
        plan = plan_layout(width, height, reserved)
        self.plan = plan
        self.status_room = height - FOOTER - reserved - plan.scale.size[1] - 1  # 1: the line below the board
        for scale in Scale:
            self.set_class(plan.scale is scale, f"-{scale.name.lower()}")
        self.set_class(not plan.log, "-no-log")
        self.set_class(plan.too_small, "-too-small")
        for side in self.query(".side"):
            side.display = plan.panels
        self.query_one("#centre").styles.width = plan.centre
        self.query_one(Board).set_scale(plan.scale)
        large = (
            plan.panels
            and plan.scale is Scale.LARGE
            and 2 * (large_panel_lines(side_content_width(width, plan)) + 1) <= height - FOOTER - reserved
        )
        for panel in self.query(ShapePanel):
            if panel.compact != (plan.scale is Scale.HALF) or panel.large != large:
                panel.compact = plan.scale is Scale.HALF
                panel.large = large
                panel.refresh(layout=True)
        self.query_one("#too-small", Static).update(
            f"The terminal is {width}×{height}: Blokus needs at least {MIN_WIDTH}×{MIN_HEIGHT} "
            "(80×24 shows everything).\nMake the window larger, or press ctrl+q to quit."
        )
        self.call_after_refresh(self.refresh_view)  # the status lines follow the new column width
        for footer in self.query(Footer):
            narrow = width < 132
            if footer.compact != narrow:
                footer.compact = narrow
                footer.show_command_palette = not narrow
                self.refresh_bindings()  # the footer only lays its keys out again on a bindings change

    def _theme_changed(self, _theme: object = None) -> None:
        for panel in self.query(ShapePanel):
            panel.refresh(layout=True)
        self.query_one(MoveLog).retheme()
        self.refresh_view()
