"""The Textual app: hosts one main screen (a game or a replay), plus help and dialogs; logging; running."""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from rich.text import Text
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from blokus.model.user_cache import cache_folder
from blokus.tui.commands import BlokusCommands

log = logging.getLogger(__name__)

LOG_FILE_ENV = "BLOKUS_LOG"


class BlokusApp(App[int]):
    """``make_screen`` builds the main screen; ``restart`` replaces it with a new one (new game)."""

    TITLE = "Blokus"
    CSS_PATH = "blokus.tcss"
    ENABLE_COMMAND_PALETTE = True
    COMMANDS = App.COMMANDS | {BlokusCommands}
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, tooltip="quit at once"),
        Binding("ctrl+t", "toggle_theme", "Theme", show=False, tooltip="light / dark theme"),
        Binding("ctrl+p", "command_palette", "Palette", show=False, tooltip="command palette: every action by name"),
    ]

    def __init__(self, make_screen: Callable[[], Screen], *, theme: str = "textual-dark") -> None:
        super().__init__()
        self._make_screen = make_screen
        self._initial_theme = theme
        self.main_screen: Screen | None = None
        self.farewell: list[str] = []  # said on the terminal after the app has closed (where a game was saved)

    def on_mount(self) -> None:
        self.theme = self._initial_theme
        self.main_screen = self._make_screen()
        self.push_screen(self.main_screen)

    def restart(self) -> None:
        """A new main screen in place of the old one (the game screens' "new game")."""
        self.main_screen = self._make_screen()
        self.switch_screen(self.main_screen)

    # Textual 8.2.8 has no public hook for an unhandled exception (App._handle_exception calls this, then run()
    # prints a Rich traceback with locals), so this private method is overridden; it exits through public panic().
    def _fatal_error(self) -> None:
        """An unexpected error: the traceback goes to the log file, the user gets one readable line."""
        exc = self._exception
        log.error("unexpected error", exc_info=exc if exc is not None else True)
        self.bell()
        # Text: the message is printed as it is (an exception's text is no Rich markup). One line at any
        # terminal width: Rich would wrap it at the terminal's width when rendered and crop it when printed.
        self.error_console.soft_wrap = True
        self.panic(
            Text(
                f"blokus: unexpected error: {type(exc).__name__ if exc else 'error'}: {exc} "
                f"(the details are in {log_file_path()})",
                no_wrap=True,
                overflow="ignore",
            )
        )

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's palette entries, with "Keys" opening our help screen (which escape closes) instead of
        Textual's side panel."""
        for command in super().get_system_commands(screen):
            if command.title != "Keys":
                yield command
            elif (show_help := getattr(screen, "action_help", None)) is not None:
                yield SystemCommand("Keys", "Every key of this screen (escape closes the list)", show_help)

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    async def action_help_quit(self) -> None:  # type: ignore[override]  # Textual awaits an async action
        """ctrl+c: the same question as q (Textual would only say which key quits)."""
        quit_main = getattr(self.main_screen, "action_quit", None)
        if quit_main is None:
            self.exit(0)
        elif inspect.isawaitable(result := quit_main()):
            await result

    async def action_quit(self) -> None:
        leave = getattr(self.main_screen, "leave", None)
        if leave is not None:
            await leave()  # stops the AI, closes a connection
        else:
            self.exit(0)


# --- logging ---------------------------------------------------------------------------------------


_LOG_PATH: Path | None = None


def log_file_path() -> str:
    return str(_LOG_PATH) if _LOG_PATH is not None else "the log file"


def default_log_path() -> Path:
    """$BLOKUS_LOG or ~/.cache/blokus/blokus.log."""
    return Path(os.environ.get(LOG_FILE_ENV) or cache_folder("blokus.log"))


def setup_logging(path: str | None = None) -> None:
    """Logs go to a file (never onto the screen): ``path`` or :func:`default_log_path`."""
    global _LOG_PATH
    target = Path(path) if path else default_log_path()
    _LOG_PATH = target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(target, encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
