"""The arena never invents a result (issues 43.1, 46.1, 46.3, 49.4): a game that never started is void (no
point, its own column, listed with its reason), our own side never depends on the current folder, and a
program under test cannot hurt our side into a loss: no code of ours for it to read, its connections do not
use up our budget, and any failure of our side (killed, stopped, late, its seat taken) voids the game."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
from pathlib import Path

import pytest

import blokus.net.external_arena
from blokus.ai import sandbox
from blokus.ai.arena.match import make_specs
from blokus.ai.players.registry import parse_player
from blokus.cli.arena import main as arena_main
from blokus.model.pieces import Team
from blokus.model.season import SEASON_2021
from blokus.net.connection import Connection
from blokus.net.external import HostedGame, HostedSeat
from blokus.net.external_arena import OUR_ENV, ExternalGames, our_command
from blokus.net.rooms import Timeouts
from tests.helpers import wait_until_sync as wait_until

CLIENT = Path(__file__).with_name("ext_client.py")
CMD = f"cmd:{sys.executable} {CLIENT}"


@pytest.fixture
def no_walls(monkeypatch):
    """The walls around a team's program off (``ai.sandbox``: they deny the signals of the attacks below,
    ``tests/test_sandbox.py``): where they are missing, our side's hurt still voids the game."""
    monkeypatch.setattr(sandbox, "abi", lambda: 0)


def arena(tmp_path: Path, a: str, b: str = "random", games: int = 2) -> tuple[int, dict]:
    out = tmp_path / "match.json"
    logs = tmp_path / "logs"
    argv = [a, b, "--games", str(games), "--move-time", "200", "--quiet", "--json", str(out), "--logs", str(logs)]
    code = arena_main(argv)
    return code, json.loads(out.read_text())


@pytest.mark.parametrize("folder", ["holding-blokus", "empty"])
def test_our_side_does_not_depend_on_the_current_folder(tmp_path, monkeypatch, capsys, folder):
    here = tmp_path / folder
    if folder == "holding-blokus":
        (here / "blokus").mkdir(parents=True)  # a checkout's parent: a package without __init__.py
    here.mkdir(exist_ok=True)
    monkeypatch.chdir(here)
    code, data = arena(tmp_path, CMD, games=1)  # one start of our side shows it (a game costs ~3 s of CPU)
    s = data["summary"]
    assert code == 0, capsys.readouterr()
    assert (s["games"], s["void"]) == (1, 0)
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
    monkeypatch.setattr(blokus.net.external_arena, "our_command", lambda *args: [str(tmp_path / "no-python"), *args])
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
    code, data = arena(tmp_path, f"{CMD} --misbehave steal-seat --delay 3", games=1)
    assert code == 0
    assert data["summary"]["void"] == 0
    assert all(not g["forfeit"] and g["turns"] > 20 for g in data["games"])  # our side played every game
    logs = "".join(Path(p).read_text() for g in data["games"] for p in g["logs"] if p.endswith(".err.log"))
    assert "stolen code: None" in logs


def test_a_programs_idle_connections_do_not_use_up_our_budget(tmp_path):
    code, data = arena(tmp_path, f"{CMD} --misbehave hog-connections", games=1)
    assert code == 0
    assert data["summary"]["void"] == 0
    assert all(not g["forfeit"] and g["turns"] > 20 for g in data["games"])


def test_killing_our_side_voids_the_game(tmp_path, capsys, no_walls):
    code, data = arena(tmp_path, f"{CMD} --misbehave kill-opponent --at 2", games=1)
    s = data["summary"]
    assert code == 1
    assert (s["wins"], s["draws"], s["losses"], s["void"]) == (0, 0, 0, 1)
    assert all(g["void"].startswith("our side random crashed (signal SIGKILL)") for g in data["games"])


# --- our side's failure is never a result (49.4) ----------------------------------------------------------------


def test_stopping_our_side_even_briefly_voids_the_game(tmp_path, no_walls):
    # SIGSTOP for 0.3 s at its 4th move: our side still answers in time, but it was hurt
    code, data = arena(tmp_path, f"{CMD} --misbehave stop-opponent --at 4 --delay 0.3", games=1)
    s = data["summary"]
    assert code == 1
    assert (s["wins"], s["losses"], s["void"]) == (0, 0, 1)
    assert re.fullmatch(
        r"our side random was stopped by a signal \(seen at turn \d+\) \(the program under test could have caused it\)",
        data["games"][0]["void"],
    )


def test_a_program_that_stops_our_side_to_read_its_code_gains_nothing(tmp_path, no_walls):
    code, data = arena(tmp_path, f"{CMD} --misbehave read-reservation --delay 1", games=1)
    s = data["summary"]
    assert code == 1
    assert (s["wins"], s["losses"], s["void"]) == (0, 0, 1)
    assert data["games"][0]["void"].startswith("our side random was stopped by a signal (before the game started)")


