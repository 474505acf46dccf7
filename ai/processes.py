"""The one way the project starts and stops a process (``cmd:`` programs, GTP engines, compile workers) and
keeps its helper processes from outliving it (the engine worker, a server's encoder workers).

* :func:`start` runs a program in **its own session** (so its own process group), with stdin/stdout/stderr
  from a pipe, a file (capped by RLIMIT_FSIZE: a program that floods its log gets SIGXFSZ, never a full disk)
  or nothing, with a parent-death signal (Linux) and a **token** in its environment that its descendants
  inherit. :meth:`Child.stop` ends it: ask (a callback: close stdin, send ``quit``), wait, SIGTERM to the
  group, wait, SIGKILL to the group and to every process still carrying its token (also after ``setsid``
  or a double fork), reap — each step with its timeout.
* :func:`become_subreaper` makes this process adopt its orphaned descendants (Linux
  ``PR_SET_CHILD_SUBREAPER``); :func:`end_orphans` ends and reaps the adopted ones (a detached grandchild
  that cleared its environment), called when no started child is live and at exit.
* :func:`die_with_parent` (first call of a helper process: a multiprocessing worker, a fork server) makes it
  end when its parent dies and gives back the parent's standard streams (:func:`release_std_streams`), so
  a harness waiting for the parent's output is not kept waiting by a helper after ``kill -9``.

Children are started from one long-lived thread: Linux's parent-death signal fires when the *thread* that
forked the child ends, and the threads that ask for a start (a game's server thread) come and go.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import ctypes
import ctypes.util
import logging
import multiprocessing.process
import os
import resource
import signal
import subprocess
import sys
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

log = logging.getLogger(__name__)

TOKEN_ENV = "BLOKUS_PROCESS_TOKEN"  # inherited by a child's descendants: how they are found at its end
ASK_GRACE_S = 1.0  # after asking: time to leave by itself
TERM_GRACE_S = 2.0  # SIGTERM → SIGKILL
REAP_S = 5.0  # after SIGKILL: a process in uninterruptible sleep may take a moment
POLL_S = 0.02

_PR_SET_PDEATHSIG = 1
_PR_GET_DUMPABLE = 3
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_LINUX = sys.platform.startswith("linux")

Stream = Path | Literal["pipe", "null", "inherit"]


class StartError(OSError):
    """The program could not be started (not found, not executable, a broken interpreter line): one line."""


# --- the kernel's help (Linux), one line elsewhere ------------------------------------------------------


def _prctl() -> Callable[..., int] | None:
    if not _LINUX:
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()
_said: set[str] = set()


def _once(text: str) -> None:
    if text not in _said:
        _said.add(text)
        log.warning("%s", text)


def become_subreaper() -> bool:
    """Adopt this process's orphaned descendants (instead of init), so that :func:`end_orphans` can end
    them. True where the kernel offers it (Linux)."""
    if _PRCTL is not None and _PRCTL(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
        return True
    _once("no child subreaper here (Linux only): a program's detached descendants are found by their token only")
    return False


def keep_private() -> bool:
    """Make this process unreadable to the other processes of its user: its memory, file descriptors and
    environment (``/proc/PID/mem``, ``fd``, ``environ``) and tracing it (``ptrace``, ``pidfd_getfd``) need
    privileges from now on (Linux ``PR_SET_DUMPABLE`` 0; also no core dump). True where the kernel offers it."""
    if _PRCTL is not None and _PRCTL(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0:
        return _PRCTL(_PR_GET_DUMPABLE, 0, 0, 0, 0) == 0
    _once("cannot keep this process private from the user's other processes (Linux only)")
    return False


def die_with_parent(parent: int | None = None, sig: int = signal.SIGKILL, *, release_streams: bool = True) -> None:
    """In a helper process: end with ``sig`` when the parent (pid ``parent``, default the current one) dies,
    and (``release_streams``) let go of the parent's stdout and stderr. Exits at once if the parent is gone."""
    expected = os.getppid() if parent is None else parent
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    else:
        _watch_parent(expected)
    if release_streams:
        release_std_streams()
    if os.getppid() != expected:  # died before the signal was armed
        os._exit(1)


