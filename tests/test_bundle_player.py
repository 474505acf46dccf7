"""``blokus bundle --player``: what goes into the upload of a team's player (issue 49 item 6), found by reading the
team's files (``cli.bundle.team_files``), and a bad output path or a failed trial leaving nothing behind. The full
build and its trial: tests/test_bundle.py's slow tests; the trial alone: tests/test_upload_trial.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path, PurePosixPath

import pytest

from blokus.cli.bundle import build as B
from blokus.cli.bundle import main as bundle_main
from blokus.cli.bundle import team_player
from blokus.cli.bundle.build import BundleError, pack_team, write_start
from blokus.cli.bundle.team_files import PackError, closure, find_team_files
from blokus.cli.players import parse_python_player

VERSION = f"{sys.version_info[0]}.{sys.version_info[1]}"
BUNDLED = frozenset(closure(["numpy", "numba", "lxml", "pydantic", "pydantic-xml"]))
PLAYER = """\
from __future__ import annotations

import json
from typing import TYPE_CHECKING

import helper
from blokus.player import Player
from tactics import book

try:
    import no_such_speedup
except ImportError:
    no_such_speedup = None
if TYPE_CHECKING:
    import nowhere_at_runtime


class Mine(Player):
    def calculate_move(self):
        import importlib

        importlib.import_module("late")
        return self.game_state.legal_moves()[0]
