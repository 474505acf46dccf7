"""Games on a real Dask cluster (issues 53.2/53.3, 61.5/61.6, 64.2): a scheduler and workers as processes of their
own on this machine's loopback, mutual TLS with the certificates of ``blokus cluster-certs``; a series through
it, a worker killed mid-game (every game it held played again, every game once, the report names them), a
worker of another version refused by name, a worker or a client without the cluster's certificate refused, a
tcp:// address refused, the scheduler lost during the workers' check or mid-series in one line, an error the
worker cannot pickle back a void game in one line, ``--cluster local:N`` on loopback only.

Needs the optional extra ``cluster`` (the ``test`` extra pulls it in, so CI runs these)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import wait_until_sync as wait_until
from tests.test_arena_match import CAP_S, read_until

distributed = pytest.importorskip("distributed")
pytest.importorskip("cryptography")

from blokus.net.cluster import make_certificates  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "DASK_DISTRIBUTED__LOGGING__DISTRIBUTED": "error"}
ENV.pop("BLOKUS_CLUSTER_CERTS", None)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("certs") / "cluster"
    make_certificates(folder)
    return folder


@pytest.fixture(scope="module")
def stranger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The certificates of another cluster (a CA of its own): what an attacker can make."""
    folder = tmp_path_factory.mktemp("certs") / "stranger"
    make_certificates(folder)
    return folder


def tls(folder: Path, role: str) -> list[str]:
    return ["--tls-ca-file", str(folder / "ca.pem"), "--tls-cert", str(folder / f"{role}.pem"),
            "--tls-key", str(folder / f"{role}-key.pem")]  # fmt: skip


def security(folder: Path) -> distributed.security.Security:
    return distributed.security.Security(
        tls_ca_file=str(folder / "ca.pem"), tls_client_cert=str(folder / "client.pem"),
        tls_client_key=str(folder / "client-key.pem"), require_encryption=True,
    )  # fmt: skip


class Head:
    """A scheduler and its workers, each a process (group) of its own."""

    def __init__(self, folder: Path, certs: Path) -> None:
        self.folder = folder
        self.certs = certs
        self.file = folder / "scheduler.json"
        self.procs: dict[str, subprocess.Popen] = {}
        self.client: distributed.Client | None = None
        self.start("scheduler", "distributed.cli.dask_scheduler", "--host", "tls://127.0.0.1", "--port", "0",
                   *tls(certs, "scheduler"))  # fmt: skip
        try:
            wait_until(self._written, timeout=CAP_S, message="the scheduler wrote its address")
            self.address = json.loads(self.file.read_text())["address"]
            assert self.address.startswith("tls://127.0.0.1:")
            self.client = distributed.Client(self.address, timeout=CAP_S, security=security(certs))
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

    def worker(self, name: str, *args: str, env: dict[str, str] | None = None, certs: Path | None = None) -> None:
        self.start(name, "distributed.cli.dask_worker", "--nthreads", "1", "--name", name, "--host", "127.0.0.1",
                   *tls(certs or self.certs, "worker"), *args, env=env)  # fmt: skip

    def address_of(self, name: str) -> str:
        return next(a for a, w in self.client.scheduler_info(n_workers=-1)["workers"].items() if w["name"] == name)

    def end_workers(self) -> None:
        """Every process but the scheduler ended, and the scheduler without workers again."""
        for name in [n for n in self.procs if n != "scheduler"]:
            proc = self.procs.pop(name)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)  # a nanny's group: the worker it started again too
            proc.wait()
        assert self.client is not None
        wait_until(lambda: not self.client.scheduler_info(n_workers=-1)["workers"], timeout=CAP_S,
                   message="the scheduler saw its workers go")  # fmt: skip

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def shared_head(tmp_path_factory: pytest.TempPathFactory, certs: Path) -> Iterator[Head]:
    h = Head(tmp_path_factory.mktemp("head"), certs)
    try:
        yield h
    finally:
        h.close()


