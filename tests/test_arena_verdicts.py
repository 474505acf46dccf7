"""The arena never invents a result (issues 43.1, 46.1, 46.3): a game that never started is void (no point,
its own column, listed with its reason), our own side never depends on the current folder, and a program
under test cannot hurt our side into a loss (its code is not on a command line, its connections do not use up
our budget, killing our side voids the game)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import net.external_arena
from cli.arena import main as arena_main

CLIENT = Path(__file__).with_name("ext_client.py")
CMD = f"cmd:{sys.executable} {CLIENT}"


def arena(tmp_path: Path, a: str, b: str = "random", *extra: str) -> tuple[int, dict]:
    out = tmp_path / "match.json"
    logs = tmp_path / "logs"
    code = arena_main([a, b, "--games", "2", "--move-time", "200", "--quiet", "--json", str(out), "--logs", str(logs)])
    return code, json.loads(out.read_text())


@pytest.mark.parametrize("folder", ["holding-blokus", "empty"])
def test_our_side_does_not_depend_on_the_current_folder(tmp_path, monkeypatch, capsys, folder):
    here = tmp_path / folder
    if folder == "holding-blokus":
        (here / "blokus").mkdir(parents=True)  # a checkout's parent: a package without __init__.py
    here.mkdir(exist_ok=True)
    monkeypatch.chdir(here)
    code, data = arena(tmp_path, CMD)
    s = data["summary"]
    assert code == 0, capsys.readouterr()
    assert (s["games"], s["void"]) == (2, 0)
    assert all(g["turns"] > 20 and not g["forfeit"] for g in data["games"])  # real games, no crash


def test_a_program_that_cannot_start_is_void_not_a_draw(tmp_path, capsys):
    script = tmp_path / "b.sh"
    script.write_text(f"#!{tmp_path / 'nonexistent'}\n")
    script.chmod(0o755)
    code, data = arena(tmp_path, f"cmd:{script}")
    s = data["summary"]
    assert code == 1
    assert (s["wins"], s["draws"], s["losses"], s["void"]) == (0, 0, 0, 2)
    assert all("names no program that can run" in g["void"] for g in data["games"])
    out, err = capsys.readouterr()
    assert "Void" in out and "2 void (no result, no point)" in out
    assert err.strip().splitlines()[-1].startswith("blokus arena: no game had a result: game 0: b.sh could not start")


def test_our_side_that_cannot_start_is_void(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(net.external_arena, "our_command", lambda *args: [str(tmp_path / "no-python"), *args])
    code, data = arena(tmp_path, CMD)
    assert code == 1
    assert data["summary"]["void"] == 2 and data["summary"]["wins"] == 0
    assert all("random could not start" in g["void"] for g in data["games"])


def test_their_side_that_never_joins_is_void(tmp_path, capsys):
    out = tmp_path / "match.json"
    code = arena_main(
        [
            f"{CMD} --misbehave never-join",
            "random",
            "--games",
            "1",
            "--join-timeout",
            "3",
            "--quiet",
            "--json",
            str(out),
        ]
    )
    data = json.loads(out.read_text())
    assert code == 1
    assert data["summary"]["void"] == 1 and data["summary"]["losses"] == 0
    assert data["games"][0]["void"].endswith("did not join within 3 s")


# --- a program that hurts our side (46.1) -----------------------------------------------------------------------


def test_a_program_cannot_take_our_seat_with_a_code_from_our_command_line(tmp_path):
    code, data = arena(tmp_path, f"{CMD} --misbehave steal-seat --delay 3")
    assert code == 0
    assert data["summary"]["void"] == 0
    assert all(not g["forfeit"] and g["turns"] > 20 for g in data["games"])  # our side played every game
    logs = "".join(Path(p).read_text() for g in data["games"] for p in g["logs"] if p.endswith(".err.log"))
    assert "stolen code: None" in logs


def test_a_programs_idle_connections_do_not_use_up_our_budget(tmp_path):
    code, data = arena(tmp_path, f"{CMD} --misbehave hog-connections")
    assert code == 0
    assert data["summary"]["void"] == 0
    assert all(not g["forfeit"] and g["turns"] > 20 for g in data["games"])


def test_killing_our_side_voids_the_game(tmp_path, capsys):
    code, data = arena(tmp_path, f"{CMD} --misbehave kill-opponent --at 2")
    s = data["summary"]
    assert code == 1
    assert (s["wins"], s["draws"], s["losses"], s["void"]) == (0, 0, 0, 2)
    assert all(g["void"].startswith("our side random crashed (signal SIGKILL)") for g in data["games"])


# --- refusals name the rule and the fields (43.3) -----------------------------------------------------------------


def test_a_refusal_names_the_rule_and_the_fields():
    from model.moves import MoveMistake, SetMove
    from model.pieces import Color, Rotation, Shape
    from model.state import GameState

    state = GameState.new(Shape.MONO)
    state.play(SetMove(Color.BLUE, Shape.MONO, Rotation.NONE, False, 0, 0))
    for color, x, y in ((Color.YELLOW, 19, 0), (Color.RED, 19, 19), (Color.GREEN, 0, 19)):
        state.play(SetMove(color, Shape.MONO, Rotation.NONE, False, x, y))
    touching = SetMove(Color.BLUE, Shape.DOMINO, Rotation.NONE, False, 1, 0)
    assert state.validate(touching) is MoveMistake.TOUCHES_SAME_COLOR
    assert state.refusal_text(touching) == "the piece touches a piece of its own colour along an edge at (1,0)"
    taken = SetMove(Color.BLUE, Shape.DOMINO, Rotation.NONE, False, 18, 19)
    assert state.refusal_text(taken, MoveMistake.OBSTRUCTED).endswith("already taken at (19,19)")
    assert state.refusal_text(SetMove(Color.BLUE, Shape.DOMINO, Rotation.NONE, False, 19, 5)).endswith(
        "on the board at (20,5)"
    )


def test_an_unknown_player_name_lists_every_accepted_form(capsys):
    with pytest.raises(SystemExit):
        arena_main(["level3", "nosuchai"])
    err = capsys.readouterr().err
    for form in ("level1..level5", "mcts:KEY=VALUE", "gtp:PATH:LEVEL", "cmd:COMMAND", "py:PATH"):
        assert form in err


def test_the_bot_reads_its_reservation_from_stdin_with_dash(tmp_path, monkeypatch):
    import io

    import cli.bot

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a-private-code\nrest\n")))
    assert cli.bot._reservation_from_stdin() == "a-private-code"
    done = subprocess.run(
        [sys.executable, "-m", "blokus", "bot", "-r", "-", "-p", "1"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == "blokus bot: -r -: no reservation code on stdin"
