"""The arena's games on a cluster (``blokus arena --cluster``, ``blokus tournament --cluster``): Dask distributed,
an optional extra (``pip install -e '.[cluster]'``) imported only here and only when a cluster is asked for.

Secure by default: every connection of the cluster (client, scheduler, workers, their nannies) is mutual TLS
with Dask's own :class:`distributed.security.Security` (``require_encryption``: a plain ``tcp://`` peer is
refused), each side showing a certificate of the cluster's own CA and checking the other's. Without one no
worker joins and no client submits (a task is code run on the workers: whoever may submit owns them).
``--cluster local:N`` starts a scheduler and N worker processes on this machine, all on the loopback
interface, with a key and certificate made for this run only (``Security.temporary``: in memory, never on
disk), their HTTP pages empty. ``--cluster tls://HOST:8786`` uses a running cluster started as the README
says: certificates made by ``blokus cluster-certs DIR`` (:func:`make_certificates`), ``dask scheduler`` with
the scheduler's certificate on one machine, and on every machine of the room ``dask worker tls://HOST:8786
--nworkers CORES --nthreads 1 --name NAME`` with the worker's, in an environment with this project installed
(the same version: a worker of another version is refused by name, see :func:`project_version`); the client
(this process) shows the client's certificate from ``--cluster-certs DIR``.

Each game is a task (``ai.arena.match.GameJob``, played on the worker as ``run_match`` plays it on this machine);
results come back as games finish, so the SPRT and the ratings move as pairs complete. Each game records the
worker that played it (``ArenaGame.worker``). At most as many games are submitted as the workers have
threads, each with its index as priority (the lowest first): when a worker is lost (killed, switched off,
restarted by its nanny), the scheduler names the games it held (its ``remove-worker`` event), runs them
again on another worker and, because nothing else waits in its queue, before any new game (a task has one
result: never counted twice); a game whose workers were lost four times (more than
``distributed.scheduler.allowed-failures``, 3) is void, with that reason. ``DaskSite.accounting`` names the
games lost, played again and not counted.

``cmd:`` and ``py:`` players are programs named by a path: that path must hold the same program on every
worker (a shared folder mounted at the same place, or a copy there). Before the first game every worker
checks the version and the players (programs there, files loadable, the compiled search ready); a worker
that fails is named with the reason and the series does not start. Their logs stay on the worker (the
``--logs`` folder, or a temporary one there).
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import logging
import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import CancelledError
from dataclasses import dataclass, field, replace
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from blokus.ai.arena.match import ArenaGame, GameJob, GameSpec, SideCores, SiteLost
from blokus.ai.players.registry import PlayerSpec
from blokus.model.text import printable
from blokus.net.external_arena import PROJECT_ROOT, ExternalGames, LogBudget

EXTRA = "pip install -e '.[cluster]'"
CHECK_TIMEOUT_S = 600.0  # a worker compiles the search on its first start (tens of seconds, more under load)
CONNECT_TIMEOUT_S = 30.0
POLL_S = 0.1  # how often the waiting loop looks up at the latest (Ctrl-C; a finished game wakes it at once)
LOST_SCHEDULER = "the connection to the cluster's scheduler was lost"
LIST_EVERY_S = 1.0  # how often the workers are listed (their threads: how many games may be submitted)
REASON_CHARS = 300  # a void game's reason from a worker: one line, at most this long
GAME_KEY = "blokus-game"

# the certificate folder of ``blokus cluster-certs`` (``--cluster-certs DIR``, or this variable)
CERTS_ENV = "BLOKUS_CLUSTER_CERTS"
CA_FILE = "ca.pem"
ROLES = ("scheduler", "worker", "client")
CERT_DAYS = 365


def cert_files(role: str) -> tuple[str, str]:
    """The certificate and the key of ``role`` (scheduler, worker, client) in a certificate folder."""
    return f"{role}.pem", f"{role}-key.pem"


class ClusterError(ValueError):
    """No cluster, or one that cannot play this series: one line."""


class WrongVersion(RuntimeError):
    """A worker with other code than this machine's (``args``: its address, the line): its games go elsewhere."""

    def __str__(self) -> str:
        return str(self.args[1])