@pytest.fixture
def head(shared_head: Head) -> Iterator[Head]:
    """The module's scheduler (one start, ~2 s of CPU, for the tests that keep it alive); the workers are the
    test's own: they end with it, and the next test finds a scheduler without workers."""
    assert shared_head.procs["scheduler"].poll() is None
    try:
        yield shared_head
    finally:
        shared_head.end_workers()


@pytest.fixture
def own_head(tmp_path: Path, certs: Path) -> Iterator[Head]:
    """A scheduler of the test's own: for the tests that kill it."""
    h = Head(tmp_path, certs)
    try:
        yield h
    finally:
        h.close()


def blokus(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "blokus", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env or ENV,
        cwd=cwd,
        start_new_session=True,
    )


def certs_of(head: Head) -> list[str]:
    return ["--cluster", head.address, "--cluster-certs", str(head.certs)]


def test_a_worker_killed_mid_game_its_games_are_played_again_first_and_every_game_counts_once(head, tmp_path):
    head.worker("w1")  # with its nanny, which starts it again when it dies
    head.worker("w2", "--no-nanny")
    head.client.wait_for_workers(2, timeout=CAP_S)
    out_json = tmp_path / "series.json"
    # lookahead-py thinks its whole move time: a game lasts a second or two, long enough to be killed in
    arena = blokus("arena", "lookahead-py", "greedy", "--games", "8", "--move-time", "30", "--json", str(out_json),
                   *certs_of(head), cwd=tmp_path)  # fmt: skip
    try:
        err = read_until(arena.stderr, b"] 1/8", CAP_S)  # a game finished
        victim = head.address_of("w1")
        # in the middle of a game: the scheduler has given w1 one
        wait_until(lambda: head.client.processing(workers=[victim]).get(victim), timeout=CAP_S)
        held = {int(k.split("-")[-2]) for k in head.client.processing(workers=[victim])[victim]}
        os.kill(head.client.run(os.getpid, workers=[victim])[victim], signal.SIGKILL)
        out, rest = arena.communicate(timeout=CAP_S * 2)
    finally:
        if arena.poll() is None:
            os.killpg(arena.pid, signal.SIGKILL)
    err += rest
    assert arena.returncode == 0, err.decode()
    assert f"worker {victim} left the cluster with game(s) ".encode() in err
    data = json.loads(out_json.read_text())
    games = data["games"]
    assert sorted(g["index"] for g in games) == list(range(8))  # every game once: none lost, none twice
    assert not any(g["void"] for g in games)
    assert {g["worker"] for g in games} <= {"w1", "w2"} and "w2" in {g["worker"] for g in games}
    assert data["summary"]["games"] == 8
    lost = data["summary"]["cluster"]
    assert held <= set(lost["games_lost"]) and lost["played_again"] == lost["games_lost"] and not lost["not_counted"]
    assert lost["workers_lost"] == [victim]
    listed = ", ".join(map(str, lost["games_lost"]))
    assert f"cluster: games lost with 1 worker(s): {len(lost['games_lost'])} ({listed}); played again: ".encode() in out
    assert b"not counted (the series ended before they were played again): 0" in out
    assert b"8 games" in out


def test_a_tournament_on_the_cluster_records_each_games_worker(head, tmp_path):
    head.worker("w1", "--no-nanny")
    head.worker("w2", "--no-nanny")
    head.client.wait_for_workers(2, timeout=CAP_S)
    out_json = tmp_path / "t.json"
    run = blokus("tournament", "random", "greedy", "level2", "--games", "2", "--json", str(out_json),
                 "--resume", str(tmp_path / "j.jsonl"), *certs_of(head), cwd=tmp_path)  # fmt: skip
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
    head.worker("old-pc", "--no-nanny", env={**ENV, "PYTHONPATH": str(other)})
    head.client.wait_for_workers(1, timeout=CAP_S)
    run = blokus("arena", "random", "greedy", *certs_of(head), cwd=tmp_path)
    out, err = run.communicate(timeout=CAP_S)
    line = err.decode().strip()
    assert run.returncode == 2 and len(line.splitlines()) == 1, line
    assert line.startswith("blokus arena: worker old-pc runs blokus-tui") and "install this version there" in line


