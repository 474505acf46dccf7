"""The pane with the output of a ``cmd:`` opponent (its stderr, where a team's client writes its debug lines)."""

from __future__ import annotations

from collections.abc import Callable

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from tui.colors import palette_for

PANE_HEIGHT = 10  # lines with the border, where the terminal has them
PANE_MIN_HEIGHT = 4  # below this the pane is not worth its lines: it stays closed (the board first)


class ProgramLog(Static):
    """The last lines of the program's stderr, newest at the bottom; the lines come cleaned of control
    characters (``net.external.clean_line``), so they are shown as plain text, never as markup."""

    DEFAULT_CSS = """
    ProgramLog { display: none; height: 10; width: 100%; border: round $panel-lighten-2; padding: 0 1; }
    ProgramLog.shown { display: block; }
    """

    def __init__(
        self, title: str, *, follow: Callable[[], None] | None = None, every: float = 0.3, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.border_title = title
        self.lines: list[str] = []
        self._follow, self._every = follow, every

    def on_mount(self) -> None:
        if self._follow is not None:  # the screen's view of the program, shown or not (move times too)
            self.set_interval(self._every, self._follow)

    def show_lines(self, lines: list[str], note: str = "") -> None:
        self.lines = list(lines)
        room = max(1, self.content_size.height or PANE_HEIGHT - 2)
        shown = lines[-room:]
        text = Text(
            "\n".join(shown) if shown else "(nothing on stderr yet)",
            Style(color=palette_for(self.app).text) if shown else Style(color=palette_for(self.app).label),
        )
        self.border_subtitle = note
        self.update(text)
