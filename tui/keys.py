"""The key lists shown to the user, generated from the ``BINDINGS`` of the screens and the app.

The help screen (``?``), the command palette (``ctrl+p``) and the README's key table all come from here,
so a key is written once: in a ``Binding`` (its ``description`` is the footer label, its ``tooltip`` the
longer text for help and palette). Bindings that share a description (the four arrow keys) are one
line of help and no palette entry.

``python -m blokus.tui.keytables`` prints the README's key tables.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.binding import ActiveBinding, Binding, BindingType

_KEY_NAMES = {
    "left": "←",
    "right": "→",
    "up": "↑",
    "down": "↓",
    "question_mark": "?",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "plus": "+",
    "minus": "-",
    "equals_sign": "=",
    "escape": "esc",
    "f1": "F1",
    "space": "space",
    "enter": "enter",
}


def key_name(key: str) -> str:
    """``question_mark`` → ``?``, ``ctrl+s`` stays."""
    return _KEY_NAMES.get(key, key)


@dataclass(frozen=True)
class KeyHelp:
    key_groups: tuple[tuple[str, ...], ...]  # per binding its keys: (("←", "h"), ("→", "l"), …)
    text: str  # what the keys do
    action: str  # the action of the first binding (for the palette)

    @property
    def single(self) -> bool:
        """One binding (not a group of several actions under one description)."""
        return len(self.key_groups) == 1

    @property
    def keys(self) -> str:
        """ "d", "tab / n" or "← / h, → / l, …"."""
        return ", ".join(" / ".join(group) for group in self.key_groups)

    def markdown_keys(self) -> str:
        return ", ".join(" / ".join(f"`{k}`" for k in group) for group in self.key_groups)


def _bindings(bindings: list[BindingType]) -> list[Binding]:
    return [b for b in bindings if isinstance(b, Binding)]


def key_help(bindings: list[BindingType]) -> list[KeyHelp]:
    """One line per description, in the order of the bindings."""
    groups: dict[str, list[Binding]] = {}
    for b in _bindings(bindings):
        groups.setdefault(b.description or b.action, []).append(b)
    out = []
    for description, group in groups.items():
        keys = tuple(tuple(key_name(k.strip()) for k in b.key.split(",")) for b in group)
        out.append(KeyHelp(keys, group[0].tooltip or description, group[0].action))
    return out


def help_renderable(sections: list[tuple[str, list[BindingType]]]) -> Group:
    """The help screen: one titled block per section, the keys beside what they do; a long text wraps
    under itself, not under the keys."""
    parts: list[RenderableType] = []
    for title, bindings in sections:
        rows = key_help(bindings)
        if not rows:
            continue
        parts.append(Text(title, Style(bold=True)))
        table = Table.grid(padding=(0, 2))
        table.add_column(no_wrap=True)
        table.add_column(ratio=1)
        for row in rows:
            table.add_row(Text(row.keys), Text(row.text))  # plain text: "[" is a key here, not markup
        parts += [Padding(table, (0, 0, 0, 2)), Text("")]
    return Group(*parts)


def markdown_table(bindings: list[BindingType]) -> str:
    rows = ["| keys | action |", "|---|---|"]
    rows += [f"| {r.markdown_keys()} | {r.text} |" for r in key_help(bindings)]
    return "\n".join(rows)


def in_order(active: dict[str, ActiveBinding], order: list[BindingType]) -> dict[str, ActiveBinding]:
    """A screen's active keys (``Screen.active_bindings``) in the order of ``order`` (its help screen's list), the
    keys not in it after them in Textual's order (the focused widget's, then the screen's, then the app's)."""
    rank = {b.action: i for i, b in enumerate(_bindings(order))}
    return dict(sorted(active.items(), key=lambda item: rank.get(item[1].binding.action, len(rank))))
