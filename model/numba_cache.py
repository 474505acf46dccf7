"""Where numba keeps the compiled kernels: a cache that is found wherever the project is unpacked.

Import this module before the first ``@njit(cache=True)`` of a module (one import line). It puts a locator of
its own in front of numba's for the project's modules (``model``, ``ai``, ``net``, ``tui``, ``cli``):

* **Keyed by module name**, not by absolute path: ``<cache>/ai.mcts/...``, so a cache copied or unpacked
  elsewhere (a contest upload, new file times) is found.
* **The source stamp is a content hash** of the module and of every project module it imports, transitively
  (read from the sources, nothing imported): numba itself checks only the kernel's own file, so a kernel
  calling a changed kernel of another module would keep the old compiled copy (silently wrong results).
* **Where**: ``$BLOKUS_NUMBA_CACHE`` if set (tests, CI, the bundle builder: read and written); else a
  bundle's prebuilt ``numba-cache/`` beside the packages (only read, never written), then a writable
  user cache (``$XDG_CACHE_HOME`` or ``~/.cache``, else the temporary folder); in a checkout (no bundle)
  the package's ``__pycache__`` comes first, one cache per checkout. A kernel is loaded from the first
  folder holding it fresh (same sources, same numba, same CPU target), compiled into the first writable one.
* **Never a failure**: with nowhere to write, kernels are compiled and used without being cached (numba
  would raise ``cannot cache function ...: no locator available``); a cache that cannot be written is
  read and left alone.

Portable caches (``blokus bundle``) are compiled with ``NUMBA_CPU_NAME=generic``; a kernel cached for
another CPU name is not loaded (numba's key), it is compiled.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import logging
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

import numba
from numba.core import caching, dispatcher

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent  # the folder holding the packages
PACKAGES = ("blokus", "model", "ai", "net", "tui", "cli")
ENV = "BLOKUS_NUMBA_CACHE"
BUNDLED = ROOT / "numba-cache"  # written by ``blokus bundle``
READY_SUFFIX = ".ready"  # ``<folder>/<module>.ready``: the stamp of a complete warm-up (``mark_warm``)


def module_file(name: str) -> Path | None:
    """The source of a project module by name (None: not one of ours)."""
    parts = name.split(".")
    if parts[0] not in PACKAGES:
        return None
    base = ROOT.joinpath(*parts)
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@functools.cache
def _imports(name: str) -> tuple[str, ...]:
    """The project modules ``name`` imports at its top level (from its source)."""
    path = module_file(name)
    try:
        tree = ast.parse(path.read_bytes()) if path else None
    except (OSError, SyntaxError, ValueError):
        return ()
    found: list[str] = []
    for node in tree.body if tree else ():
        if isinstance(node, ast.Import):
            found += (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            subs = [f"{node.module}.{alias.name}" for alias in node.names]
            modules = [s for s in subs if module_file(s)]
            found += modules
            if len(modules) < len(subs):  # names defined in the module (or package) itself
                found.append(node.module)
    return tuple(n for n in dict.fromkeys(found) if n != name and n != __name__ and module_file(n))


def dependencies(name: str) -> list[str]:
    """``name`` and every project module it imports, transitively (sorted)."""
    seen = {name}
    todo = [name]
    while todo:
        for dep in _imports(todo.pop()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return sorted(seen)


@functools.cache
def source_stamp(name: str) -> str:
    """A hash of the sources a module's compiled kernels depend on."""
    digest = hashlib.sha256(numba.__version__.encode())
    for dep in dependencies(name):
        path = module_file(dep)
        digest.update(f"\0{dep}\0".encode())
        try:
            digest.update(path.read_bytes() if path else b"")
        except OSError:
            pass
    return digest.hexdigest()


