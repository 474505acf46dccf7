"""Modal screens: help, confirmation, quit, go-to-turn, end of game, replay picker (styles: blokus.tcss)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Group
from rich.padding import Padding
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static

from blokus.tui.keys import help_renderable

MOUSE_HELP = (
    "hover moves the piece, click places it, right-click flips, the wheel rotates; click a piece in a "
    "panel to select it"
)


class HelpScreen(ModalScreen[None]):
    """Every key of the screen below and of the app, generated from their bindings."""

    BINDINGS = [Binding("escape,q,question_mark,f1,enter", "close", "Close")]

    def __init__(self, sections: list[tuple[str, list[BindingType]]]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog wide"):
            yield Static(Text.from_markup("[b]Blokus — keys[/b]  (escape closes)\n"))
            yield Static(help_renderable(self.sections))
            yield Static(Group(Text("Mouse", Style(bold=True)), Padding(MOUSE_HELP, (0, 0, 0, 2))))

    def action_close(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [
        Binding("y,enter", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog warning"):
            yield Static(Text.from_markup(f"{self.question}\n\n[b]y[/b] yes    [b]n[/b] no"))

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class QuitScreen(ModalScreen[str]):
    """Quit while a game is in progress: save first, quit without saving, or go back."""

    BINDINGS = [
        Binding("s,ctrl+s", "choose('save')", "Save and quit"),
        Binding("y,q,ctrl+c", "choose('quit')", "Quit"),
        Binding("n,escape", "choose('stay')", "Back"),
    ]

    def __init__(self, question: str, can_save: bool = True) -> None:
        super().__init__()
        self.question = question
        self.can_save = can_save

    def compose(self) -> ComposeResult:
        save = "[b]s[/b] save under replays/ and quit   " if self.can_save else ""
        with Vertical(classes="dialog warning"):
            yield Static(
                Text.from_markup(f"{self.question}\n\n{save}[b]q[/b] quit without saving   [b]esc[/b] back to the game")
            )

    def action_choose(self, what: str) -> None:
        if what == "save" and not self.can_save:
            return
        self.dismiss(what)


class TurnScreen(ModalScreen[int | None]):
    """Ask for a turn number."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Go to turn (the first state with turn ≥ t):")
            yield Input(placeholder="turn number", type="integer", id="turn")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            self.dismiss(int(event.value))
        except ValueError:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class EndScreen(ModalScreen[str]):
    """The result of a game and why it ended; save, new game (local games), quit."""

    BINDINGS = [
        Binding("escape,enter", "choose('close')", "Back to the board"),
        Binding("ctrl+s,s", "choose('save')", "Save replay"),
        Binding("n,N", "choose('new')", "New game"),
        Binding("A,a", "choose('analyse')", "Analyse"),
        Binding("q", "choose('quit')", "Quit"),
    ]

    def __init__(
        self, title: str, details: str, can_save: bool = True, can_restart: bool = False, can_analyse: bool = False
    ) -> None:
        super().__init__()
        self.title_text = title
        self.details = details
        self.can_save = can_save
        self.can_restart = can_restart
        self.can_analyse = can_analyse

    def compose(self) -> ComposeResult:
        keys = "[b]enter[/b] board   "
        keys += "[b]A[/b] analyse   " if self.can_analyse else ""
        keys += "[b]s[/b] save replay   " if self.can_save else ""
        keys += "[b]n[/b] new game   " if self.can_restart else ""
        with Vertical(classes="dialog success"):
            yield Static(self.title_text, id="end-title")
            yield Static(self.details, id="end-details")
            yield Static(Text.from_markup(f"\n{keys}[b]q[/b] quit"))

    def action_choose(self, what: str) -> None:
        if (what, False) in (("new", self.can_restart), ("save", self.can_save), ("analyse", self.can_analyse)):
            return
        self.dismiss(what)


class ReplayPicker(ModalScreen["Path | None"]):
    """Choose a replay file (``*.xml``, ``*.xml.gz``) from ``replays/``, newest first."""

    BINDINGS = [Binding("escape,q", "cancel", "Cancel")]

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory
        files = [p for p in directory.glob("*") if p.name.endswith((".xml", ".xml.gz"))] if directory.is_dir() else []
        self.files = sorted(files, key=lambda p: p.stat().st_mtime, reverse=True)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide tall"):
            yield Static(Text.from_markup(f"[b]Open a replay[/b] from {self.directory}/  (enter opens, escape: back)"))
            if self.files:
                yield OptionList(*[p.name for p in self.files], id="files")
            else:
                yield Static(f"No replay files (*.xml, *.xml.gz) in {self.directory}/")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.files[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)
