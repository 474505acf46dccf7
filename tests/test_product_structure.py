"""The product's structure (GUIDE.md, Architecture): no import cycle anywhere in the product, counting the
imports inside functions; no function with more than a dozen parameters (a structure wants to be made); the
command line stays in ``cli/`` (below it no argparse, no ``blokus …:`` line, no ``sys.exit``).

All read the source (ast), so they see every module, imported by a test or not."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("blokus", "model", "ai", "net", "tui", "cli")
MAX_PARAMETERS = 12

# Today's offenders, each to be removed. The tests below fail on an offender not listed AND on a listed one
# that no longer offends: the list cannot rot.
KNOWN_OFFENDERS: set[str] = set()
BELOW_CLI = ("model", "ai", "net", "tui")
COMMAND_LINE = re.compile(r"^blokus [a-z-]+: ")  # a subcommand's line: ``blokus watch: …``


def product_modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the product (a package by its __init__)."""
    modules = {}
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            parts = parts if package == "blokus" else ("blokus", *parts)  # installed as blokus.model, ...
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the product modules it imports anywhere in its text (top level, functions, TYPE_CHECKING)."""

    def known(name: str) -> str | None:  # the module itself, else the package that holds the name
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(known(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package, one level up per further dot
                    anchor = package
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                for alias in node.names:  # `from pkg import module` imports that module
                    targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else known(base))
        graph[name] = {t for t in targets if t is not None and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def parameter_counts(modules: dict[str, Path]) -> dict[str, int]:
    """Qualified function name -> its parameters (every kind; a method's self or cls not counted)."""
    counts: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str, in_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}.{child.name}", True)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                args = child.args
                names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
                names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
                if in_class and names and names[0] in ("self", "cls"):
                    names = names[1:]
                counts[f"{prefix}.{child.name}"] = len(names)
                visit(child, f"{prefix}.{child.name}", False)
            else:
                visit(child, prefix, in_class)

    for name, path in modules.items():
        visit(ast.parse(path.read_text(encoding="utf-8")), name, False)
    return counts


def command_line_uses(path: Path) -> set[str]:
    """What of the command line a module's source holds: ``argparse`` (imported), ``line`` (a string that starts
    as a subcommand's line, plain or an f-string), ``exit`` (``sys.exit``, ``raise SystemExit``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(alias.name.partition(".")[0] == "argparse" for alias in node.names):
            found.add("argparse")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").partition(".")[0] == "argparse":
            found.add("argparse")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and COMMAND_LINE.match(node.value):
            found.add("line")  # also the first piece of an f-string
        elif isinstance(node, ast.Attribute) and node.attr == "exit" and isinstance(node.value, ast.Name):
            found.update(["exit"] if node.value.id == "sys" else [])
        elif isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            found.update(["exit"] if isinstance(raised, ast.Name) and raised.id == "SystemExit" else [])
    return found


def _known(kind: str) -> set[str]:
    return {entry for entry in KNOWN_OFFENDERS if entry.startswith(f"{kind}: ")}


def test_no_import_cycle_in_the_product():
    found = {"cycle: " + " <-> ".join(component) for component in cycles(import_graph(product_modules()))}
    assert found - _known("cycle") == set(), "new import cycles (imports point one way: GUIDE.md)"
    assert _known("cycle") - found == set(), "gone: take them out of KNOWN_OFFENDERS"


def test_no_function_with_more_than_a_dozen_parameters():
    counts = parameter_counts(product_modules())
    found = {f"parameters: {name}" for name, count in counts.items() if count > MAX_PARAMETERS}
    new = {f"{entry} ({counts[entry.removeprefix('parameters: ')]})" for entry in found - _known("parameters")}
    assert new == set(), f"more than {MAX_PARAMETERS} parameters: group them in a structure"
    assert _known("parameters") - found == set(), "gone: take them out of KNOWN_OFFENDERS"


def test_the_command_line_stays_in_cli():
    """Commands own their input and output (issue 51.3): below ``cli/`` no argparse (options are frozen objects
    made in ``cli/``), no ``blokus …:`` line and no exit (typed errors and results go up; ``cli/`` says them)."""
    modules = product_modules()
    found = {
        f"command output: {name}"
        for name, path in modules.items()
        if name.removeprefix("blokus.").partition(".")[0] in BELOW_CLI and command_line_uses(path)
    }
    offending = {entry: command_line_uses(modules[entry.removeprefix("command output: ")]) for entry in found}
    new = {f"{entry} {sorted(uses)}" for entry, uses in offending.items() if entry not in _known("command output")}
    assert new == set(), "the command line below cli/: raise a typed error or return a result, cli/ says it"
    assert _known("command output") - found == set(), "gone: take them out of KNOWN_OFFENDERS"


def test_the_checks_see_what_they_look_for():
    """The checks themselves: a cycle through a function's import, a relative import, and a count."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    modules = product_modules()
    assert {"blokus.model.moves", "blokus.ai.interface", "blokus.net.server", "blokus.tui.app", "blokus"} <= set(
        modules
    )
    graph = import_graph(modules)
    assert "blokus.model.pieces" in graph["blokus.model.moves"] and "blokus.model" not in graph["blokus.model.moves"]
    counts = parameter_counts(modules)
    assert counts["blokus.model.moves.IllegalMoveError.__init__"] == 3  # mistake, move, text (self not counted)


def test_the_command_line_check_sees_each_use(tmp_path):
    cases = {
        "from argparse import Namespace\n": {"argparse"},
        "import argparse.x\n": {"argparse"},
        "say(f'blokus watch: {reason}')\n": {"line"},
        "print('blokus bundle: done')\n": {"line"},
        "import sys\nsys.exit(2)\n": {"exit"},
        "raise SystemExit(1)\n": {"exit"},
        "raise SystemExit\n": {"exit"},
        "lines = ['blokus bot -h host', 'blokus: unexpected', f'{prog}: x']\nos._exit(0)\n": set(),
    }
    for text, uses in cases.items():
        (tmp_path / "m.py").write_text(text)
        assert command_line_uses(tmp_path / "m.py") == uses, text
    assert {"argparse", "line"} <= command_line_uses(ROOT / "cli" / "watch.py")  # a command: its own
