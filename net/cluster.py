"""The arena's games on a cluster (``blokus arena --cluster``, ``blokus tournament --cluster``): Dask distributed,
an optional extra (``pip install -e '.[cluster]'``) imported only here and only when a cluster is asked for.

``--cluster local:N`` starts a cluster of N worker processes on this machine (one game at a time each);
``--cluster tcp://HOST:8786`` uses a running one: ``dask scheduler`` on one machine, and on every machine of
the room ``dask worker tcp://HOST:8786 --nworkers CORES --nthreads 1 --name NAME`` in an environment with this
project installed (the same version: a worker of another version is refused by name, see
:func:`project_version`).

Each game is a task (``ai.arena.match.GameJob``, played on the worker as ``run_match`` plays it on this machine);
results come back as games finish (``as_completed``), so the SPRT and the ratings move as pairs complete.
Each game records the worker that played it (``ArenaGame.worker``). When a worker is lost mid-game, Dask's
scheduler runs the game again on another worker (a task has one result: never counted twice); a game whose
workers were lost four times (more than ``distributed.scheduler.allowed-failures``, 3) is void, with that reason.

``cmd:`` and ``py:`` players are programs named by a path: that path must hold the same program on every
worker (a shared folder mounted at the same place, or a copy there). Before the first game every worker
checks the version and the players (programs there, files loadable, the compiled search ready); a worker
that fails is named with the reason and the series does not start. Their logs stay on the worker (the
``--logs`` folder, or a temporary one there).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from blokus.ai.arena.match import ArenaGame, GameJob, GameSpec, SideCores, SiteLost
from blokus.ai.players.registry import PlayerSpec
from blokus.net.external_arena import PROJECT_ROOT, ExternalGames, LogBudget

EXTRA = "pip install -e '.[cluster]'"
CHECK_TIMEOUT_S = 600.0  # a worker compiles the search on its first start (tens of seconds, more under load)
CONNECT_TIMEOUT_S = 30.0
POLL_S = 0.1  # how often the waiting loop looks up (Ctrl-C, finished games, lost workers)
LOST_SCHEDULER = "the connection to the cluster's scheduler was lost"
LOST_EVERY_S = 1.0  # how often the workers are listed (to say which were lost)


class ClusterError(ValueError):
    """No cluster, or one that cannot play this series: one line."""


class WrongVersion(RuntimeError):
    """A worker with other code than this machine's (``args``: its address, the line): its games go elsewhere."""

    def __str__(self) -> str:
        return str(self.args[1])


@cache
def project_version() -> str:
    """The package version and a fingerprint of the project's source files: two machines with the same
    fingerprint play the same games (an edited file, another commit or release makes another one)."""
    digest = hashlib.sha256()
    root = Path(PROJECT_ROOT)
    # the project's code, blokus/ and its subpackages (links in a checkout: blokus/model -> ../model, ...)
    for folder, subfolders, files in os.walk(root / "blokus", followlinks=True):
        subfolders.sort()
        for name in sorted(f for f in files if f.endswith(".py")):
            path = Path(folder, name)
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    try:
        release = version("blokus-tui")
    except PackageNotFoundError:
        release = "unknown"
    return f"blokus-tui {release} ({digest.hexdigest()[:12]})"


def _worker_label() -> str:
    from distributed import get_worker

    worker = get_worker()
    return worker.name if isinstance(worker.name, str) and worker.name != worker.address else worker.address


def _check_worker(expected: str, players: list[PlayerSpec]) -> tuple[str, str, str]:
    """On a worker: (its label, its version, what is wrong with a player there or "")."""
    from blokus.ai.players.registry import compile_ahead
    from blokus.net.external import ProgramError, check_program

    label, mine = _worker_label(), project_version()
    if mine != expected:
        return label, mine, ""
    for spec in players:
        try:
            if spec.external:
                check_program(spec)
            else:
                spec.build(0)
                compile_ahead(spec)  # the first start compiles the search: now, not in a game's first move
        except (ProgramError, ValueError) as exc:
            return label, mine, str(exc)
    return label, mine, ""


