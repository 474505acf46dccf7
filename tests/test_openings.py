"""Opening suites (issue 65 item 1): the file format, ``blokus openings``, and series that start their game
pairs from a file's openings, each from both seats, for in-process players and programs alike."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from blokus.ai.arena.match import make_specs
from blokus.ai.arena.openings import SuiteSettings, balanced_suite
from blokus.cli.arena import main as arena_main
from blokus.cli.openings import main as openings_main
from blokus.model.openings import Opening, OpeningsError, format_openings, parse_opening, read_openings
from blokus.model.pieces import Shape
from blokus.model.replay import load_replay
from blokus.model.season import SEASON_2021, SEASON_2027

CLIENT = Path(__file__).with_name("ext_client.py")


def test_an_opening_line_is_read_back_as_written_and_checked_by_the_rules() -> None:
    suite = balanced_suite(SEASON_2027, SuiteSettings(count=3, plies=6, seed=5))
    for judged in suite:
        assert parse_opening(judged.opening.line()) == judged.opening
        assert judged.opening.position().turn == 6
    assert parse_opening("2021 PENTO_Y") == Opening(SEASON_2021, Shape.PENTO_Y, ())
    for line, words in [
        ("2021 PENTO_L: BLUE PENTO_L NONE false 5 5", "move 1 (BLUE PENTO_L NONE false 5 5) is illegal: NOT_IN_CORNER"),
        ("2021 PENTO_X", "PENTO_X is no start piece of season 2021"),
        ("2030 PENTO_L", "unknown season '2030'"),
        ("2021 PENTO_Q", "unknown start piece 'PENTO_Q'"),
        ("2021", "expected 'SEASON START_PIECE'"),
        ("2021 PENTO_L: BLUE PENTO_L", "not a move"),
        ("2021 PENTO_L: " + "; ".join(["BLUE SKIP"] * 41), "41 moves: at most 40"),
    ]:
        with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
            parse_opening(line)


def test_a_bad_file_is_one_line_naming_the_file_and_the_line(tmp_path: Path) -> None:
    good = balanced_suite(SEASON_2021, SuiteSettings(count=2, plies=4))
    path = tmp_path / "openings.txt"
    path.write_text(format_openings(j.opening for j in good) + "2021 PENTO_L: BLUE SKIP\n")
    with pytest.raises(OpeningsError) as info:
        read_openings(path)
    assert str(info.value) == f"{path}:4: move 1 (BLUE SKIP) is illegal: SKIP_FIRST_TURN"
    path.write_text(format_openings(j.opening for j in good))
    assert [o.line() for o in read_openings(path)] == [j.opening.line() for j in good]
    with pytest.raises(OpeningsError, match=r"openings.txt:2: an opening of season 2021, not 2027"):
        read_openings(path, SEASON_2027)
    for content, words in [(b"# nothing\n\n", "no opening in the file"), (b"\xff\xfe", "not a text file")]:
        path.write_bytes(content)
        with pytest.raises(OpeningsError, match=words):
            read_openings(path)
    with pytest.raises(OpeningsError, match="not a regular file"):
        read_openings(tmp_path)


def test_a_balanced_suite_uses_every_start_piece_and_keeps_to_its_bound() -> None:
    for season in (SEASON_2021, SEASON_2027):
        settings = SuiteSettings(count=2 * len(season.start_pieces), plies=8, max_value=4.0, seed=3)
        suite = balanced_suite(season, settings)
        assert len(suite) == settings.count
        assert all(abs(j.value) <= 4.0 for j in suite)
        assert {j.opening.start_piece.name for j in suite} == set(season.start_pieces)
        assert len({j.opening.position().key() for j in suite}) == len(suite)  # no position twice
        assert balanced_suite(season, settings) == suite  # the seed decides


def test_the_command_writes_a_suite_and_never_overwrites(tmp_path: Path, capsys) -> None:
    path = tmp_path / "suite.txt"
    assert openings_main([str(path), "--season", "2027", "--count", "5", "--plies", "4"]) == 0
    assert "wrote 5 openings" in capsys.readouterr().out
    suite = read_openings(path, SEASON_2027)
    assert len(suite) == 5 and all(len(o.moves) == 4 for o in suite)
    before = path.read_text()
    assert openings_main([str(path), "--count", "2"]) == 1
    assert capsys.readouterr().err.strip() == f"blokus openings: {path} exists; nothing written"
    assert path.read_text() == before


def test_each_opening_starts_a_pair_with_the_seats_swapped_in_order_or_shuffled() -> None:
    suite = [j.opening for j in balanced_suite(SEASON_2021, SuiteSettings(count=3, plies=4))]
    specs = make_specs(8, seed=2, move_time=0.1, season="2021", openings=suite)
    lines = [tuple(str(m) for m in o.moves) for o in suite]
    assert [s.opening for s in specs] == [
        lines[0],
        lines[0],
        lines[1],
        lines[1],
        lines[2],
        lines[2],
        lines[0],
        lines[0],
    ]
    assert [s.a_team for s in specs] == [0, 1] * 4
    assert [s.start_piece for s in specs[::2]] == [o.start_piece.name for o in (*suite, suite[0])]
    shuffled = make_specs(6, seed=2, move_time=0.1, season="2021", openings=suite, shuffle_openings=True)
    assert sorted(s.opening for s in shuffled) == sorted(s.opening for s in specs[:6])
    assert shuffled == make_specs(6, seed=2, move_time=0.1, season="2021", openings=suite, shuffle_openings=True)


@pytest.mark.parametrize("player", ["greedy", "cmd"])
def test_arena_games_start_from_the_opening_in_process_and_on_the_server(tmp_path: Path, player: str) -> None:
    suite = tmp_path / "suite.txt"
    assert openings_main([str(suite), "--season", "2021", "--count", "1", "--plies", "6", "--seed", "4"]) == 0
    (opening,) = read_openings(suite)
    a = f"cmd:{sys.executable} {CLIENT}" if player == "cmd" else "greedy"
    replays, out = tmp_path / "replays", tmp_path / "match.json"
    argv = [a, "random", "--games", "2", "--season", "2021", "--openings", str(suite), "--move-time", "200"]
    assert arena_main([*argv, "--quiet", "--save-replay", str(replays), "--json", str(out)]) == 0
    games = json.loads(out.read_text())["games"]
    assert [g["start_piece"] for g in games] == [opening.start_piece.name] * 2 and not any(g["forfeit"] for g in games)
    files = sorted(replays.glob("*.xml*"))
    assert len(files) == 2
    for file in files:
        first = load_replay(file).states[0]
        assert first.turn == 6 and first.boards == opening.position().boards  # both games from the opening