def _could_write(path: Path) -> bool:
    """Whether ``path`` is, or could be made, a folder of ours to write in (nothing is created here)."""
    existing = path
    while not existing.exists():
        if existing.parent == existing:
            return False
        existing = existing.parent
    if not existing.is_dir():
        return False
    if existing == path and hasattr(os, "getuid") and path.stat().st_uid != os.getuid():
        return False  # another user's folder (a shared /tmp): its kernels would run as our code
    return os.access(existing, os.W_OK | os.X_OK)


def user_roots() -> list[Path]:
    """The user's cache folder (``$XDG_CACHE_HOME`` or ``~/.cache``), then one in the temporary folder."""
    xdg, home = os.environ.get("XDG_CACHE_HOME"), os.environ.get("HOME")
    base = Path(xdg) if xdg else Path(home) / ".cache" if home else None
    uid = os.getuid() if hasattr(os, "getuid") else 0
    roots = [base / "blokus-numba"] if base is not None and base.is_absolute() else []
    shared = Path(tempfile.gettempdir()) / f"blokus-numba-{uid}"
    try:  # in a shared folder only our own (a pickle from another user's would run as our code)
        st = shared.stat()
        ours = st.st_uid == uid and not st.st_mode & 0o022
    except OSError:
        ours = True  # not there yet: made with mode 0o700 when a kernel is saved
    return [*roots, shared] if ours else roots


def locations(name: str) -> list[Path]:
    """The folders that may hold module ``name``'s cache, in the order they are looked up."""
    explicit = os.environ.get(ENV)
    if explicit:
        return [Path(explicit) / name]
    user = [root / name for root in user_roots()]
    if BUNDLED.is_dir():
        return [BUNDLED / name, *user]
    source = module_file(name)
    return [*([source.parent / "__pycache__"] if source else []), *user]


@functools.cache
def writable_location(name: str) -> Path | None:
    """Where module ``name``'s kernels are cached when compiled (None: nowhere, they are not cached)."""
    explicit = bool(os.environ.get(ENV))  # the bundle builder writes the bundled folder through the setting
    for path in locations(name):
        if (explicit or path.parent != BUNDLED) and _could_write(path):  # an upload is never written into
            return path
    return None


@functools.cache
def _magic_tuple() -> tuple:
    from numba.core.registry import cpu_target

    return cpu_target.target_context.codegen().magic_tuple()


def _index_is_fresh(index: Path, stamp: str) -> bool:
    """Whether numba's index file for a kernel holds an entry of this source and this CPU target."""
    try:
        with open(index, "rb") as f:
            if pickle.load(f) != numba.__version__:
                return False
            saved, overloads = pickle.loads(f.read())
    except Exception:  # missing, truncated or from another version: not fresh
        return False
    magic = _magic_tuple()
    return saved == stamp and any(key[1] == magic for key in overloads)


