"""``ai.processes``: a started program and everything it starts end with it (also detached ones); helper
processes of ``blokus serve`` and ``blokus bot`` end when their parent is killed and hold none of its streams."""

from __future__ import annotations

import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from blokus.ai import processes

CAP = 30.0  # seconds: a cap on every wait (a bug fails the test instead of hanging it)
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc, uses prctl")


def until(condition, cap: float = CAP) -> None:
    end = time.monotonic() + cap
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"not within {cap} s: {condition}")
        time.sleep(0.02)


def state_of(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def session_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[3])
    except (OSError, IndexError, ValueError):
        return 0


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


DETACHING = """
setsid sleep 3001 &
echo $! > "$1.a"
env -i sh -c 'setsid sleep 3002 & echo $! > "$0.b"' "$1" &
wait
"""


@linux_only
def test_a_program_and_what_it_detached_end_with_it(tmp_path: Path):
    processes.adopt_orphans()
    stem = tmp_path / "pid"
    child = processes.start(["sh", "-c", DETACHING, "sh", str(stem)])
    until(lambda: stem.with_suffix(".a").exists() and stem.with_suffix(".b").exists())
    until(lambda: all(p.read_text().strip() for p in (stem.with_suffix(".a"), stem.with_suffix(".b"))))
    a, b = (int(stem.with_suffix(s).read_text()) for s in (".a", ".b"))
    assert alive(a) and alive(b), (a, b)
    # `$!` is known before the background child has called setsid(): until then it is still in the program's
    # process group (found by the group, not by the token)
    until(lambda: session_of(a) == a and session_of(b) == b)
    members = child.members()
    assert a in members, members  # found by its token, in its own session
    assert b not in members, members  # it cleared its environment: found as an orphan this process adopted
    child.stop(term_grace=1.0)
    until(lambda: not alive(a) and not alive(b))
    # reaped, not left as zombies (one that arrives late is reaped by the next sweep)
    until(lambda: processes.end_orphans() == 0 and not processes.adopted_orphans())


