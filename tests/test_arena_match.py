"""How an arena match runs (``ai.arena.match.run_match``, ``cli.arena``): one Ctrl-C stops it with the table of the
finished games (issue 43.2), its logs are bounded in total (46.3), and ``--sprt`` decides over game pairs (43.4)."""

from __future__ import annotations

import io
import json
import math
import os
import select
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from blokus.ai import make_player
from blokus.ai.arena.game import ForfeitKind
from blokus.ai.arena.match import (
    TABLE_WIDTH,
    ArenaGame,
    Progress,
    format_table,
    make_specs,
    run_match,
    short_name,
    short_names,
    summary,
)
from blokus.ai.arena.sprt import PairedSprt, SprtSpec, Verdict
from blokus.cli.arena import main as arena_main
from blokus.net.external_arena import LogBudget

ROOT = Path(__file__).resolve().parent.parent
CMD = f"cmd:{sys.executable} {Path(__file__).with_name('ext_client.py')}"
CAP_S = 180  # generous cap on waiting for a line under load (never a fixed sleep)


def marked_processes(marker: str) -> list[int]:
    """The live processes that carry ``marker`` in their environment (everything an arena started)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                environ = fh.read()
            with open(f"/proc/{entry}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in environ and state != "Z":
            found.append(int(entry))
    return found


def read_until(stream, needle: bytes, cap: float) -> bytes:
    data = b""
    deadline = time.monotonic() + cap
    while needle not in data:
        left = deadline - time.monotonic()
        assert left > 0, f"{needle!r} did not come: {data[-500:]!r}"
        ready, _, _ = select.select([stream], [], [], left)
        if ready:
            chunk = os.read(stream.fileno(), 65536)
            assert chunk, f"the arena ended before {needle!r}: {data[-500:]!r}"
            data += chunk
    return data


@pytest.mark.parametrize(
    "players",
    [
        ["greedy", "random", "--games", "400"],  # in-process players in game processes
        [CMD, "random", "--games", "10", "--move-time", "200"],  # a program and our bot per game, in threads
    ],
    ids=["in-process", "cmd"],
)
def test_one_ctrl_c_stops_an_arena_with_two_jobs(tmp_path, players):
    marker = f"BLOKUS_TEST_MARK_{uuid.uuid4().hex}"
    env = {**os.environ, marker: "1", "PYTHONPATH": str(ROOT)}
    arena = subprocess.Popen(
        [sys.executable, "-m", "blokus", "arena", *players, "--jobs", "2", "--logs", str(tmp_path / "logs")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
        start_new_session=True,  # the terminal's Ctrl-C goes to the whole foreground group: so here
    )
    try:
        err = read_until(arena.stderr, b"] 1/", CAP_S)  # the first finished game's progress line
        assert marked_processes(marker)  # the marker finds what the arena started
        os.killpg(arena.pid, signal.SIGINT)
        out, rest = arena.communicate(timeout=CAP_S)
    finally:
        if arena.poll() is None:
            os.killpg(arena.pid, signal.SIGKILL)
            arena.wait()
    err += rest
    text = out.decode()
    assert arena.returncode == 130, err.decode()[-2000:]
    assert "stopped after " in text and " of " in text and "games (Ctrl-C)" in text
    assert "player" in text and "Void" in text  # the table of the finished games
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err, err.decode()
    deadline = time.monotonic() + 10  # an ended process may take a moment to be reaped
    while marked_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marked_processes(marker) == []


# --- logs -----------------------------------------------------------------------------------------------------


def test_the_log_budget_removes_the_oldest_logs_first(tmp_path):
    budget = LogBudget(str(tmp_path), total=4000, jobs=1)
    for i in range(5):
        path = tmp_path / f"game-{i:03d}-ONE-x.out.log"
        path.write_bytes(b"x" * 1000)
        os.utime(path, (1000 + i, 1000 + i))
    (tmp_path / "replay.xml").write_bytes(b"y" * 5000)  # not a log: kept
    budget.prune(keep={str(tmp_path / "game-000-ONE-x.out.log")})  # a running game's log: kept
    left = sorted(p.name for p in tmp_path.glob("game-*.log"))
    assert left == ["game-000-ONE-x.out.log", "game-004-ONE-x.out.log"]
    assert (tmp_path / "replay.xml").exists()
    assert budget.log_limit == 64 * 1024  # the floor of a file's cap


def test_an_arena_keeps_its_logs_within_the_budget_and_removes_its_temporary_folder(tmp_path, capsys):
    logs = tmp_path / "logs"
    code = arena_main(
        [f"{CMD} --misbehave flood", "random", "--games", "2", "--quiet", "--logs", str(logs), "--log-budget", "1"]
    )
    assert code in (0, 1)
    assert sum(p.stat().st_size for p in logs.iterdir()) <= 2**20
    capsys.readouterr()
    code = arena_main([CMD, "random", "--games", "1", "--quiet", "--move-time", "200"])
    err = capsys.readouterr().err
    folder = err.split("output goes to ", 1)[1].split(" (removed at the end", 1)[0]
    assert code == 0 and not Path(folder).exists()


# --- SPRT -----------------------------------------------------------------------------------------------------


def game(index: int, score: float, void: str = "") -> ArenaGame:
    return ArenaGame(index, "PENTO_L", index % 2, 0, 0, score, 40, void=void)


def test_a_pair_counts_when_both_games_are_done_in_any_order_and_a_void_pair_not_at_all():
    sprt = PairedSprt(SprtSpec(0, 50))
    results: list[ArenaGame] = []
    for g in [game(1, 1.0), game(2, 0.5), game(0, 1.0), game(5, 0.0, void="B did not join"), game(4, 1.0)]:
        results.append(g)
        assert sprt(results) is False
    assert sprt.state.counts == (0, 0, 0, 0, 1) and sprt.void_pairs == 1  # pair 1 waits for game 3
    results.append(game(3, 0.0))
    sprt(results)
    assert sprt.state.counts == (0, 1, 0, 0, 1)  # 0.5 and 0: a quarter
    assert "1 pair(s) with a void game not counted" in sprt.describe()


def test_the_verdict_stops_the_match_is_frozen_and_every_game_is_counted_one_way():
    sprt = PairedSprt(SprtSpec(0, 50))
    progress = Progress(400, io.StringIO(), sprt=sprt)
    results: list[ArenaGame] = [game(1, 1.0)]  # game 0 of the first pair comes last: it is running
    sprt(results)
    i = 2
    while not sprt.decided:
        results.append(game(i, 1.0))
        stop = sprt(results)
        progress(results)
        i += 1
    assert stop and sprt.state.verdict is Verdict.H1
    pairs = sprt.state.pairs
    counts = sprt.state.counts
    results += [game(i, 0.0), game(0, 0.0)]  # games that were running: the verdict stays
    assert sprt(results[:-1]) is True and sprt(results) is True and sprt.state.counts == counts
    assert sprt.games_in_test == 2 * pairs == len(results) - 3  # game 1 waits for game 0, which came too late
    assert sprt.games_line(len(results), 400) == (
        f"the SPRT counted {2 * pairs} of the {len(results)} games played ({pairs} pairs); not counted: "
        "2 finished after the verdict (they were running); 1 without the other game of their pair; "
        "decided: no game was started after the verdict (cap 400)"
    )
    data = sprt.as_dict()
    assert (data["pairs"], data["games_in_test"], data["games_after_verdict"], data["games_unpaired"]) == (
        pairs,
        2 * pairs,
        2,
        1,
    )
    assert json.dumps(data, allow_nan=False)  # all pairs won: an infinite Elo is null
    # the progress line counts the games played, the cap is only a cap, and the time left is the test's
    line = progress.stream.getvalue().split("\r")[-1]
    assert f"{len(results) - 2} games (at most 400)" in line and "decided: the running games finish" in line
    assert "~" in progress.stream.getvalue().split("\r")[-2]  # before the verdict: the trend's estimate


def test_the_time_left_follows_the_sprts_trend_not_the_cap():
    sprt = PairedSprt(SprtSpec(-50, 50))
    results: list[ArenaGame] = []
    for i in range(8):  # pairs scoring 1 and 1/2: A ahead, the LLR climbs
        results.append(game(i, 1.0 if i % 4 < 2 else 0.5 if i % 4 == 2 else 0.5))
        sprt(results)
    assert sprt.state.pairs == 4 and not sprt.decided
    left = sprt.pairs_left()
    assert left is not None and 0 < left < 20
    assert math.isclose(sprt.state.llr + left * sprt.state.llr / 4, sprt.state.spec.upper)


def test_the_arena_reports_an_sprt_that_cannot_decide_within_its_cap(tmp_path, capsys):
    out = tmp_path / "m.json"
    code = arena_main(["random", "random", "--sprt", "0,5", "--games", "4", "--quiet", "--json", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    assert "SPRT [0, 5] after 2 pairs: pentanomial LLR" in text and "undecided within the cap of 4 games" in text
    assert "the SPRT counted 4 of the 4 games played (2 pairs); undecided" in text
    sprt = json.loads(out.read_text())["summary"]["sprt"]
    assert sprt["pairs"] == 2 and sprt["verdict"] == "continue"
    assert {"llr", "lower", "upper", "elo", "elo_ci95", "pentanomial"} <= sprt.keys()


def test_a_bad_sprt_is_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        arena_main(["random", "random", "--sprt", "5"])
    assert exc.value.code == 2
    assert "write ELO0,ELO1" in capsys.readouterr().err


def test_games_side_by_side_share_the_cores(monkeypatch) -> None:
    # arena --jobs N: each game's search gets its share of the cores, a spec that names its threads keeps them
    from blokus.ai.arena import match
    from blokus.ai.players.registry import parse_player
    from blokus.ai.search.cores import search_threads

    monkeypatch.setattr(match, "available_cores", lambda: 8)
    assert match.threads_per_game(1) is None and match.threads_per_game(2) == 4 and match.threads_per_game(16) == 1
    built = []
    monkeypatch.setattr(match.PlayerSpec, "build", lambda spec, seed: built.append(spec) or spec)
    monkeypatch.setattr(match, "compile_ahead", lambda spec: None)
    match.PlayerFactory(parse_player("mcts"), 4)(0)
    match.PlayerFactory(parse_player("mcts:threads=1"), 4)(0)
    match.PlayerFactory(parse_player("greedy"), 4)(0)
    match.PlayerFactory(parse_player("mcts"))(0)
    assert [dict(spec.settings).get("threads") for spec in built] == [min(4, search_threads(0)), 1, None, None]


# --- the pairs in the table (65.3), names that fit it (64.8) -----------------------------------------------------


def test_the_table_counts_the_pairs_with_both_games_scored_and_gives_elo_and_normalised_elo():
    results = [
        game(0, 1.0),
        game(1, 0.5),  # a pair scoring 3/4
        game(2, 0.0),
        game(3, 1.0),  # 1/2
        game(4, 1.0),
        game(5, 0.0, void="B did not join"),  # a void game: its pair is not counted, game 4 is "unpaired"
        game(6, 1.0),
        game(7, 1.0),  # 1
        game(9, 0.0),  # the other game of its pair was not played
    ]
    s = summary(results, "a", "b")
    assert s.pentanomial == (0, 0, 1, 1, 1) and s.unpaired == 2
    data = s.to_dict()["pairs"]
    assert data["pairs"] == 3 and data["pentanomial"] == [0, 0, 1, 1, 1] and data["unpaired"] == 2
    # pair scores 1/2, 3/4, 1: mean 3/4, variance (1/16 + 0 + 1/16) / 3 = 1/24; nElo 0.25 / sqrt(1/12) * 347.4356
    assert data["nelo"] == pytest.approx(0.25 * math.sqrt(12) * 800 / math.log(10))
    table = format_table(s)
    assert "A's game pairs (an opening from both seats; 2 game(s) without the other game of their pair):" in table
    assert "  3 pairs 0/¼/½/¾/1: 0-0-1-1-1; Elo +191 (95 % " in table and "; nElo +301 (95 % " in table
    assert "pairs 0/¼/½/¾/1" not in format_table(s, pairs=False)


def test_long_player_names_are_shortened_in_the_table_and_kept_whole_in_json():
    team = "py:/home/someone/projects/contest-2027/our-team/players/player.py"
    program = f"cmd:{sys.executable} /home/someone/projects/contest-2027/our-team/client/start.py --fast"
    assert short_name(team) == "py:…/players/player.py"
    assert short_name("gtp:/opt/pentobi/bin/pentobi-gtp:3") == "gtp:…/bin/pentobi-gtp:3"
    assert short_name("level2") == "level2" and short_name("py:./player.py") == "py:./player.py"
    assert len(short_name(program)) == 24 and "…" in short_name(program)
    # two names that would read alike are told apart
    other = team.replace("our-team", "their-team")
    assert short_names([team, other, "random"]) == ["py:…/player.py #1", "py:…/player.py #2", "random"]
    forfeits = [game(0, 0.0), game(1, 1.0)]
    forfeits[0].forfeit_side, forfeits[0].forfeit_class = "A", "crashed"
    forfeits[1].forfeit_side, forfeits[1].forfeit_class = "B", "did not join"
    s = summary(forfeits, team, program)
    table = format_table(s).splitlines()
    assert max(len(line) for line in table[:4]) <= TABLE_WIDTH
    assert table[2].startswith("py:…/players/player.py ") and "crashed 1" in table[2]
    assert s.to_dict()["a"] == team and s.to_dict()["b"] == program


def test_an_in_process_player_that_crashes_in_one_game_is_built_anew_for_the_next():
    built = []

    def flaky(seed: int):
        engine = make_player("greedy", seed)
        built.append(engine)
        if len(built) == 1:  # the first game's engine has a bug

            def broken(*args, **kwargs):
                raise RuntimeError("a bug in the first game only")

            engine.think = broken
        return engine

    results = run_match(make_specs(4, seed=2, move_time=0.05), flaky, lambda seed: make_player("random", seed))
    first, *rest = results
    assert first.forfeit_side == "A" and first.forfeit_class is ForfeitKind.CRASHED and "RuntimeError" in first.forfeit
    assert len(built) == 4 and all(not g.forfeit and g.turns > 20 for g in rest)