def test_no_other_process_can_read_our_sides_code(tmp_path):
    # our side's command replaced by a script that writes down everything another process of the user could
    # read of it: its command line, its environment, what waits on its stdin; its socket takes our seat
    seen = tmp_path / "seen.txt"
    script = (
        "import os, socket, sys\n"
        "fd = int(sys.argv[sys.argv.index('--socket-fd') + 1])\n"
        "os.set_blocking(0, False)\n"
        "try:\n    waiting = os.read(0, 4096)\nexcept OSError:\n    waiting = b''\n"
        f"open({str(seen)!r}, 'w').write(repr((sys.argv, dict(os.environ), waiting)))\n"
        "s = socket.socket(fileno=fd)\n"
        "s.sendall(b'<protocol><join gameType=\"swc_2021_blokus\"/>')\n"
        "s.recv(1)\n"  # until the host ends it
    )
    game = HostedGame(
        (HostedSeat("ours", [sys.executable, "-c", script], ours=True), HostedSeat("theirs")),
        log_dir=tmp_path,
        join_timeout=60,
        season=SEASON_2021,
    )
    try:
        game.start()
        assert game.room is not None
        wait_until(lambda: game.room.slots[Team.ONE].peer is not None, timeout=60)
        assert seen.exists()
        assert game.reservations[Team.ONE] not in seen.read_text()
    finally:
        game.close()


def test_any_failure_of_our_side_is_void_but_the_programs_own_is_its_loss(tmp_path):
    # 1 ms per move: whoever moves first is late. Game 0: the program moves first and loses; game 1: our side
    # moves first: void, not the program's win
    runner = ExternalGames(parse_player(CMD), parse_player("random"), str(tmp_path), timeouts=Timeouts(0.001, 5.0))
    first, second = (runner(spec) for spec in make_specs(2, 1, 0.2, season="2021"))
    assert not first.void and first.score == 0.0 and first.forfeit.startswith("A timeout")
    assert second.void.startswith("our side random timeout: ") and "at turn 0" in second.void


def test_a_program_that_stops_our_engine_gains_nothing(tmp_path, no_walls):
    # not our bot but its engine process: the bot answers in time with fallback moves (a weaker side) and says
    # so by its exit code, which the program cannot forge
    fast = ("--move-time", "100", "--hard-limit", "300")  # a fallback costs 0.3 s, not 1.8
    ours = HostedSeat("random", our_command("bot", "--ai", "random", *fast), ours=True, env=OUR_ENV)
    client = HostedSeat("client", [sys.executable, str(CLIENT), "--misbehave", "stop-engine", "--at", "12"])
    game = HostedGame((ours, client), log_dir=tmp_path, season=SEASON_2021)
    try:
        game.start()
        outcome = game.wait(120)
    finally:
        game.close()
    assert outcome is not None and outcome.result is not None  # played to its end
    assert outcome.void.startswith("our side random did not play every move itself (a fallback move")


def test_our_seat_taken_by_another_connection_voids_the_game(tmp_path):
    ours = HostedSeat("random", our_command("bot", "--ai", "random"), ours=True, env=OUR_ENV)
    game = HostedGame((ours, HostedSeat("theirs")), log_dir=tmp_path, join_timeout=60, season=SEASON_2021)
    try:
        game.start()

        async def take_the_seat() -> None:  # with a code that leaked (the host never gives it out)
            thief = Connection("127.0.0.1", game.port, season=SEASON_2021)
            await thief.open()
            await thief.join(reservation=game.reservations[Team.ONE])
            await thief.next_event()  # the join was sent
            await thief.close()

        asyncio.run(take_the_seat())
        outcome = game.wait(60)
    finally:
        game.close()
    assert outcome is not None
    assert outcome.void.startswith("our side random lost its seat to another connection")


# --- refusals name the rule and the fields (43.3) -----------------------------------------------------------------


def test_a_refusal_names_the_rule_and_the_fields():
    from blokus.model.moves import MoveMistake, SetMove
    from blokus.model.pieces import Color, Rotation, Shape
    from blokus.model.state import GameState

    state = GameState.new(SEASON_2021, Shape.MONO)
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


# --- bugs shown where they are (50.4) -----------------------------------------------------------------------------

BUGGY = """
from blokus.player import Move, Player


def helper(table):
    return table["missing"]


class Buggy(Player):
    def calculate_move(self) -> Move:
        state = self.game_state
        move = max(state.legal_moves(), key=lambda m: m.shape.size)
        if state.turn >= 8 and state.turn % 2 == 0:  # team ONE moves on even turns: a bug of its own
            helper({})
        if state.turn >= 8:  # team TWO: an answer that is no move
            return str(move)
        return move
"""


