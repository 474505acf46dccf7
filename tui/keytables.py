"""The README's key tables, generated from the bindings: ``python -m blokus.tui.keytables``."""

from __future__ import annotations

from blokus.tui.app import BlokusApp
from blokus.tui.game_screen import GAME_BINDINGS
from blokus.tui.keys import markdown_table
from blokus.tui.replay_screen import VIEWER_BINDINGS


def readme_tables() -> str:
    return (
        f"Playing:\n\n{markdown_table(GAME_BINDINGS)}\n\n"
        f"In the replay viewer:\n\n{markdown_table(VIEWER_BINDINGS)}\n\n"
        f"Everywhere:\n\n{markdown_table(BlokusApp.BINDINGS)}\n"
    )


if __name__ == "__main__":
    print(readme_tables(), end="")