def make_certificates(folder: Path, days: int = CERT_DAYS) -> list[Path]:
    """A cluster's own certificate authority and a key and certificate signed by it for each of the scheduler,
    the workers and the client, written to ``folder`` (made if missing; the keys readable by their owner only).
    The CA's key is used once and not kept: no further certificate of this cluster can be made (for another
    one, or when these expire after ``days``, make a new folder and hand it out again). ClusterError (one line)
    when ``folder`` holds certificates already or cannot be written."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError:
        raise ClusterError(f"the certificates need the package cryptography, of the extra 'cluster': {EXTRA}") from None
    names = [CA_FILE, *(name for role in ROLES for name in cert_files(role))]
    present = [name for name in names if (folder / name).exists()]
    if present:
        raise ClusterError(f"{folder} holds {', '.join(present)} already: make the certificates in a new folder")
    now = datetime.datetime.now(datetime.UTC)
    stamp = now.strftime("%Y-%m-%d %H:%M:%S")
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"blokus cluster CA {stamp}")])
    ca_id = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())

    def builder(subject: Any, public_key: Any) -> Any:
        return (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(ca_name)
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))  # a machine whose clock is a little behind
            .not_valid_after(now + datetime.timedelta(days=days))
        )

    ca = (
        builder(ca_name, ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(x509, signs=True), critical=True)
        .add_extension(ca_id, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    files: dict[str, bytes] = {CA_FILE: ca.public_bytes(serialization.Encoding.PEM)}
    for role in ROLES:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"blokus cluster {role}")])
        cert = (
            builder(subject, key.public_key())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_key_usage(x509, signs=False), critical=True)
            # every role both listens and connects (the scheduler to the workers, a worker to another)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                critical=False,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_id), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        cert_name, key_name = cert_files(role)
        files[cert_name] = cert.public_bytes(serialization.Encoding.PEM)
        files[key_name] = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    written = []
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        for name in names:
            path = folder / name
            mode = 0o600 if name.endswith("-key.pem") else 0o644
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
            with os.fdopen(fd, "wb") as fh:
                fh.write(files[name])
            written.append(path)
    except OSError as exc:
        raise ClusterError(f"cannot write the certificates to {folder}: {exc.strerror or exc}") from None
    return written


def _key_usage(x509: Any, signs: bool) -> Any:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=signs,
        crl_sign=signs,
        encipher_only=False,
        decipher_only=False,
    )


def client_security(folder: str) -> Any:
    """Dask's ``Security`` of the client from a certificate folder of ``blokus cluster-certs``: the CA and the
    client's certificate and key, encryption required. ClusterError (one line) when a file is missing."""
    from distributed.security import Security

    cert, key = cert_files("client")
    paths = [Path(folder, name) for name in (CA_FILE, cert, key)]
    missing = [p.name for p in paths if not p.is_file()]
    if missing:
        raise ClusterError(
            f"--cluster-certs {folder}: no {', '.join(missing)} there (made by blokus cluster-certs DIR)"
        )
    ca, cert_path, key_path = (str(p) for p in paths)
    security = Security(tls_ca_file=ca, tls_client_cert=cert_path, tls_client_key=key_path, require_encryption=True)
    try:
        security.get_connection_args("client")  # reads the files now: a broken one is one line here
    except (OSError, ValueError) as exc:
        raise ClusterError(f"--cluster-certs {folder}: the certificates cannot be read ({exc})") from None
    return security


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
    """On a worker: (its label, its version, what is wrong with a player there or ""). Never raises: an error
    of any kind is the third item (see :func:`_play`)."""
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
        except (ProgramError, ValueError) as exc:  # a line for the user
            return label, mine, _one_line(exc, named=False)
        except Exception as exc:
            return label, mine, _one_line(exc)
    return label, mine, ""


def _one_line(exc: BaseException, named: bool = True) -> str:
    """An error as one bounded printable line (``named``: after its type's name), whatever its ``str`` does."""
    try:
        text = f"{type(exc).__name__}: {exc}" if named else str(exc)
    except Exception:
        text = type(exc).__name__
    return printable(text, REASON_CHARS)