def _watch_parent(parent: int) -> None:
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def release_std_streams() -> None:
    """Point this process's stdin, stdout and stderr at /dev/null (Python's writes to them are dropped)."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        if null > 2:
            os.close(null)


# --- finding processes ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str


def _info(pid: int) -> ProcInfo | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # after the command name, which may hold spaces
    if len(fields) < 4:
        return None
    return ProcInfo(pid, int(fields[1]), int(fields[2]), int(fields[3]), fields[0])


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _has_token(pid: int, token: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return token in fh.read().split(b"\0")
    except OSError:
        return False


def group_members(pgid: int) -> list[int]:
    """The live processes of group ``pgid`` (zombies count as ended). Without /proc: the group if it exists."""
    if not os.path.isdir("/proc"):
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return []
        return [pgid]
    return [i.pid for i in map(_info, _pids()) if i is not None and i.pgid == pgid and i.state not in "ZX"]


def token_members(token: str) -> list[int]:
    """The live processes carrying ``token`` in their environment (this user's; /proc only)."""
    key = f"{TOKEN_ENV}={token}".encode()
    me = os.getpid()
    found = []
    for pid in _pids():
        if pid != me and _has_token(pid, key):
            info = _info(pid)
            if info is not None and info.state not in "ZX":
                found.append(pid)
    return found


# --- one child ----------------------------------------------------------------------------------------------

_live: weakref.WeakSet[Child] = weakref.WeakSet()
_known: set[int] = set()  # pids started here (reaped by their Popen, never by end_orphans)
_spawner = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="blokus-spawner")
_subreaper = False


def _open(stream: Stream, write: bool) -> int | IO | None:
    if stream == "pipe":
        return subprocess.PIPE
    if stream == "null":
        return subprocess.DEVNULL
    if stream == "inherit":
        return None
    stream.parent.mkdir(parents=True, exist_ok=True)
    return open(stream, "wb" if write else "rb")  # noqa: SIM115 (closed after the start)


class Child:
    """A started program: its Popen, its session, its token; :meth:`stop` ends all of it."""

    def __init__(self, popen: subprocess.Popen, argv: list[str], token: str) -> None:
        self.popen = popen
        self.argv = argv
        self.token = token
        self.pid = popen.pid
        self.started_at = time.monotonic()
        self.exited_at: float | None = None
        self.stopped = False
        self.suspended = False  # it was stopped by a signal (SIGSTOP, SIGTSTP …) at some time: see suspended_yet

    # the streams, when started with "pipe"
    @property
    def stdin(self) -> IO | None:
        return self.popen.stdin

    @property
    def stdout(self) -> IO | None:
        return self.popen.stdout

    def poll(self) -> int | None:
        """The exit code once it has ended (negative: the signal), else None."""
        code = self.popen.poll()
        if code is not None and self.exited_at is None:
            self.exited_at = time.monotonic()
        return code

    def suspended_yet(self) -> bool:
        """Whether it has been stopped by a signal since it started (and perhaps continued since): the
        kernel keeps a stop, and a continue after it, for the parent until it looks (``waitid``), so a look
        now and then sees every stop of a process that is still running. Its exit is left to ``poll``."""
        if not self.suspended and self.exited_at is None:
            try:
                seen = os.waitid(os.P_PID, self.pid, os.WSTOPPED | os.WCONTINUED | os.WNOHANG)
            except (ChildProcessError, OSError):  # ended (its exit is not ours to take here)
                seen = None
            self.suspended = seen is not None
        return self.suspended

    def wait(self, timeout: float | None) -> int | None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout)
        return self.poll()

    def members(self) -> list[int]:
        """Its live processes: its group and whatever carries its token (also in other sessions)."""
        return sorted({*group_members(self.pid), *token_members(self.token)})

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)
        for pid in token_members(self.token):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)

    def _wait_gone(self, until: float) -> bool:
        while True:
            self.poll()
            if not self.members():
                return True
            if time.monotonic() >= until:
                return False
            time.sleep(POLL_S)

    def stop(
        self,
        ask: Callable[[Child], None] | None = None,
        *,
        ask_grace: float = ASK_GRACE_S,
        term_grace: float = TERM_GRACE_S,
    ) -> int | None:
        """End it and everything it started: ``ask`` (if given; its errors are ignored) and wait up to
        ``ask_grace`` s, SIGTERM and wait up to ``term_grace`` s, then SIGKILL; reap. Returns the exit code
        (negative: the signal). Safe to call again."""
        if not self.stopped:
            _escalate(
                (lambda: ask(self)) if ask is not None and self.poll() is None else None,
                lambda until: self._wait_gone(until),
                self._signal,
                (ask_grace, term_grace),
            )
            self.wait(REAP_S)
            for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
            self.stopped = True
            _live.discard(self)
            _known.discard(self.pid)
            if not _live:
                end_orphans()
        return self.poll()


