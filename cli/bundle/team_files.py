"""What ``blokus bundle --player`` packs of a team's player: found by reading the team's files, never by running them.

The player file is read with ``ast``; every module it imports (``import a.b``, ``from a import b``, relative
imports inside a package of its folder, ``importlib.import_module("a")`` and ``__import__("a")`` with a constant
name; imports inside functions too, none under ``if TYPE_CHECKING:``) is one of:

* a module or package of the player's folder (Python finds it there first: the bot puts the folder at the head
  of ``sys.path``): packed under the same path, and read the same way in turn;
* the standard library of the target Python, this project (``blokus``, ``model``, ...) or a package the upload
  holds anyway (numpy, numba and what they need): nothing to pack;
* a package installed where ``blokus bundle`` runs (the team's environment): packed from there into ``deps/``
  with the installed packages it needs that the upload lacks; refused by name if it is not installed, installed
  in editable mode, or holds compiled code for another Python or platform than the contest's (Linux x86-64).
  An import inside ``try: ... except ImportError`` is optional: packed if installed, else left out (said).

Nothing else of the folder is packed (not its tests, not a ``secrets_config.py`` it does not import) unless named
by ``--include`` (data files). A file or folder reached through a symbolic link is packed under the link's name
with the target's content, and the target must be inside the player's folder. A ``.pyc`` player is refused: the
upload needs the source (its bytecode is compiled for the target Python).
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import importlib.util
import json
import os
import platform
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from blokus.model.numba_cache import PACKAGES

COMPILED_SUFFIXES = (".so", ".pyd", ".dylib")
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


class PackError(Exception):
    """The team's files cannot be packed as they are: one line for the user."""


@dataclass(frozen=True)
class Import:
    """One import of a team's file: the module (absolute, dotted), the names taken from it (each may be a
    submodule), whether the code copes without it, and where it is."""

    module: str
    names: tuple[str, ...]
    optional: bool
    where: str  # ``player.py:3``


@dataclass
class TeamFiles:
    """What to pack: ``files`` (path inside the upload's ``player/`` -> the file to copy), the player's own path
    among them, the installed distributions for ``deps/`` (path inside ``deps/`` -> file), and the optional
    imports that are not installed (left out)."""

    folder: Path
    player: PurePosixPath
    files: dict[PurePosixPath, Path] = field(default_factory=dict)
    packages: list[str] = field(default_factory=list)  # the distributions packed from the team's environment
    deps: dict[PurePosixPath, Path] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)


# --- reading imports --------------------------------------------------------------------------------------


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    for kind in kinds:
        name = kind.id if isinstance(kind, ast.Name) else kind.attr if isinstance(kind, ast.Attribute) else ""
        if name in IMPORT_ERRORS:
            return True
    return False


def _absolute(module: str | None, level: int, package: str | None) -> str | None:
    """The absolute name of ``from {'.' * level}{module} import ...`` in ``package`` (None: no such package)."""
    if level == 0:
        return module
    if not package:
        return None  # a relative import in a top-level module fails when it runs: nothing to pack
    parts = package.split(".")
    if level - 1 >= len(parts):
        return None
    base = ".".join(parts[: len(parts) - (level - 1)])
    return f"{base}.{module}" if module else base


def _import_call(node: ast.Call) -> str | None:
    """The module named by ``importlib.import_module("a.b")`` / ``import_module(...)`` / ``__import__("a")``."""
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name not in ("import_module", "__import__") or not node.args:
        return None
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value and first.value[0] != ".":
        return first.value
    return None


def imports_of(tree: ast.Module, package: str | None, name: str) -> Iterator[Import]:
    """The imports of one file (``package``: the package it belongs to, None for a top-level module)."""
    todo: list[tuple[ast.AST, bool]] = [(tree, False)]
    while todo:
        node, optional = todo.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo += [(child, optional) for child in node.orelse]
            continue
        if isinstance(node, ast.Try | ast.TryStar):
            guarded = optional or any(_catches_import_error(h) for h in node.handlers)
            todo += [(child, guarded) for child in node.body]
            todo += [(child, optional) for child in [*node.handlers, *node.orelse, *node.finalbody]]
            continue
        where = f"{name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, (), optional, where)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module, node.level, package)
            if base is not None:
                yield Import(base, tuple(a.name for a in node.names if a.name != "*"), optional, where)
        elif isinstance(node, ast.Call) and (called := _import_call(node)) is not None:
            yield Import(called, (), optional, where)
        todo += [(child, optional) for child in ast.iter_child_nodes(node)]


def parse(path: Path, shown: str) -> ast.Module:
    try:
        return ast.parse(path.read_bytes(), filename=shown)
    except SyntaxError as exc:
        raise PackError(f"{shown}:{exc.lineno}: SyntaxError: {exc.msg}") from None
    except (OSError, ValueError) as exc:
        raise PackError(f"{shown}: cannot be read: {getattr(exc, 'strerror', None) or exc}") from None


# --- the player's folder ----------------------------------------------------------------------------------


