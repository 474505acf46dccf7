"""``blokus new-player DIR``: a player that plays at once, with tests that pass and lint-clean code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from blokus.ai.players.pyplayer import load_player_class
from blokus.ai.players.registry import parse_python_player
from blokus.cli.new_player import main as new_player_main
from blokus.player import GameState
from tests.helpers import TEAM_MODULES

ROOT = Path(__file__).resolve().parent.parent


def test_writes_a_player_that_plays_and_never_overwrites(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "mine"
    assert new_player_main([str(folder)]) == 0
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "player.py", "pytest.ini", "test_player.py"]
    assert len((folder / "README.md").read_text().splitlines()) <= 30  # one screen
    player = load_player_class(parse_python_player(str(folder / "player.py")))()
    for season in (2021, 2027):
        state = GameState.new(season, seed=2)
        for _ in range(12):
            move = player.answer(state, 1.0)
            assert state.is_legal(move)
            state.push(move)
    before = (folder / "player.py").read_text()
    (folder / "player.py").write_text(before + "# mine\n")
    capsys.readouterr()
    assert new_player_main([str(folder)]) == 1
    assert "already has" in capsys.readouterr().err
    assert (folder / "player.py").read_text().endswith("# mine\n")


OWN_MODULES = """
import ai
import cli
import model
import net
import tui

assert [m.TEAM for m in (model, ai, net, cli, tui)] == ["model", "ai", "net", "cli", "tui"]  # the team's own
"""


@pytest.mark.slow
def test_its_tests_pass_and_its_code_is_lint_clean(tmp_path: Path) -> None:
    assert new_player_main([str(tmp_path)]) == 0
    # with the team's own modules named as our subpackages beside it (issue 62 item 1)
    for name in TEAM_MODULES:
        (tmp_path / f"{name}.py").write_text(f"TEAM = {name!r}\n")
    player = tmp_path / "player.py"
    head, sep, rest = player.read_text().partition("from blokus.player import GameState, Move, Player, SetMove\n")
    player.write_text(head + sep + OWN_MODULES + rest)
    # pytest alone, as a team installs it: our dev plugins (Textual's snapshots, hypothesis...) cost ~3 s of CPU
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "7 passed" in done.stdout
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--line-length", "120", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_never_writes_through_a_link_and_refuses_an_empty_name(tmp_path: Path, capsys, monkeypatch) -> None:
    folder, outside = tmp_path / "mine", tmp_path / "outside.py"
    folder.mkdir()
    (folder / "player.py").symlink_to(outside)  # dangling: exists() says no such file
    assert new_player_main([str(folder)]) == 1
    assert "already has player.py" in capsys.readouterr().err
    assert not outside.exists() and sorted(p.name for p in folder.iterdir()) == ["player.py"]
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        new_player_main([""])
    assert exc.value.code == 2 and "DIR is empty" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]  # nothing written into the current folder