def _escalate(
    ask: Callable[[], None] | None,
    gone_by: Callable[[float], bool],
    send: Callable[[int], None],
    graces: tuple[float, float],
) -> None:
    """The one stop sequence: ask and wait, SIGTERM and wait, SIGKILL (a few times: a fork in flight may
    add a process between two looks) and wait. ``gone_by(until)`` waits until nothing is left or ``until``."""
    ask_grace, term_grace = graces
    if ask is not None:
        with contextlib.suppress(Exception):
            ask()
        if gone_by(time.monotonic() + ask_grace):
            return
    if gone_by(time.monotonic()):
        return
    send(signal.SIGTERM)
    if gone_by(time.monotonic() + term_grace):
        return
    for _ in range(3):
        send(signal.SIGKILL)
        if gone_by(time.monotonic() + REAP_S / 3):
            return


def stop_worker(
    process: multiprocessing.process.BaseProcess,
    ask: Callable[[], None] | None = None,
    *,
    ask_grace: float = ASK_GRACE_S,
    term_grace: float = TERM_GRACE_S,
) -> int | None:
    """The stop sequence for a ``multiprocessing`` worker (it shares our session; it has no group of its
    own): ask, terminate, kill, join. Its exit code."""

    def gone_by(until: float) -> bool:
        process.join(max(0.0, until - time.monotonic()))
        return not process.is_alive()

    def send(sig: int) -> None:
        with contextlib.suppress(Exception):
            process.kill() if sig == signal.SIGKILL else process.terminate()

    if process.pid is not None:
        _escalate(ask if process.is_alive() else None, gone_by, send, (ask_grace, term_grace))
    return process.exitcode


Cores = tuple[int, ...] | frozenset[int] | set[int]  # CPU numbers (``os.sched_setaffinity``)


def thread_cores() -> set[int] | None:
    """The cores the calling thread may run on (Linux: a thread has an affinity of its own), None elsewhere."""
    getter = getattr(os, "sched_getaffinity", None)
    return None if getter is None else set(getter(0))


def pin_thread(cores: Cores) -> None:
    """Run the calling thread, and the threads and programs it starts from now on, on ``cores`` only (Linux's
    ``sched_setaffinity`` of thread 0 is the calling thread's; elsewhere nothing)."""
    setter = getattr(os, "sched_setaffinity", None)
    if setter is not None:
        setter(0, set(cores))