def _play(job: GameJob, expected: str) -> ArenaGame:
    """A game on a worker (a Dask task), refused if the worker runs another version. A game that fails on
    the worker comes back as a void game with the reason in one line, never as the error itself: Dask
    pickles a task's error to send it, and one it cannot pickle (a chain too deep, a cycle) leaves the task
    running for ever and the series silent."""
    from distributed import get_worker

    label, mine = _worker_label(), project_version()
    if mine != expected:
        raise WrongVersion(get_worker().address, f"worker {label} runs {mine}, not {expected}")
    try:
        game = job()
    except Exception as exc:
        why = _one_line(exc)  # outside the handler below: the error and its chain are let go here
    else:
        game.worker = label
        return game
    spec = job.spec
    return ArenaGame(
        spec.index,
        spec.start_piece,
        spec.a_team,
        0,
        0,
        0.5,
        0,
        void=f"it failed on worker {label}: {why}",
        worker=label,
    )


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


@dataclass
class _Run:
    """One ``DaskSite.run``: its games in flight by task key, the keys that finished (filled by Dask's callback
    thread), the games not submitted yet (in index order)."""

    token: str
    waiting: list[GameJob]
    pending: dict[str, tuple[Any, GameJob]] = field(default_factory=dict)
    ready: queue.SimpleQueue[str] = field(default_factory=queue.SimpleQueue)
    refused: set[str] = field(default_factory=set)


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
        self.lost_games: dict[int, list[str]] = {}  # game index -> the workers that left while they held it
        self.games: dict[int, ArenaGame] = {}  # every game that came back, by index
        self._left: queue.SimpleQueue[dict] = queue.SimpleQueue()
        # the scheduler says which tasks a worker held when it removes it (its event "remove-worker" on the
        # topic "all"): the games lost with it, exactly (a listing of the workers now and then would miss a
        # game started just before); Dask's thread puts them here, the loop of ``run`` takes them
        client.subscribe_topic("all", self._event)

    def _event(self, event: tuple[float, Any]) -> None:
        msg = event[1]
        if isinstance(msg, dict) and msg.get("action") == "remove-worker":
            self._left.put(msg)

    def run(self, jobs: list[GameJob], finished: Callable[[ArenaGame], bool]) -> None:
        """The games of ``jobs``, at most as many at a time as the workers have threads (lowest index first):
        nothing waits in the scheduler's queue but the games of a lost worker, so they start again before
        any new one."""
        now = _Run(f"{time.time_ns():x}", list(reversed(jobs)))  # popped from the end: index order
        interrupted = threading.Event()
        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGINT, lambda signum, frame: interrupted.set())
        capacity, listed, said_empty = self._capacity(now.refused), time.monotonic(), False
        try:
            while now.pending or now.waiting:
                if interrupted.is_set():
                    raise KeyboardInterrupt
                while not self._left.empty():
                    self._worker_left(self._left.get(), now)
                if time.monotonic() - listed > LIST_EVERY_S:
                    capacity, listed = self._capacity(now.refused), time.monotonic()
                    if capacity == 0 and not said_empty:
                        self.say("\nno worker is left in the cluster: the games wait for one")
                    said_empty = capacity == 0
                while now.waiting and len(now.pending) < capacity:
                    self._submit(now, now.waiting.pop())
                try:
                    key = now.ready.get(timeout=POLL_S)
                except queue.Empty:
                    continue
                if key not in now.pending:
                    continue
                future, job = now.pending.pop(key)
                game = self._outcome(future, job, now)
                if game is None:
                    continue
                self.games[game.index] = game
                if finished(game):
                    self.client.cancel([f for f, _ in now.pending.values()])
                    now.pending.clear()
                    now.waiting.clear()
        finally:
            if now.pending:
                with contextlib.suppress(Exception):  # games not started stay so; running ones end with their task
                    self.client.cancel([f for f, _ in now.pending.values()])
            if previous is not None:
                signal.signal(signal.SIGINT, previous)

    def _submit(self, now: _Run, job: GameJob) -> None:
        workers = [w for w in self._addresses() if w not in now.refused] if now.refused else None
        key = f"{GAME_KEY}-{now.token}-{job.spec.index}-{len(now.refused)}"
        future = self.client.submit(
            _play,
            _portable(job),
            self.version,
            key=key,
            pure=False,
            workers=workers,
            allow_other_workers=False,
            priority=-job.spec.index,  # Dask runs the highest first: a lost game before any later one
        )
        now.pending[key] = (future, job)
        future.add_done_callback(lambda f: now.ready.put(key))

    def _outcome(self, future: Any, job: GameJob, now: _Run) -> ArenaGame | None:
        from distributed.scheduler import KilledWorker

        if future.cancelled():  # not by us: the scheduler's state is gone
            raise SiteLost(LOST_SCHEDULER)
        try:
            # the game is unpickled here, from a connection of this client: TLS with a certificate of the
            # cluster's CA on both sides and encryption required (``Security.require_encryption``: Dask
            # refuses a plain tcp:// scheduler or worker), so only a holder of this cluster's certificates
            # can have sent it, never a stranger on the network
            return future.result()
        except WrongVersion as exc:
            worker = str(exc.args[0])
            if worker not in now.refused:
                now.refused.add(worker)
                self.refused.append(worker)
                self.say(f"\n{exc}: refused, its games go to the other workers")
            self._submit(now, job)
            return None
        except KilledWorker as exc:
            why = f"the workers playing it were lost (each time it started): {_one_line(exc, named=False)}"
        except CancelledError:
            raise SiteLost(LOST_SCHEDULER) from None
        except Exception as exc:  # a failure of our side on the worker: no result, never a point
            why = f"it failed on a worker: {_one_line(exc)}"
        spec = job.spec
        return ArenaGame(spec.index, spec.start_piece, spec.a_team, 0, 0, 0.5, 0, void=why)

    def _worker_left(self, msg: dict, now: _Run) -> None:
        address = str(msg.get("worker", "?"))
        self.lost.append(address)
        keys = {str(k) for k in (*msg.get("processing-tasks", ()), *msg.get("lost-computed-tasks", ()))}
        held = sorted(job.spec.index for key, (_, job) in now.pending.items() if key in keys)
        for index in held:
            self.lost_games.setdefault(index, []).append(address)
        if held:
            games = ", ".join(map(str, held))
            self.say(f"\nworker {address} left the cluster with game(s) {games}: played again before any new game")
        else:
            self.say(f"\nworker {address} left the cluster (it held no game)")

    def accounting(self) -> dict[str, list]:
        """The games lost with a worker, by index: played again (with a result), void (lost too often), not
        counted (the series ended before they were played again: an SPRT's verdict, Ctrl-C)."""
        lost = sorted(self.lost_games)
        back = [i for i in lost if i in self.games]
        return {
            "workers_lost": list(self.lost),
            "games_lost": lost,
            "played_again": [i for i in back if not self.games[i].void],
            "void": [i for i in back if self.games[i].void],
            "not_counted": [i for i in lost if i not in self.games],
        }

    def accounting_line(self) -> str:
        """``accounting`` in one line ("" when no game was lost)."""
        a = accounting = self.accounting()
        if not a["games_lost"]:
            return ""

        def listed(indices: list[int]) -> str:
            return f"{len(indices)} ({', '.join(map(str, indices))})" if indices else "0"

        workers = len(set(accounting["workers_lost"]))
        line = f"cluster: games lost with {workers} worker(s): {listed(a['games_lost'])}; "
        line += f"played again: {listed(a['played_again'])}; "
        if a["void"]:
            line += f"void (their workers lost four times): {listed(a['void'])}; "
        return line + f"not counted (the series ended before they were played again): {listed(a['not_counted'])}"

    def _capacity(self, refused: set[str]) -> int:
        """The threads of the workers that may play (one game each)."""
        return sum(w.get("nthreads", 1) for a, w in self._workers().items() if a not in refused)

    def _addresses(self) -> list[str]:
        return list(self._workers())

    def _workers(self) -> dict[str, dict]:
        try:
            workers = self.client.scheduler_info(n_workers=-1).get("workers")
        except Exception:
            workers = None
        if workers is None or self.client.status != "running":
            raise SiteLost(LOST_SCHEDULER)
        return dict(workers)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.unsubscribe_topic("all")
        with contextlib.suppress(Exception):
            self.client.close()
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.close()


