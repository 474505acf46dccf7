"""The numba cache locator (``model.numba_cache``): a cache found wherever the project is unpacked.

Each case runs a small project (two modules with cached kernels, one calling the other) in a child process
and reads numba's own hit and miss counters.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import blokus.model.numba_cache
import blokus.model.user_cache

HELPER = """\
from numba import njit

from blokus.model import numba_cache  # noqa: F401


@njit(cache=True)
def add(a, b):
    return a + b{extra}
"""

TINY = """\
from numba import njit

from blokus.model import helper
from blokus.model import numba_cache  # noqa: F401


@njit(cache=True)
def twice(x):
    return helper.add(x, x)
"""

RUN = """\
import json
import os
from blokus.model import helper, tiny
value = tiny.twice(3)
stats = [f.stats for f in (tiny.twice, helper.add)]
print(json.dumps({"value": value, "hits": sum(sum(s.cache_hits.values()) for s in stats),
                  "misses": sum(sum(s.cache_misses.values()) for s in stats),
                  "path": os.path.realpath(tiny.twice.stats.cache_path)}))
"""


def _project(root: Path, extra: str = "") -> Path:
    (root / "blokus" / "model").mkdir(parents=True)
    (root / "blokus" / "__init__.py").write_text("")
    (root / "blokus" / "model" / "__init__.py").write_text("")
    shutil.copy(blokus.model.numba_cache.__file__, root / "blokus" / "model" / "numba_cache.py")
    shutil.copy(blokus.model.user_cache.__file__, root / "blokus" / "model" / "user_cache.py")  # it imports that
    (root / "blokus" / "model" / "helper.py").write_text(HELPER.format(extra=extra))
    (root / "blokus" / "model" / "tiny.py").write_text(TINY)
    return root


def _run(root: Path, tmp_path: Path, **env: str) -> dict:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    base = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(root),
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": str(blocked / "home"),
        "TMPDIR": str(tmp_path / "tmp"),
    }
    (tmp_path / "tmp").mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", RUN],
        cwd=tmp_path,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _files(root: Path) -> dict[str, tuple[int, float]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime) for p in root.rglob("*")}


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, copy_function=shutil.copy)  # shutil.copy: new file times
    return target


def _read_only(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode & 0o555)


def _writable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)


def test_a_prebuilt_cache_is_found_elsewhere_read_only_and_not_written(tmp_path):
    built = _project(tmp_path / "built")
    first = _run(built, tmp_path, BLOKUS_NUMBA_CACHE=str(built / "numba-cache"))  # as ``blokus bundle`` builds it
    assert first["value"] == 6 and first["misses"] == 2 and first["hits"] == 0
    assert (built / "numba-cache" / "blokus.model.tiny").is_dir()  # keyed by module name

    moved = _copy(built, tmp_path / "elsewhere" / "unpacked")  # another path, other file times
    _read_only(moved)
    before = _files(moved)
    try:
        again = _run(moved, tmp_path, HOME=str(tmp_path / "home"))  # no setting: the bundled folder is found
    finally:
        _writable(moved)
    assert again["value"] == 6 and again["hits"] >= 1 and again["misses"] == 0  # twice holds add
    assert again["path"] == str(moved / "numba-cache" / "blokus.model.tiny")
    assert _files(moved) == before  # nothing written into the upload
    assert not (tmp_path / "home").exists()  # nor anywhere else: nothing was compiled


def test_a_changed_dependency_makes_the_caller_compile_again(tmp_path):
    built = _project(tmp_path / "built")
    cache = str(tmp_path / "cache")
    assert _run(built, tmp_path, BLOKUS_NUMBA_CACHE=cache)["value"] == 6
    (built / "blokus" / "model" / "helper.py").write_text(HELPER.format(extra=" + 1"))  # only the called module changes
    changed = _run(built, tmp_path, BLOKUS_NUMBA_CACHE=cache)
    assert changed["value"] == 7 and changed["misses"] == 2  # numba alone would reuse twice's stale copy


def test_bounds_checked_kernels_are_never_loaded_for_unchecked_ones(tmp_path):
    # numba's key leaves NUMBA_BOUNDSCHECK out: CI's bounds-checked run of the engine must compile its own
    built = _project(tmp_path / "built")
    cache = str(tmp_path / "cache")
    assert _run(built, tmp_path, BLOKUS_NUMBA_CACHE=cache)["misses"] == 2
    checked = _run(built, tmp_path, BLOKUS_NUMBA_CACHE=cache, NUMBA_BOUNDSCHECK="1")
    assert checked["value"] == 6 and checked["misses"] == 2


def test_a_cache_miss_with_nowhere_to_write_still_runs_the_kernels(tmp_path):
    built = _project(tmp_path / "built")
    (tmp_path / "file").write_text("")
    result = _run(built, tmp_path, BLOKUS_NUMBA_CACHE=str(tmp_path / "file" / "cache"))
    assert result["value"] == 6 and result["misses"] == 2


def test_a_miss_in_a_read_only_bundle_compiles_into_the_user_cache(tmp_path):
    built = _project(tmp_path / "built")
    (built / "numba-cache").mkdir()  # a bundle whose cache lacks these kernels
    _read_only(built)
    try:
        home = tmp_path / "home"
        home.mkdir()  # a home without .cache: .cache/blokus/numba is made (a missing home is not)
        first = _run(built, tmp_path, HOME=str(home))
        second = _run(built, tmp_path, HOME=str(home))
    finally:
        _writable(built)
    assert first["misses"] == 2 and second["hits"] >= 1 and second["misses"] == 0
    assert os.path.realpath(second["path"]) == str(home / ".cache" / "blokus" / "numba" / "blokus.model.tiny")
    assert not any((built / "numba-cache").iterdir())


@pytest.mark.parametrize("module", ["blokus.model.fast", "blokus.ai.search.mcts", "blokus.ai.search.fastsearch"])
def test_the_stamp_covers_the_kernels_a_module_calls(module):
    from blokus.model.numba_cache import dependencies

    assert {"blokus.model.fast", "blokus.model.placements", "blokus.model.pieces", module} <= set(dependencies(module))


# --- the user's cache folder is private, checked through its descriptor at every use (issue 46.6) -------


@pytest.fixture
def fresh_folders(monkeypatch):
    from blokus.model import numba_cache

    monkeypatch.setattr(numba_cache, "_folders", {})
    monkeypatch.setattr(numba_cache, "_refused", set())
    return numba_cache


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="paths bound to descriptors: Linux")
def test_a_missing_folder_is_created_private_and_a_later_swap_of_its_name_changes_nothing(tmp_path, fresh_folders):
    root = tmp_path / "blokus-numba-1"
    assert fresh_folders.private_folder(root, create=False) is None and not root.exists()  # reading creates nothing
    folder = fresh_folders.private_folder(root, create=True)
    assert folder is not None and os.stat(root).st_mode & 0o777 == 0o700
    root.rename(tmp_path / "moved")
    (tmp_path / "attacker").mkdir(mode=0o777)
    root.symlink_to(tmp_path / "attacker")  # planted under the name after the check
    (folder / "kernel.nbi").write_text("x")  # through the verified descriptor: into the folder checked
    assert (tmp_path / "moved" / "kernel.nbi").exists() and not any((tmp_path / "attacker").iterdir())


def test_a_home_folder_that_does_not_exist_is_not_made(tmp_path, fresh_folders, monkeypatch, caplog):
    monkeypatch.setenv("HOME", str(tmp_path / "nonexistent"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    home_root, temp_root = fresh_folders.user_roots()
    assert fresh_folders.private_folder(home_root, create=True) is None and not caplog.records
    assert not (tmp_path / "nonexistent").exists()
    assert fresh_folders.private_folder(temp_root, create=True) is not None  # the next place is used


def test_a_planted_link_is_never_followed(tmp_path, fresh_folders, caplog):
    (tmp_path / "attacker").mkdir()
    root = tmp_path / "blokus-numba-1"
    root.symlink_to(tmp_path / "attacker")
    assert fresh_folders.private_folder(root, create=True) is None
    assert not any((tmp_path / "attacker").iterdir())
    assert [r.getMessage() for r in caplog.records] == [
        f"no compile cache in {root} (a link or not a folder): kernels are compiled on every start"
    ]


def test_another_users_folder_is_not_used_even_after_a_first_good_look(tmp_path, fresh_folders, monkeypatch):
    root = tmp_path / "blokus-numba-1"
    assert fresh_folders.private_folder(root, create=True) is not None
    monkeypatch.setattr(os, "getuid", lambda: os.stat(root).st_uid + 1)  # as if another user owned it now
    assert fresh_folders.private_folder(root, create=False) is None  # checked again at every use
    folder = Path(f"/proc/self/fd/{fresh_folders._folders[str(root)]}")
    assert not fresh_folders._verified(folder / "blokus.model.fast") or not fresh_folders._FD_PATHS
