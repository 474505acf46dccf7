"""``blokus bundle``: the contest upload, unpacked read-only and started by a bare system Python.

Building it downloads the dependencies (``pip download``) and compiles the AI for a generic CPU: the
suite's own kernels are compiled for that CPU (conftest.py) and seed the build's cache, so the build loads them.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import shutil
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from blokus.cli.bundle import build as B
from blokus.cli.bundle.build import _installed_name, bundle
from blokus.cli.bundle.trial import make_writable, unpack_read_only
from blokus.cli.watch import watch_text
from blokus.model import numba_cache
from blokus.model.exits import EXIT_OK
from blokus.net.watch import Watcher
from tests.helpers import HOST, PASSWORD, run_bot, start_server, watch_args

BARE_PYTHON = Path("/usr/bin/python3")
VERSION = f"{sys.version_info[0]}.{sys.version_info[1]}"

# the upload's module fixture compiles the AI from cold for a bare Python: minutes on a loaded machine, more
# than the suite's per-test cap (pyproject.toml), which it is charged to
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200), pytest.mark.xdist_group("bundle")]  # one build a session


def _bare_python_fits() -> bool:
    import subprocess

    if not BARE_PYTHON.exists():
        return False
    done = subprocess.run(
        [str(BARE_PYTHON), "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() == str(sys.version_info[:2])


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("wheels")  # downloaded once for the module's uploads (~85 MB)
    yield folder
    shutil.rmtree(folder)  # removed after the module, passed or failed (pytest keeps a failed run's folders)


@pytest.fixture(scope="module")
def upload(tmp_path_factory, wheels) -> Iterator[Path]:
    if not _bare_python_fits():
        pytest.skip(f"no system {BARE_PYTHON} of Python {VERSION} to start the upload with")
    seed_build_cache()
    target = tmp_path_factory.mktemp("bundle") / "upload.zip"  # ~270 MB (stored, not compressed): removed after
    # tried before it takes its name (a failed trial raises); its size limit is the command's to enforce: see main.
    # The contents are under test, not the compression: level 0 (deflate's stored blocks) spends no CPU on it,
    # in the build and in every unpacking. The baked-in move time is short: the games below play ~40 moves each
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(B, "ZIP_LEVEL", 0)
        bundle(target, VERSION, ["--move-time", "100"], wheels=wheels)
    yield target
    shutil.rmtree(target.parent)


def seed_build_cache() -> None:
    """Put the session's kernels (compiled for the generic CPU, conftest.py) in the builder's own cache: the
    build's warm-up then loads them, as a rebuild with unchanged sources does, instead of compiling cold."""
    session = Path(os.environ[numba_cache.ENV])
    build = B.build_cache(VERSION)
    for path in numba_cache.fresh_files(session):
        target = build / path.relative_to(session)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def test_the_upload_holds_start_sh_the_project_the_dependencies_and_the_compiled_ai(upload):
    with zipfile.ZipFile(upload) as zf:
        names = set(zf.namelist())
        start = zf.read("start.sh").decode()
    assert {
        "start.sh",
        "blokus/__init__.py",
        "blokus/ai/search/mcts/kernels.py",
        "blokus/model/numba_cache.py",
        "blokus/ai/search/book/book.txt",  # the opening book: the contest's games start from it
    } <= names
    assert not any(n.startswith(("model/", "ai/", "net/", "tui/", "cli/")) for n in names)  # one package: blokus
    assert any(n.startswith("deps/numba/") for n in names) and any(n.startswith("deps/numpy/") for n in names)
    assert any(n.startswith("numba-cache/blokus.ai.search.mcts.kernels/") and n.endswith(".nbc") for n in names)
    assert "numba-cache/blokus.ai.search.mcts/blokus.ai.search.mcts.ready" in names
    assert not any("/tests/" in n for n in names)
    assert "--move-time 100" in start and "NUMBA_CPU_NAME=generic" in start and "PYTHONDONTWRITEBYTECODE=1" in start


def test_wheel_members_go_where_an_install_puts_them():
    assert _installed_name("numba/core/caching.py") == "numba/core/caching.py"
    assert _installed_name("pkg-1.0.data/purelib/pkg/x.py") == "pkg/x.py"
    assert _installed_name("pkg-1.0.data/scripts/tool") is None
    assert _installed_name("../evil.py") is None