"""


def _team(tmp_path: Path, player: str = PLAYER) -> Path:
    team = tmp_path / "team"
    (team / "tactics").mkdir(parents=True)
    (team / "player.py").write_text(player)
    (team / "helper.py").write_text("X = 1\n")
    (team / "late.py").write_text("Y = 2\n")
    (team / "tactics" / "__init__.py").write_text("from . import book\n")
    (team / "tactics" / "book.py").write_text("from .shapes import BIG\n")
    (team / "tactics" / "shapes.py").write_text("BIG = 5\n")
    (team / "tactics" / "unused.py").write_text("Z = 3\n")
    (team / "secrets_config.py").write_text("TOKEN = 'do not upload'\n")
    (team / "test_player.py").write_text("def test(): pass\n")
    (team / "conftest.py").write_text("")
    (team / "data").mkdir()
    (team / "data" / "openings.txt").write_text("PENTO_L\n")
    return team


def _find(path: Path, includes: tuple[str, ...] = ()):
    return find_team_files(path, includes, version=VERSION, stdlib=frozenset(sys.stdlib_module_names), bundled=BUNDLED)


def test_only_the_modules_the_player_imports_are_packed(tmp_path: Path) -> None:
    team = _find(_team(tmp_path) / "player.py")
    assert sorted(map(str, team.files)) == [
        "helper.py",
        "late.py",
        "player.py",
        "tactics/__init__.py",
        "tactics/book.py",
        "tactics/shapes.py",
    ]  # not secrets_config.py, the tests, tactics/unused.py or the data
    assert team.left_out == ["no_such_speedup"] and team.packages == []
    with_data = _find(tmp_path / "team" / "player.py", ("data",))
    assert PurePosixPath("data/openings.txt") in with_data.files


def test_a_player_reached_through_a_link_is_packed_and_started_by_its_real_name(tmp_path: Path) -> None:
    target = _team(tmp_path) / "player.py"
    links = tmp_path / "links"
    links.mkdir()
    (links / "mine.py").symlink_to(target)
    team = _find(links / "mine.py")
    assert team.player == PurePosixPath("player.py") and team.folder == target.parent
    stage = tmp_path / "stage"
    stage.mkdir()
    inside = pack_team(stage, team, "Mine")
    write_start(stage, VERSION, ["--ponder"], inside)
    assert inside == "player/player.py:Mine" and (stage / "player" / "player.py").read_text() == PLAYER
    assert '-m blokus bot --ponder --player "$DIR"/player/player.py:Mine "$@"' in (stage / "start.sh").read_text()


def test_links_are_followed_inside_the_folder_only(tmp_path: Path) -> None:
    team = _team(tmp_path)
    (team / "late.py").unlink()
    (team / "late.py").symlink_to(team / "helper.py")  # inside: packed under the link's name
    assert _find(team / "player.py").files[PurePosixPath("late.py")] == team / "helper.py"
    outside = tmp_path / "elsewhere.py"
    outside.write_text("Y = 2\n")
    (team / "late.py").unlink()
    (team / "late.py").symlink_to(outside)
    with pytest.raises(PackError, match=r"late.py: a link to .*elsewhere.py, outside the player's folder"):
        _find(team / "player.py")
    (team / "late.py").unlink()
    (team / "late.py").write_text("Y = 2\n")
    with pytest.raises(PackError, match="not inside the player's folder"):
        _find(team / "player.py", ("../elsewhere.py",))


def test_packages_of_the_teams_environment_are_packed_or_refused_by_name(tmp_path: Path, monkeypatch) -> None:
    team = _team(tmp_path)
    player = team / "player.py"
    player.write_text(PLAYER + "import sortedcontainers\n")
    found = _find(player)
    assert found.packages == ["sortedcontainers 2.4.0"]
    assert PurePosixPath("sortedcontainers/__init__.py") in found.deps
    assert any(p.name == "METADATA" for p in found.deps)  # its metadata too (importlib.metadata works)
    player.write_text(PLAYER + "import not_installed_anywhere\n")
    line = len(PLAYER.splitlines()) + 1
    with pytest.raises(PackError, match=rf"player.py:{line} imports not_installed_anywhere: not installed here"):
        _find(player)
    # an installed package with compiled code for another platform, one installed in editable mode
    site = tmp_path / "site"
    for name, extra in (("macpkg", "WHEEL"), ("devpkg", "direct_url.json")):
        (site / name).mkdir(parents=True)
        (site / name / "__init__.py").write_text("")
        (site / name / "_fast.cpython-311-darwin.so").write_bytes(b"\0")
        info = site / f"{name}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        (info / "RECORD").write_text(f"{name}/__init__.py,,\n{name}/_fast.cpython-311-darwin.so,,\n")
        (info / "top_level.txt").write_text(f"{name}\n")
        (info / "WHEEL").write_text("Wheel-Version: 1.0\nTag: cp311-cp311-macosx_11_0_arm64\n")
        if extra == "direct_url.json":
            (info / extra).write_text('{"url": "file:///src", "dir_info": {"editable": true}}')
    monkeypatch.syspath_prepend(str(site))
    player.write_text(PLAYER + "import macpkg\n")
    with pytest.raises(PackError, match=r"imports macpkg: macpkg holds compiled code for cp311-cp311-macosx_11_0"):
        _find(player)
    player.write_text(PLAYER + "import devpkg\n")
    with pytest.raises(PackError, match="devpkg is installed in editable mode"):
        _find(player)


def test_a_pyc_player_is_refused_before_anything_is_built(tmp_path: Path, monkeypatch) -> None:
    pyc = tmp_path / "player.pyc"
    pyc.write_bytes(b"\0" * 16)
    monkeypatch.setattr(B, "copy_project", lambda stage: pytest.fail("built"))
    with pytest.raises(BundleError, match=r"player.pyc: a compiled .pyc file; give the player's .py source"):
        B.bundle(tmp_path / "up.zip", VERSION, [], player=parse_python_player(str(pyc)))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["player.pyc"]


def test_an_output_folder_is_refused_before_the_build_and_leaves_no_file(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(B, "copy_project", lambda stage: pytest.fail("built"))
    out = tmp_path / "out"
    out.mkdir()
    assert bundle_main([str(out)]) == 1
    assert "is a folder: name the zip to write" in capsys.readouterr().err
    assert os.listdir(out) == [] and sorted(os.listdir(tmp_path)) == ["out"]
    (tmp_path / "file").write_text("")
    assert bundle_main([str(tmp_path / "file" / "up.zip")]) == 1
    assert "is not a folder" in capsys.readouterr().err


def test_a_failed_trial_leaves_no_file(tmp_path: Path, monkeypatch, capsys) -> None:
    def fail(*args, **kwargs):
        raise B.TrialError("upload crashed (exit 1) before joining: ModuleNotFoundError: No module named 'x'")

    monkeypatch.setattr(B, "fetch_dependencies", lambda stage, version, wheels: None)
    monkeypatch.setattr(B, "compile_bytecode", lambda stage, python: None)
    monkeypatch.setattr(B, "try_upload", fail)
    with pytest.raises(BundleError, match="the upload does not play: upload crashed .* No module named 'x'"):
        B.bundle(tmp_path / "up.zip", VERSION, [], with_cache=False)
    assert os.listdir(tmp_path) == []  # neither the zip nor its .part


def test_a_player_that_cannot_be_loaded_or_two_players_fail_in_one_line(tmp_path: Path) -> None:
    good = tmp_path / "good.py"
    good.write_text("from blokus.player import Player\n\n\nclass Mine(Player):\n    pass\n")
    spec = team_player(str(good), [])
    assert (spec.path, spec.class_name, spec.name) == (str(good), "", f"py:{good}")
    with pytest.raises(BundleError, match="give one"):
        team_player(str(good), ["--ai", "level3"])
    bad = tmp_path / "bad.py"
    bad.write_text("import nowhere_to_be_found\n")
    with pytest.raises(BundleError, match=r"bad.py:1: ModuleNotFoundError"):
        team_player(str(bad), [])
