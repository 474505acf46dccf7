"""``blokus tournament`` (issue 53.1): the schedule, the journal that makes it resumable, maximum-likelihood Elo,
and a tournament stopped by Ctrl-C and resumed (nothing lost, nothing twice)."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from blokus.ai.arena.audit import report_of
from blokus.ai.arena.match import TABLE_WIDTH, ArenaGame, GameSpec, make_specs, play_game
from blokus.ai.arena.tournament import (
    ALL,
    GameKey,
    Journal,
    JournalError,
    format_pairings,
    format_ratings,
    pairing_pairs,
    pairings,
    rate,
    schedule,
)
from blokus.ai.interface import RandomPlayer
from blokus.ai.search.greedy import GreedyPlayer
from blokus.cli.tournament import main as tournament_main
from tests.test_arena_match import CAP_S, read_until

ROOT = Path(__file__).resolve().parent.parent


def game(score: float, void: str = "") -> ArenaGame:
    return ArenaGame(0, "PENTO_L", 0, 0, 0, score, 0, void=void)


SPECS = make_specs(2, seed=1, move_time=0.05)
SCHEDULE = {g.key: g.spec for g in schedule(pairings(["a", "b"]), SPECS)}
KEY = GameKey("a", "b", 0, 0)


def played(spec: GameSpec) -> ArenaGame:
    """A real game of ``spec`` (random against greedy, quickly), moves and all."""
    return PLAYED.setdefault(spec.index, play_game(spec, RandomPlayer, GreedyPlayer))


PLAYED: dict[int, ArenaGame] = {}


def void(spec: GameSpec, why: str) -> ArenaGame:
    return ArenaGame(spec.index, spec.start_piece, spec.a_team, 0, 0, 0.5, 0, void=why)


def simulated(elos: dict[str, float], per_pairing: int, seed: int) -> list[tuple[GameKey, ArenaGame]]:
    rng = random.Random(seed)
    names = list(elos)
    out = []
    for a, b in pairings(names):
        p = 1 / (1 + 10 ** (-(elos[a] - elos[b]) / 400))
        for r in range(per_pairing):
            out.append((GameKey(a, b, r // 2, r % 2), game(1.0 if rng.random() < p else 0.0)))
    return out


def test_the_schedule_plays_each_opening_from_both_seats_in_every_pairing():
    base = make_specs(4, seed=3, move_time=0.1, season="2021")
    games = schedule(pairings(["a", "b", "c"]), base)
    assert len(games) == 12 and len({g.spec.index for g in games}) == 12
    assert len({g.key for g in games}) == 12
    for g in games:
        # the pair of a game: the same opening, the other seat, indices 2k and 2k+1
        mate = next(
            o for o in games if o.key.a == g.key.a and o.key.b == g.key.b and o.key.round == g.key.round and o is not g
        )
        assert {g.spec.index, mate.spec.index} == {g.spec.index & ~1, (g.spec.index & ~1) + 1}
        assert g.spec.start_piece == mate.spec.start_piece and g.spec.a_team != mate.spec.a_team
        assert g.spec.start_piece == base[g.key.round * 2].start_piece  # the same openings for every pairing
    assert [g.key.round for g in games[:6]] == [0] * 6  # round by round: a stopped tournament stays balanced
    assert pairings(["a", "b", "c"], gauntlet="b") == [("b", "a"), ("b", "c")]


def test_maximum_likelihood_elo_finds_the_strengths_within_its_intervals():
    truth = {"a": 0.0, "b": 150.0, "c": -200.0}
    r = rate(list(truth), simulated(truth, 400, seed=5), anchor="a")
    assert not r.virtual_draws and not r.note
    by = {x.player: x for x in r.ratings}
    assert by["a"].elo == 0.0 and by["a"].ci95 == 0.0
    for p in ("b", "c"):
        assert by[p].elo is not None and by[p].ci95 is not None
        assert abs(by[p].elo - truth[p]) < by[p].ci95, (p, by[p])
        assert 20 < by[p].ci95 < 80
    assert [x.player for x in r.ratings] == ["b", "a", "c"]
    # the matrix: points both ways add up to the games
    assert all(r.points[i][j] + r.points[j][i] == r.games[i][j] for i in range(3) for j in range(3) if i != j)


def test_a_player_who_lost_everything_gets_a_virtual_draw_per_pairing_said_in_one_line():
    games = [(GameKey("a", "b", i // 2, i % 2), game(0.5 if i % 3 else 1.0)) for i in range(6)]
    games += [(GameKey("a", "z", i // 2, i % 2), game(1.0)) for i in range(4)]
    games += [(GameKey("b", "z", i // 2, i % 2), game(1.0)) for i in range(4)]
    r = rate(["a", "b", "z"], games, anchor="a")
    assert r.virtual_draws and "(z lost every game)" in r.note
    z = next(x for x in r.ratings if x.player == "z")
    assert z.elo is not None and z.elo < -300 and z.losses == 8 and z.points == 0
    assert "virtual draw" in format_ratings(r)


def test_the_note_names_who_won_and_who_lost_everything():
    games = [(GameKey("a", "b", 0, s), game(1.0)) for s in (0, 1)] + [
        (GameKey("b", "c", 0, s), game(1.0)) for s in (0, 1)
    ]
    assert "(a won every game, c lost every game)" in rate(["a", "b", "c"], games, anchor="b").note


def test_void_games_are_listed_but_never_rated_and_unconnected_players_get_no_rating():
    games = [(GameKey("a", "b", 0, 0), game(1.0)), (GameKey("a", "b", 0, 1), game(0.0))]
    games += [(GameKey("a", "c", 0, 0), game(0.5, void="B did not join")), (GameKey("a", "c", 0, 1), game(1.0, "x"))]
    r = rate(["a", "b", "c"], games, anchor="a")
    c = next(x for x in r.ratings if x.player == "c")
    assert c.elo is None and c.games == 0 and c.void == 2
    a = next(x for x in r.ratings if x.player == "a")
    assert (a.games, a.void, a.points) == (2, 2, 1.0)
    assert "not rated (no scored game connects them with a): c" in format_ratings(r)


def test_the_journal_drops_a_cut_off_line_counts_a_key_once_and_refuses_another_tournament(tmp_path):
    path = tmp_path / "t.jsonl"
    settings = {"players": ["a", "b"], "seed": 1}
    plan = SCHEDULE
    journal = Journal(path, settings, plan).open()
    journal.record(KEY, played(plan[KEY]))
    journal.record(KEY, void(plan[KEY], "B did not join"))  # the same key again: not written
    journal.close()
    line = path.read_text().splitlines()[1]
    with open(path, "a") as fh:
        fh.write(line + "\n" + line[:20])  # a duplicate (by hand) and a line cut off by a crash
    again = Journal(path, settings, plan).open()
    assert list(again.games) == [KEY] and report_of(again.games[KEY]) == report_of(played(plan[KEY]))
    assert any("incomplete" in n for n in again.notes) and any("twice" in n for n in again.notes)
    other = GameKey("a", "b", 0, 1)
    again.record(other, void(plan[other], "B did not join"))
    again.close()
    assert all(json.loads(x) for x in path.read_text().splitlines())  # every line whole again
    with pytest.raises(JournalError, match="seed was 1, now 2"):
        Journal(path, {**settings, "seed": 2}, plan).open()
    (tmp_path / "other.txt").write_text("hello\n")
    with pytest.raises(JournalError, match="not a tournament journal"):
        Journal(tmp_path / "other.txt", settings, plan).open()
    assert (tmp_path / "other.txt").read_text() == "hello\n"  # not touched


def test_a_tournament_prints_ratings_and_matrix_and_writes_json(tmp_path, capsys):
    out_json = tmp_path / "t.json"
    code = tournament_main(
        ["random", "greedy", "level2", "--games", "2", "--quiet", "--resume", str(tmp_path / "j.jsonl"),
         "--json", str(out_json)]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "6 of 6 games played (0 from the journal" in out and "score matrix" in out
    data = json.loads(out_json.read_text())
    assert data["games_finished"] == 6 and len(data["games"]) == 6
    assert {(g["key"]["a"], g["key"]["b"]) for g in data["games"]} == {
        ("random", "greedy"),
        ("random", "level2"),
        ("greedy", "level2"),
    }
    assert sum(r["games"] for r in data["ratings"]) == 12  # each game counts for both its players
    assert next(r for r in data["ratings"] if r["player"] == "random")["elo"] == 0.0  # the anchor: the first
    # every pairing's game pair, in the report and in --json
    assert "game pairs (each opening from both seats)" in out and "0/¼/½/¾/1" in out
    assert [(p["a"], p["b"], p["pairs"]) for p in data["pairings"]] == [
        ("random", "greedy", 1),
        ("random", "level2", 1),
        ("greedy", "level2", 1),
    ]
    assert all(sum(p["pentanomial"]) == 1 and "nelo" in p for p in data["pairings"])


def test_a_tournament_header_names_its_openings_and_adjudication(tmp_path, capsys):
    from blokus.cli.openings import main as openings_main

    suite = tmp_path / "suite.txt"
    assert openings_main([str(suite), "--count", "1", "--plies", "4"]) == 0
    argv = ["random", "greedy", "--games", "2", "--quiet", "--resume", str(tmp_path / "j.jsonl")]
    assert tournament_main([*argv, "--openings", str(suite), "--no-adjudication"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("tournament ("))
    assert f", openings of {suite} (sequential), no adjudication" in header


def test_bad_tournaments_are_one_line(capsys):
    for argv, words in (
        (["random"], "at least two players"),
        (["random", "random"], "each player once"),
        (["random", "greedy", "--games", "3"], "must be even"),
        (["random", "greedy", "--anchor", "level2"], "none of the players"),
        (["random", "nobody"], "unknown player"),
    ):
        with pytest.raises(SystemExit) as exc:
            tournament_main(argv)
        err = capsys.readouterr().err
        assert exc.value.code == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_ctrl_c_then_resume_plays_only_the_missing_games(tmp_path):
    journal = tmp_path / "t.jsonl"
    command = [sys.executable, "-m", "blokus", "tournament", "random", "greedy", "level2", "--games", "2"]
    command += ["--resume", str(journal), "--jobs", "2"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path, start_new_session=True
    )
    try:
        read_until(first.stderr, b"] 2/6", CAP_S)  # two games finished
        os.killpg(first.pid, signal.SIGINT)
        out, _ = first.communicate(timeout=CAP_S)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    assert first.returncode == 130, out
    lines = journal.read_text().splitlines()
    before = len(lines) - 1
    assert 2 <= before < 6 and f"--resume {journal} plays them" in out.decode()
    second = subprocess.run(command, capture_output=True, env=env, cwd=tmp_path, timeout=CAP_S * 2)
    assert second.returncode == 0, second.stderr
    text = second.stdout.decode()
    assert f"6 of 6 games played ({before} from the journal {journal}, {6 - before} now)" in text
    entries = [json.loads(x) for x in journal.read_text().splitlines()[1:]]
    keys = [tuple(e["key"].values()) for e in entries]
    assert len(keys) == 6 and len(set(keys)) == 6  # nothing twice, nothing lost
    assert entries[:before] == [json.loads(x) for x in lines[1:]]  # the first run's games kept as they were


# --- game pairs per pairing (65.3), names that fit the tables (64.8) ---------------------------------------------


def test_each_pairing_counts_its_pairs_and_a_gauntlet_all_of_its_players():
    def scored(a: str, b: str, r: int, seat: int, score: float, void: str = "") -> tuple[GameKey, ArenaGame]:
        return GameKey(a, b, r, seat), game(score, void)

    games = [
        scored("g", "x", 0, 0, 1.0),
        scored("g", "x", 0, 1, 1.0),  # a pair scoring 1
        scored("g", "x", 1, 1, 0.5),
        scored("g", "x", 1, 0, 0.0),  # 1/4, its games in any order
        scored("g", "y", 0, 0, 0.5),
        scored("g", "y", 0, 1, 0.0, void="y did not join"),  # a void game: no pair, one game unpaired
        scored("g", "y", 1, 0, 0.5),
        scored("g", "y", 1, 1, 0.5),  # 1/2
    ]
    stats = pairing_pairs(pairings(["g", "x", "y"], "g"), games, "g")
    assert [(p.a, p.b, p.pentanomial.counts, p.unpaired) for p in stats] == [
        ("g", "x", (0, 1, 0, 0, 1), 0),
        ("g", "y", (0, 0, 1, 0, 0), 1),
        ("g", ALL, (0, 1, 1, 0, 1), 1),
    ]
    assert stats[1].as_dict()["nelo"] is None  # one pair: no spread to measure by
    text = format_pairings(stats)
    assert "1 game(s) without the other game of their pair with a result" in text
    # g against x: pair scores 1/4 and 1, mean 5/8 (Elo +89), variance 9/64; nElo 0.125 / sqrt(9/32) * 347.4356
    row = next(line for line in text.splitlines() if line.startswith("g       x"))
    assert row.split()[2:5] == ["2", "0-1-0-0-1", "+89"] and "+82 ±" in row


def test_tournament_tables_of_long_names_fit_100_columns():
    names = [f"py:/home/someone/projects/contest-2027/team-{k}/players/player.py" for k in range(4)]
    names[3] = "level2"
    games = simulated(dict(zip(names, [0, 30, 60, 90], strict=True)), 8, seed=3)
    ratings = format_ratings(rate(names, games, names[0]))
    pairs = format_pairings(pairing_pairs(pairings(names), games))
    for text in (ratings, pairs):
        assert max(len(line) for line in text.splitlines()) <= TABLE_WIDTH, text
    # the names told apart by the folder they differ in, the same in every table; the matrix's rows numbered
    assert "py:…/team-0/…/player.py (anchor)" in ratings and "4 level2" in ratings
    assert pairs.splitlines()[3].startswith("py:…/team-0/…/player.py  py:…/team-1/…/player.py ")


# --- issue 61: forged journals, a second tournament on one journal, results judged by their replay ----------

TOURNAMENT = ["random", "greedy", "--games", "2", "--move-time", "50", "--quiet"]


@pytest.fixture(scope="module")
def good_journal(tmp_path_factory) -> list[str]:
    """The lines of a finished tournament's journal (random against greedy, two games)."""
    path = tmp_path_factory.mktemp("good") / "j.jsonl"
    assert tournament_main([*TOURNAMENT, "--resume", str(path)]) == 0
    return path.read_text().splitlines()


