"""Modal screens: help, confirmation, go-to-turn, end of game."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

HELP_TEXT = """\
[b]Playing[/b]
  ←↑↓→ / h j k l     move the piece (its top-left corner is the position)
  H J K L            move by 5 fields
  d / a              rotate clockwise / counter-clockwise
  w / s              rotate 180°
  f                  flip (mirror)
  tab / n            next placeable piece        shift+tab / b   previous piece
  escape             put the piece back (no piece selected)
  enter / space      place the piece (refused with the rule if illegal)
  P                  pass (asks first; not on a colour's first move)
  u                  undo (local games: back to your previous turn)
  i                  hint: the AI's suggestion becomes the ghost
  m                  AI, play this move for me
  o                  autopilot on/off (the AI plays your colours)
  v                  overlay: fields where the colour to move can place
  [ / ]              view the previous / next state (the game goes on)
  g                  back to the live game
  ctrl+s             save the game as a replay (replays/)
  ctrl+r             open a replay from replays/ (q comes back)
  x                  raw XML pane (network games)
  mouse              hover moves, click places, right-click flips, wheel rotates

[b]Replays[/b]
  ← / → (h / l)      step back / forward          home / end   first / last state
  t                  go to turn …                 space        autoplay on/off
  + / -              autoplay faster / slower     x            XML of the current state

[b]Everywhere[/b]
  ? / F1             this help                    ctrl+p       command palette
  ctrl+t             light / dark theme           q / ctrl+q   quit
"""


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 96; height: auto; max-height: 90%;
        border: thick $accent; background: $surface; padding: 0 2;
    }
    """
    BINDINGS = [
        Binding("escape,q,question_mark,f1,enter", "dismiss", "Close"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text.from_markup("[b]Blokus — keys[/b]\n\n" + HELP_TEXT))

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 60; height: auto; border: thick $warning; background: $surface; padding: 1 2;
    }
    """
    BINDINGS = [
        Binding("y,enter", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text.from_markup(f"{self.question}\n\n[b]y[/b] yes    [b]n[/b] no"))

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class TurnScreen(ModalScreen[int | None]):
    """Ask for a turn number."""

    DEFAULT_CSS = """
    TurnScreen { align: center middle; }
    TurnScreen > Vertical {
        width: 50; height: auto; border: thick $accent; background: $surface; padding: 1 2;
    }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical():
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
    """The result of a game and why it ended."""

    DEFAULT_CSS = """
    EndScreen { align: center middle; }
    EndScreen > Vertical {
        width: 72; height: auto; border: thick $success; background: $surface; padding: 1 2;
    }
    EndScreen #end-title { text-style: bold; color: $success; }
    """
    BINDINGS = [
        Binding("escape,enter", "close", "Back to the board"),
        Binding("ctrl+s", "choose('save')", "Save replay"),
        Binding("q", "choose('quit')", "Quit"),
    ]

    def __init__(self, title: str, details: str) -> None:
        super().__init__()
        self.title_text = title
        self.details = details

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text, id="end-title")
            yield Static(self.details, id="end-details")
            yield Static(Text.from_markup("\n[b]enter[/b] back to the board   [b]ctrl+s[/b] save replay   "
                                          "[b]q[/b] quit"))

    def action_close(self) -> None:
        self.dismiss("close")

    def action_choose(self, what: str) -> None:
        self.dismiss(what)


class ReplayPicker(ModalScreen["Path | None"]):
    """Choose a replay file (``*.xml``, ``*.xml.gz``) from ``replays/``, newest first."""

    DEFAULT_CSS = """
    ReplayPicker { align: center middle; }
    ReplayPicker > Vertical {
        width: 90; height: 24; border: thick $accent; background: $surface; padding: 0 1;
    }
    ReplayPicker OptionList { height: 1fr; }
    """
    BINDINGS = [Binding("escape,q", "cancel", "Cancel")]

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory
        files = [p for p in directory.glob("*") if p.name.endswith((".xml", ".xml.gz"))] \
            if directory.is_dir() else []
        self.files = sorted(files, key=lambda p: p.stat().st_mtime, reverse=True)

    def compose(self) -> ComposeResult:
        from textual.widgets import OptionList

        with Vertical():
            yield Static(Text.from_markup(f"[b]Open a replay[/b] from {self.directory}/  (enter opens, escape: back)"))
            if self.files:
                yield OptionList(*[p.name for p in self.files], id="files")
            else:
                yield Static(f"No replay files (*.xml, *.xml.gz) in {self.directory}/")

    def on_option_list_option_selected(self, event) -> None:
        self.dismiss(self.files[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)
