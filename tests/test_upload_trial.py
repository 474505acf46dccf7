"""The trial of an upload before ``blokus bundle`` calls it ready (``cli.bundle.trial``): unpacked read-only, started
as the contest starts it in an empty environment with the target Python, judged by an embedded server. Small
hand-made zips here; a real upload's trial: tests/test_bundle.py."""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

import pytest

from blokus.cli.bundle.trial import TrialError, base_interpreter, first_error_line, try_upload

VERSION = f"{sys.version_info[0]}.{sys.version_info[1]}"


def _zip(tmp_path: Path, start_sh: str) -> Path:
    upload = tmp_path / "upload.zip"
    with zipfile.ZipFile(upload, "w") as zf:
        info = zipfile.ZipInfo("start.sh")
        info.external_attr = 0o755 << 16
        zf.writestr(info, start_sh)
        zf.writestr("player/data.txt", "x")
    return upload


def test_an_upload_that_fails_is_named_by_its_first_error_line(tmp_path: Path) -> None:
    upload = _zip(tmp_path, '#!/bin/sh\necho "loading" >&2\nexec python3 -c "import a_package_left_behind"\n')
    trial = tmp_path / "trial"
    trial.mkdir()
    with pytest.raises(TrialError) as exc:
        try_upload(upload, trial, sys.executable, VERSION, strict=True)
    assert str(exc.value) == (
        "upload crashed (exit 1) before joining: ModuleNotFoundError: No module named 'a_package_left_behind'"
    )


def test_the_upload_runs_read_only_in_an_empty_environment_with_the_target_python(tmp_path: Path) -> None:
    # start.sh reports where it runs, then fails: the trial says why, and its log holds the report
    report = (
        "#!/bin/sh\n"
        'echo "env: $(env | cut -d= -f1 | sort | tr "\\n" " ")"\n'
        'echo "pwd: $(pwd)"\n'
        'echo "python: $(command -v python' + VERSION + ')"\n'
        'echo "args: $*"\n'
        'echo "modes: $(stat -c %A "$(dirname "$0")" "$0" | tr "\\n" " ")"\n'
        'echo "start.sh: nothing to play with" >&2\n'
        "exit 3\n"
    )
    trial = tmp_path / "trial"
    trial.mkdir()
    with pytest.raises(TrialError, match=r"^upload crashed \(exit 3\) before joining: start.sh: nothing to play with$"):
        try_upload(_zip(tmp_path, report), trial, sys.executable, VERSION, strict=True)
    lines = dict(line.split(": ", 1) for line in (trial / "trial-ONE-upload.out.log").read_text().splitlines())
    # no HOME; its scratch folder (ai.sandbox: the one folder it may write in) named twice
    assert set(lines["env"].split()) <= {
        "PATH",
        "PWD",
        "SHLVL",
        "_",
        "OLDPWD",
        "BLOKUS_PROCESS_TOKEN",
        "TMPDIR",
        "BLOKUS_SCRATCH",
    }
    assert lines["pwd"] == str(trial / "run")
    python = lines["python"]
    assert Path(python).parent == trial / "bin" and os.path.realpath(python) == base_interpreter(sys.executable)
    assert lines["args"].startswith("--strict -h 127.0.0.1 -p ")
    assert lines["modes"].split() == ["dr-xr-xr-x", "-r-xr-xr-x"]  # read-only (by mode: root writes anyway)


def test_the_first_error_line_is_the_exception_before_our_own_lines(tmp_path: Path) -> None:
    log = tmp_path / "err.log"
    log.write_text(
        "blokus bot: mcts: compiling the search (first start only)\n"
        "Traceback (most recent call last):\n"
        '  File "player/player.py", line 3, in <module>\n'
        "    import tables\n"
        "ModuleNotFoundError: No module named 'tables'\n"
        "blokus bot: your player failed\n"
    )
    assert first_error_line(log) == "ModuleNotFoundError: No module named 'tables'"
    log.write_text("loading\nstart.sh: this upload is built for Python 3.11, not found here\n")
    assert first_error_line(log) == "start.sh: this upload is built for Python 3.11, not found here"
    assert first_error_line(tmp_path / "missing.log") == ""
