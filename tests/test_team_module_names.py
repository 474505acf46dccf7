"""A team's own modules named as our subpackages (``model.py``, ``ai.py``, ``net.py``, ``cli.py``, ``tui.py``
beside ``player.py``, the commonest names a team picks) are the team's in every way a player runs: only the
package ``blokus`` is ours (issue 62 item 1). The bundle's and ``new-player``'s cases are in test_bundle.py and
test_new_player.py (they build an upload, run a pytest), with the same folder."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from blokus.cli.arena import main as arena_main
from tests.helpers import CAP, HOST, ROOT, admin_with_prepared_game, running_server, write_team_folder


def test_the_installed_package_is_blokus_alone() -> None:
    # a fresh interpreter: importing the whole product puts no top-level name of ours but ``blokus`` in sys.modules
    code = (
        "import sys, blokus.cli.play, blokus.cli.bot, blokus.net.server, blokus.ai.search.mcts, blokus.player\n"
        "from blokus.cli.new_player import template_files\n"
        "assert 'player.py' in template_files()  # package data found by the package's name\n"
        "print(sorted({n.partition('.')[0] for n in sys.modules} & {'model', 'ai', 'net', 'tui', 'cli', 'blokus'}))"
    )
    done = subprocess.run([sys.executable, "-P", "-c", code], cwd="/", capture_output=True, text=True, timeout=CAP)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['blokus']"]


def test_py_in_the_arena_plays_with_the_teams_own_modules(tmp_path: Path) -> None:
    player = write_team_folder(tmp_path / "team")
    out = tmp_path / "match.json"
    # the arena is strict: a player whose ``import model`` got ours would forfeit at its first move
    assert arena_main([f"py:{player}", "random", "--games", "2", "--quiet", "--json", str(out)]) == 0
    games = json.loads(out.read_text())["games"]
    assert len(games) == 2 and all(not g["forfeit"] for g in games), games
    assert all(g["a_points"] > 0 and g["turns"] > 20 and not g["void"] for g in games), games


async def test_the_player_file_plays_standalone_with_the_teams_own_modules(tmp_path: Path) -> None:
    player = write_team_folder(tmp_path / "team")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    async with running_server(password="secret") as server:
        admin, prepared = await admin_with_prepared_game(server.port, "secret", pause=False)
        # ``python player.py``: the player's folder is first on sys.path, before our package is imported
        ours = await asyncio.create_subprocess_exec(
            sys.executable, str(player), "-h", HOST, "-p", str(server.port), "-r", prepared.reservations[0],
            "--strict", cwd=player.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        other = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "blokus", "bot", "-h", HOST, "-p", str(server.port), "-r", prepared.reservations[1],
            "--ai", "random", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        (out, err), _ = await asyncio.wait_for(asyncio.gather(ours.communicate(), other.communicate()), CAP)
        await admin.close()
    text = out.decode() + err.decode()
    assert ours.returncode == 0 and other.returncode == 0, text
    summary = out.decode().strip().splitlines()[-1]
    assert " yours" in summary and "fallback" not in summary, text  # --strict: a failed move had ended the game
