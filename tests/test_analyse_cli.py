"""``blokus analyse``: the report, --json, several files, bad files and exit codes, the cache."""

from __future__ import annotations

import json
import re

import pytest

import blokus
from blokus.ai import make_player
from blokus.model.moves import SkipMove
from blokus.model.pieces import Shape
from blokus.model.replay import write_replay
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState

FAST = ["--ai", "greedy", "--time", "50", "--depth", "2"]
SKIP_AT = 9  # YELLOW skips in round 3 with a full hand: a blunder


@pytest.fixture(scope="module")
def game_file(tmp_path_factory):
    engine = make_player("greedy", seed=5)
    state = GameState.new(SEASON_2021, Shape.PENTO_L)
    states = [state.copy()]
    for ply in range(12):
        move = SkipMove(state.color) if ply == SKIP_AT else engine.choose_move_sync(state, move_time=5.0)
        state.play(move)
        states.append(state.copy())
    path = tmp_path_factory.mktemp("games") / "game.xml"
    write_replay(path, states, names=("alice", "bob"))
    return path


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "blokus" / "analysis"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = blokus.main(["analyse", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_report_names_the_blunder_and_sums_up_each_team(capsys, game_file):
    code, out, err = run(capsys, *FAST, str(game_file))
    assert code == 0
    assert out.splitlines()[0].startswith(f"{game_file}: ONE alice (BLUE+RED) ")
    assert "TWO bob (YELLOW+GREEN): mistakes and blunders" in out
    row = next(line for line in out.splitlines() if line.split()[:2] == [str(SKIP_AT), "YELLOW"])
    assert "pass ??" in row
    summary = [line.strip() for line in out.splitlines() if line.strip().startswith(("ONE:", "TWO:"))]
    assert len(summary) == 2
    assert summary[1].startswith("TWO: 6 moves,") and "blunder" in summary[1]
    assert not re.search(r"\b1 (moves|mistakes|blunders)\b", out)  # "1 blunder", never "1 blunders"
    rows = [line for line in out.splitlines() if line.split()[:1] and line.split()[0].isdigit()]
    assert rows and all(" NONE " not in line and " true " not in line and " false " not in line for line in rows)
    assert any(re.search(r"[A-Z_]+( (90|180|270)°)?( flipped)? @ \(\d+,\d+\)", line) for line in rows)
    assert f"analysing {game_file}: 12/12" in err  # progress on stderr, never on stdout
    assert "analysing" not in out


def test_json_for_machines(capsys, game_file):
    code, out, _ = run(capsys, *FAST, "--json", str(game_file))
    assert code == 0
    (doc,) = json.loads(out)["files"]
    assert doc["file"] == str(game_file) and doc["names"] == ["alice", "bob"]
    assert doc["complete"] is True and doc["total"] == 12 and len(doc["positions"]) == 12
    blunder = next(p for p in doc["marked"] if p["turn"] == SKIP_AT)
    assert blunder["mark"] == "??" and blunder["played"] == "YELLOW SKIP" and blunder["loss"] >= 10
    two = doc["summary"]["TWO"]
    assert two["blunders"] == sum(p["mark"] == "??" for p in doc["marked"] if p["color"] in ("YELLOW", "GREEN"))
    assert len(doc["chart"]) == 13 and all(len(c["mobility"]) == 4 for c in doc["chart"])
    # one position, one value: after move i as value_played of i and as value of i + 1 (searches that ended
    # on alternate teams put 15-18 points between them, with alternating sign)
    by_index = {p["index"]: p for p in doc["positions"]}
    gaps = sorted(abs(by_index[i]["value_played"] - by_index[i + 1]["value"]) for i in range(11))
    assert gaps[5] <= 4 and abs(by_index[0]["value"]) <= 4  # the median; the start: nobody ahead


def test_bad_files_get_one_line_and_the_others_are_still_analysed(capsys, game_file, tmp_path):
    empty = tmp_path / "empty.xml"
    empty.write_bytes(b"")
    garbage = tmp_path / "garbage.xml"
    garbage.write_text("this is no replay")
    code, out, err = run(
        capsys, *FAST, "-q", str(tmp_path / "missing.xml"), str(empty), str(garbage), str(game_file), str(tmp_path)
    )
    assert code == 2
    lines = err.splitlines()
    assert lines == [
        f"blokus analyse: {tmp_path / 'missing.xml'}: no such file",
        f"blokus analyse: {empty}: the file is empty",
        lines[2],
        f"blokus analyse: {tmp_path}: is a directory, not a replay file",
    ]
    assert lines[2].startswith(f"blokus analyse: {garbage}: not a replay file")
    assert out.startswith(f"{game_file}: ONE alice")
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [["--time", "0"], ["--time", "-1"], ["--time", "0.3"], ["--time", "61s"], ["--ai", "nobody"], ["--depth", "0"], []],
)
def test_bad_options_are_one_line_and_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as info:
        blokus.main(["analyse", *argv])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("blokus analyse: ")


def test_second_run_comes_from_the_cache(capsys, game_file, private_cache):
    code, first, _ = run(capsys, *FAST, "--json", str(game_file))
    assert code == 0 and len(list(private_cache.glob("*.json"))) == 1
    entry = next(private_cache.glob("*.json"))
    stamp = entry.stat().st_mtime_ns
    code, second, err = run(capsys, *FAST, "--json", str(game_file))
    assert code == 0 and json.loads(second) == json.loads(first)
    assert entry.stat().st_mtime_ns == stamp  # read, not recomputed and rewritten
    assert err.splitlines() == [f"analysing {game_file}: 12/12"]
    code, _, _ = run(capsys, *FAST, "--no-cache", "-q", str(game_file))
    assert code == 0 and entry.stat().st_mtime_ns == stamp


def test_a_cut_off_file_is_one_line_of_note_and_the_reader_warnings_stay_off_the_terminal(game_file, tmp_path):
    """In a real process (no test logging attached): what the reader logs does not reach stderr."""
    import subprocess
    import sys

    cut = tmp_path / "cut.xml"
    cut.write_bytes(game_file.read_bytes()[: len(game_file.read_bytes()) * 2 // 3])
    no_state = tmp_path / "no-state.xml"
    no_state.write_text("<protocol><room")
    done = subprocess.run(
        [sys.executable, "-m", "blokus", "analyse", *FAST, "-q", str(cut), str(no_state)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 2, done.stderr
    assert lines[0].startswith(f"blokus analyse: {cut}: the file is cut off; analysing the ")
    assert lines[1] == f"blokus analyse: {no_state}: no Blokus game state in the file"
    assert done.stdout.startswith(f"{cut}: ONE alice")


def test_progress_line_fits_the_terminal():
    """A progress line that wraps cannot be rewritten in place: on 80 columns it stays below 80."""
    import io

    from blokus.cli.analyse import _Progress

    progress = _Progress("replays/" + "very-long-name-" * 8 + ".xml", io.StringIO(), quiet=False)
    for columns in (80, 40, 24):
        line = progress.line(12, 61, columns)
        assert len(line) < columns and line.startswith("analysing ") and line.endswith(": 12/61")
    assert progress.line(1, 2, 200) == f"analysing {progress.path}: 1/2"
