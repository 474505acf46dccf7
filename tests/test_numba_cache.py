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
from pathlib import Path

import pytest

import model.numba_cache

HELPER = """\
from numba import njit

from model import numba_cache  # noqa: F401


@njit(cache=True)
def add(a, b):
    return a + b{extra}
"""

TINY = """\
from numba import njit

from model import helper
from model import numba_cache  # noqa: F401


@njit(cache=True)
def twice(x):
    return helper.add(x, x)
"""

RUN = """\
import json
from model import helper, tiny
value = tiny.twice(3)
stats = [f.stats for f in (tiny.twice, helper.add)]
print(json.dumps({"value": value, "hits": sum(sum(s.cache_hits.values()) for s in stats),
                  "misses": sum(sum(s.cache_misses.values()) for s in stats),
                  "path": tiny.twice.stats.cache_path}))
"""


def _project(root: Path, extra: str = "") -> Path:
    (root / "model").mkdir(parents=True)
    (root / "model" / "__init__.py").write_text("")
    shutil.copy(model.numba_cache.__file__, root / "model" / "numba_cache.py")
    (root / "model" / "helper.py").write_text(HELPER.format(extra=extra))
    (root / "model" / "tiny.py").write_text(TINY)
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
    assert (built / "numba-cache" / "model.tiny").is_dir()  # keyed by module name

    moved = _copy(built, tmp_path / "elsewhere" / "unpacked")  # another path, other file times
    _read_only(moved)
    before = _files(moved)
    try:
        again = _run(moved, tmp_path, HOME=str(tmp_path / "home"))  # no setting: the bundled folder is found
    finally:
        _writable(moved)
    assert again["value"] == 6 and again["hits"] >= 1 and again["misses"] == 0  # twice holds add
    assert again["path"] == str(moved / "numba-cache" / "model.tiny")
    assert _files(moved) == before  # nothing written into the upload
    assert not (tmp_path / "home").exists()  # nor anywhere else: nothing was compiled


def test_a_changed_dependency_makes_the_caller_compile_again(tmp_path):
    built = _project(tmp_path / "built")
    cache = str(tmp_path / "cache")
    assert _run(built, tmp_path, BLOKUS_NUMBA_CACHE=cache)["value"] == 6
    (built / "model" / "helper.py").write_text(HELPER.format(extra=" + 1"))  # only the called module changes
    changed = _run(built, tmp_path, BLOKUS_NUMBA_CACHE=cache)
    assert changed["value"] == 7 and changed["misses"] == 2  # numba alone would reuse twice's stale copy


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
        first = _run(built, tmp_path, HOME=str(home))
        second = _run(built, tmp_path, HOME=str(home))
    finally:
        _writable(built)
    assert first["misses"] == 2 and second["hits"] >= 1 and second["misses"] == 0
    assert second["path"] == str(home / ".cache" / "blokus-numba" / "model.tiny")
    assert not any((built / "numba-cache").iterdir())


@pytest.mark.parametrize("module", ["model.fast", "ai.mcts", "ai.fastsearch"])
def test_the_stamp_covers_the_kernels_a_module_calls(module):
    from model.numba_cache import dependencies

    assert {"model.fast", "model.placements", "model.pieces", module} <= set(dependencies(module))
