"""``blokus bundle --player``: the team's files go into the upload and start.sh runs them (the full build and
a run of the unpacked upload: tests/test_bundle.py's slow tests; this checks the pieces)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.bundle import team_player
from net.bundle import BundleError, copy_player, write_start

PLAYER = "from blokus.player import Player\n\n\nclass Mine(Player):\n    pass\n"


def test_the_player_and_its_helpers_are_copied_not_its_tests(tmp_path: Path) -> None:
    team = tmp_path / "team"
    team.mkdir()
    (team / "player.py").write_text(PLAYER)
    (team / "helper.py").write_text("X = 1\n")
    (team / "test_player.py").write_text("def test(): pass\n")
    (team / "conftest.py").write_text("")
    stage = tmp_path / "stage"
    stage.mkdir()
    assert copy_player(stage, team / "player.py", "Mine") == "player/player.py:Mine"
    assert sorted(p.name for p in (stage / "player").iterdir()) == ["helper.py", "player.py"]
    write_start(stage, "3.11", ["--ponder"], "player/player.py:Mine")
    start = (stage / "start.sh").read_text()
    assert '-m blokus bot --ponder --player "$DIR"/player/player.py:Mine "$@"' in start


def test_a_player_that_cannot_be_loaded_or_two_players_fail_in_one_line(tmp_path: Path) -> None:
    good = tmp_path / "good.py"
    good.write_text(PLAYER)
    spec = team_player(str(good), [])
    assert (spec.path, spec.class_name, spec.name) == (str(good), "", f"py:{good}")
    with pytest.raises(BundleError, match="give one"):
        team_player(str(good), ["--ai", "level3"])
    bad = tmp_path / "bad.py"
    bad.write_text("import nowhere_to_be_found\n")
    with pytest.raises(BundleError, match=r"bad.py:1: ModuleNotFoundError"):
        team_player(str(bad), [])
