"""The current contest season (2027) is the default wherever nothing else decides (issue 64 item 1): the
commands, the player API, the files ``new-player`` writes; ``--season 2021`` is one flag away."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from lxml import etree

from blokus import usage
from blokus.cli.arena import main as arena_main
from blokus.cli.moves import main as moves_main
from blokus.cli.new_player import main as new_player_main
from blokus.cli.play import play_options
from blokus.cli.serve import build_parser as serve_parser
from blokus.cli.serve import config_from_args
from blokus.model import messages as M
from blokus.model.convert import state_to_message
from blokus.model.pieces import Shape
from blokus.model.season import SEASON_2021, SEASON_2027
from blokus.model.state import GameState
from blokus.player import GameState as ApiState
from blokus.tui.launch import build_local_app
from tests.tui_helpers import keep_logging, screen_of  # noqa: F401  (keep_logging: an autouse fixture)


def test_the_usage_names_the_default() -> None:
    assert "(default 2027)" in usage() and "2021" not in usage().split("subcommands:")[1].replace("2021|2027", "")


@pytest.mark.parametrize("argv,season", [([], SEASON_2027), (["--season", "2021"], SEASON_2021)])
def test_serve_plays_the_default_season_unless_told(argv, season) -> None:
    config = config_from_args(serve_parser().parse_args(argv))
    assert config.season is season
    assert (config.timeouts.soft, config.timeouts.hard) == (2.0, 10.0)


def test_serve_says_its_game_type() -> None:
    """The banner of a plain ``blokus serve`` names the game its rooms play."""
    server = subprocess.Popen(
        [sys.executable, "-m", "blokus", "serve", "-p", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        banner = server.stdout.readline()
    finally:
        server.terminate()
        server.communicate(timeout=60)
    assert "(swc_2027_blokus" in banner, banner


@pytest.mark.parametrize("extra,season", [([], "2027"), (["--season", "2021"], "2021")])
def test_arena_plays_the_default_season_unless_told(tmp_path, capsys, extra, season) -> None:
    report = tmp_path / "arena.json"
    argv = ["random", "random", "--games", "2", "--move-time", "20", "--quiet", "--json", str(report), *extra]
    assert arena_main(argv) == 0
    assert f", season {season}," in capsys.readouterr().out
    written = json.loads(report.read_text())
    assert written["args"]["season"] == season and len(written["games"]) == 2


def test_the_player_api_starts_a_game_of_the_default_season() -> None:
    assert ApiState.new(seed=1).season == 2027 and ApiState.new().start_piece.name in SEASON_2027.start_pieces
    assert ApiState.new(2021, seed=1).season == 2021
    assert GameState.new().season is SEASON_2027  # the engine's own default is the same one


def test_moves_of_a_state_that_does_not_tell_its_season(tmp_path, capsys) -> None:
    """A state file without a season's marks is judged by the default season; ``--season 2021`` by 2021's."""
    room = state_to_message(GameState.new(SEASON_2021, Shape.PENTO_V), "r")
    tree = etree.fromstring(M.to_bytes(room))
    for mark in tree.iter("startTeam", "first", "second"):  # 2021's marks (model.convert.detect_season)
        mark.getparent().remove(mark)
    path = tmp_path / "state.xml"
    path.write_bytes(etree.tostring(tree))
    counts = {}
    for season in (None, "2021", "2027"):
        assert moves_main(["--count", str(path), *(["--season", season] if season else [])]) == 0
        counts[season] = int(capsys.readouterr().out)
    assert counts["2021"] == 12  # PENTO_V in a corner (docs/spec/rules.md §16)
    assert counts[None] == counts["2027"] == len(GameState.new(SEASON_2027, Shape.PENTO_V).legal_moves()) > 12


def test_new_player_files_name_the_season(tmp_path, capsys) -> None:
    assert new_player_main([str(tmp_path / "mine")]) == 0
    printed = capsys.readouterr().out
    assert "blokus arena py:player.py level2 --games 2   # play season 2027 (--season 2021: 2021's rules)" in printed
    readme = (tmp_path / "mine" / "README.md").read_text()
    assert "play season 2027 (`swc_2027_blokus`, the contest's)" in readme.replace("\n", " ")
    assert "(`--season 2021`: 2021's rules)" in readme
    assert "(season 2027; --season 2021 for 2021's rules)" in (tmp_path / "mine" / "player.py").read_text()
    tests = (tmp_path / "mine" / "test_player.py").read_text()
    assert "positions(2027, games=1, every=8)" in tests and "$" not in tests


@pytest.mark.parametrize(
    "argv,season,rounds", [([], SEASON_2027, "Round 1/24"), (["--season", "2021"], SEASON_2021, "Round 1/25")]
)
async def test_blokus_without_options_plays_the_default_season_and_says_so(argv, season, rounds) -> None:
    app = build_local_app(play_options([*argv, "--opponent", "random", "--move-time", "50"]))
    async with app.run_test(size=(140, 44)):
        screen = screen_of(app)
        assert screen.session.state.season is season
        assert f"{season.name} · {rounds}" in str(screen.query_one("#status").render())  # the status line says which