def connect(address: str, players: list[PlayerSpec], say: Callable[[str], None], certs: str | None = None) -> DaskSite:
    """The cluster at ``address`` with every worker checked: the same version as this machine and every player
    playable there. ``local:N`` starts one here (loopback only, TLS with a key made for this run);
    ``tls://HOST:PORT`` connects with the client's certificate from the folder ``certs``; any other address
    (``tcp://``: no authentication, no encryption) is refused. ClusterError (one line) otherwise."""
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
            cluster = _local_cluster(address, LocalCluster)
            client = Client(cluster)  # with the cluster's security
        elif address.startswith("tls://"):
            if not certs:
                raise ClusterError(
                    f"--cluster {address}: the client's certificate of the cluster is needed: --cluster-certs DIR "
                    f"(or {CERTS_ENV}=DIR), the folder made by blokus cluster-certs DIR"
                )
            security = client_security(certs)
            try:
                client = Client(address, security=security, timeout=CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError, ValueError) as exc:
                raise ClusterError(
                    f"--cluster {address}: no scheduler there that accepts the certificates of {certs} "
                    f"({_one_line(exc, named=False)})"
                ) from None
        else:
            raise ClusterError(
                f"--cluster {address!r}: write tls://HOST:PORT (a scheduler and workers started with the "
                "certificates of blokus cluster-certs, as the README shows) or local:N; a cluster without TLS "
                "runs the code of anyone who reaches its port"
            )
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