def _play(job: GameJob, expected: str) -> ArenaGame:
    """A game on a worker (a Dask task), refused if the worker runs another version."""
    from distributed import get_worker

    label, mine = _worker_label(), project_version()
    if mine != expected:
        raise WrongVersion(get_worker().address, f"worker {label} runs {mine}, not {expected}")
    game = job()
    game.worker = label
    return game


@dataclass(frozen=True)
class RemoteExternal:
    """``ExternalGames`` as a task carries it (its locks and running games stay on each machine): rebuilt once
    per worker process, its logs in the same folder there (made if missing)."""

    a: PlayerSpec
    b: PlayerSpec
    log_dir: str
    join_timeout: float
    log_budget: int

    def __call__(self, spec: GameSpec, cores: SideCores | None = None) -> ArenaGame:
        return _external_games(self)(spec, cores)


_EXTERNAL: dict[RemoteExternal, ExternalGames] = {}
_EXTERNAL_LOCK = threading.Lock()


def _external_games(remote: RemoteExternal) -> ExternalGames:
    with _EXTERNAL_LOCK:
        games = _EXTERNAL.get(remote)
        if games is None:
            Path(remote.log_dir).mkdir(parents=True, exist_ok=True)
            budget = LogBudget(remote.log_dir, remote.log_budget)
            games = ExternalGames(remote.a, remote.b, remote.log_dir, join_timeout=remote.join_timeout, logs=budget)
            _EXTERNAL[remote] = games
        return games


def _portable(job: GameJob) -> GameJob:
    runner = job.runner
    if isinstance(runner, ExternalGames):
        remote = RemoteExternal(runner.a, runner.b, runner.log_dir, runner.join_timeout, runner.logs.total)
        return replace(job, runner=remote)
    return job


class DaskSite:
    """Where ``ai.arena.match.run_jobs`` plays its games when given ``--cluster`` (``ai.arena.match.GameSite``)."""

    def __init__(self, client: Any, cluster: Any, workers: list[str], say: Callable[[str], None]) -> None:
        """``say``: one line for the user (one said while games run starts with a newline)."""
        self.client = client
        self.cluster = cluster  # a LocalCluster of ours (closed with the site), or None
        self.workers = workers  # the labels of the workers checked at the start
        self.say = say
        self.lost: list[str] = []  # addresses of workers that left during the series
        self.refused: list[str] = []  # workers of another version that joined later
        self.version = project_version()

    def run(self, jobs: list[GameJob], finished: Callable[[ArenaGame], bool]) -> None:
        from distributed import as_completed

        token = f"{time.time_ns():x}"
        pending: dict[Any, GameJob] = {}
        done = as_completed()

        def submit(job: GameJob, avoid: frozenset[str] = frozenset()) -> None:
            workers = [w for w in self._addresses() if w not in avoid] if avoid else None
            future = self.client.submit(
                _play,
                _portable(job),
                self.version,
                key=f"blokus-game-{token}-{job.spec.index}-{len(avoid)}",
                pure=False,
                workers=workers,
                allow_other_workers=False,
            )
            pending[future] = job
            done.add(future)

        for job in jobs:
            submit(job)
        interrupted = threading.Event()
        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGINT, lambda signum, frame: interrupted.set())
        known = set(self._addresses())
        refused: set[str] = set()
        listed = time.monotonic()
        try:
            while pending:
                if interrupted.is_set():
                    raise KeyboardInterrupt
                if time.monotonic() - listed > LOST_EVERY_S:
                    listed = time.monotonic()
                    known = self._note_lost(known)
                if not done.has_ready():
                    time.sleep(POLL_S)
                    continue
                for future in done.next_batch(block=False):
                    if future not in pending:
                        continue
                    if future.cancelled():  # not by us: the scheduler's state is gone
                        raise SiteLost(LOST_SCHEDULER)
                    job = pending.pop(future)
                    game = self._outcome(future, job, refused, submit)
                    if game is not None and finished(game):
                        self.client.cancel(list(pending))
                        pending.clear()
                        break
        finally:
            if pending:
                with contextlib.suppress(Exception):  # games not started stay so; running ones end with their task
                    self.client.cancel(list(pending))
            if previous is not None:
                signal.signal(signal.SIGINT, previous)

    def _outcome(
        self, future: Any, job: GameJob, refused: set[str], submit: Callable[[GameJob, frozenset[str]], None]
    ) -> ArenaGame | None:
        from distributed.scheduler import KilledWorker

        try:
            return future.result()
        except WrongVersion as exc:
            worker = str(exc.args[0])
            if worker not in refused:
                refused.add(worker)
                self.refused.append(worker)
                self.say(f"\n{exc}: refused, its games go to the other workers")
            submit(job, frozenset(refused))
            return None
        except KilledWorker as exc:
            why = f"the workers playing it were lost (each time it started): {exc}"
        except Exception as exc:  # a failure of our side on the worker: no result, never a point
            why = f"it failed on a worker: {type(exc).__name__}: {exc}"
        spec = job.spec
        return ArenaGame(spec.index, spec.start_piece, spec.a_team, 0, 0, 0.5, 0, void=why)

    def _addresses(self) -> list[str]:
        try:
            workers = self.client.scheduler_info(n_workers=-1).get("workers")
        except Exception:
            workers = None
        if workers is None or self.client.status != "running":
            raise SiteLost(LOST_SCHEDULER)
        return list(workers)

    def _note_lost(self, known: set[str]) -> set[str]:
        now = set(self._addresses())
        for address in sorted(known - now):
            self.lost.append(address)
            self.say(f"\nworker {address} left the cluster (a game it was playing is played again on another worker)")
        return now

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.close()


