"""Where numba keeps the compiled kernels: a cache that is found wherever the project is unpacked.

Import this module before the first ``@njit(cache=True)`` of a module (one import line). It puts a locator of
its own in front of numba's for the project's modules (``model``, ``ai``, ``net``, ``tui``, ``cli``):

* **Keyed by module name**, not by absolute path: ``<cache>/ai.search.mcts/...``, so a cache copied or unpacked
  elsewhere (a contest upload, new file times) is found.
* **The source stamp is a content hash** of the module and of every project module it imports, transitively
  (read from the sources, nothing imported): numba itself checks only the kernel's own file, so a kernel
  calling a changed kernel of another module would keep the old compiled copy (silently wrong results).
  With ``NUMBA_BOUNDSCHECK=1`` (CI's engine run) the stamp differs: bounds-checked kernels are kept apart.
* **Where**: ``$BLOKUS_NUMBA_CACHE`` if set (tests, CI, the bundle builder: read and written); else a
  bundle's prebuilt ``numba-cache/`` beside the packages (only read, never written), then a writable
  user cache (``numba/`` of ``model.user_cache``'s folder, else the temporary folder); in a checkout (no bundle)
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
import contextlib
import errno
import functools
import hashlib
import logging
import os
import pickle
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

import numba
from numba.core import caching, dispatcher

from blokus.model.user_cache import cache_home

log = logging.getLogger(__name__)

ROOT = Path(__file__).parents[2].resolve()  # the folder holding the package (this file is blokus/model/numba_cache.py)
PACKAGES = ("blokus",)
ENV = "BLOKUS_NUMBA_CACHE"
BUNDLED = ROOT / "numba-cache"  # written by ``blokus bundle``
NOWHERE = Path(tempfile.gettempdir()) / "blokus-numba-nowhere"  # a path that is never created: nothing loads
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
    """A hash of the sources a module's compiled kernels depend on (and of numba's bounds checking when it is on:
    numba's own key leaves it out, so a checked kernel and an unchecked one would load for each other)."""
    digest = hashlib.sha256(numba.__version__.encode())
    if getattr(numba.config, "BOUNDSCHECK", None):  # set from NUMBA_BOUNDSCHECK (numba has no type information)
        digest.update(b"\0boundscheck")
    for dep in dependencies(name):
        path = module_file(dep)
        digest.update(f"\0{dep}\0".encode())
        try:
            digest.update(path.read_bytes() if path else b"")
        except OSError:
            pass
    return digest.hexdigest()


def _could_write(path: Path) -> bool:
    """Whether ``path`` is, or could be made, a folder to write in (nothing is created here)."""
    existing = path
    while not existing.exists():
        if existing.parent == existing:
            return False
        existing = existing.parent
    if not existing.is_dir():
        return False
    return os.access(existing, os.W_OK | os.X_OK)


# --- the user's private cache folder: verified through its open descriptor at every use ------------------

_FD_PATHS = os.path.isdir("/proc/self/fd")  # a path bound to a descriptor (Linux): the folder verified, not a name
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_DIRECTORY", 0)
_folders: dict[str, int] = {}  # user cache root -> the descriptor of the folder verified when it was opened
_refused: set[str] = set()
_closed = False  # close_folders was called: no user cache folder any more


def close_folders() -> None:
    """Close the descriptors of the user's cache folders for good (in a process about to run a team's code:
    it holds none of ours); kernels not loaded yet are compiled, never loaded or cached, from then on."""
    global _closed
    _closed = True
    for fd in _folders.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    _folders.clear()


def _problem(fd: int) -> str | None:
    """Why the folder open as ``fd`` is not private to this user (None: it is). Too open but ours: made 0700."""
    st = os.fstat(fd)
    if not stat.S_ISDIR(st.st_mode):
        return "not a folder"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return "owned by another user"
    if st.st_mode & 0o077:
        try:
            os.fchmod(fd, 0o700)
        except OSError:
            return "open to other users"
    return None


def _no_cache(root: Path, why: str) -> None:
    if str(root) not in _refused:
        _refused.add(str(root))
        log.warning("no compile cache in %s (%s): kernels are compiled on every start", root, why)


def private_folder(root: Path, *, create: bool) -> Path | None:
    """The user's cache folder ``root`` if it is private (this user's, mode 0700, no link), as a path bound
    to its verified descriptor (``/proc/self/fd/N``: renaming or replacing the name later changes nothing);
    checked again (fstat) at every call. ``create``: made atomically with mode 0700 if missing. None: no
    cache there (said in one line) or, without ``create``, none yet."""
    key = str(root)
    fd = _folders.get(key)
    if _closed:
        return None
    if fd is None:
        if create:
            try:
                # ``~/.cache`` and ``~/.cache/blokus`` may be made, never the home folder itself
                # (HOME=/nonexistent is a common way to say "no home": the temporary folder's root is used then)
                for parent in (root.parent.parent, root.parent):
                    parent.mkdir(exist_ok=True)
                os.mkdir(root, 0o700)
            except FileExistsError:
                pass
            except FileNotFoundError:
                return None  # no home folder: the next place (the temporary folder) is tried
            except OSError as exc:
                _no_cache(root, exc.strerror or str(exc))
                return None
        try:
            fd = os.open(root, os.O_RDONLY | _NOFOLLOW)
        except OSError as exc:
            if not os.path.lexists(root):
                return None  # none yet (or its parent is no folder): nothing to read
            _no_cache(root, "a link or not a folder" if exc.errno in (errno.ELOOP, errno.ENOTDIR) else str(exc))
            return None
        _folders[key] = fd
    try:
        problem = _problem(fd)
    except OSError as exc:
        problem = str(exc)
    if problem is not None:
        _no_cache(root, problem)
        return None
    return Path(f"/proc/self/fd/{fd}") if _FD_PATHS else root