def _local_cluster(address: str, local_cluster: Any) -> Any:
    """``local:N``: a scheduler (in this process) and N worker processes, each with its nanny, on the loopback
    interface only, mutual TLS with a key and certificate made now (in memory), the HTTP pages empty."""
    import dask
    from distributed.security import Security

    count = address.partition(":")[2]
    if not count.isdigit() or not 0 < int(count) <= 256:
        raise ClusterError(f"--cluster {address!r}: write local:N with N workers, e.g. local:2")
    try:
        security = Security.temporary()
    except ImportError:
        raise ClusterError(
            f"--cluster local:N needs the package cryptography, of the extra 'cluster': {EXTRA}"
        ) from None
    # no page on the scheduler's and workers' HTTP servers (Dask starts them in any case): on loopback anyway
    with dask.config.set({"distributed.scheduler.http.routes": [], "distributed.worker.http.routes": []}):
        return local_cluster(
            n_workers=int(count),
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            protocol="tls://",
            security=security,
            dashboard_address="127.0.0.1:0",
            worker_dashboard_address="127.0.0.1:0",
            silence_logs=logging.CRITICAL,
        )


def _checked(client: Any, cluster: Any, players: list[PlayerSpec], say: Callable[[str], None]) -> DaskSite:
    """``_check_all``, the scheduler lost meanwhile or another failure of Dask's one line (ClusterError)."""
    try:
        return _check_all(client, cluster, players, say)
    except ClusterError:
        raise
    except Exception as exc:
        if client.status != "running":
            raise ClusterError(f"{LOST_SCHEDULER} during the workers' check") from None
        raise ClusterError(f"the workers' check failed: {_one_line(exc)}") from None


def _check_all(client: Any, cluster: Any, players: list[PlayerSpec], say: Callable[[str], None]) -> DaskSite:
    from distributed import wait

    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
    except TimeoutError:
        raise ClusterError(f"no worker joined the cluster within {CONNECT_TIMEOUT_S:.0f} s") from None
    expected = project_version()
    addresses = list(client.scheduler_info(n_workers=-1)["workers"])
    plain = [a for a in addresses if not a.startswith("tls://")]
    if plain:
        raise ClusterError(f"worker {plain[0]} listens without TLS: start it with the worker's certificate (README)")
    checks = [
        client.submit(_check_worker, expected, players, workers=[a], allow_other_workers=False, pure=False)
        for a in addresses
    ]
    try:
        wait(checks, timeout=CHECK_TIMEOUT_S)
    except TimeoutError:
        raise ClusterError(f"the workers did not get ready within {CHECK_TIMEOUT_S:.0f} s") from None
    if client.status != "running" or any(check.cancelled() for check in checks):
        raise ClusterError(f"{LOST_SCHEDULER} during the workers' check")
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
