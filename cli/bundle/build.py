"""``blokus bundle FILE.zip``: the contest upload, ready to hand in.

The contest system unpacks the zip into a fresh container with a plain ``python3``, no network, and runs
``start.sh -h HOST -p PORT -r CODE`` for every game. The zip holds, at its root:

* ``start.sh``: runs ``blokus bot`` with the baked-in arguments (``blokus bundle FILE.zip -- --ponder``),
  the bundled dependencies on ``sys.path`` and ``NUMBA_CPU_NAME=generic`` (every other ``NUMBA_*`` and
  ``PYTHON*`` variable of the caller cleared), found through symbolic links to it; it writes nothing into
  the folder (no bytecode, no cache), installs or downloads nothing, and names the cause in one line when
  no interpreter starts;
* the project (``blokus``, ``model``, ``ai``, ``net``, ``tui``), compiled to bytecode that is valid
  whatever the files' times;
* ``deps/``: the bot's dependencies for the target Python (``--python 3.X``), manylinux x86-64 wheels
  fetched by ``pip download`` and unpacked (their tests left out);
* ``numba-cache/``: the AI's kernels compiled for a generic x86-64 CPU by running their warm-up against
  this very copy (``model.numba_cache`` finds it wherever the zip is unpacked);
* with ``--player``: the team's player file and the modules of its folder it imports, in ``player/``, and the
  packages it imports from the team's environment, in ``deps/`` (``cli.bundle.team_files``: found by reading the files,
  nothing else of the folder unless ``--include`` names it).

The zip is written as ``FILE.zip.part`` and tried before it takes its name (``cli.bundle.trial``: unpacked
read-only, started in an empty environment with the target Python against an embedded server, a few moves
played); a failed build or trial leaves no file. A bad output path is refused before anything is built.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

from blokus.ai.players.registry import PlayerKind, PlayerSpec, default_player
from blokus.cli.bundle.team_files import PackError, TeamFiles, closure, find_team_files
from blokus.cli.bundle.trial import TrialError, try_upload

ROOT = Path(__file__).parents[3].resolve()  # blokus/cli/bundle/build.py -> the folder holding the package
PROJECT_SUFFIXES = (".py", ".tcss", ".txt")  # .txt: the opening book (ai/search/book/)
UI_ONLY = {"textual"}  # dependencies only the terminal UI needs: not in the bot's upload
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_28_x86_64")  # glibc 2.17 and up; numpy and numba need 2.28
MAX_ZIP_MIB = 120  # the contest's limit
ZIP_LEVEL = 6  # deflate level: ~10 s of CPU for ~90 MiB (level 9: 0.5 MiB smaller for ~29 s)
PRUNED = re.compile(r"(^|/)(tests?|__pycache__)(/|$)")  # never imported by the bot

START_SH = """#!/bin/sh
# The contest upload's entry point, made by `blokus bundle`: start.sh -h HOST -p PORT -r RESERVATION.
# Runs `blokus bot {bot_args}` with the bundled dependencies and compiled AI (Python {version});
# writes nothing into this folder.

# Python and numba run as set here, whatever the caller's environment says (NUMBA_CPU_FEATURES would make
# numba ignore the bundled kernels, PYTHONHOME could break the interpreter, PYTHONSTARTUP run other code)
for var in $(env | sed -n 's/^\\(NUMBA_[A-Za-z0-9_]*\\)=.*/\\1/p; s/^\\(PYTHON[A-Za-z0-9_]*\\)=.*/\\1/p'); do
    unset "$var" 2>/dev/null
done
unset BLOKUS_NUMBA_CACHE