class _Folder:
    """The player's folder: finds a module's files in it, every path checked to stay inside it."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def inside(self, relative: PurePosixPath) -> Path:
        """The real file or folder of ``relative``: links followed, their target inside the folder."""
        path = self.root.joinpath(*relative.parts)
        real = path.resolve()
        if not real.is_relative_to(self.root):
            raise PackError(
                f"{relative}: a link to {real}, outside the player's folder {self.root}: copy it into the folder"
            )
        return real

    def module(self, dotted: str, namespace: bool = True) -> list[PurePosixPath] | None:
        """The files that importing ``dotted`` runs from the folder (packages' ``__init__.py`` and the module's
        own file), None if its top-level name is not in the folder. ``namespace``: whether a folder without
        ``__init__.py`` counts at the top level (not when a module of that name exists elsewhere: Python takes
        that one)."""
        found: list[PurePosixPath] = []
        here = PurePosixPath()
        for i, part in enumerate(dotted.split(".")):
            directory, module = here / part, here / f"{part}.py"
            if self._is_file(directory / "__init__.py"):  # a regular package comes first ...
                found.append(directory / "__init__.py")
                here = directory
                continue
            if self._is_file(module):  # ... then a module
                found.append(module)
                return found
            compiled = self._compiled(here, part)
            if compiled is not None:
                found.append(compiled)
                return found
            if (namespace or i > 0) and self._is_dir(directory):  # ... then a namespace package
                here = directory
                continue
            return None if i == 0 else found  # not ours / an attribute, or a submodule that is missing
        return found

    def _is_file(self, relative: PurePosixPath) -> bool:
        path = self.root.joinpath(*relative.parts)
        return path.is_file() and bool(self.inside(relative))

    def _is_dir(self, relative: PurePosixPath) -> bool:
        path = self.root.joinpath(*relative.parts)
        return path.is_dir() and bool(self.inside(relative))

    def _compiled(self, here: PurePosixPath, part: str) -> PurePosixPath | None:
        folder = self.root.joinpath(*here.parts)
        for suffix in COMPILED_SUFFIXES:
            for path in sorted(folder.glob(f"{part}*{suffix}")):
                if path.name == f"{part}{suffix}" or path.name.startswith(f"{part}."):
                    relative = here / path.name
                    self.inside(relative)
                    return relative
        return None

    def everything(self, relative: PurePosixPath) -> Iterator[PurePosixPath]:
        """``relative`` if it is a file, else every file below it (``__pycache__`` left out)."""
        real = self.inside(relative)
        if real.is_file():
            yield relative
            return
        if not real.is_dir():
            raise PackError(f"--include {relative}: no such file or folder in {self.root}")
        for child in sorted(real.iterdir()):
            if child.name != "__pycache__":
                yield from self.everything(relative / child.name)


def _package_of(relative: PurePosixPath) -> str | None:
    """The package a file of the folder belongs to (None: a top-level module)."""
    return ".".join(relative.parent.parts) or None


# --- the team's environment -------------------------------------------------------------------------------


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _required_names(dist: metadata.Distribution) -> Iterator[str]:
    """The distributions ``dist`` requires (not those only of its extras)."""
    for line in dist.requires or []:
        requirement, _, marker = line.partition(";")
        if "extra" in marker:
            continue
        found = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
        if found:
            yield normalized(found[1])


def _installed(name: str) -> metadata.Distribution | None:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def closure(names: Iterable[str]) -> dict[str, metadata.Distribution]:
    """The installed distributions of ``names`` and every installed one they require, transitively."""
    found: dict[str, metadata.Distribution] = {}
    todo = [normalized(n) for n in names]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        dist = _installed(name)
        if dist is None:
            continue
        found[name] = dist
        todo += _required_names(dist)
    return found


def _wheel_tags(dist: metadata.Distribution) -> list[str]:
    text = dist.read_text("WHEEL") or ""
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Tag:")]


def _fits_target(tags: list[str], version: str) -> bool:
    """Whether compiled code tagged ``tags`` runs on the contest's Linux x86-64 with Python ``version``."""
    minor = int(version.split(".")[1])
    for tag in tags:
        interpreter, abi, plat = (tag.split("-") + ["", "", ""])[:3]
        if not ("x86_64" in plat and "linux" in plat):
            continue
        number = re.fullmatch(r"cp3(\d+)", interpreter)
        if number and (int(number[1]) == minor or (abi == "abi3" and int(number[1]) <= minor)):
            return True
    return False