def _verified(path: Path) -> bool:
    """Whether a cache path handed out by :func:`private_folder` still points into a private folder."""
    if not _FD_PATHS or not str(path).startswith("/proc/self/fd/"):
        return True  # not a user cache folder (the bundle's, the setting's, a checkout's)
    fd = int(path.parts[4])
    try:
        return fd in _folders.values() and _problem(fd) is None
    except OSError:
        return False


def user_roots() -> list[Path]:
    """The user's cache folders by name: ``$XDG_CACHE_HOME`` or ``~/.cache``, then one in the temporary
    folder (used only through :func:`private_folder`)."""
    home = cache_home()
    uid = os.getuid() if hasattr(os, "getuid") else 0
    roots = [home / "numba"] if home is not None else []
    return [*roots, Path(tempfile.gettempdir()) / f"blokus-numba-{uid}"]


def _user_locations(name: str, *, create: bool) -> list[Path]:
    found = []
    for root in user_roots():
        folder = private_folder(root, create=create and _could_write(root))
        if folder is not None:
            found.append(folder / name)
            if create:
                break
    return found


def _fixed_locations(name: str) -> list[Path]:
    """The folders before the user's: the setting's, or the bundle's, or the checkout's ``__pycache__``."""
    explicit = os.environ.get(ENV)
    if explicit:
        return [Path(explicit) / name]
    if BUNDLED.is_dir():
        return [BUNDLED / name]
    source = module_file(name)
    return [source.parent / "__pycache__"] if source else []


def locations(name: str) -> list[Path]:
    """The folders that may hold module ``name``'s cache, in the order they are looked up (the user's
    only if they exist and are private)."""
    fixed = _fixed_locations(name)
    return fixed if os.environ.get(ENV) else [*fixed, *_user_locations(name, create=False)]


def writable_location(name: str) -> Path | None:
    """Where module ``name``'s kernels are cached when compiled (None: nowhere, they are not cached). A
    user folder is created (private) and verified now: call it when about to write."""
    explicit = bool(os.environ.get(ENV))  # the bundle builder writes the bundled folder through the setting
    for path in _fixed_locations(name):
        if (explicit or path.parent != BUNDLED) and _could_write(path):  # an upload is never written into
            return path
    if explicit:
        return None
    return next(iter(_user_locations(name, create=True)), None)


@functools.cache
def _magic_tuple() -> tuple:
    from numba.core.registry import cpu_target

    return cpu_target.target_context.codegen().magic_tuple()


def trusted(path: Path, *, folder: bool = False) -> bool:
    """Whether a cache file (or ``folder``) is ours to load: owned by this user (or root), no link (a file),
    not writable by other users (nor by a group that is not this user's own). numba unpickles what it
    loads: anything another user (or a walled team program, which cannot write here) could have written
    is compiled afresh instead."""
    if not hasattr(os, "getuid"):
        return True
    try:
        st = os.stat(path) if folder else os.lstat(path)
    except OSError:
        return False
    if (stat.S_ISDIR(st.st_mode) if folder else stat.S_ISREG(st.st_mode)) is False:
        return False
    if st.st_uid not in (os.getuid(), 0) or st.st_mode & 0o002:
        return False
    return not (st.st_mode & 0o020 and st.st_gid != os.getgid())


def _index_is_fresh(index: Path, stamp: str) -> bool:
    """Whether numba's index file for a kernel holds an entry of this source and this CPU target, in a
    folder, an index and data files that are ours (:func:`trusted`)."""
    if not (trusted(index.parent, folder=True) and trusted(index)):
        return False
    try:
        with open(index, "rb") as f:
            if pickle.load(f) != numba.__version__:
                return False
            saved, overloads = pickle.loads(f.read())
    except Exception:  # missing, truncated or from another version: not fresh
        return False
    magic = _magic_tuple()
    fresh = [name for key, name in overloads.items() if key[1] == magic]
    return saved == stamp and bool(fresh) and all(trusted(index.parent / name) for name in fresh)


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
        self.index = index
        fresh = next((p for p in locations(module) if _index_is_fresh(p / index, self.stamp)), None)
        # numba takes the path once, here: a user folder's is bound to its verified descriptor
        self.target = writable_location(module) if fresh is None else None
        self.path = fresh or self.target or next(iter(locations(module)), NOWHERE)

    @property
    def writable(self) -> bool:
        return self.target is not None and self.path == self.target and _verified(self.path)

    def verified(self) -> bool:
        """Whether its folder may be read now: still the private folder verified (a user's), and the
        folder and the kernel's index ours (:func:`trusted`)."""
        if not _verified(self.path):
            return False
        index = self.path / self.index
        return not index.exists() or (trusted(self.path, folder=True) and trusted(index))

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
        self.path.mkdir(mode=0o700, parents=True, exist_ok=True)

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
        return str(NOWHERE)

    def get_source_stamp(self):
        try:
            return super().get_source_stamp()
        except OSError:
            return None


_warned: set[str] = set()


class ProjectCache(caching.FunctionCache):
    """numba's per-kernel cache that never writes where it may not and never fails a call on a write error."""

    def load_overload(self, sig, target_context):
        if not self._impl.locator.verified():  # checked at every use: a folder no longer private is not read
            return None
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
        if any(_read(path / f"{name}{READY_SUFFIX}") == _ready_text(name) for path in locations(name)):
            continue  # loaded from a warm cache: nothing to note (and nothing to create)
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