# the contest's season: the upload's bot is the one test_net_e2e.py plays in both seasons (~8 s of CPU a game here)
@pytest.mark.parametrize("season", ["2027"])
async def test_a_read_only_upload_started_bare_joins_a_prepared_game_and_plays(upload, tmp_path, season):
    from blokus.model.season import season_named

    folder = unpack_read_only(upload, tmp_path / "unpacked")  # as the contest does, and the trial
    before = _snapshot(folder)
    server = await start_server(password=PASSWORD, seed=5, season=season_named(season))
    procs: list[asyncio.Task] = []
    bots: list[asyncio.Task] = []

    async def start_upload(code: str) -> asyncio.subprocess.Process:
        env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}  # a bare machine: no venv, no writable home
        return await asyncio.create_subprocess_exec(
            "bash",
            str(folder / "start.sh"),
            "-h",
            HOST,
            "-p",
            str(server.port),
            "-r",
            code,
            "-v",
            cwd=tmp_path,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )

    def started(watcher: Watcher) -> None:
        ours, theirs = watcher.reservations
        procs.append(asyncio.create_task(start_upload(ours)))
        bots.append(asyncio.create_task(run_bot(server.port, theirs, "greedy", season)))

    out, err = io.StringIO(), io.StringIO()
    try:
        code = await asyncio.wait_for(
            watch_text(
                watch_args(server.port, "--prepare", "up", "load", "--season", season), out, err, on_started=started
            ),
            300,
        )
        proc = await procs[0]
        stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
        assert await bots[0] == 0
    finally:
        await server.close()
        make_writable(folder)
        after = _snapshot(folder)
        shutil.rmtree(folder)  # ~270 MB unpacked: removed, passed or failed
    log = stderr.decode()
    assert code == EXIT_OK and proc.returncode == 0, log[-2000:]
    summary = stdout.decode().strip().splitlines()[-1]
    assert summary.startswith("blokus bot: ONE (up) [us]") and "; moves: " in summary, summary
    assert "(fallback-" not in log and "compiling" not in log  # the prebuilt cache was found
    assert "Traceback" not in log
    assert after == before  # nothing written into the upload


def test_bad_baked_in_arguments_fail_before_anything_is_built(tmp_path, capsys):
    from blokus.cli.bundle import main as bundle_main

    assert bundle_main([str(tmp_path / "x.zip"), "--", "--ai", "nobody"]) == 1
    assert "unknown AI 'nobody'" in capsys.readouterr().err
    assert not (tmp_path / "x.zip").exists()
    assert os.listdir(tmp_path) == []


TEAM_PLAYER = """\
import sortedcontainers

import ai
import helper
import model
from blokus.player import Player


class Mine(Player):
    def calculate_move(self):
        assert (model.TEAM, ai.TEAM) == ("model", "ai")  # the team's own modules, named as our subpackages
        moves = sortedcontainers.SortedList(self.game_state.legal_moves(), key=helper.size)
        return moves[-1]
"""


def test_a_team_upload_packs_what_the_player_imports_and_is_tried_before_it_is_ready(tmp_path, wheels, monkeypatch):
    # issue 49 item 6: a player reached through a link, a package only in the team's environment, a
    # secrets_config.py beside the player; the upload is started and plays before the build calls it ready
    from blokus.cli.players import parse_python_player

    monkeypatch.setattr(B, "ZIP_LEVEL", 0)  # the contents are under test here, not the size (~10 s of CPU less)

    team = tmp_path / "team"
    team.mkdir()
    (team / "player.py").write_text(TEAM_PLAYER)
    (team / "helper.py").write_text("def size(move):\n    return move.shape.size\n")
    for name in ("model", "ai"):
        (team / f"{name}.py").write_text(f"TEAM = {name!r}\n")
    (team / "secrets_config.py").write_text("TOKEN = 'not for the contest'\n")
    (team / "test_player.py").write_text("def test():\n    pass\n")
    (tmp_path / "mine.py").symlink_to(team / "player.py")
    target = tmp_path / "out" / "team.zip"
    said: list[str] = []
    bundle(target, VERSION, [], wheels=wheels, player=parse_python_player(str(tmp_path / "mine.py")), say=said.append)
    try:
        err = "\n".join(said)
        assert "the player's files: ai.py, helper.py, model.py, player.py" in err
        assert "from your environment: sortedcontainers" in err
        played = re.search(r"tried: it played (\d+) moves", err)
        assert played is not None and int(played[1]) >= 4, err
        with zipfile.ZipFile(target) as zf:
            names = set(zf.namelist())
            start = zf.read("start.sh").decode()
        assert {"player/player.py", "player/helper.py", "player/model.py", "player/ai.py"} <= names
        assert "deps/sortedcontainers/__init__.py" in names
        assert not any(n.endswith(("secrets_config.py", "test_player.py")) for n in names)
        assert '--player "$DIR"/player/player.py "$@"' in start
        assert os.listdir(target.parent) == ["team.zip"]
    finally:
        target.unlink(missing_ok=True)  # ~270 MB (stored): removed, passed or failed