def distribution_files(dist: metadata.Distribution, version: str) -> dict[PurePosixPath, Path]:
    """The files of an installed distribution as they go into ``deps/`` (its scripts and bytecode left out);
    PackError if it cannot run in the upload."""
    name = dist.metadata["Name"]
    direct = dist.read_text("direct_url.json")
    if direct:
        try:
            editable = bool(json.loads(direct).get("dir_info", {}).get("editable"))
        except ValueError:
            editable = False
        if editable:
            raise PackError(f"{name} is installed in editable mode (pip install -e): install it normally to pack it")
    files: dict[PurePosixPath, Path] = {}
    for entry in dist.files or []:
        relative = PurePosixPath(str(entry))
        if relative.is_absolute() or ".." in relative.parts or "__pycache__" in relative.parts:
            continue
        if relative.suffix == ".pyc":
            continue
        source = Path(str(dist.locate_file(entry)))
        if source.is_file():
            files[relative] = source
    if not any(p.suffix in (".py", *COMPILED_SUFFIXES) for p in files):
        raise PackError(f"{name} is installed without its files listed (RECORD): reinstall it with pip to pack it")
    if any(p.suffix in COMPILED_SUFFIXES for p in files):
        tags = _wheel_tags(dist)
        here = f"{sys.version_info[0]}.{sys.version_info[1]}"
        built_here = not tags and here == version and sys.platform == "linux" and platform.machine() == "x86_64"
        if not (built_here or _fits_target(tags, version)):
            shown = ", ".join(tags) or f"this machine ({sys.platform}, Python {here})"
            raise PackError(
                f"{name} holds compiled code for {shown}, not for the contest's Linux x86-64 with Python {version}: "
                "build the upload where it is installed for that"
            )
    return files


# --- the whole search --------------------------------------------------------------------------------------


def player_source(path: Path) -> Path:
    """The player's real file (links followed); PackError for a compiled or non-Python file."""
    real = path.resolve()
    if not real.is_file():
        raise PackError(f"{path}: no such file")
    if real.suffix == ".pyc":
        raise PackError(
            f"{path}: a compiled .pyc file; give the player's .py source (the upload's bytecode is compiled "
            "for the target Python)"
        )
    if real.suffix != ".py":
        raise PackError(f"{path}: not a Python source file (.py)")
    return real


def find_team_files(
    player: Path, includes: Iterable[str], *, version: str, stdlib: frozenset[str], bundled: Iterable[str]
) -> TeamFiles:
    """What to pack for the player file ``player`` (see the module's doc). ``stdlib``: the target Python's module
    names; ``bundled``: the distributions the upload holds anyway (normalized names)."""
    real = player_source(player)
    folder = _Folder(real.parent)
    team = TeamFiles(real.parent, PurePosixPath(real.name))
    team.files[team.player] = real
    top_levels = metadata.packages_distributions()
    ready = set(bundled)
    wanted: dict[str, Import] = {}  # distribution -> the first import that needs it
    todo = [team.player]
    while todo:
        relative = todo.pop()
        for found in imports_of(parse(team.files[relative], str(relative)), _package_of(relative), str(relative)):
            top = found.module.split(".")[0]
            elsewhere = top in stdlib or top in PACKAGES or top in top_levels
            names = [found.module, *(f"{found.module}.{n}" for n in found.names)]
            local = [path for name in names for path in folder.module(name, not elsewhere) or []]
            if local:
                for path in local:
                    if path not in team.files:
                        team.files[path] = folder.inside(path)
                        if path.suffix == ".py":
                            todo.append(path)
            elif top in stdlib or top in PACKAGES:
                continue
            elif top in top_levels:
                dists = [normalized(d) for d in top_levels[top]]
                if not any(d in ready for d in dists):
                    for name in dists:
                        wanted.setdefault(name, found)
            else:
                _not_installed(found, top, team)
    for text in includes:
        for path in folder.everything(_included(text, real.parent)):
            team.files.setdefault(path, folder.inside(path))
    for name, dist in closure(wanted).items():
        if name in ready:
            continue
        try:
            team.deps.update(distribution_files(dist, version))
        except PackError as exc:
            first = wanted.get(name)
            raise PackError(f"{first.where} imports {first.module}: {exc}" if first else str(exc)) from None
        team.packages.append(f"{dist.metadata['Name']} {dist.version}")
    team.left_out = sorted(set(team.left_out))
    return team


def _not_installed(found: Import, top: str, team: TeamFiles) -> None:
    """An import of no installed package: left out if optional, else PackError naming it."""
    if found.optional:
        team.left_out.append(top)
        return
    spec = importlib.util.find_spec(top)  # a top-level name: looked up, nothing of it runs
    if spec is not None and spec.origin not in (None, "built-in", "frozen"):
        raise PackError(
            f"{found.where} imports {top}, found at {spec.origin} but not as an installed package: put it beside "
            "the player (then it is packed) or install it with pip"
        )
    raise PackError(
        f"{found.where} imports {top}: not installed here and not beside the player, so it cannot be packed: "
        "install it (pip install ...) where you run blokus bundle, or remove the import"
    )


def _included(text: str, folder: Path) -> PurePosixPath:
    """``--include PATH`` (from the current folder, else from the player's) as a path inside the player's folder."""
    given = Path(text)
    if not given.is_absolute() and not given.exists():
        given = folder / given
    try:
        return PurePosixPath(Path(os.path.normpath(given.absolute())).relative_to(folder).as_posix())
    except ValueError:
        raise PackError(f"--include {text}: not inside the player's folder {folder}") from None