def connect(address: str, players: list[PlayerSpec], say: Callable[[str], None]) -> DaskSite:
    """The cluster at ``address`` (``local:N`` starts one here) with every worker checked: the same version as
    this machine and every player playable there. ClusterError (one line) otherwise."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ClusterError(f"--cluster needs Dask distributed, the optional extra 'cluster': {EXTRA}") from None
    # Dask's own log lines (tracebacks of a lost connection, a restarted worker) are not ours to print: what
    # happens is said in one line each (a lost worker, a lost scheduler)
    for name in ["distributed", *logging.root.manager.loggerDict]:
        if name.split(".")[0] == "distributed":
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    cluster = None
    try:
        if address.startswith("local:"):
            count = address.partition(":")[2]
            if not count.isdigit() or not 0 < int(count) <= 256:
                raise ClusterError(f"--cluster {address!r}: write local:N with N workers, e.g. local:2")
            cluster = LocalCluster(
                n_workers=int(count),
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",  # any free port (the dashboard itself needs bokeh: not installed)
                silence_logs=logging.CRITICAL,
            )
            client = Client(cluster)
        else:
            try:
                client = Client(address, timeout=CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError, ValueError) as exc:
                raise ClusterError(f"--cluster {address!r}: no scheduler there ({exc})") from None
        try:
            site = _checked(client, cluster, players, say)
        except BaseException:
            client.close()
            raise
    except BaseException:
        if cluster is not None:
            cluster.close()
        raise
    return site


def _checked(client: Any, cluster: Any, players: list[PlayerSpec], say: Callable[[str], None]) -> DaskSite:
    from distributed import wait

    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
    except TimeoutError:
        raise ClusterError(f"no worker joined the cluster within {CONNECT_TIMEOUT_S:.0f} s") from None
    expected = project_version()
    addresses = list(client.scheduler_info(n_workers=-1)["workers"])
    checks = [
        client.submit(_check_worker, expected, players, workers=[a], allow_other_workers=False, pure=False)
        for a in addresses
    ]
    try:
        wait(checks, timeout=CHECK_TIMEOUT_S)
    except TimeoutError:
        raise ClusterError(f"the workers did not get ready within {CHECK_TIMEOUT_S:.0f} s") from None
    problems, labels = [], []
    for address, check in zip(addresses, checks, strict=True):
        if check.status != "finished":
            problems.append(f"worker {address} was lost during its check")
            continue
        label, theirs, wrong = check.result()
        labels.append(label)
        if theirs != expected:
            problems.append(f"worker {label} runs {theirs}, not {expected} (install this version there)")
        elif wrong:
            problems.append(f"worker {label}: {wrong}")
    if problems:
        raise ClusterError("; ".join(problems))
    say(f"cluster: {len(labels)} workers ({', '.join(sorted(labels))}), {expected}")
    return DaskSite(client, cluster, labels, say)
