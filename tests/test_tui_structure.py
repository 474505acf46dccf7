"""The structure of ``tui/``: no import cycle (also none hidden in a function-level import), no class
over ~250 lines, no colour literal outside ``tui/colors.py``."""

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
    return {f"tui.{p.stem}": ast.parse(p.read_text(encoding="utf-8")) for p in TUI.glob("*.py")}


def _tui_imports(tree: ast.Module) -> set[str]:
    """Every ``tui.*`` module imported anywhere in the file (module level and inside functions)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tui."):
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("tui.")}
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


def test_no_class_in_tui_is_over_250_lines():
    long = []
    for name, tree in _modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES:
                long.append(f"{name}.{node.name}: {node.end_lineno - node.lineno + 1} lines")
    assert not long, long


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
    from tui.keytables import readme_tables

    readme = (TUI.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- keys:start -->\n", 1)[1].split("<!-- keys:end -->", 1)[0]
    assert block == readme_tables(), "README key tables differ from the bindings: paste `python -m tui.keytables`"
