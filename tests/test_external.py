"""``cmd:`` players (``net.external``, ``net.external_arena``): real processes of a contest-style client
(``tests/ext_client.py``) on an embedded server, well-behaved and misbehaving, through the host and the arena."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from blokus.ai.arena.game import ForfeitKind
from blokus.ai.players.registry import PlayerNameError, parse_player
from blokus.cli.arena import main as arena_main
from blokus.model.moverecords import read_records
from blokus.model.pieces import Team
from blokus.model.replay import MoveEvent, load_replay
from blokus.model.result import Cause
from blokus.model.season import SEASON_2021, season_named
from blokus.net.external import (
    HostedGame,
    HostedSeat,
    ProgramError,
    check_program,
    clean_line,
    live_members,
    program_command,
)
from blokus.net.rooms import Timeouts

CLIENT = [sys.executable, str(Path(__file__).with_name("ext_client.py"))]
CMD = f"cmd:{sys.executable} {Path(__file__).with_name('ext_client.py')}"
WAIT = 120  # generous cap on a whole game under load; a game of two quick clients takes seconds


def host(tmp_path: Path, one: list[str], two: list[str], season: str = "2021", **kwargs) -> HostedGame:
    return HostedGame(
        (HostedSeat("one", CLIENT + one), HostedSeat("two", CLIENT + two)),
        season=season_named(season),
        log_dir=tmp_path,
        **kwargs,
    )


def play(game: HostedGame):
    try:
        game.start()
        outcome = game.wait(WAIT)
    finally:
        game.close()
    assert outcome is not None
    return outcome


def group_gone(pid: int) -> bool:
    return not live_members(pid)


def test_names_and_commands():
    assert program_command(parse_player("cmd:java -jar 'my player.jar'")) == ["java", "-jar", "my player.jar"]
    assert parse_player("cmd:java -jar player.jar").label == "player.jar"
    assert parse_player("cmd:python3 -u bots/client.py --x 1").label == "client.py"
    assert parse_player("cmd:./my-player/start.sh").label == "start.sh"
    assert clean_line("a\x1b[31mred\x07\u202e\x9b") == "a\\x1b[31mred\\x07\\u202e\\x9b"
    with pytest.raises(PlayerNameError, match="no command"):
        parse_player("cmd:  ")
    with pytest.raises(ProgramError, match="does not exist"):
        check_program(parse_player("cmd:./no/such/start.sh -v"))
    with pytest.raises(ProgramError, match="not on the PATH"):
        check_program(parse_player("cmd:no-such-program-anywhere"))


def test_a_whole_game_of_two_programs_is_judged_by_the_server(tmp_path):
    season = "2021"  # 2027's whole games: the arena against level1 and the TUI's watched game
    game = host(tmp_path, [], ["--seed", "1"], season)
    outcome = play(game)
    result = outcome.result
    assert result is not None and result.regular and outcome.forfeit == ""
    assert outcome.turn >= season_named(season).round_limit * 4 - 40  # played on until (nearly) the end
    assert all(outcome.times[team] for team in Team)
    replay_file = tmp_path / "game.xml"
    replay_file.write_bytes(outcome.replay)
    replay = load_replay(replay_file)
    assert replay.result is not None and replay.result.points(Team.ONE) == result.points(Team.ONE)
    assert replay.detected is season_named(season)
    assert "joined with" in (tmp_path / "game-ONE-one.err.log").read_text()
    assert all(group_gone(p.pid) for p in game.programs.values())


@pytest.mark.parametrize(
    ("flags", "kind", "line"),
    [
        (["--misbehave", "illegal", "--at", "2"], "illegal move", "illegal move at turn 2: RED "),
        (
            ["--misbehave", "crash", "--at", "2"],
            "crashed",
            "crashed (exit 3) at turn 2: ext_client: simulated crash at turn 2",
        ),
        (
            ["--misbehave", "raise", "--at", "2"],
            "crashed",
            "crashed (exit 1) at turn 2: KeyError: 'simulated bug' (ext_client.py:",  # the last frame's place
        ),
        (["--misbehave", "leave", "--at", "2"], "left", "left the game at turn 2"),
        (["--misbehave", "slow", "--at", "2", "--delay", "1.5"], "timeout", "timeout: 1"),
        (["--misbehave", "never-answer", "--at", "2"], "timeout", "timeout: no move within 2000 ms at turn 2"),
        (["--misbehave", "never-join"], "did not join", "did not join within 3 s"),
    ],
)
def test_a_misbehaving_program_loses_with_one_line(tmp_path, flags, kind, line):
    # never-join: seat ONE is named first when both are missing, so a short limit cannot blame TWO
    game = host(tmp_path, flags, [], timeouts=Timeouts(1.0, 2.0), join_timeout=3.0 if kind == "did not join" else WAIT)
    outcome = play(game)
    assert outcome.offender is Team.ONE and outcome.forfeit_class is ForfeitKind(kind)  # every kind a member
    assert outcome.forfeit.startswith(line), outcome.forfeit
    assert outcome.result is not None and outcome.result.winner is Team.TWO and not outcome.result.regular
    if kind == "illegal move":
        assert outcome.result.cause is Cause.RULE_VIOLATION and "(" in outcome.forfeit
    if "raise" in flags:  # a Python client's traceback: its last frames
        assert outcome.traceback.startswith("Traceback (most recent call last):")
        assert 'ext_client.py", line' in outcome.traceback and outcome.traceback.endswith("KeyError: 'simulated bug'")
    else:
        assert outcome.traceback == ""
    assert all(group_gone(p.pid) for p in game.programs.values())


def test_a_program_that_ignores_sigterm_and_forks_leaves_nothing_behind(tmp_path):
    game = host(tmp_path, ["--misbehave", "stubborn"], [], stop_grace=0.5)
    outcome = play(game)
    assert outcome.result is not None and outcome.result.regular  # it plays well; only stopping it is hard
    assert group_gone(game.programs[Team.ONE].pid)


def test_a_program_that_floods_its_output_is_stopped_by_its_log_limit(tmp_path):
    game = host(tmp_path, ["--misbehave", "flood"], [], log_limit=1 << 20)
    outcome = play(game)
    assert outcome.offender is Team.ONE and outcome.forfeit_class == "crashed"
    # SIGXFSZ ends most programs; Python ignores it, and its next write to stderr fails (exit 1)
    assert "its output reached the log limit of 1 MiB" in outcome.forfeit
    assert (tmp_path / "game-ONE-one.out.log").stat().st_size <= 1 << 20
    assert group_gone(game.programs[Team.ONE].pid)


def test_a_program_that_cannot_start_is_one_line(tmp_path):
    game = HostedGame(
        (HostedSeat("one", [str(tmp_path / "missing")]), HostedSeat("two", CLIENT)),
        log_dir=tmp_path,
        season=SEASON_2021,
    )
    with pytest.raises(ProgramError, match="cannot start"):
        game.start()
    game.close()


# --- the arena --------------------------------------------------------------------------------------------


def test_the_arena_judges_programs_and_keeps_the_replays_of_lost_games(tmp_path, capsys):
    out = tmp_path / "match.json"
    code = arena_main(
        [
            f"{CMD} --misbehave illegal --at 2",
            CMD,
            "--games",
            "2",
            "--jobs",
            "2",
            "--season",
            "2027",
            "--save-replay",
            str(tmp_path),
            "--json",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    table = capsys.readouterr().out
    assert "illegal move 2" in table  # the forfeits column of A
    data = json.loads(out.read_text())
    s = data["summary"]
    assert (s["wins"], s["draws"], s["losses"], s["score"]) == (0, 0, 2, 0.0)
    assert s["a_forfeits"] == {"illegal move": 2}
    assert all(re.match(r"A illegal move at turn \d+: ", g["forfeit"]) for g in data["games"])
    # the rule in English, with the fields where fields are to blame (GameState.refusal_text)
    assert all(g["forfeit"].endswith(")") and "Setze" not in g["forfeit"] for g in data["games"])
    assert len(s["a_lost_replays"]) == 2
    for path in s["a_lost_replays"]:
        replay = load_replay(path)
        assert replay.result is not None and not replay.result.regular
        assert replay.detected is season_named("2027")
        # beside it, each move's time as the server measured it (model.moverecords): programs report nothing more
        records = read_records(path)
        assert records is not None and records.records and {r.source for r in records.records} == {"program"}
        moved = {e.turn for e in replay.events if isinstance(e, MoveEvent)}
        assert {r.turn for r in records.records} <= moved and not any(r.info for r in records.records)
    assert any(name.endswith(".err.log") for name in os.listdir(tmp_path))


def test_the_arena_plays_a_program_against_a_built_in_player(tmp_path, capsys):
    out = tmp_path / "match.json"
    code = arena_main(
        [CMD, "level1", "--games", "1", "--season", "2027", "--json", str(out), "--quiet", "--logs", str(tmp_path)]
    )
    assert code == 0
    data = json.loads(out.read_text())
    game = data["games"][0]
    assert game["forfeit"] == "" and game["turns"] > 40
    assert game["a_times"] and game["b_times"]  # both sides timed by the server
    assert "level1" in capsys.readouterr().out


def test_the_arena_refuses_a_program_it_cannot_start(capsys):
    with pytest.raises(SystemExit) as exc:
        arena_main(["cmd:./no/such/start.sh", "level1"])
    assert exc.value.code == 2
    assert "does not exist" in capsys.readouterr().err


def test_the_player_name_chooses_where_a_game_is_played():
    from blokus.cli.players import PlayerKind, parse_player

    program, ours = parse_player(CMD), parse_player("level1")
    assert (program.kind, program.external) == (PlayerKind.CMD, True)  # on an embedded server, per game
    assert (ours.kind, ours.external) == (PlayerKind.LEVEL, False)  # in-process