def test_a_crash_of_the_teams_player_names_its_file_and_line_and_its_logs_stay(tmp_path, monkeypatch, capsys):
    player = tmp_path / "buggy.py"
    player.write_text(BUGGY)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the arena's own log folder: in here
    out = tmp_path / "match.json"
    assert arena_main([f"py:{player}", "random", "--games", "2", "--quiet", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    crash, text = data["games"]  # A is team ONE, then TWO
    assert re.fullmatch(
        r"A crashed \(exit 4\) at turn 8: blokus bot: your player failed at turn 8 "
        r"\(KeyError at turn 8, buggy.py:6 in helper: 'missing'\); --strict: left the game",
        crash["forfeit"],
    )
    assert crash["traceback"].startswith("Traceback (most recent call last):")
    assert 'buggy.py", line 6, in helper' in crash["traceback"] and crash["traceback"].endswith("KeyError: 'missing'")
    # an answer that is no move is named as such: not an illegal move
    assert "(not a move at turn 9: calculate_move returned str '" in text["forfeit"]
    assert text["forfeit_class"] == "crashed" and text["traceback"] == ""
    assert "illegal move" not in data["summary"]["a_forfeits"]
    # the logs of both games stay (each a loss of the team's player), named at the end; --json lists them
    folder = Path(crash["logs"][0]).parent
    assert all(len(g["logs"]) == 4 and all(Path(p).is_file() for p in g["logs"]) for g in data["games"])
    assert folder.parent == tmp_path and "KeyError: 'missing'" in Path(crash["logs"][1]).read_text()  # ONE's stderr
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"blokus arena: the logs of 2 game(s) with a forfeit, a loss of the program under test or no result are "
        f"kept in {folder}"
    )


def test_the_logs_of_a_game_that_needs_no_look_go_and_are_not_listed(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    out = tmp_path / "match.json"
    assert arena_main([CMD, "random", "--games", "1", "--quiet", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["summary"]["wins"] == 1  # the program won on its merits: nothing to look at
    assert data["games"][0]["logs"] == [] and list((tmp_path / "tmp").iterdir()) == []
    assert "kept in" not in capsys.readouterr().err


# --- a crash counts for its game only (65.5); two programs of the team's keep only the logs worth a look (64.7) ---

ONCE = """
from pathlib import Path

from blokus.player import Move, Player

MARK = Path({mark!r})


class Once(Player):
    def calculate_move(self) -> Move:
        if not MARK.exists():  # the first game's process: a bug, once
            MARK.write_text("crashed")
            raise RuntimeError("a bug in the first game only")
        return max(self.game_state.legal_moves(), key=lambda m: m.shape.size)
"""


def test_a_player_that_crashes_in_one_game_is_started_again_for_the_next(tmp_path, monkeypatch, capsys, no_walls):
    # a mark outside its walls carries "crashed once" from game to game: the restart is under test, not the walls
    monkeypatch.setenv("BLOKUS_SANDBOX", "off")  # the py: player's process walls itself in: told by the environment
    player = tmp_path / "once.py"
    player.write_text(ONCE.format(mark=str(tmp_path / "crashed.mark")))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the arena's own log folder: in here
    out = tmp_path / "match.json"
    # both sides are the team's own programs (a py: player and a cmd: client)
    # two games (one pair): the crash, then a game of a new process (each game ~5 s of CPU)
    assert arena_main([f"py:{player}", CMD, "--games", "2", "--quiet", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    first, *rest = data["games"]
    assert len(rest) == 1
    assert first["forfeit_side"] == "A" and first["forfeit_class"] == "crashed"
    assert "RuntimeError" in first["forfeit"] and first["score"] == 0.0
    # the next games are played by a new process of the player: whole games, no forfeit
    assert all(not g["forfeit"] and not g["void"] and g["turns"] > 20 for g in rest)
    assert data["summary"]["a_forfeits"] == {"crashed": 1} and data["summary"]["void"] == 0
    # one of the two loses every game that is no draw: only the crash's logs stay, and the arena says so
    assert len(first["logs"]) == 4 and all(Path(p).is_file() for p in first["logs"])
    assert all(g["logs"] == [] for g in rest)
    folder = Path(first["logs"][0]).parent
    assert sorted(p.name for p in folder.iterdir()) == sorted(Path(p).name for p in first["logs"])
    err = capsys.readouterr().err
    assert "at the end only the logs of games with a forfeit (a crash, a timeout, an illegal move) or no result " in err
    assert err.strip().splitlines()[-1] == (
        "blokus arena: the logs of 1 game(s) with a forfeit (a crash, a timeout, an illegal move) or no result "
        f"(both sides are your programs) are kept in {folder}"
    )


EXITS_ONCE = f"""
import os
import sys
from pathlib import Path

mark = Path(sys.argv[1])
extra = [] if mark.exists() else ["--misbehave", "crash", "--at", "3"]  # the first game: exits at its 3rd move
mark.touch()
os.execv(sys.executable, [sys.executable, {str(CLIENT)!r}, *extra, *sys.argv[2:]])
"""


def test_a_program_that_exits_in_one_game_is_started_again_for_the_next(tmp_path, no_walls):
    # its mark outside its walls carries "exited once" from game to game: the restart is under test, not the walls
    program = tmp_path / "exits_once.py"
    program.write_text(EXITS_ONCE)
    code, data = arena(tmp_path, f"cmd:{sys.executable} {program} {tmp_path / 'exited.mark'}", games=2)
    assert code == 0
    first, second = data["games"]
    assert first["forfeit_side"] == "A" and first["forfeit_class"] == "crashed" and "exit 3" in first["forfeit"]
    assert not second["forfeit"] and not second["void"] and second["turns"] > 20
