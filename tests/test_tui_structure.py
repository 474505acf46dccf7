"""The structure of ``tui/``: no import cycle (also none hidden in a function-level import), no class
over ~250 lines counting the lines it inherits, no screen that inherits a class of ``tui/``, no colour literal
outside ``tui/colors.py``."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

TUI = Path(__file__).resolve().parents[1] / "tui"
MAX_CLASS_LINES = 260


@functools.cache
def _modules() -> dict[str, ast.Module]:
    """Every module of ``tui/``, parsed once."""
    return {f"blokus.tui.{p.stem}": ast.parse(p.read_text(encoding="utf-8")) for p in TUI.glob("*.py")}


def _tui_imports(tree: ast.Module) -> set[str]:
    """Every ``tui.*`` module imported anywhere in the file (module level and inside functions)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("blokus.tui."):
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("blokus.tui.")}
    return out


def test_tui_import_graph_has_no_cycle():
    modules = _modules()
    graph = {name: _tui_imports(tree) & set(modules) for name, tree in modules.items()}
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        if node in path:
            raise AssertionError("import cycle: " + " -> ".join(path[path.index(node) :] + [node]))
        if node in done:
            return
        for target in sorted(graph[node]):
            visit(target, path + [node])
        done.add(node)

    for name in sorted(graph):
        visit(name, [])


def _class_lines() -> dict[tuple[str, str], int]:
    return {
        (name, node.name): node.end_lineno - node.lineno + 1
        for name, tree in _modules().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
    }


def _project_classes() -> list[type]:
    """Every class defined at the top of a module of ``tui/``."""
    import importlib
    import inspect

    out = []
    for module, name in _class_lines():
        cls = getattr(importlib.import_module(module), name, None)
        if inspect.isclass(cls) and cls.__module__ == module:
            out.append(cls)
    return out


def test_no_class_in_tui_is_over_250_lines_counting_what_it_inherits():
    """A class's size is its own lines plus those of every project class in its MRO (a screen that inherits
    900 lines is as hard to change as one that has them)."""
    own = _class_lines()
    long = []
    for cls in _project_classes():
        lines = own[(cls.__module__, cls.__name__)]
        total = sum(own.get((base.__module__, base.__name__), 0) for base in cls.__mro__)
        if total > MAX_CLASS_LINES:
            long.append(f"{cls.__module__}.{cls.__name__}: {lines} lines, {total} with its bases")
    assert not long, long


def test_screens_are_composed_not_inherited():
    """No screen of ``tui/`` derives from another class of ``tui/`` (a screen, a layout, a mixin): a screen is
    made of widgets and plain objects that tell it by messages what happened (issue 51.4)."""
    from textual.screen import Screen

    inheriting = [
        f"{cls.__module__}.{cls.__name__} <- "
        + ", ".join(
            f"{base.__module__}.{base.__name__}"
            for base in cls.__mro__[1:]
            if base.__module__.startswith("blokus.tui.")
        )
        for cls in _project_classes()
        if issubclass(cls, Screen) and any(base.__module__.startswith("blokus.tui.") for base in cls.__mro__[1:])
    ]
    assert not inheriting, inheriting


def test_colour_literals_only_in_colors_py():
    literal = re.compile(r"[\"']#[0-9a-fA-F]{6}[\"']")
    found = [
        f"{p.name}:{i}"
        for p in TUI.glob("*.py")
        if p.name != "colors.py"
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if literal.search(line)
    ]
    found += [p.name for p in TUI.glob("*.tcss") if re.search(r"#[0-9a-fA-F]{3,6}\b", p.read_text())]
    assert not found, found


def test_readme_key_tables_are_the_bindings():
    from blokus.tui.keytables import readme_tables

    readme = (TUI.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- keys:start -->\n", 1)[1].split("<!-- keys:end -->", 1)[0]
    assert block == readme_tables(), (
        "README key tables differ from the bindings: paste `python -m blokus.tui.keytables`"
    )