def test_a_worker_without_the_clusters_certificate_never_joins(head, stranger):
    # one with the certificate of another CA (any attacker can make one), one with none at all: each tries
    # until its death timeout and ends; the scheduler never had a worker
    head.worker("rogue", "--no-nanny", "--death-timeout", "3", certs=stranger)
    head.start("anonymous", "distributed.cli.dask_worker", "--no-nanny", "--death-timeout", "3", "--name", "anonymous")
    for name in ("rogue", "anonymous"):
        assert head.procs[name].wait(timeout=CAP_S) != 0
    assert head.client.scheduler_info(n_workers=-1)["workers"] == {}
    head.worker("ours", "--no-nanny")  # the same scheduler takes a worker with the cluster's certificate
    head.client.wait_for_workers(1, timeout=CAP_S)
    assert [w["name"] for w in head.client.scheduler_info(n_workers=-1)["workers"].values()] == ["ours"]


def _arena_here(capsys, *args: str) -> tuple[int, str]:
    """``blokus arena ARGS`` in this process (its exit code and stderr): a refusal before any connection needs no
    process of its own (an interpreter's start, ~2 s of CPU); one of them runs as one below."""
    from blokus.cli.arena import main as arena_main

    capsys.readouterr()
    try:
        code = arena_main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


def test_a_client_without_the_clusters_certificate_cannot_connect(head, stranger, tmp_path, capsys, monkeypatch):
    for attempt in (security(stranger), None):  # another CA's certificate; plain tcp to the TLS port
        address = head.address if attempt is not None else head.address.replace("tls://", "tcp://")
        with pytest.raises((OSError, TimeoutError)):
            distributed.Client(address, security=attempt, timeout=3).close()
    # blokus without the folder, or with a tcp:// address: one line each, before any connection
    run = blokus("arena", "random", "greedy", "--cluster", head.address, cwd=tmp_path)
    out, err = run.communicate(timeout=CAP_S)
    line = err.decode().strip()
    assert run.returncode == 2 and len(line.splitlines()) == 1 and b"Traceback" not in err, line
    assert "--cluster-certs DIR" in line
    monkeypatch.delenv("BLOKUS_CLUSTER_CERTS", raising=False)  # as ENV, which the processes get
    code, text = _arena_here(capsys, "random", "greedy", "--cluster", head.address.replace("tls://", "tcp://"))
    line = text.strip()
    assert code == 2 and len(line.splitlines()) == 1 and "Traceback" not in line, line
    assert "write tls://HOST:PORT" in line
    code, text = _arena_here(capsys, "random", "greedy", "--cluster", head.address, "--cluster-certs", str(tmp_path))
    assert code == 2 and text.strip() == (
        f"blokus arena: --cluster-certs {tmp_path}: no ca.pem, client.pem, client-key.pem there "
        "(made by blokus cluster-certs DIR)"
    )


def test_cluster_certs_makes_a_ca_and_the_three_certificates_once(tmp_path):
    from blokus.cli.cluster_certs import main

    folder = tmp_path / "c"
    assert main([str(folder)]) == 0
    names = {p.name for p in folder.iterdir()}
    assert names == {"ca.pem", *(f"{r}{e}" for r in ("scheduler", "worker", "client") for e in (".pem", "-key.pem"))}
    for name in names:  # the keys readable by their owner only; no CA key kept
        mode = stat.S_IMODE((folder / name).stat().st_mode)
        assert mode == (0o600 if name.endswith("-key.pem") else 0o644), name
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    ctx = security(folder).get_connection_args("client")["ssl_context"]  # Dask loads them
    assert ctx.verify_mode.name == "CERT_REQUIRED"
    assert main([str(folder)]) == 2  # never over an existing cluster's


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
    assert all(g["worker"].startswith("tls://127.0.0.1:") for g in data["games"])
    assert b"cluster local:2" in out


