"""The board layout (a widget) of the game and the replay screens, and how it fits the terminal.

``plan_layout`` picks the board scale and the columns from the terminal size: the largest board that
leaves room for the status lines, the feedback and the footer; the move list only where it fits beside
two shape panels; a notice only below what cannot work at all (``MIN_WIDTH`` × ``MIN_HEIGHT``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.events import Resize
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Footer, Static

from blokus.model.pieces import Color
from blokus.tui.board import Board, Scale
from blokus.tui.widgets import MoveLog, PanelView, ShapePanel, StatusBar, XmlPane, large_panel_lines

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
LETTERS_STATUS_LINES = 2  # a game's status beside the letter board (NO_COLOR, 80×24): who is to move, the piece
LETTERS_BELOW_BOARD = 1  # its feedback line


@dataclass(frozen=True)
class LayoutPlan:
    scale: Scale
    centre: int  # columns of the centre column
    panels: bool  # the two shape-panel columns
    log: bool  # the move list
    too_small: bool


def plan_layout(width: int, height: int, reserved_lines: int = 0, letters_status: int | None = None) -> LayoutPlan:
    """The layout for a terminal of ``width`` × ``height`` (``reserved_lines``: e.g. the XML pane).
    ``letters_status``: the status lines of the letter board (NO_COLOR: where the half-block board would show only
    greys, the board of one letter per field takes its place if it fits with that many status lines and one line
    of feedback; None: never)."""
    if width < MIN_WIDTH or height < MIN_HEIGHT:
        return LayoutPlan(Scale.HALF, CENTRE_MIN, False, False, True)
    free = height - reserved_lines - STATUS_LINES - BELOW_BOARD - FOOTER
    scale = Scale.HALF
    for candidate in (Scale.LARGE, Scale.NORMAL):
        board_w, board_h = candidate.size
        if board_h <= free and board_w + 2 + 2 * SIDE_MIN <= width:
            scale = candidate
            break
    if scale is Scale.HALF and letters_status is not None:
        if height - reserved_lines - FOOTER - letters_status - LETTERS_BELOW_BOARD >= Scale.LETTERS.size[1]:
            scale = Scale.LETTERS
    centre = max(scale.size[0] + (0 if scale.field_width == 1 else 2), CENTRE_MIN)
    panels = width >= centre + 2 * SIDE_MIN
    log = panels and width >= centre + 2 * (SIDE_MIN + 2) + LOG_WIDTH
    return LayoutPlan(scale, centre, panels, log, False)


def shortest_status(plan: LayoutPlan | None) -> int:
    """The replay viewer's status at its shortest: beside the letter board two lines (the turn and the score; the
    board marks the move), else ``COMPACT_STATUS_LINES``."""
    return LETTERS_STATUS_LINES if plan is not None and plan.scale is Scale.LETTERS else COMPACT_STATUS_LINES


def side_content_width(width: int, plan: LayoutPlan) -> int:
    """Columns inside a shape panel (the two side columns share what the centre and the log leave)."""
    log = (LARGE_LOG_WIDTH if plan.scale is Scale.LARGE else LOG_WIDTH) if plan.log else 0
    return (width - plan.centre - log) // 2 - 2  # the panel's padding


class Pane(Protocol):
    """A pane below the board (the analysis area, a program's log): it takes lines only where the board leaves
    them (``fit``); one switched on that gets none is said (``refusal``)."""

    @property
    def wanted(self) -> bool: ...  # switched on

    @property
    def has_lines(self) -> bool: ...  # it takes lines (after a fit)

    def fit(self, width: int, room: int) -> int: ...  # the lines it takes of ``room`` (0: not shown)

    def refusal(self, height: int, min_centre_lines: int) -> str: ...  # why it does not show


class PaneSwitched(Message):
    """A pane below the board was switched on or off: the layout fits itself anew (and says so where it has no
    room)."""

    def __init__(self, pane: Pane) -> None:
        super().__init__()
        self.pane = pane


class BoardLayout(Vertical):
    """A screen's body: panels of team ONE | status, board, ``below_board`` | panels of team TWO | move list
    (ux-notes §1); the XML pane and the ``panes`` below them; the footer; a notice instead of all where the
    terminal is too small. ``centre``: the container of the centre column (``#centre``; a game's holds the keys of
    playing); ``xml_from``: the XML pane shows at the start on terminals of this many lines (None: never).

    It fits itself to the terminal (its size): the board scale, the columns, the panels' drawings, the lines of the
    panes (the board first: ``min_centre_lines``, what the centre column needs at the least, comes before them),
    the size classes of blokus.tcss (-half / -normal / -large, -no-log, -too-small), the footer; then it posts
    ``Fitted`` (the screen repaints: the status lines follow the column's width), also after a theme change."""

    DEFAULT_CSS = "BoardLayout { height: 1fr; }"

    class Fitted(Message):
        """The layout changed (a new size, a pane, a theme): the screen repaints."""

    def __init__(
        self,
        below_board: Widget,
        *,
        status: StatusBar | None = None,
        board: Board | None = None,
        centre: Vertical | None = None,
        panes: Sequence[Widget] = (),
        min_centre_lines: int = STATUS_LINES + 1 + Scale.HALF.size[1] + BELOW_BOARD,
        xml_from: int | None = None,
        letters: bool = False,
    ) -> None:
        super().__init__()
        self._letters = letters  # under NO_COLOR the letter board may replace the half blocks (a game's status)
        self._below_board, self._status, self._board, self._centre = below_board, status, board, centre
        self._panes, self._xml_from = panes, xml_from
        self.min_centre_lines = min_centre_lines
        self.plan: LayoutPlan | None = None  # None until the first fit
        self.status_room: int | None = None  # lines left for the status above the board (the replay fits to it)

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            with Vertical(classes="side", id="team-one"):
                yield ShapePanel(Color.BLUE, id="panel-BLUE")
                yield ShapePanel(Color.RED, id="panel-RED")
            with self._centre or Vertical(id="centre"):
                yield self._status or StatusBar(id="status")
                yield self._board or Board(id="board")
                yield self._below_board
            with Vertical(classes="side", id="team-two"):
                yield ShapePanel(Color.YELLOW, id="panel-YELLOW")
                yield ShapePanel(Color.GREEN, id="panel-GREEN")
            with Vertical(id="log-column"):
                yield MoveLog(id="log")
        yield XmlPane(id="xml")
        yield Static(id="too-small")
        yield from self._panes
        yield Footer()

    def on_mount(self) -> None:
        width, height = self.app.size
        if self._xml_from is not None and height >= self._xml_from:
            self.query_one(XmlPane).add_class("shown")  # on a shorter terminal it would cover the board
        self.fit(width, height)
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def on_resize(self, event: Resize) -> None:
        self.fit(event.size.width, event.size.height)

    def _theme_changed(self, _theme: object = None) -> None:
        """Redraw what keeps colours of its own (the panels, the move list) in the theme's; the screen repaints."""
        for panel in self.query(ShapePanel):
            panel.refresh(layout=True)
        self.query_one(MoveLog).retheme()
        self.post_message(self.Fitted())

    @property
    def xml_shown(self) -> bool:
        return self.query_one(XmlPane).has_class("shown")

    def toggle_xml(self) -> None:
        """The XML pane on or off; where the terminal is too short for it below the board, said so."""
        pane = self.query_one(XmlPane)
        pane.toggle_class("shown")
        wanted = pane.has_class("shown")
        width, height = self.app.size
        reserved = self.fit(width, height)
        if wanted and not pane.has_class("shown"):
            need = FOOTER + reserved + self.min_centre_lines + XML_MIN_HEIGHT
            self.notify(
                f"The XML pane needs a terminal of at least {need} lines (this one has {height}).", severity="warning"
            )

    @on(PaneSwitched)
    def _pane_switched(self, message: PaneSwitched) -> None:
        message.stop()
        pane, width, height = message.pane, *self.app.size
        wanted = pane.wanted
        self.fit(width, height)
        if wanted and not pane.has_lines:
            self.notify(pane.refusal(height, self.min_centre_lines), severity="warning")

    def fit(self, width: int, height: int) -> int:
        """Fit to a terminal of ``width`` × ``height``; returns the lines of the panes below the board."""
        reserved = 0
        for pane in self._panes:
            reserved += cast(Pane, pane).fit(width, height - FOOTER - reserved - self.min_centre_lines)
        panes = reserved
        xml = self.query_one(XmlPane)
        if xml.has_class("shown"):  # the board first: the XML pane gets the lines the board leaves
            lines = min(XML_HEIGHT, height - FOOTER - reserved - self.min_centre_lines)
            if lines < XML_MIN_HEIGHT:
                xml.remove_class("shown")
            else:
                xml.styles.height = lines
                reserved += lines
        mono = self._letters and bool(getattr(self.app, "no_color", False))
        plan = plan_layout(width, height, reserved, LETTERS_STATUS_LINES if mono else None)
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
            compact = plan.scale.field_width == 1
            if panel.compact != compact or panel.large != large:
                panel.compact = compact
                panel.large = large
                panel.refresh(layout=True)
        self.query_one("#too-small", Static).update(
            f"The terminal is {width}×{height}: Blokus needs at least {MIN_WIDTH}×{MIN_HEIGHT} "
            "(80×24 shows everything).\nMake the window larger, or press ctrl+q to quit."
        )
        self.call_after_refresh(self.post_message, self.Fitted())  # the status lines follow the new column width
        self._fit_footer(width, plan)
        return panes

    def _fit_footer(self, width: int, plan: LayoutPlan) -> None:
        """Below 132 columns the footer is compact and leaves out the palette's key (more keys fit); a terminal
        too small for the board shows only the notice."""
        footer = self.query_one(Footer)
        footer.display = not plan.too_small
        narrow = width < 132
        if footer.compact != narrow:
            footer.compact = narrow
            footer.show_command_palette = not narrow
            self.screen.refresh_bindings()  # the footer only lays its keys out again on a bindings change

    def show_panels(self, views: Iterable[PanelView]) -> None:
        for view in views:
            self.query_one(f"#panel-{view.color.name}", ShapePanel).show(view)
