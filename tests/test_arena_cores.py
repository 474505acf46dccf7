"""``--cores-per-player N`` (issue 63.1): each side of an arena or tournament game on N cores of its own, pinned by
CPU affinity (``ai.arena.match.player_cores``, ``play_game``): the thread that makes a side's engine and thinks for it
runs on that side's cores, so its search threads and its programs do too; a game process or thread of games side by
side keeps one pair of cores; the options are checked and the report says the cores."""

from __future__ import annotations

import os
import shlex
import sys
import threading

import pytest

from blokus.ai import processes
from blokus.ai.arena import match
from blokus.ai.arena.match import cores_line, make_specs, player_cores, run_match
from blokus.ai.interface import Engine, fallback_move
from blokus.cli.arena import main as arena_main
from blokus.cli.tournament import main as tournament_main

two_cores = pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2, reason="pins to two cores"
)


class _Where(Engine):
    """Plays a random move and notes the cores its thinking thread (and a thread it starts) may run on."""

    name = "where"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.made_on = sorted(os.sched_getaffinity(0))
        self.seen: set[tuple[int, ...]] = set()

    def think(self, state, deadline, stop):
        started: list[tuple[int, ...]] = []
        helper = threading.Thread(target=lambda: started.append(tuple(sorted(os.sched_getaffinity(0)))))
        helper.start()
        helper.join()
        self.seen |= {tuple(sorted(os.sched_getaffinity(0))), *started}
        return fallback_move(state, self.rng)


class _Recording:
    """A factory that keeps its engines (a game in this process)."""

    def __init__(self) -> None:
        self.engines: list[_Where] = []

    def __call__(self, seed: int) -> Engine:
        engine = _Where(seed)
        self.engines.append(engine)
        return engine


class _Tell(Engine):
    """Says where its thinking thread runs by failing (the arena's forfeit line carries it from a game process)."""

    name = "tell"

    def think(self, state, deadline, stop):
        raise RuntimeError(f"on {sorted(os.sched_getaffinity(0))}")


def _tell(seed: int) -> Engine:
    return _Tell(seed)


def test_the_cores_of_games_side_by_side_are_pairs_of_n_cores_of_their_own():
    assert player_cores(1, 1, [0, 1]) == [((0,), (1,))]
    assert player_cores(2, 2, list(range(8))) == [((0, 1), (2, 3)), ((4, 5), (6, 7))]
    assert player_cores(1, 2, [3, 5, 8, 9, 11]) == [((3,), (5,)), ((8,), (9,))]
    with pytest.raises(
        ValueError,
        match=r"^--cores-per-player 1: 2 games side by side need 4 cores, 2 available "
        r"here \(--jobs at most 1\)$",
    ):
        player_cores(1, 2, [0, 1])
    with pytest.raises(ValueError, match="needs 2 cores, 1 available here"):
        player_cores(1, 1, [0])
    with pytest.raises(ValueError, match="at least 1, not 0"):
        player_cores(0, 1, [0, 1])


def test_the_available_cores_count_the_cpu_quota(monkeypatch):
    monkeypatch.setattr(match, "available_cores", lambda: 1)  # a quota of one CPU on a machine of more
    monkeypatch.setattr(processes, "thread_cores", lambda: {0, 1, 2, 3})
    with pytest.raises(ValueError, match="needs 2 cores, 1 available here"):
        player_cores(1, 1)


@two_cores
def test_each_side_thinks_and_starts_its_threads_on_its_own_cores_and_the_thread_is_given_back():
    before = os.sched_getaffinity(0)
    a, b = _Recording(), _Recording()
    cores = player_cores(1, 1, sorted(before)[:2])
    (game,) = run_match(make_specs(1, 1, 0.5), a, b, cores=cores)
    (core_a,), (core_b,) = cores[0]
    assert a.engines[0].made_on == [core_a] and b.engines[0].made_on == [core_b]
    assert a.engines[0].seen == {(core_a,)} and b.engines[0].seen == {(core_b,)}
    assert (game.a_cores, game.b_cores) == ([core_a], [core_b])
    assert cores_line([game]) == f"A on core {core_a}, B on core {core_b}"
    assert os.sched_getaffinity(0) == before


@two_cores
def test_game_processes_keep_one_pair_of_cores_each():
    first, second = sorted(os.sched_getaffinity(0))[:2]
    slots = [((first,), (second,)), ((second,), (first,))]  # two games side by side (here on the same two cores)
    results = run_match(make_specs(4, 1, 0.3), _tell, _tell, jobs=2, cores=slots)
    assert len(results) == 4
    for game in results:
        assert (tuple(game.a_cores), tuple(game.b_cores)) in slots
        side = game.forfeit[0]  # the side that moved first: it told where it thought
        assert f"on {game.a_cores if side == 'A' else game.b_cores}" in game.forfeit, game.forfeit


def test_arena_checks_the_option_in_one_line(capsys, monkeypatch):
    monkeypatch.setattr(match, "available_cores", lambda: 2)
    monkeypatch.setattr(processes, "thread_cores", lambda: {0, 1})
    for argv, line in [
        (["--jobs", "2", "--cores-per-player", "1"], "2 games side by side need 4 cores, 2 available here"),
        (["--cores-per-player", "2"], "--cores-per-player 2: a game needs 4 cores, 2 available here"),
        (["--cores-per-player", "1", "--cluster", "local:1"], "--cores-per-player and --cluster"),
    ]:
        with pytest.raises(SystemExit) as exc:
            arena_main(["random", "random", *argv])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert line in err and err.count("\n") == 1, err
    with pytest.raises(SystemExit):
        tournament_main(["random", "greedy", "--cores-per-player", "3"])
    assert "--cores-per-player 3: a game needs 6 cores" in capsys.readouterr().err


@two_cores
def test_arena_reports_the_cores_each_side_had(capsys, tmp_path):
    first, second = sorted(os.sched_getaffinity(0))[:2]
    out = tmp_path / "arena.json"
    code = arena_main(
        [
            "random",
            "mcts",
            "--games",
            "2",
            "--move-time",
            "50",
            "--cores-per-player",
            "1",
            "--quiet",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert (
        f"cores per player 1, pinned (A on core {first}, B on core {second}); A random: 1 thread; "
        "B mcts: 1 search thread" in text
    ), text
    import json

    games = json.loads(out.read_text())["games"]
    assert [(g["a_cores"], g["b_cores"]) for g in games] == [([first], [second])] * 2
    assert sys.platform.startswith("linux")


@two_cores
def test_a_program_of_a_side_runs_on_that_sides_core(capsys, tmp_path):
    first, second = sorted(os.sched_getaffinity(0))[:2]
    said = tmp_path / "cores.txt"
    program = f"import os; open({str(said)!r}, 'a').write(str(sorted(os.sched_getaffinity(0))) + chr(10))"
    name = f"cmd:{sys.executable} -c {shlex.quote(program)}"  # it says where it runs and leaves without joining
    code = arena_main(
        [
            name,
            "random",
            "--games",
            "2",
            "--cores-per-player",
            "1",
            "--quiet",
            "--join-timeout",
            "20",
            "--logs",
            str(tmp_path / "logs"),
        ]
    )
    assert code == 1  # no game had a result: the program never joined
    assert said.read_text().splitlines() == [f"[{first}]", f"[{first}]"]  # A's core, in both seats
    assert f"A on core {first}, B on core {second}" in capsys.readouterr().out