# this folder, also when started through a symbolic link to start.sh
SELF=$0
while [ -h "$SELF" ]; do
    LINK=$(readlink "$SELF") || break
    case $LINK in
        /*) SELF=$LINK ;;
        *) SELF=$(dirname "$SELF")/$LINK ;;
    esac
done
DIR=$(cd "$(dirname "$SELF")" && pwd -P) || exit 1

PY=
WHY=
for candidate in python{version} python3 python; do
    command -v "$candidate" >/dev/null 2>&1 || continue
    ERR=$("$candidate" -c 'import sys; sys.exit(0 if sys.version_info[:2] == ({major}, {minor}) else 3)' 2>&1)
    case $? in
        0) PY=$candidate; break ;;
        3) ;;
        *) WHY="$candidate does not start: $(printf '%s\\n' "$ERR" | grep . | tail -n 1)" ;;
    esac
done
if [ -z "$PY" ]; then
    if [ -n "$WHY" ]; then
        echo "start.sh: $WHY" >&2
    else
        echo "start.sh: this upload is built for Python {version}, not found here (python3 is" \\
            "$(python3 --version 2>&1)); build it with blokus bundle --python 3.X" >&2
    fi
    exit 1
fi
PYTHONPATH="$DIR:$DIR/deps" PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1 NUMBA_CPU_NAME=generic \\
    exec "$PY" -s -P -m blokus bot {bot_args_quoted}"$@"
"""


class BundleError(Exception):
    """A step failed: one line for the user."""


log = logging.getLogger("blokus.bundle")

Say = Callable[[str], None]  # one line of progress for the user (``cli.bundle`` writes it on stderr)


def requirements() -> list[str]:
    """The project's runtime dependencies without the terminal UI's (from its installed metadata)."""
    try:
        required = importlib.metadata.requires("blokus-tui") or []
    except importlib.metadata.PackageNotFoundError:
        raise BundleError("the project is not installed (pip install -e .): its dependencies are unknown") from None
    keep = []
    for line in required:
        if ";" in line and "extra" in line.split(";", 1)[1]:
            continue  # test extras
        name = re.split(r"[\[<>=!~; ]", line, maxsplit=1)[0].lower()
        if name not in UI_ONLY:
            keep.append(line.split(";", 1)[0].strip())
    return keep


def bundled_distributions() -> set[str]:
    """The distributions the upload holds anyway (the bot's requirements and what they need, as installed
    here), by normalized name."""
    names = [re.split(r"[\[<>=!~; ]", line, maxsplit=1)[0] for line in requirements()]
    return set(closure(names))


def stdlib_names(python: str) -> frozenset[str]:
    """The standard library's module names of the target Python."""
    cmd = [python, "-c", "import sys; print(' '.join(sorted(sys.stdlib_module_names)))"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=60)
    if done.returncode != 0:
        raise failed("the target Python does not run", cmd, done)
    return frozenset(done.stdout.split())


def check_target(target: Path) -> None:
    """BundleError (one line) if the zip cannot be written at ``target``: before anything is built."""
    if target.is_dir():
        raise BundleError(f"{target} is a folder: name the zip to write, e.g. {target / 'upload.zip'}")
    existing = target.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise BundleError(f"{target}: {existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise BundleError(f"{target}: cannot write into {existing}")
    if target.with_name(target.name + ".part").is_dir():
        raise BundleError(f"{target}: {target.name}.part is a folder (the zip is written there first)")


def target_python(spec: str) -> tuple[str, str]:
    """The target version ``3.X`` and its interpreter (it compiles the bytecode and the AI), from ``--python``:
    a version (``python3.X`` on the PATH) or an interpreter's path; the interpreter is run once to be sure."""
    if re.fullmatch(r"3\.\d+", spec):
        here = f"{sys.version_info[0]}.{sys.version_info[1]}" == spec
        found = sys.executable if here else shutil.which(f"python{spec}")
        if found is None:
            raise BundleError(f"python{spec} is not installed here: it compiles the upload's bytecode and AI")
    elif "/" in spec or Path(spec).exists():
        found = spec
    else:
        raise BundleError(f"--python wants 3.X or an interpreter's path, not {spec!r}")
    cmd = [found, "--version"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BundleError(f"the target Python does not run: `{shlex.join(cmd)}`: {exc}") from None
    told = re.fullmatch(r"Python (3\.\d+)\.\S+", (done.stdout or done.stderr).strip())
    if done.returncode != 0 or told is None:
        raise failed("the target Python does not run", cmd, done)
    version = told[1]
    if re.fullmatch(r"3\.\d+", spec) and version != spec:
        raise BundleError(f"`{found}` is Python {version}, not {spec}")
    return version, found


def failed(what: str, cmd: list[str], done: subprocess.CompletedProcess) -> BundleError:
    """A helper command failed: its command line and its whole first error line (pip's first ``ERROR``, a
    Python traceback's exception; else the first line: a version manager's shim that refuses says why there)."""
    lines = [line.rstrip() for line in (done.stderr or done.stdout or "").splitlines() if line.strip()]
    if lines and lines[0].startswith("Traceback"):
        lines = [line for line in lines if not line.startswith(" ")][1:] or lines
    first = next((line for line in lines if line.startswith("ERROR")), lines[0].strip() if lines else "no output")
    shown = shlex.join(cmd if len(cmd) < 30 else [*cmd[:30], "…"])
    return BundleError(f"{what} (exit {done.returncode}): `{shown}`: {first}")


def copy_project(stage: Path) -> None:
    # os.walk follows the links of a checkout (blokus/model -> ../model, ...): the upload holds real folders
    for folder, subfolders, files in os.walk(ROOT / "blokus", followlinks=True):
        subfolders[:] = sorted(s for s in subfolders if s != "__pycache__")
        for name in sorted(files):
            path = Path(folder, name)
            if path.suffix in PROJECT_SUFFIXES:
                target = stage / path.relative_to(ROOT)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)


def fetch_dependencies(stage: Path, version: str, wheels: Path) -> None:
    """``pip download`` the manylinux wheels for the target Python, then unpack them into ``deps/``."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--only-binary=:all:",
        "--python-version",
        version,
        "--implementation",
        "cp",
        "--dest",
        str(wheels),
    ]
    for platform in PLATFORMS:
        cmd += ["--platform", platform]
    done = subprocess.run([*cmd, *requirements()], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise failed("pip download failed", [*cmd, *requirements()], done)
    deps = stage / "deps"
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as zf:
            for info in zf.infolist():
                name = _installed_name(info.filename)
                if name is None or info.is_dir() or PRUNED.search(name):
                    continue
                target = deps / name
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)


def _installed_name(name: str) -> str | None:
    """Where a wheel's member goes in a ``--target``-like folder (None: scripts, headers, data)."""
    parts = name.split("/")
    if parts[0].endswith(".data"):
        if len(parts) > 2 and parts[1] in ("purelib", "platlib"):
            return "/".join(parts[2:])
        return None
    if ".." in parts or name.startswith("/"):
        return None
    return name


def build_cache(version: str) -> Path:
    """The builder's own cache of generic kernels (kept between builds: a rebuild with unchanged sources
    only loads them); in ``$BLOKUS_NUMBA_CACHE`` when set (the tests), else beside the user's cache."""
    from blokus.model import numba_cache

    root = os.environ.get(numba_cache.ENV)
    base = Path(root) if root else numba_cache.user_roots()[0]
    return base / f"bundle-py{version}-generic"


def compile_ai(stage: Path, python: str, ai: PlayerSpec, cache: Path) -> None:
    """Compile the AI's kernels for a generic x86-64 CPU into ``cache`` (or load them from there), running the
    warm-up of the bundle's own copy, then copy those of today's sources into ``numba-cache/``."""
    from blokus.model import numba_cache

    code = "import importlib; from blokus.model import numba_cache\n"
    if ai.kernels_module is not None:
        code += (
            f"k = importlib.import_module({ai.kernels_module!r}).KERNELS\n"
            "importlib.import_module(k.module).warm_up(); numba_cache.mark_warm([k.module])\n"
        )
    if ai.kind is PlayerKind.PY:  # a team's player: the compiled engine behind blokus.player's GameState
        code += "import blokus.model.fast as f; f.warm_up(); numba_cache.mark_warm(['blokus.model.fast'])\n"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/"),
        "PYTHONPATH": f"{stage}:{stage / 'deps'}",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "NUMBA_CPU_NAME": "generic",
        numba_cache.ENV: str(cache),
    }
    done = subprocess.run([python, "-s", "-c", code], cwd=stage, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise failed("compiling the AI failed", [python, "-s", "-c", "<the warm-up>"], done)
    for path in numba_cache.fresh_files(cache):
        target = stage / "numba-cache" / path.relative_to(cache)
        target.parent.mkdir(exist_ok=True)
        shutil.copyfile(path, target)


def compile_bytecode(stage: Path, python: str) -> None:
    """Bytecode for every module, valid whatever the unpacked files' times (the upload is read-only)."""
    done = subprocess.run(
        [python, "-s", "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash", str(stage)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise failed("compiling the bytecode failed", done.args, done)


def write_start(stage: Path, version: str, bot_args: list[str], player: str | None = None) -> None:
    """``player``: the team's player file (and class) inside the upload, as ``PATH[:CLASS]`` under its folder."""
    major, minor = version.split(".")
    quoted = "".join(f"{shlex.quote(arg)} " for arg in bot_args)
    if player is not None:  # found beside start.sh wherever the upload is unpacked
        quoted += f'--player "$DIR"/{shlex.quote(player)} '
        bot_args = [*bot_args, "--player", player]
    text = START_SH.format(
        version=version, major=major, minor=minor, bot_args=" ".join(bot_args) or "", bot_args_quoted=quoted
    )
    (stage / "start.sh").write_text(text)
    (stage / "start.sh").chmod(0o755)


def team_files(player: PlayerSpec, includes: list[str], version: str, python: str, say: Say = log.info) -> TeamFiles:
    """What the upload takes of the team's player (``cli.bundle.team_files``); BundleError: what cannot be packed."""
    try:
        team = find_team_files(
            Path(player.path),
            includes,
            version=version,
            stdlib=stdlib_names(python),
            bundled=bundled_distributions(),
        )
    except PackError as exc:
        raise BundleError(str(exc)) from None
    say(f"the player's files: {', '.join(str(p) for p in sorted(team.files))}")
    if team.packages:
        say(f"from your environment: {', '.join(team.packages)}")
    if team.left_out:
        say(f"left out (optional imports, not installed here): {', '.join(team.left_out)}")
    return team


def pack_team(stage: Path, team: TeamFiles, class_name: str) -> str:
    """Copy the team's files into ``player/`` and its packages into ``deps/`` (never over the upload's own);
    returns the ``PATH[:CLASS]`` to give ``blokus bot --player`` relative to the upload's folder."""
    for relative, source in team.files.items():
        target = stage / "player" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    for relative, source in team.deps.items():
        target = stage / "deps" / relative
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    return f"player/{team.player}" + (f":{class_name}" if class_name else "")


def write_zip(stage: Path, partial: Path) -> None:
    """The stage as a zip at ``partial`` (removed again if that fails)."""
    try:
        partial.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=ZIP_LEVEL) as zf:
            for path in sorted(stage.rglob("*")):
                if path.is_file():
                    zf.write(path, str(path.relative_to(stage)))  # with its mode: start.sh stays executable
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise BundleError(f"cannot write {partial}: {exc.strerror or exc}") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def bundle(
    target: Path,
    version: str,
    bot_args: list[str],
    *,
    ai: PlayerSpec | None = None,
    with_cache: bool = True,
    wheels: Path | None = None,
    player: PlayerSpec | None = None,
    includes: list[str] | None = None,
    say: Say = log.info,
) -> int:
    """Build the upload, try it, and only then give it its name; returns its size in bytes. ``bot_args`` are
    baked into start.sh (``cli.bundle`` checks them first), ``ai`` is the player they name (its kernels are
    compiled in; None: the default AI). ``wheels``: a folder to download into (kept, reused). ``player``: a
    team's player (``--player``): its files go into ``player/`` (``includes``: data files of its folder too)
    and start.sh runs ``blokus bot --player``. ``say``: the progress, one line at a time."""
    ai = player or ai or default_player()
    check_target(target)
    version, python = target_python(version)  # --python: 3.X or an interpreter's path
    team = team_files(player, includes or [], version, python, say) if player is not None else None
    partial = target.with_name(target.name + ".part")
    with tempfile.TemporaryDirectory(prefix="blokus-bundle-") as tmp:
        stage = Path(tmp) / "upload"
        stage.mkdir()
        copy_project(stage)
        say(f"downloading the dependencies for Python {version} (manylinux x86-64 wheels)")
        fetch_dependencies(stage, version, wheels or Path(tmp) / "wheels")
        inside = pack_team(stage, team, player.class_name) if team is not None and player is not None else None
        write_start(stage, version, bot_args, inside)
        # the folder marks an upload (``model.numba_cache`` never writes into it), also without compiled kernels
        (stage / "numba-cache").mkdir()
        (stage / "numba-cache" / "README").write_text(
            "The AI's kernels compiled by numba for a generic x86-64 CPU "
            "(model/numba_cache.py reads them; nothing is written here).\n"
        )
        if with_cache:
            say(f"compiling the AI ({ai.label}) for a generic x86-64 CPU: a few minutes")
            started = time.monotonic()
            compile_ai(stage, python, ai, build_cache(version))
            say(f"compiled in {time.monotonic() - started:.0f} s")
        compile_bytecode(stage, python)
        write_zip(stage, partial)
        try:
            say("trying the upload: started as the contest starts it (empty environment, read-only) for a few moves")
            trial_dir = Path(tmp) / "trial"
            trial_dir.mkdir()
            trial = try_upload(partial, trial_dir, python, version, strict=team is not None)
        except TrialError as exc:
            partial.unlink(missing_ok=True)
            raise BundleError(f"the upload does not play: {exc}") from None
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        say(f"tried: it played {trial.moves} moves (slowest {trial.slowest_ms:.0f} ms)")
        partial.replace(target)
        return target.stat().st_size