def resumed(path: Path, capsys) -> tuple[int | str | None, str, str]:
    """``blokus tournament … --resume path``: its exit code, stdout and stderr."""
    try:
        code: int | str | None = tournament_main([*TOURNAMENT, "--resume", str(path)])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def with_game(line: str, **fields: object) -> str:
    entry = json.loads(line)
    entry["game"].update(fields)
    return json.dumps(entry)


def test_the_good_journal_resumes_without_playing(good_journal, tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    path.write_text("\n".join(good_journal) + "\n")
    code, out, _ = resumed(path, capsys)
    assert code == 0 and "2 of 2 games played (2 from the journal" in out and "void" not in out.split("score matrix")[1]
    assert path.read_text().splitlines() == good_journal  # read, not rewritten
    entry = json.loads(good_journal[1])
    assert entry["game"]["moves"] and len(entry["game"]["moves"]) <= entry["game"]["turns"]


@pytest.mark.parametrize(
    ("forge", "words"),
    [
        (lambda line: with_game(line, score=7), "line 2 cannot be read: game.score: a score is 0, 0.5 or 1, not 7"),
        (lambda line: with_game(line, score="x"), "line 2 cannot be read: game.score: Input should be a valid number"),
        (lambda line: '"x"', "line 2 cannot be read: Input should be an object"),
        (lambda line: "x", "line 2 cannot be read: Invalid JSON: expected value"),
        (
            lambda line: re.sub('"score":[0-9.]+', '"score":NaN', line),
            "line 2 cannot be read: game.score: Input should be a finite number",
        ),
        (
            lambda line: with_game(line, turns=2**70),
            "line 2 cannot be read: game.turns: Input should be less than or equal to 100",
        ),
        (
            lambda line: re.sub('"a_points":[0-9]+', '"a_points":' + "9" * 5000, line),
            "line 2 cannot be read: Invalid JSON: number out of range",
        ),
        (
            lambda line: line[:-1] + ',"deep":' + "[" * 30_000 + "]" * 30_000 + "}",
            "line 2 cannot be read: Invalid JSON: recursion limit exceeded",
        ),
        (lambda line: line[:-1] + ',"deep":' + "[" * 200_000 + "]" * 200_000 + "}", "line 2 is longer than 64 KiB"),
        (
            lambda line: line.replace('"key":{"a":"random"', '"key":{"a":"level2"', 1),
            "line 2: level2 vs greedy round 0",
        ),
        (
            lambda line: with_game(line, result={"winner": 1}),
            "line 2 cannot be read: game.result: Input should be null",
        ),
    ],
)
def test_a_forged_line_is_one_line_naming_the_file_the_line_and_why(good_journal, tmp_path, capsys, forge, words):
    path = tmp_path / "j.jsonl"
    path.write_text("\n".join([good_journal[0], forge(good_journal[1]), *good_journal[2:]]) + "\n")
    code, out, err = resumed(path, capsys)
    assert code == 2 and not out, out
    assert err.startswith(f"blokus tournament: {path} {words}") and len(err.strip().splitlines()) == 1, err


def test_a_50_mib_line_is_refused_after_64_kib_not_read_whole(good_journal, tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    with open(path, "w") as fh:
        fh.write("\n".join(good_journal) + "\n")
        fh.write('{"key":{"a":"random","b":"greedy","round":0,"seat":0},"game":{"forfeit":"')
        chunk = "x" * 2**20
        for _ in range(50):
            fh.write(chunk)
        fh.write('"}}\n')
    try:
        assert path.stat().st_size > 50 * 2**20
        code, out, err = resumed(path, capsys)
        assert code == 2 and err.strip() == f"blokus tournament: {path} line 4 is longer than 64 KiB: no game is"
    finally:
        path.unlink()


def test_a_journal_of_the_old_format_or_too_many_lines_is_one_line(good_journal, tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    path.write_text(good_journal[0].replace("journal/2", "journal/1") + "\n")
    code, _, err = resumed(path, capsys)
    assert code == 2 and "is a journal of an older blokus (blokus-tournament-journal/1" in err
    path.write_text("\n".join([good_journal[0], *[good_journal[1]] * 5]) + "\n")
    code, _, err = resumed(path, capsys)
    assert code == 2 and "has more lines than twice the 2 games of this tournament" in err


def test_a_score_that_its_points_do_not_make_is_a_void_game_with_the_reason(good_journal, tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    lines = list(good_journal)
    lost = next(i for i, line in enumerate(lines[1:], 1) if json.loads(line)["game"]["score"] == 0.0)
    game = json.loads(lines[lost])["game"]
    lines[lost] = with_game(lines[lost], score=1.0)  # a win with fewer points
    path.write_text("\n".join(lines) + "\n")
    out_json = tmp_path / "t.json"
    try:
        code: int | str | None = tournament_main([*TOURNAMENT, "--resume", str(path), "--json", str(out_json)])
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr().out
    why = f"it does not replay: it says a score of 1 for A, its points {game['a_points']}:{game['b_points']} make 0"
    assert code == 0 and f"void games (no result, not rated):\n  random vs greedy round 0 seat {lost - 1}: {why}" in out
    data = json.loads(out_json.read_text())
    assert data["void_games"] == [f"random vs greedy round 0 seat {lost - 1}: {why}"]
    assert sum(r["games"] for r in data["ratings"]) == 2  # one scored game, counted for both players


def test_a_second_tournament_on_a_journal_in_use_is_refused(good_journal, tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    path.write_text("\n".join(good_journal) + "\n")
    settings = json.loads(good_journal[0])["settings"]
    plan = {g.key: g.spec for g in schedule(pairings(["random", "greedy"]), make_specs(2, seed=1, move_time=0.05))}
    first = Journal(path, settings, plan).open()  # a tournament running on it
    try:
        code, out, err = resumed(path, capsys)
        assert code == 2 and not out
        assert err.strip() == (
            f"blokus tournament: {path} is in use by another blokus tournament (it would play the same games): "
            "wait for it to end, or give another journal"
        )
    finally:
        first.close()
    assert resumed(path, capsys)[0] == 0  # once it has ended


def test_what_another_process_appends_to_an_open_journal_is_cut_off(tmp_path):
    path = tmp_path / "t.jsonl"
    journal = Journal(path, {"seed": 1}, SCHEDULE).open()
    journal.record(KEY, played(SCHEDULE[KEY]))
    mine = path.read_bytes()
    forged = json.loads(mine.splitlines()[1])
    forged["key"]["seat"] = 1
    with open(path, "a") as fh:  # as a player that found the journal through /proc/<pid>/fd would
        fh.write(json.dumps(forged) + "\n")
    journal.close()
    assert path.read_bytes() == mine and journal.intruded == len(json.dumps(forged)) + 1
