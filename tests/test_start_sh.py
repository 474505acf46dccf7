"""The upload's ``start.sh`` (``cli.bundle.build.START_SH``) on its own, with a stand-in project: it clears the
caller's ``NUMBA_*``/``PYTHON*`` settings, finds its folder through symbolic links, and names the real cause
when no interpreter starts (issue 46.6). The whole upload is tested in ``test_bundle.py`` (slow)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from blokus.cli.bundle.build import write_start

VERSION = f"{sys.version_info[0]}.{sys.version_info[1]}"
SHOW = """\
import json, os, sys
print(json.dumps({"argv": sys.argv[1:], "file": __file__,
                  "env": {k: v for k, v in os.environ.items() if k.startswith(("NUMBA_", "PYTHON", "BLOKUS_"))}}))
"""

pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="a POSIX shell")


def _stage(tmp_path: Path) -> Path:
    stage = tmp_path / "upload"
    (stage / "blokus").mkdir(parents=True)
    (stage / "blokus" / "__init__.py").write_text("")
    (stage / "blokus" / "__main__.py").write_text(SHOW)
    write_start(stage, VERSION, ["--ponder"])
    return stage


def _bin(tmp_path: Path, python: str | None = None) -> Path:
    """A folder for PATH whose python3.X, python3 and python are ``python`` (default: this interpreter)."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for name in (f"python{VERSION}", "python3", "python"):
        target = folder / name
        if python is None:
            target.symlink_to(os.path.realpath(sys.executable))
        else:
            target.write_text(python)
            target.chmod(0o755)
    return folder


def _run(start: Path, tmp_path: Path, path: Path, **env: str) -> subprocess.CompletedProcess:
    base = {"PATH": f"{path}:/usr/bin:/bin", "HOME": str(tmp_path)}
    return subprocess.run(
        [str(start), "-p", "1"], env={**base, **env}, cwd=tmp_path, capture_output=True, text=True, timeout=60
    )


def test_start_sh_clears_the_callers_settings_and_follows_links(tmp_path: Path):
    stage = _stage(tmp_path)
    link = tmp_path / "elsewhere" / "start.sh"
    link.parent.mkdir()
    link.symlink_to(os.path.relpath(stage / "start.sh", link.parent))  # a relative link, from another folder
    done = _run(
        link,
        tmp_path,
        _bin(tmp_path),
        NUMBA_CPU_FEATURES="+avx512f",
        NUMBA_CACHE_DIR="/tmp/shared",
        PYTHONHOME="/nonexistent",
        PYTHONSTARTUP="/tmp/evil.py",
        BLOKUS_NUMBA_CACHE="/tmp/shared",
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["argv"] == ["bot", "--ponder", "-p", "1"]
    assert Path(seen["file"]).resolve() == (stage / "blokus" / "__main__.py").resolve()
    assert seen["env"] == {
        "NUMBA_CPU_NAME": "generic",
        "PYTHONPATH": f"{stage.resolve()}:{stage.resolve()}/deps",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
    }


def test_start_sh_names_the_cause_when_the_interpreter_does_not_start(tmp_path: Path):
    broken = (
        "#!/bin/sh\necho 'python: error while loading shared libraries: libpython.so.1.0: cannot open' >&2\nexit 127\n"
    )
    done = _run(_stage(tmp_path) / "start.sh", tmp_path, _bin(tmp_path, broken))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        "start.sh: python does not start: python: error while loading shared libraries: libpython.so.1.0: cannot open\n"
    )
