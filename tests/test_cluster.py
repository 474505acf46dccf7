"""Games on a real Dask cluster (issue 53.2/53.3): a scheduler and two workers as processes of their own on this
machine, a series through it, a worker killed mid-series (the series completes, every game once), a worker of
another version refused by name, ``--cluster`` without the extra, ``--cluster local:N``.

Needs the optional extra ``cluster`` (the ``test`` extra pulls it in, so CI runs these)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import wait_until_sync as wait_until
from tests.test_arena_match import CAP_S, read_until

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "DASK_DISTRIBUTED__LOGGING__DISTRIBUTED": "error"}


class Head:
    """A scheduler and its workers, each a process (group) of its own."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.file = folder / "scheduler.json"
        self.procs: dict[str, subprocess.Popen] = {}
        self.client: distributed.Client | None = None
        self.start("scheduler", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0")
        try:
            wait_until(self._written, timeout=CAP_S, message="the scheduler wrote its address")
            self.address = json.loads(self.file.read_text())["address"]
            self.client = distributed.Client(self.address, timeout=CAP_S)
        except BaseException:
            self.close()
            raise

    def _written(self) -> bool:
        try:
            return "address" in json.loads(self.file.read_text())
        except (OSError, ValueError):
            return False

    def start(self, name: str, module: str, *args: str, env: dict[str, str] | None = None) -> None:
        self.procs[name] = subprocess.Popen(
            [sys.executable, "-m", module, "--scheduler-file", str(self.file), "--no-dashboard", *args],
            stdout=subprocess.DEVNULL,
            stderr=open(self.folder / f"{name}.log", "wb"),  # noqa: SIM115 (closed with the process)
            env=env or ENV,
            cwd=self.folder,
            start_new_session=True,
        )

    def worker(self, name: str, env: dict[str, str] | None = None) -> None:
        self.start(name, "distributed.cli.dask_worker", "--nthreads", "1", "--no-nanny", "--name", name, env=env)

    def address_of(self, name: str) -> str:
        return next(a for a, w in self.client.scheduler_info(n_workers=-1)["workers"].items() if w["name"] == name)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture
def head(tmp_path: Path) -> Iterator[Head]:
    h = Head(tmp_path)
    try:
        yield h
    finally:
        h.close()


def blokus(*args: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "blokus", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        cwd=cwd,
        start_new_session=True,
    )


def test_a_worker_killed_mid_series_its_game_is_played_again_and_every_game_counts_once(head, tmp_path):
    head.worker("w1")
    head.worker("w2")
    head.client.wait_for_workers(2, timeout=CAP_S)
    out_json = tmp_path / "series.json"
    # lookahead-py thinks its whole move time: a game lasts a second or two, long enough to be killed in
    arena = blokus("arena", "lookahead-py", "greedy", "--games", "8", "--move-time", "30", "--cluster", head.address,
                   "--json", str(out_json), cwd=tmp_path)  # fmt: skip
    try:
        err = read_until(arena.stderr, b"] 1/8", CAP_S)  # a game finished
        victim = head.address_of("w1")
        wait_until(lambda: head.client.processing(workers=[victim]).get(victim), timeout=CAP_S)
        os.killpg(head.procs["w1"].pid, signal.SIGKILL)  # in the middle of a game
        out, rest = arena.communicate(timeout=CAP_S * 2)
    finally:
        if arena.poll() is None:
            os.killpg(arena.pid, signal.SIGKILL)
    err += rest
    assert arena.returncode == 0, err.decode()
    assert f"worker {victim} left the cluster (a game it was playing is played again".encode() in err
    data = json.loads(out_json.read_text())
    games = data["games"]
    assert sorted(g["index"] for g in games) == list(range(8))  # every game once: none lost, none twice
    assert not any(g["void"] for g in games)
    assert {g["worker"] for g in games} <= {"w1", "w2"} and "w2" in {g["worker"] for g in games}
    assert data["summary"]["games"] == 8
    assert b"8 games" in out


def test_a_tournament_on_the_cluster_records_each_games_worker(head, tmp_path):
    head.worker("w1")
    head.worker("w2")
    head.client.wait_for_workers(2, timeout=CAP_S)
    out_json = tmp_path / "t.json"
    run = blokus("tournament", "random", "greedy", "level2", "--games", "2", "--cluster", head.address,
                 "--json", str(out_json), "--resume", str(tmp_path / "j.jsonl"), cwd=tmp_path)  # fmt: skip
    out, err = run.communicate(timeout=CAP_S * 2)
    assert run.returncode == 0, err.decode()
    assert b"cluster: 2 workers (w1, w2)" in err and f"cluster {head.address}".encode() in out
    data = json.loads(out_json.read_text())
    assert data["games_finished"] == 6 and {g["worker"] for g in data["games"]} <= {"w1", "w2"}
    assert all(g["worker"] for g in data["games"])


def test_a_worker_of_another_version_is_refused_by_name(head, tmp_path):
    other = tmp_path / "other"
    # the package with its linked subpackages copied as folders (copytree follows the links)
    shutil.copytree(ROOT / "blokus", other / "blokus", ignore=shutil.ignore_patterns("__pycache__"))
    with open(other / "blokus" / "ai" / "arena" / "match.py", "a") as fh:
        fh.write("# another version\n")
    head.worker("old-pc", env={**ENV, "PYTHONPATH": str(other)})
    head.client.wait_for_workers(1, timeout=CAP_S)
    run = blokus("arena", "random", "greedy", "--cluster", head.address, cwd=tmp_path)
    out, err = run.communicate(timeout=CAP_S)
    line = err.decode().strip()
    assert run.returncode == 2 and len(line.splitlines()) == 1, line
    assert line.startswith("blokus arena: worker old-pc runs blokus-tui") and "install this version there" in line


def test_without_the_extra_cluster_is_one_line_naming_it(monkeypatch, capsys):
    from blokus.cli.arena import main as arena_main

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails as if not installed
    with pytest.raises(SystemExit) as exc:
        arena_main(["random", "greedy", "--cluster", "local:2"])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and len(err.splitlines()) == 1
    assert "pip install -e '.[cluster]'" in err


def test_a_local_cluster_plays_an_sprt_pair_by_pair(tmp_path):
    out_json = tmp_path / "sprt.json"
    run = blokus("arena", "greedy", "random", "--sprt", "0,200", "--games", "4", "--cluster", "local:2",
                 "--json", str(out_json), "--quiet", cwd=tmp_path)  # fmt: skip
    out, err = run.communicate(timeout=CAP_S * 2)
    assert run.returncode == 0, err.decode()
    data = json.loads(out_json.read_text())
    sprt = data["summary"]["sprt"]
    finished = [g for g in data["games"] if not g["void"]]
    assert sum(sprt["pentanomial"]) == sprt["pairs"] <= len(finished) // 2
    assert all(g["worker"].startswith("tcp://127.0.0.1:") for g in data["games"])
    assert b"cluster local:2" in out


def test_a_lost_scheduler_stops_the_series_in_one_line_with_the_finished_games(head, tmp_path):
    head.worker("w1")
    head.client.wait_for_workers(1, timeout=CAP_S)
    arena = blokus("arena", "lookahead-py", "greedy", "--games", "8", "--move-time", "30", "--cluster", head.address,
                   cwd=tmp_path)  # fmt: skip
    try:
        err = read_until(arena.stderr, b"] 1/8", CAP_S)
        os.killpg(head.procs["scheduler"].pid, signal.SIGKILL)
        out, rest = arena.communicate(timeout=CAP_S)
    finally:
        if arena.poll() is None:
            os.killpg(arena.pid, signal.SIGKILL)
    err += rest
    assert arena.returncode == 1, err.decode()
    assert b"the connection to the cluster's scheduler was lost)" in out and b"stopped after " in out
    assert b"Traceback" not in err and b"distributed" not in err