class DeepError:
    """A runner whose error Dask cannot pickle (a chain of causes far deeper than the recursion limit)."""

    def __call__(self, spec: object, cores: object = None) -> object:
        error = top = RuntimeError("the top")
        for i in range(50_000):
            error.__cause__ = RuntimeError(f"cause {i}\nwith a second line")
            error = error.__cause__
        raise top


def test_local_cluster_listens_on_loopback_only_and_an_error_it_cannot_pickle_is_a_void_game(capsys):
    import psutil

    from blokus.ai.arena.match import GameJob, GameSpec
    from blokus.net.cluster import connect

    us = psutil.Process()
    before = {p.pid for p in us.children(recursive=True)}  # another test's scheduler (the module's) is not ours
    site = connect("local:1", [], print)
    try:
        listening = [
            c.laddr
            for p in (us, *(child for child in us.children(recursive=True) if child.pid not in before))
            for c in p.net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN
        ]
        assert len(listening) >= 4  # the scheduler, its HTTP server, the nanny, the worker and its HTTP server
        assert {a.ip for a in listening} == {"127.0.0.1"}, listening
        assert all(a.startswith("tls://127.0.0.1:") for a in site.client.scheduler_info(n_workers=-1)["workers"])
        games = []
        site.run([GameJob(GameSpec(0, "PENTO_X", 0, 1, 0.1), runner=DeepError())], lambda g: games.append(g) or False)
    finally:
        site.close()
    [game] = games
    assert game.void.startswith("it failed on worker tls://127.0.0.1:") and "RuntimeError: the top" in game.void
    assert "\n" not in game.void and len(game.void) < 400


HANGS_ON_THE_WORKER = """\
import os
import time

from blokus.player import Player

if os.environ.get("BLOKUS_TEST_HANG"):
    time.sleep(3600)


class Mine(Player):
    def calculate_move(self):
        return next(iter(self.game_state.legal_moves()))
"""


def test_a_lost_scheduler_during_the_workers_check_is_one_line(own_head, tmp_path):
    # a player whose file loads here but never finishes loading on the worker: its check waits for it
    own_head.worker("w1", "--no-nanny", env={**ENV, "BLOKUS_TEST_HANG": "1"})
    own_head.client.wait_for_workers(1, timeout=CAP_S)
    hangs = tmp_path / "hangs.py"
    hangs.write_text(HANGS_ON_THE_WORKER)
    arena = blokus("arena", f"py:{hangs}", "greedy", *certs_of(own_head), cwd=tmp_path)
    try:
        worker = own_head.address_of("w1")
        wait_until(lambda: own_head.client.processing(workers=[worker]).get(worker), timeout=CAP_S)  # the check runs
        os.killpg(own_head.procs["scheduler"].pid, signal.SIGKILL)
        out, err = arena.communicate(timeout=CAP_S)
    finally:
        if arena.poll() is None:
            os.killpg(arena.pid, signal.SIGKILL)
    *said, line = err.decode().strip().splitlines()  # (said first: where the programs' logs go)
    assert arena.returncode == 2 and b"Traceback" not in err, err.decode()
    assert line == "blokus arena: the connection to the cluster's scheduler was lost during the workers' check"


def test_a_lost_scheduler_stops_the_series_in_one_line_with_the_finished_games(own_head, tmp_path):
    own_head.worker("w1", "--no-nanny")
    own_head.client.wait_for_workers(1, timeout=CAP_S)
    arena = blokus("arena", "lookahead-py", "greedy", "--games", "8", "--move-time", "30", *certs_of(own_head),
                   cwd=tmp_path)  # fmt: skip
    try:
        err = read_until(arena.stderr, b"] 1/8", CAP_S)
        os.killpg(own_head.procs["scheduler"].pid, signal.SIGKILL)
        out, rest = arena.communicate(timeout=CAP_S)
    finally:
        if arena.poll() is None:
            os.killpg(arena.pid, signal.SIGKILL)
    err += rest
    assert arena.returncode == 1, err.decode()
    assert b"the connection to the cluster's scheduler was lost)" in out and b"stopped after " in out
    assert b"Traceback" not in err and b"distributed" not in err, err.decode()