class ProjectLocator(caching._CacheLocator):
    """numba's cache locator for the project's kernels (see the module's doc)."""

    def __init__(self, py_func, py_file: str, module: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self.module = module
        self.stamp = source_stamp(module)
        stem = Path(py_file).stem
        qualname = py_func.__qualname__.replace("<", "").replace(">", "")
        v = sys.version_info
        index = f"{stem}.{qualname}-{self._lineno}.py{v[0]}{v[1]}{getattr(sys, 'abiflags', '')}.nbi"
        fresh = next((p for p in locations(module) if _index_is_fresh(p / index, self.stamp)), None)
        self.path = fresh or writable_location(module) or locations(module)[0]

    @property
    def writable(self) -> bool:
        return self.path == writable_location(self.module)

    @classmethod
    def from_function(cls, py_func, py_file):
        module = getattr(py_func, "__module__", "") or ""
        source = module_file(module)
        try:
            if source is None or Path(py_file).resolve() != source.resolve():
                return None  # not one of ours (or run as a script): numba's own locators
        except OSError:
            return None
        return cls(py_func, py_file, module)

    def ensure_cache_path(self) -> None:
        if not self.writable:  # never reached through ``ProjectCache`` (it does not save then); be safe anyway
            raise OSError(f"numba cache {self.path} is read-only here")
        self.path.mkdir(mode=0o700, parents=True, exist_ok=True)  # only now: a start that loads creates nothing

    def get_cache_path(self) -> str:
        return str(self.path)

    def get_source_stamp(self) -> str:
        return self.stamp

    def get_disambiguator(self) -> str:
        return str(self._lineno)


class NowhereLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """The last resort for other code's cached kernels when numba finds no writable folder: loads nothing,
    saves nothing (numba would raise ``no locator available``)."""

    writable = False

    def __init__(self, py_func, py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno

    @classmethod
    def from_function(cls, py_func, py_file):
        return cls(py_func, py_file)

    def get_cache_path(self) -> str:
        return os.path.join(tempfile.gettempdir(), "blokus-numba-nowhere")

    def get_source_stamp(self):
        try:
            return super().get_source_stamp()
        except OSError:
            return None


_warned: set[str] = set()


class ProjectCache(caching.FunctionCache):
    """numba's per-kernel cache that never writes where it may not and never fails a call on a write error."""

    def load_overload(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except OSError:  # a folder that cannot be read (numba expects only a missing file): compile
            return None

    def save_overload(self, sig, data) -> None:
        locator = self._impl.locator
        if not getattr(locator, "writable", True):
            return  # a read-only cache (an upload) or none: the kernel is compiled for this process only
        try:
            super().save_overload(sig, data)
        except OSError as exc:
            where = str(locator.get_cache_path())
            if where not in _warned:
                _warned.add(where)
                log.warning("cannot write the numba cache in %s (%s): kernels are compiled on every start", where, exc)


def mark_warm(modules: tuple[str, ...] | list[str]) -> None:
    """Note that every kernel of ``modules`` was just compiled or loaded (after a module's ``warm_up``)."""
    for name in modules:
        path = writable_location(name)
        if path is None:
            continue
        try:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
            (path / f"{name}{READY_SUFFIX}").write_text(_ready_text(name))
        except OSError:
            pass


def is_warm(modules: tuple[str, ...] | list[str]) -> bool:
    """Whether a cache folder holds a complete warm-up of each module for these sources and this CPU target
    (cheap: numba is not imported; a stale answer costs time, never correctness)."""
    for name in modules:
        text = _ready_text(name)
        if not any(_read(path / f"{name}{READY_SUFFIX}") == text for path in locations(name)):
            return False
    return True


def fresh_files(root: Path) -> list[Path]:
    """The files of a cache folder (``<root>/<module>/...``, as with ``$BLOKUS_NUMBA_CACHE``) that belong to
    today's sources: the indexes with today's stamp, the compiled data they name and the warm-up marks
    (``blokus bundle`` copies these, not what older sources left behind)."""
    files: list[Path] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and module_file(p.name)):
        stamp = source_stamp(folder.name)
        for index in sorted(folder.glob("*.nbi")):
            try:
                with open(index, "rb") as f:
                    if pickle.load(f) != numba.__version__:
                        continue
                    saved, overloads = pickle.loads(f.read())
            except Exception:
                continue
            if saved == stamp:
                files += [index, *(folder / name for name in overloads.values() if (folder / name).is_file())]
        files += [m for m in folder.glob(f"*{READY_SUFFIX}") if (_read(m) or "").startswith(f"{stamp} ")]
    return files


def _ready_text(name: str) -> str:
    return f"{source_stamp(name)} {os.environ.get('NUMBA_CPU_NAME') or 'host'}\n"


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


def _install() -> None:
    classes: list[Any] = caching.CacheImpl._locator_classes  # numba's private list is unannotated
    if ProjectLocator not in classes:
        classes.insert(0, ProjectLocator)
        classes.append(NowhereLocator)
    # the class numba's dispatchers build their cache from (a name dispatcher imports, not exports)
    dispatcher.FunctionCache = ProjectCache  # type: ignore[attr-defined]


_install()
