"""Command-palette entries (ctrl+p): the screen's key bindings that can be used now, and "Select PIECE"
for every piece the screen or a widget of its focus offers (``PaletteExtras``). Nothing here knows the screens."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from blokus.tui.keys import key_help


@runtime_checkable
class PaletteExtras(Protocol):
    def palette_extras(self) -> list[tuple[str, Callable[[], object], str]]:
        """(name, callback, help) of further palette entries."""


Entry = tuple[str, Callable[[], object], str]  # (name, callback, help); an awaitable the callback returns is awaited


class BlokusCommands(Provider):
    def _entries(self) -> list[Entry]:
        screen = self.screen
        entries: list[Entry] = []
        focused = screen.focused  # the game's board holds the piece's keys, the viewer's analysis panel its own
        owners = (
            [] if focused is None else [n for n in focused.ancestors_with_self if n is not screen and n is not self.app]
        )
        for owner, bindings in ((node, node.BINDINGS) for node in (*owners, screen, self.app)):
            for row in key_help(bindings):
                if not row.single:
                    continue  # a group such as the arrow keys: keys, not a command
                name = row.action.split("(")[0]
                if owner.check_action(name, ()) is not True:
                    continue
                entries.append(
                    (row.text[:1].upper() + row.text[1:], partial(self.app.run_action, row.action, owner), row.keys)
                )
        for node in (*owners, screen):
            if isinstance(node, PaletteExtras):
                entries += node.palette_extras()
        return entries

    async def discover(self) -> Hits:
        for name, callback, help_text in self._entries():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, help_text in self._entries():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
