"""``blokus bundle``'s helper commands (pip, the target interpreter): a failure names the command line and
its whole first error line; ``--python`` takes a version or an interpreter's path (issue 45 point 6)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from blokus.cli.bundle import main
from blokus.cli.bundle.build import BundleError, failed, target_python

VERSION = f"{sys.version_info[0]}.{sys.version_info[1]}"
SHIM = """#!/bin/sh
echo "pyenv: python3.12: command not found" >&2
echo "" >&2
echo "Note: See 'pyenv help global' for tips on allowing both" >&2
echo "      Python versions to be found at the same time." >&2
exit 127
"""


def _shim(folder: Path, name: str = "python3.12") -> Path:
    path = folder / name
    path.write_text(SHIM)
    path.chmod(0o755)
    return path


def test_the_target_python_by_version_or_by_path():
    assert target_python(VERSION) == (VERSION, sys.executable)
    assert target_python(sys.executable) == (VERSION, sys.executable)


def test_a_refusing_interpreter_is_named_with_its_command_and_its_first_line(tmp_path, monkeypatch):
    shim = _shim(tmp_path)
    with pytest.raises(BundleError) as by_path:
        target_python(str(shim))
    assert str(by_path.value) == (
        f"the target Python does not run (exit 127): `{shim} --version`: pyenv: python3.12: command not found"
    )
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    with pytest.raises(BundleError) as by_version:
        target_python("3.12")
    assert str(by_version.value) == str(by_path.value)


def test_the_first_error_line_of_pip_and_of_a_traceback():
    pip = ["python", "-m", "pip", "download", "numpy==99"]
    done = subprocess.CompletedProcess(
        pip,
        1,
        "",
        "WARNING: the cache is off\nERROR: Could not find a version that satisfies the requirement numpy==99 "
        "(from versions: 1.26.4, 2.0.0)\nERROR: No matching distribution found for numpy==99\n",
    )
    assert str(failed("pip download failed", pip, done)) == (
        "pip download failed (exit 1): `python -m pip download numpy==99`: ERROR: Could not find a version that "
        "satisfies the requirement numpy==99 (from versions: 1.26.4, 2.0.0)"
    )
    trace = 'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\nModuleNotFoundError: No x\n'
    done = subprocess.CompletedProcess(["py"], 1, "", trace)
    assert str(failed("compiling the AI failed", ["py"], done)).endswith("`py`: ModuleNotFoundError: No x")


def test_the_command_says_it_in_one_line(tmp_path, capsys):
    assert main([str(tmp_path / "up.zip"), "--python", str(_shim(tmp_path))]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "command not found" in err and "--version`" in err
    assert main([str(tmp_path / "up.zip"), "--python", "3"]) == 1
    assert "3.X or an interpreter's path" in capsys.readouterr().err