def start(
    argv: list[str],
    *,
    stdin: Stream = "null",
    stdout: Stream = "null",
    stderr: Stream = "null",
    log_limit: int | None = None,
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
    text: bool = False,
    end_with_parent: bool = True,
    pass_fds: tuple[int, ...] = (),
    cores: Cores | None = None,
) -> Child:
    """Start ``argv`` in its own session (see the module's doc). A :class:`Path` as a stream is a file
    (written from the start, capped at ``log_limit`` bytes); ``pass_fds``: descriptors it inherits (under
    the same numbers); ``cores``: the cores it runs on (its CPU affinity; None: those of the thread that asks,
    as a fork from that thread would give). StartError with one line if it cannot start."""
    token = uuid.uuid4().hex
    environment = {**(os.environ if env is None else env), TOKEN_ENV: token}
    limit = log_limit
    mask = set(cores) if cores is not None else thread_cores()
    pin = False

    def in_child() -> None:  # after fork, before exec: only async-signal-safe work
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        if end_with_parent and _PRCTL is not None:
            _PRCTL(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if pin:
            os.sched_setaffinity(0, mask)  # type: ignore[arg-type]

    def spawn() -> subprocess.Popen:
        nonlocal pin
        pin = mask is not None and mask != thread_cores()  # the spawner's thread runs elsewhere
        streams = [_open(stdin, False), _open(stdout, True), _open(stderr, True)]
        try:
            return subprocess.Popen(
                argv,
                stdin=streams[0],
                stdout=streams[1],
                stderr=streams[2],
                env=environment,
                cwd=cwd,
                text=text,
                bufsize=1 if text else -1,
                start_new_session=True,
                close_fds=True,
                pass_fds=pass_fds,
                preexec_fn=in_child if limit is not None or pin or (end_with_parent and _PRCTL is not None) else None,
            )
        finally:
            for stream in streams:
                if hasattr(stream, "close"):
                    stream.close()  # type: ignore[union-attr]

    try:
        popen = _spawner.submit(spawn).result()
    except (OSError, subprocess.SubprocessError) as exc:
        raise StartError(f"cannot start {argv[0]}: {getattr(exc, 'strerror', None) or exc}") from None
    child = Child(popen, list(argv), token)
    _live.add(child)
    _known.add(popen.pid)
    return child


def run(argv: list[str], *, timeout: float, env: dict[str, str] | None = None) -> int | None:
    """Start ``argv`` (no streams), wait up to ``timeout`` seconds, stop it (with all it started). Its exit
    code, None if it had to be stopped; StartError if it could not start."""
    child = start(argv, env=env)
    code = child.wait(timeout)
    child.stop(term_grace=0.5)
    return code


def describe_exit(code: int) -> str:
    """``exit 3`` or ``signal SIGKILL`` (a negative code: the signal)."""
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit {code}"


# --- orphans ------------------------------------------------------------------------------------------------


def live_children() -> list[Child]:
    return [child for child in list(_live) if not child.stopped]


def adopted_orphans() -> list[int]:
    """Processes this subreaper adopted: children of ours in another session than ours, not started here
    (a program's detached descendant after its parent ended). Zombies included (they need reaping)."""
    if not _subreaper or not os.path.isdir("/proc"):
        return []
    me, session = os.getpid(), os.getsid(0)
    return [
        i.pid
        for i in map(_info, _pids())
        if i is not None and i.ppid == me and i.sid != session and i.pid not in _known
    ]


def end_orphans(grace: float = 0.5) -> int:
    """SIGTERM, then SIGKILL, the adopted orphans (:func:`adopted_orphans`) and reap them; their number."""
    orphans = adopted_orphans()
    count = len(orphans)
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, REAP_S)):
        for pid in orphans:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        until = time.monotonic() + wait
        while orphans and time.monotonic() < until:
            orphans = [pid for pid in orphans if not _reaped(pid)]
            if orphans:
                time.sleep(POLL_S)
        if not orphans:
            break
    if count:
        log.info("ended %d detached process(es) left behind by a program", count)
    return count


def _reaped(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done == pid


def adopt_orphans() -> bool:
    """Make this process the subreaper of its descendants (the arena, the TUI's host of a program)."""
    global _subreaper
    if not _subreaper:
        _subreaper = become_subreaper()
    return _subreaper


@atexit.register
def _stop_all() -> None:
    """A last safety net: nothing started here outlives this process."""
    for child in live_children():
        with contextlib.suppress(Exception):
            child.stop(ask_grace=0, term_grace=0.2)
    with contextlib.suppress(Exception):
        end_orphans(0.2)
