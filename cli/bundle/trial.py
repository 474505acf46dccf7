"""The contest upload tried before ``blokus bundle`` calls it ready.

The zip is unpacked into a fresh folder and made read-only, then started as the contest starts it —
``start.sh -h HOST -p PORT -r CODE`` — in an empty environment (no ``HOME``; ``PATH`` only the system's folders
and one holding the target Python as ``python3.X``), in a working folder of its own, against an embedded server
(``net.external.HostedGame``) with our ``random`` player on the other seat. It is ready once it has made
``MOVES`` moves; otherwise the trial names how the server judged it and the first error line of its stderr.

A team's player is tried with ``--strict`` (an exception of its code ends the game, as in the contest). The moves
are not held to the season's time limits (the building machine may be busy), only to a minute each.
"""

from __future__ import annotations

import re
import shlex
import shutil
import stat
import subprocess
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from blokus.ai.arena.verdict import HostedOutcome
from blokus.ai.processes import TOKEN_ENV
from blokus.model.pieces import Team
from blokus.model.season import DEFAULT_SEASON, Season
from blokus.net.external import HostedGame, HostedSeat, ProgramError
from blokus.net.external_arena import OUR_ENV, our_command
from blokus.net.rooms import Timeouts

MOVES = 4  # the upload's own moves: both its colours, each twice (a first move and a later one)
JOIN_S = 120.0  # from its start to its join (it loads numpy, numba and the compiled AI)
TRIAL_S = 300.0  # the whole trial at most
ERROR_BYTES = 256 * 1024  # of its stderr, read for the first error line
SYSTEM_PATH = "/usr/bin:/bin"
# what a failing upload says, best first: a Python exception's line, then a line of start.sh or of our commands
ERROR_LINES = (re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit)\b"), re.compile(r"^(start\.sh|blokus [a-z-]+):"))


class TrialError(Exception):
    """The upload did not play: one line for the user."""


@dataclass(frozen=True)
class Trial:
    """How the upload played: its moves and the slowest of them (as the server measured)."""

    moves: int
    slowest_ms: float


def unpack_read_only(upload: Path, folder: Path) -> Path:
    """``upload`` unpacked into ``folder`` with the zip's modes (start.sh executable), then nothing writable."""
    with zipfile.ZipFile(upload) as zf:
        zf.extractall(folder)
        for info in zf.infolist():
            mode = info.external_attr >> 16
            if mode:
                (folder / info.filename).chmod(mode & 0o555)
    for path in [folder, *folder.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return folder


def make_writable(folder: Path) -> None:
    """Undo :func:`unpack_read_only` (to remove the folder)."""
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


def base_interpreter(python: str) -> str:
    """The interpreter behind ``python`` without its virtual environment (the contest has none of the team's
    packages): ``sys._base_executable``, links resolved."""
    done = subprocess.run(
        [python, "-c", "import sys; print(getattr(sys, '_base_executable', sys.executable))"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    found = done.stdout.strip()
    return str(Path(found).resolve()) if done.returncode == 0 and found else python


def first_error_line(path: Path) -> str:
    """The first line of a program's stderr that says what went wrong ("" if none)."""
    try:
        with open(path, "rb") as fh:
            text = fh.read(ERROR_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""
    for pattern in ERROR_LINES:
        found = next((line.strip() for line in text.splitlines() if pattern.search(line)), "")
        if found:
            return found
    return ""


def upload_command(start: Path, python: str, version: str, work: Path, extra: list[str]) -> list[str]:
    """``start.sh EXTRA`` (the host adds ``-h -p -r``) run in ``work`` with an empty environment but ``PATH``:
    the system's folders after one that holds the target Python as ``python3.X`` (start.sh looks for it first).
    The process token of ``ai.processes`` is handed on, so that everything the upload starts is found, and so are
    its scratch folder (``ai.sandbox``: the one it may write in, walled in) and ``TMPDIR``, which names it."""
    bin_dir = work.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    link = bin_dir / f"python{version}"
    if not link.exists():
        link.symlink_to(base_interpreter(python))
    env = shutil.which("env") or "/usr/bin/env"
    script = (
        f"cd {shlex.quote(str(work))} && exec {shlex.quote(env)} -i PATH={shlex.quote(f'{bin_dir}:{SYSTEM_PATH}')} "
        f'{TOKEN_ENV}="${TOKEN_ENV}" TMPDIR="$TMPDIR" BLOKUS_SCRATCH="$BLOKUS_SCRATCH" /bin/sh "$0" "$@"'
    )
    return ["/bin/sh", "-c", script, str(start), *extra]


def try_upload(
    upload: Path,
    folder: Path,
    python: str,
    version: str,
    *,
    strict: bool,
    season: Season = DEFAULT_SEASON,
    moves: int = MOVES,
) -> Trial:
    """Start the zip ``upload`` (unpacked into ``folder``) against an embedded server until it has made ``moves``
    moves; TrialError with one line if it does not."""
    unpacked = unpack_read_only(upload, folder / "upload")
    work = folder / "run"
    work.mkdir()
    argv = upload_command(unpacked / "start.sh", python, version, work, ["--strict"] if strict else [])
    ours = HostedSeat("random", our_command("bot", "--ai", "random", "--idle-timeout", "120s"), ours=True, env=OUR_ENV)
    game = HostedGame(
        (HostedSeat("upload", argv), ours),
        season=season,
        timeouts=Timeouts(soft=None, hard=None),  # a minute per move (net.external.UNTIMED_HARD_S)
        seed=1,
        log_dir=folder,
        log_prefix="trial",
        join_timeout=JOIN_S,
    )
    outcome: HostedOutcome | None = None
    played: list[float] = []
    try:
        try:
            game.start()
        except ProgramError as exc:
            raise TrialError(f"the upload could not start: {exc}") from None
        deadline = time.monotonic() + TRIAL_S
        while time.monotonic() < deadline:
            played = [m.latency or 0.0 for m in list(game.moves) if m.team is Team.ONE and m.mistake is None]
            if len(played) >= moves:
                return Trial(len(played), max(played) * 1000)
            outcome = game.wait(0.1)
            if outcome is not None:
                break
    finally:
        game.close()
        make_writable(unpacked)
    why = _judged(outcome) if outcome is not None else f"{len(played)} of {moves} moves in {TRIAL_S:g} s"
    error = first_error_line(game.programs[Team.ONE].err_path)
    raise TrialError(f"{why}" + (f"; its first error: {error}" if error and error not in why else ""))


def _judged(outcome: HostedOutcome) -> str:
    """How the game that ended early was judged, in one line."""
    if outcome.void:
        return outcome.void
    if outcome.forfeit:
        side = "the upload" if outcome.offender is Team.ONE else "our trial player"
        return f"{side}: {outcome.forfeit}"
    return "the game ended early"