def test_asked_to_leave_a_program_leaves_by_itself(tmp_path: Path):
    child = processes.start([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin="pipe")
    assert child.stop(lambda c: c.stdin.close(), ask_grace=CAP) == 0


def test_a_program_that_ignores_sigterm_is_killed():
    code = "import signal, sys; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); input()"
    child = processes.start([sys.executable, "-c", code], stdin="pipe", stdout="pipe")
    assert child.stdout.readline() == b"ready\n"
    assert child.stop(ask_grace=0, term_grace=0.2) == -signal.SIGKILL


@linux_only
def test_a_stop_of_a_child_is_seen_after_it_was_continued():
    child = processes.start([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin="pipe")
    try:
        assert not child.suspended_yet()
        os.kill(child.pid, signal.SIGSTOP)
        until(lambda: state_of(child.pid) == "T")
        os.kill(child.pid, signal.SIGCONT)  # continued before we looked: the kernel still tells its parent
        until(child.suspended_yet)
        assert child.suspended_yet() and child.poll() is None  # seen once, kept; its exit is not taken
    finally:
        assert child.stop(lambda c: c.stdin.close(), ask_grace=CAP) == 0  # still reaped by its own Popen


@linux_only
def test_a_process_kept_private_is_not_dumpable():
    code = "import ctypes, blokus.ai.processes as p; print(p.keep_private(), ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=CAP,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.stdout.split() == ["True", "0"]


def test_a_log_is_capped(tmp_path: Path):
    log = tmp_path / "out.log"
    code = "import sys\nfor _ in range(200): sys.stdout.write('x' * 65536)"
    child = processes.start([sys.executable, "-c", code], stdout=log, log_limit=1 << 20)
    assert child.wait(CAP) is not None and child.stop() != 0
    assert log.stat().st_size <= 1 << 20


def test_a_program_that_cannot_start_is_one_error(tmp_path: Path):
    with pytest.raises(processes.StartError, match="cannot start"):
        processes.start([str(tmp_path / "missing")])
    assert processes.run([sys.executable, "-c", "raise SystemExit(3)"], timeout=CAP) == 3


# --- kill -9 of a command: its helpers end and let go of its output --------------------------------------


def _blokus(*args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLOKUS_PROCESS")}
    return subprocess.Popen(
        [sys.executable, "-m", "blokus", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=Path(__file__).resolve().parent.parent,
        start_new_session=True,
    )


def _read_to_end(proc: subprocess.Popen, cap: float = CAP) -> None:
    """Both pipes of ``proc`` reach their end (nobody holds them any more) within ``cap`` seconds."""
    assert proc.stdout is not None and proc.stderr is not None
    selector = selectors.DefaultSelector()
    for stream in (proc.stdout, proc.stderr):
        os.set_blocking(stream.fileno(), False)
        selector.register(stream, selectors.EVENT_READ)
    end = time.monotonic() + cap
    while selector.get_map():
        left = end - time.monotonic()
        assert left > 0, "a helper still holds the killed command's output"
        for key, _ in selector.select(left):
            if not key.fileobj.read(65536):  # type: ignore[union-attr]
                selector.unregister(key.fileobj)
    proc.wait(CAP)


@linux_only
def test_kill_9_of_serve_leaves_no_helper_and_no_held_output():
    serve = _blokus("serve", "-p", "0", "--encode-workers", "2")
    try:
        assert serve.stdout is not None
        assert b"listening on" in serve.stdout.readline()
        until(lambda: len(descendants(serve.pid)) >= 3)  # resource tracker, fork server, encoder workers
        helpers = descendants(serve.pid)
        os.kill(serve.pid, signal.SIGKILL)
        _read_to_end(serve)
        until(lambda: not any(alive(pid) for pid in helpers))
    finally:
        with_cleanup(serve)


@linux_only
def test_kill_9_of_bot_leaves_no_engine_and_no_held_output():
    with socket.create_server(("127.0.0.1", 0)) as listener:  # accepts and says nothing: the bot waits
        port = listener.getsockname()[1]
        bot = _blokus("bot", "-p", str(port), "--engine", "process", "--ai", "greedy")
        try:
            until(lambda: len(descendants(bot.pid)) >= 1)  # the engine worker
            listener.settimeout(CAP)
            connection, _ = listener.accept()  # the bot is past its start
            helpers = descendants(bot.pid)
            os.kill(bot.pid, signal.SIGKILL)
            _read_to_end(bot)
            until(lambda: not any(alive(pid) for pid in helpers))
            connection.close()
        finally:
            with_cleanup(bot)


def with_cleanup(proc: subprocess.Popen) -> None:
    """Whatever happened: the test leaves nothing running."""
    for pid in descendants(proc.pid) | {proc.pid}:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    proc.wait(CAP)


@linux_only
def test_nothing_a_cmd_program_detached_outlives_its_game(tmp_path: Path):
    from blokus.model.season import season_named
    from blokus.net.external import HostedGame, HostedSeat

    client = [sys.executable, str(Path(__file__).with_name("ext_client.py"))]
    stem = tmp_path / "pid"
    script = 'stem=$1; shift; setsid sleep 3001 & echo $! > "$stem.a"; ' + (
        'env -i sh -c \'setsid sleep 3002 & echo $! > "$0.b"\' "$stem"; exec "$@"'
    )
    detaching = ["sh", "-c", script, "sh", str(stem), *client]
    game = HostedGame(
        (HostedSeat("detaching", detaching), HostedSeat("plain", client)),
        season=season_named("2021"),
        log_dir=tmp_path,
    )
    try:
        game.start()
        outcome = game.wait(120)
    finally:
        game.close()
    assert outcome is not None and outcome.result is not None and outcome.result.regular
    a, b = (int(stem.with_suffix(s).read_text()) for s in (".a", ".b"))
    until(lambda: not alive(a) and not alive(b))  # the moment the game ended, not 3001 s later


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2, reason="two cores")
def test_a_program_runs_on_the_cores_given_or_on_those_of_the_thread_that_starts_it(tmp_path: Path):
    first, second = sorted(os.sched_getaffinity(0))[:2]
    show = [sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"]

    def cores_of_child(**kwargs) -> str:
        out = tmp_path / f"out-{len(list(tmp_path.iterdir()))}"
        child = processes.start(show, stdout=out, **kwargs)
        assert child.wait(CAP) == 0
        return out.read_text().strip()

    assert cores_of_child(cores=(second,)) == f"[{second}]"
    before = processes.thread_cores()
    seen: list[str] = []

    def pinned() -> None:  # a thread pinned to one core: what it starts runs there (as a fork from it would)
        processes.pin_thread((first,))
        seen.append(cores_of_child())

    thread = __import__("threading").Thread(target=pinned)
    thread.start()
    thread.join()
    assert seen == [f"[{first}]"] and processes.thread_cores() == before  # this thread was not pinned
