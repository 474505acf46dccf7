"""``blokus bundle FILE.zip``: the contest upload, ready to hand in.

The contest system unpacks the zip into a fresh container with a plain ``python3``, no network, and runs
``start.sh -h HOST -p PORT -r CODE`` for every game. The zip holds, at its root:

* ``start.sh``: runs ``blokus bot`` with the baked-in arguments (``blokus bundle FILE.zip -- --ponder``),
  the bundled dependencies on ``sys.path`` and ``NUMBA_CPU_NAME=generic``; it writes nothing into the
  folder (no bytecode, no cache) and installs or downloads nothing;
* the project (``blokus``, ``model``, ``ai``, ``net``, ``tui``), compiled to bytecode that is valid
  whatever the files' times;
* ``deps/``: the bot's dependencies for the target Python (``--python 3.X``), manylinux x86-64 wheels
  fetched by ``pip download`` and unpacked (their tests left out);
* ``numba-cache/``: the AI's kernels compiled for a generic x86-64 CPU by running their warm-up against
  this very copy (``model.numba_cache`` finds it wherever the zip is unpacked).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from ai import DEFAULT_AI

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("blokus", "model", "ai", "net", "tui", "cli")
PROJECT_SUFFIXES = (".py", ".tcss")
UI_ONLY = {"textual"}  # dependencies only the terminal UI needs: not in the bot's upload
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_28_x86_64")  # glibc 2.17 and up; numpy and numba need 2.28
MAX_ZIP_MIB = 120  # the contest's limit
PRUNED = re.compile(r"(^|/)(tests?|__pycache__)(/|$)")  # never imported by the bot

START_SH = """#!/bin/sh
# The contest upload's entry point, made by `blokus bundle`: start.sh -h HOST -p PORT -r RESERVATION.
# Runs `blokus bot {bot_args}` with the bundled dependencies and compiled AI (Python {version});
# writes nothing into this folder.
DIR=$(cd "$(dirname "$0")" && pwd) || exit 1
PY=
for candidate in python{version} python3 python; do
    if command -v "$candidate" >/dev/null 2>&1 &&
        "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != ({major}, {minor}))' 2>/dev/null; then
        PY=$candidate
        break
    fi
done
if [ -z "$PY" ]; then
    echo "start.sh: this upload is built for Python {version}, not found here (python3 is" \\
        "$(python3 --version 2>&1)); build it with blokus bundle --python 3.X" >&2
    exit 1
fi
unset BLOKUS_NUMBA_CACHE
PYTHONPATH="$DIR:$DIR/deps" PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1 NUMBA_CPU_NAME=generic \\
    exec "$PY" -s -P -m blokus bot {bot_args_quoted}"$@"
"""


class BundleError(Exception):
    """A step failed: one line for the user."""


def _say(text: str) -> None:
    print(f"blokus bundle: {text}", file=sys.stderr, flush=True)


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


def target_python(version: str) -> str:
    """The interpreter of the target version (it compiles the bytecode and the AI)."""
    if f"{sys.version_info[0]}.{sys.version_info[1]}" == version:
        return sys.executable
    found = shutil.which(f"python{version}")
    if found is None:
        raise BundleError(f"python{version} is not installed here: it compiles the upload's bytecode and AI")
    return found


def copy_project(stage: Path) -> None:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*")):
            relative = path.relative_to(ROOT)
            if path.is_file() and path.suffix in PROJECT_SUFFIXES and "__pycache__" not in relative.parts:
                target = stage / relative
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
        errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")] or [done.stderr.strip()]
        raise BundleError(f"pip download failed: {errors[-1][:300]}")
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
    from model import numba_cache

    root = os.environ.get(numba_cache.ENV)
    base = Path(root) if root else numba_cache.user_roots()[0]
    return base / f"bundle-py{version}-generic"


def compile_ai(stage: Path, python: str, ai: str, cache: Path) -> None:
    """Compile the AI's kernels for a generic x86-64 CPU into ``cache`` (or load them from there), running the
    warm-up of the bundle's own copy, then copy those of today's sources into ``numba-cache/``."""
    from model import numba_cache

    code = (
        "import importlib; from ai import kernels_of; from model import numba_cache\n"
        f"k = kernels_of({ai!r})\n"
        "if k is not None:\n"
        "    importlib.import_module(k.module).warm_up(); numba_cache.mark_warm([k.module])\n"
    )
    if ai.startswith("py:"):  # a team's player: the compiled engine behind blokus.player's GameState
        code += "import model.fast as f; f.warm_up(); numba_cache.mark_warm(['model.fast'])\n"
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
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise BundleError(f"compiling the AI failed: {last[:300]}")
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
        raise BundleError(f"compiling the bytecode failed: {(done.stdout + done.stderr).strip()[-300:]}")


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


def copy_player(stage: Path, path: Path, class_name: str | None) -> str:
    """Copy the team's player and the Python modules beside it (not its tests) into ``player/``; returns the
    ``PATH[:CLASS]`` to give ``blokus bot --player`` relative to the upload's folder."""
    target = stage / "player"
    target.mkdir()
    for source in sorted(path.resolve().parent.glob("*.py")):
        if source.name.startswith("test_") or source.name.endswith("_test.py") or source.name == "conftest.py":
            if source.resolve() != path.resolve():
                continue
        shutil.copy2(source, target / source.name)
    return f"player/{path.name}" + (f":{class_name}" if class_name else "")


def write_zip(stage: Path, target: Path) -> int:
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for path in sorted(stage.rglob("*")):
            if path.is_file():
                zf.write(path, str(path.relative_to(stage)))  # with its mode: start.sh stays executable
    partial.replace(target)
    return target.stat().st_size


def bundle(
    target: Path,
    version: str,
    bot_args: list[str],
    *,
    ai: str = DEFAULT_AI,
    with_cache: bool = True,
    wheels: Path | None = None,
    player: tuple[Path, str | None] | None = None,
) -> int:
    """Build the upload; returns its size in bytes. ``bot_args`` are baked into start.sh (``cli.bundle``
    checks them first), ``ai`` is the player they name (its kernels are compiled in). ``wheels``: a folder
    to download into (kept, reused). ``player``: a team's player file and class (``--player``): its folder's
    Python files go into ``player/`` and start.sh runs ``blokus bot --player``."""
    python = target_python(version)
    with tempfile.TemporaryDirectory(prefix="blokus-bundle-") as tmp:
        stage = Path(tmp) / "upload"
        stage.mkdir()
        copy_project(stage)
        _say(f"downloading the dependencies for Python {version} (manylinux x86-64 wheels)")
        fetch_dependencies(stage, version, wheels or Path(tmp) / "wheels")
        inside = copy_player(stage, *player) if player is not None else None
        write_start(stage, version, bot_args, inside)
        # the folder marks an upload (``model.numba_cache`` never writes into it), also without compiled kernels
        (stage / "numba-cache").mkdir()
        (stage / "numba-cache" / "README").write_text(
            "The AI's kernels compiled by numba for a generic x86-64 CPU "
            "(model/numba_cache.py reads them; nothing is written here).\n"
        )
        if with_cache:
            _say(f"compiling the AI ({ai}) for a generic x86-64 CPU: a few minutes")
            started = time.monotonic()
            compile_ai(stage, python, ai, build_cache(version))
            _say(f"compiled in {time.monotonic() - started:.0f} s")
        compile_bytecode(stage, python)
        return write_zip(stage, target)
