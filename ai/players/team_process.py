"""A team's Python player (``py:PATH[:CLASS]``) in a process of its own, supervised: ``blokus bot --player``
plays with :class:`TeamPlayer`; every command that needs to know whether a team's file loads asks
:func:`check_team_player`. The team's file is never imported in our own process.

The child (``ai.players.pyplayer``, started with ``ai.processes``: its own session, a token, the subreaper,
a group kill) is started warm — when the bot starts, before it joins — and answers each move request over a pipe (a
small pickled request, a small JSON answer: ``bench/bench_team_process.py`` measures the cost). Whatever the child
does, the caller (``ai.players.controller.decide``) gets an answer or an exception in time and sends a legal move by
its deadline:

* an exception or an answer that is no move: :class:`~ai.players.pyplayer.PlayerCodeError` (its traceback shown
  once per kind); an illegal move is judged by the controller;
* holding the interpreter in C, a loop, a wait: the controller's cut-off sends a fallback; if the child is
  still busy when the next request comes, a **standby** child (started warm beside it, with the same file)
  takes over and gets the position with the request, the busy one is ended — a slow move costs that move
  only; a new standby is started;
* allocating without bound: the child's ``RLIMIT_DATA`` (``MEMORY_LIMIT_MIB``) makes it a ``MemoryError``
  in the team's code; the child is the kernel's first choice when memory runs out;
* exiting, being killed: the request fails at once (``process ended``), the standby takes over;
* printing megabytes: its stdout and stderr are forwarded line by line up to ``OUTPUT_LIMIT_BYTES`` a game,
  then dropped (read on, slowly: a child that floods its output waits for us, never the bot for it);
* forking: whatever it started ends with it (its group, its token, the subreaper at the end).

``strict`` (``blokus bot --strict``, the arena's way): no standby — a late answer is sent late and a child
that ends is a crashed client, as the contest would judge it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pickle
import select
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from blokus.ai import processes
from blokus.ai.interface import Player
from blokus.ai.players.pyplayer import (
    END_IDLE,
    GAME_OVER,
    IDLE,
    JOINED,
    MOVE,
    QUIT,
    SERVER_ERROR,
    STOP,
    FrameError,
    FrameReader,
    PlayerCodeError,
    PlayerLoadError,
    frame,
)
from blokus.ai.players.registry import PlayerSpec
from blokus.model.moves import Move, parse_move
from blokus.model.pieces import Team
from blokus.model.result import GameResult
from blokus.model.state import GameState
from blokus.model.text import printable

MEMORY_LIMIT_MIB = 2048  # the team's process's data (RLIMIT_DATA) at most by default: numpy and numba need headroom
MEMORY_FLOOR_MIB = 384  # ... and at least: its data with our engine loaded is ~190 MiB (bench/bench_memory.py)
# our bot's own processes beside the team's: the bot (~130 MiB PSS), the standby (~120 MiB) and the playing one's code
# (its shared libraries: not in its data limit), bench/bench_memory.py; on the contest's 1.5 GB (1536 MiB) the team's
# process gets 1216 MiB
BOT_MEMORY_MIB = 320
OUTPUT_LIMIT_BYTES = 1 << 20  # of the team's output forwarded per game; the rest is dropped (and said once)
LINE_LIMIT = 1000  # characters of one forwarded line
IMPORT_TIMEOUT_S = 10.0  # loading the team's file and making its player, once our engine is ready
ENGINE_TIMEOUT_S = 600.0  # our compiled engine in the child (a first start compiles it: a minute or two)
ANSWER_LIMIT_BYTES = 64 * 1024  # one message from the child
MAX_STARTS = 20  # processes of the team's player per game (a player that dies at every move stops here)
DRAIN_PAUSE_S = 0.005  # between two reads of output beyond the limit: the child waits, not the bot
# the folder that holds this project's packages: the child imports exactly this project, whatever its folder
PROJECT_ROOT = str(Path(__file__).parents[3].resolve())  # the folder of the package: blokus/ai/players/ is three down


def default_memory_mib(available: int | None) -> int:
    """The team's process's memory limit (MiB) by default, given the memory the bot may use (``available`` bytes,
    ``ai.search.cores.memory_budget``; None: not known): what is left after our bot's own processes, between
    ``MEMORY_FLOOR_MIB`` and ``MEMORY_LIMIT_MIB``."""
    if available is None:
        return MEMORY_LIMIT_MIB
    return max(MEMORY_FLOOR_MIB, min(MEMORY_LIMIT_MIB, available // 2**20 - BOT_MEMORY_MIB))


class Output:
    """The team's output (its processes' stdout and stderr) for ``say``, line by line, up to ``limit`` bytes in
    all; what is beyond is dropped and said once."""

    def __init__(
        self,
        say: Callable[[str], None] | None,
        limit: int = OUTPUT_LIMIT_BYTES,
        keep: int = 20,
        notice: Callable[[str], None] | None = None,
    ) -> None:
        self.say = say  # the team's lines, as they are
        self.notice = notice or say  # our own one-line notices (the command prefixes them)
        self.limit = limit
        self.used = 0
        self.dropped = 0
        self.last: list[str] = []  # the last lines (for a one-line error at loading)
        self.keep = keep
        self._lock = threading.Lock()

    @property
    def over(self) -> bool:
        return self.used >= self.limit

    def line(self, raw: bytes) -> None:
        text = printable(raw.decode("utf-8", errors="replace").rstrip("\r\n"), LINE_LIMIT)
        with self._lock:
            if self.used >= self.limit:
                self.dropped += len(raw)
                return
            self.used += len(raw)
            self.last = [*self.last[-(self.keep - 1) :], text] if self.keep else []
            over = self.used >= self.limit
        if self.say is not None:
            self.say(text)
            if over and self.notice is not None:
                self.notice(f"your player's output passed {self.limit / 2**20:g} MiB this game: the rest is not shown")

    def drain(self, fd: int) -> None:
        """Read ``fd`` to its end (a thread of its own), passing whole lines on."""
        pending = b""
        try:
            while True:
                try:
                    data = os.read(fd, 1 << 16)
                except OSError:
                    data = b""
                if not data:
                    break
                if self.over:
                    self.dropped += len(data)
                    time.sleep(DRAIN_PAUSE_S)
                    continue
                pending += data
                *lines, pending = pending.split(b"\n")
                if len(pending) > 4 * LINE_LIMIT:  # a line without an end: passed on in pieces
                    lines.append(pending)
                    pending = b""
                for raw in lines:
                    self.line(raw)
            if pending:
                self.line(pending)
        except Exception as exc:  # never a thread that dies unseen
            if self.notice is not None:
                self.notice(f"reading your player's output failed: {type(exc).__name__}: {exc}")
        finally:
            with contextlib.suppress(OSError):
                os.close(fd)


class TeamChild:
    """One process running the team's player, seen from the parent. Its answers are read by :meth:`feed`
    (from an event loop's reader, or :meth:`poll` without one)."""

    def __init__(
        self, spec: PlayerSpec, output: Output, *, memory_mib: int = MEMORY_LIMIT_MIB, check: bool = False
    ) -> None:
        self.spec = spec
        argv = [sys.executable, "-P", "-m", "blokus.ai.players.pyplayer", spec.path, spec.class_name, str(memory_mib)]
        argv += ["check"] if check else []
        path = os.environ.get("PYTHONPATH", "")
        env = {**os.environ, "PYTHONPATH": PROJECT_ROOT + (os.pathsep + path if path else "")}
        self.child = processes.start(argv, stdin="pipe", stdout="pipe", stderr="pipe", env=env)
        popen = self.child.popen
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        self._to = popen.stdin.fileno()
        self._from = popen.stdout.fileno()
        os.set_blocking(self._to, False)
        os.set_blocking(self._from, False)
        err = os.dup(popen.stderr.fileno())  # the drain thread owns (and closes) its own descriptor
        threading.Thread(target=output.drain, args=(err,), name="team-output", daemon=True).start()
        self.output = output
        self.reader = FrameReader(ANSWER_LIMIT_BYTES)
        self.started_at = time.monotonic()
        self.engine_at: float | None = None  # our engine loaded: the team's file is imported from here on
        self.ready = False
        self.waits = False  # the class has while_waiting: it is told when it is not its turn
        self.class_name = ""
        self.failure = ""  # why it cannot play: a load error, an exit, a protocol violation ("" while it can)
        self.busy: tuple[int, int] | None = None  # (request id, turn) of the answer it is still computing
        self.answers: dict[int, dict] = {}  # answers that came, by request id (taken by the asker)
        self.done = False  # on_game_over has returned
        self.on_change: Callable[[TeamChild], None] | None = None

    @property
    def pid(self) -> int:
        return self.child.pid

    @property
    def alive(self) -> bool:
        return not self.failure

    # --- reading -----------------------------------------------------------------------------------------

    def feed(self) -> None:
        """Read what the child has sent (never blocks)."""
        if self.failure:
            return
        try:
            data = os.read(self._from, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._ended()
        else:
            try:
                for payload in self.reader.feed(data):
                    self._message(payload)
            except (FrameError, ValueError, KeyError, TypeError) as exc:
                self._fail(f"your player's process broke the protocol ({exc})")
        if self.on_change is not None:
            self.on_change(self)

    def _message(self, payload: bytes) -> None:
        message = json.loads(payload)
        kind = message["t"]
        if kind == "engine":
            self.engine_at = time.monotonic()
        elif kind == "ready":
            self.ready, self.class_name = True, str(message["class"])[:100]
            self.waits = message.get("waits") is True
        elif kind == "load_error":
            self._fail(printable(str(message["line"])))
        elif kind in ("move", "error"):
            rid = int(message["rid"])
            if self.busy is not None and self.busy[0] == rid:
                self.busy = None
                self.answers[rid] = message
        elif kind == "done":
            self.done = True
            if message.get("line"):
                self.answers[-1] = message

    def _ended(self) -> None:
        code = self.child.wait(0.2)  # its pipe closed as it ended: the exit code follows at once
        if code is None:
            self._fail("your player's process closed its pipe")
        else:
            line = f" ({self.output.last[-1]})" if self.output.last and code != 0 else ""
            self._fail(f"your player's process ended ({processes.describe_exit(code)}){line}")

    def _fail(self, why: str) -> None:
        if not self.failure:
            self.failure = why

    def poll(self, timeout: float) -> None:
        """Wait up to ``timeout`` s for the child to say something (without an event loop) and read it."""
        if self.failure:
            return
        with contextlib.suppress(OSError, ValueError):
            ready, _, _ = select.select([self._from], [], [], max(0.0, timeout))
            if ready:
                self.feed()

    # --- asking ------------------------------------------------------------------------------------------

    def send(self, message: tuple) -> bool:
        """Send ``message`` whole or not at all (a child that does not read its pipe is broken)."""
        if self.failure:
            return False
        data = frame(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
        try:
            written = os.write(self._to, data)
        except BlockingIOError:
            written = 0
        except OSError:
            self._ended()
            return False
        if written != len(data):
            self._fail("your player's process does not read its requests")
            return False
        return True

    def ask(self, rid: int, state: GameState, deadline: float, team: Team) -> bool:
        if not self.send((MOVE, rid, state, deadline, team)):
            return False
        self.busy = (rid, state.turn)
        return True

    def stop(self, grace: float = 0.5) -> int | None:
        """End it and everything it started (blocks up to a few seconds)."""
        self._fail("stopped")
        return self.child.stop(lambda child: self.send_quit(), ask_grace=grace, term_grace=grace)

    def send_quit(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._to, frame(pickle.dumps((QUIT,))))


def loading_line(spec: PlayerSpec, child: TeamChild) -> str:
    """Why the team's file did not load in ``child`` (one line naming the file)."""
    why = child.failure or "did not load"
    if why.startswith("your player's process "):  # ended or broke the protocol while loading
        why = "while loading, the process " + why.removeprefix("your player's process ")
    return why if why.startswith(spec.path) else f"{spec.path}: {why}"


def check_team_player(
    spec: PlayerSpec, *, timeout: float = IMPORT_TIMEOUT_S, engine_timeout: float = ENGINE_TIMEOUT_S
) -> str:
    """Load the team's file in a child process (never in this one), make its player, and end the child: the
    class's name, or :class:`PlayerLoadError` with one line naming the file and what happened (a load error,
    an exit, a hang at import: within ``timeout`` s once our engine is ready)."""
    if not Path(spec.path).is_file():
        raise PlayerLoadError(f"{spec.path}: no such file (write py:PATH[:CLASS], e.g. py:player.py)")
    output = Output(None)
    child = TeamChild(spec, output, check=True)
    try:
        while child.alive and not child.ready:
            now = time.monotonic()
            limit = child.started_at + engine_timeout if child.engine_at is None else child.engine_at + timeout
            if now >= limit:
                if child.engine_at is None:
                    child._fail(f"our engine was not ready in the player's process within {engine_timeout:g} s")
                else:
                    child._fail(f"{spec.path}: still loading after {timeout:g} s (a loop or a wait at import?)")
                break
            child.poll(min(0.2, limit - now))
        if not child.ready:
            raise PlayerLoadError(loading_line(spec, child))
        return child.class_name
    finally:
        child.stop(grace=0.2)


class TeamPlayer(Player):
    """The team's player behind the one ``Player`` interface, in a supervised process (module doc)."""

    def __init__(
        self,
        spec: PlayerSpec,
        *,
        memory_mib: int = MEMORY_LIMIT_MIB,
        say: Callable[[str], None] | None = None,
        show: Callable[[str], None] | None = None,
        strict: bool = False,
        output_limit: int = OUTPUT_LIMIT_BYTES,
    ) -> None:
        self.spec = spec
        self.name = spec.label
        self.memory_mib = memory_mib
        # show: the team's output and tracebacks, as they are; say: our notices in one line, which the command
        # prefixes with its name
        self.show = show or say or (lambda line: print(line, file=sys.stderr, flush=True))
        self.say = say or self.show
        self.strict = strict
        self.output = Output(self.show, output_limit, notice=self.say)
        self.active: TeamChild | None = None
        self.standby: TeamChild | None = None
        self.starts = 0  # processes started this game
        self.restarts = 0  # times a new process took over
        self.last_info: dict = {}
        self._rid = 0
        self._team: Team | None = None  # ours, known from the first move request
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed: asyncio.Event | None = None
        self._shown: set[str] = set()  # kinds of exceptions whose traceback was shown
        self._stopping: list[threading.Thread] = []  # children being ended beside the game

    # --- processes --------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the team's process (and, not strict, its standby): call once, before the game."""
        processes.adopt_orphans()  # what the team's code detaches comes back to us, to be ended
        self.active = self._spawn()
        if not self.strict:
            self.standby = self._spawn()

    def _spawn(self) -> TeamChild | None:
        if self.starts >= MAX_STARTS:
            return None
        self.starts += 1
        try:
            child = TeamChild(self.spec, self.output, memory_mib=self.memory_mib)
        except OSError as exc:  # processes.StartError: one line
            self.say(f"cannot start your player's process: {exc}")
            return None
        if self._loop is not None:
            self._watch(child)
        return child

    def _watch(self, child: TeamChild) -> None:
        assert self._loop is not None
        child.on_change = self._on_change
        with contextlib.suppress(ValueError, OSError):
            self._loop.add_reader(child.child.popen.stdout.fileno(), child.feed)  # type: ignore[union-attr]
        child.feed()  # what came before

    def _attach(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is loop:
            return
        self._loop = loop
        self._changed = asyncio.Event()
        for child in (self.active, self.standby):
            if child is not None:
                self._watch(child)

    def _on_change(self, child: TeamChild) -> None:
        if not child.alive and self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_reader(child.child.popen.stdout.fileno())  # type: ignore[union-attr]
            if child is self.standby:  # it could not load or it died: another one, while starts are left
                self.standby = None
                self._retire(child)
                if not self.strict:
                    self.standby = self._spawn()
        if self._changed is not None:
            self._changed.set()

    async def _until(self, condition: Callable[[], bool], deadline: float | None) -> bool:
        """Wait (in the event loop) until ``condition()`` or ``deadline`` (monotonic; None: no limit)."""
        assert self._changed is not None
        while not condition():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), None if left is None else min(left, 0.5))
        return True

    async def wait_ready(self, timeout: float = IMPORT_TIMEOUT_S, engine_timeout: float = ENGINE_TIMEOUT_S) -> None:
        """Until the team's player is loaded in its process; :class:`PlayerLoadError` (one line) if it
        cannot be (a load error, an exit, a hang at import)."""
        self._attach()
        child = self.active
        if child is None:
            raise PlayerLoadError(f"{self.spec.path}: its process could not be started")
        await self._until(lambda: child.engine_at is not None or not child.alive, child.started_at + engine_timeout)
        if child.engine_at is None and child.alive:
            child._fail(f"our engine was not ready in the player's process within {engine_timeout:g} s")
        if child.engine_at is not None:
            await self._until(lambda: child.ready or not child.alive, child.engine_at + timeout)
            if not child.ready and child.alive:
                child._fail(f"{self.spec.path}: still loading after {timeout:g} s (a loop or a wait at import?)")
        if not child.ready:
            raise PlayerLoadError(loading_line(self.spec, child))

    def _retire(self, child: TeamChild) -> None:
        """End ``child`` beside the game (stopping it blocks up to a few seconds)."""
        thread = threading.Thread(target=child.stop, name="team-stop", daemon=True)
        thread.start()
        self._stopping.append(thread)

    def _take_over(self, why: str) -> None:
        """The active child cannot play on: the standby takes over, a new standby is started."""
        old, self.active = self.active, self.standby
        self.standby = None
        if old is not None:
            self._retire(old)
        if self.active is None:
            self.active = self._spawn()
        if self.active is not None:
            self.restarts += 1
            self.say(f"{why}: a new process of your player plays on, given the position")
            self.standby = self._spawn()

    # --- the player interface ----------------------------------------------------------------------------

    async def choose_move(self, state: GameState, deadline: float) -> Move:
        self._attach()
        turn = state.turn
        child = self.active
        if not self.strict and child is not None:
            if not child.alive:
                self._take_over(f"turn {turn}: {child.failure}")
            elif child.busy is not None:  # still computing an earlier answer: a slow move costs that move only
                self._take_over(f"turn {turn}: your player was still busy with the move of turn {child.busy[1]}")
        child = self.active
        if child is None or not child.alive:
            why = child.failure if child is not None else "no process of your player could be started"
            raise PlayerCodeError("process ended", f"process ended at turn {turn}: {why}")
        if not await self._until(lambda: child.ready or not child.alive, deadline):
            raise PlayerCodeError("starting", f"starting at turn {turn}: your player's new process is not ready yet")
        self._rid += 1
        rid = self._rid
        self._team = state.team
        if not child.ask(rid, state, deadline, state.team):
            raise PlayerCodeError("process ended", f"process ended at turn {turn}: {child.failure}")
        await self._until(lambda: rid in child.answers or not child.alive, None)
        answer = child.answers.pop(rid, None)
        if answer is None:
            raise PlayerCodeError("process ended", f"process ended at turn {turn}: {child.failure}")
        if answer["t"] == "error":
            kind, line = str(answer["kind"])[:60], printable(str(answer["line"]))
            self._show(kind, turn, str(answer.get("trace", "")))
            raise PlayerCodeError(kind, line)
        try:
            return parse_move(str(answer["move"]))
        except ValueError:
            child._fail("your player's process broke the protocol (an answer that is no move)")
            raise PlayerCodeError("protocol", f"protocol at turn {turn}: an answer that is no move") from None

    def _show(self, kind: str, turn: int, trace: str) -> None:
        """The traceback of the team's code on stderr, once per kind of exception."""
        if kind in self._shown or not trace:
            return
        self._shown.add(kind)
        self.show(
            f"blokus: your player raised {kind} at turn {turn} (further {kind}s are counted, not shown):\n"
            + printable(trace, None).replace("\\n", "\n")
        )

    @property
    def thinks_while_waiting(self) -> bool:
        child = self.active
        return child is not None and child.waits

    def start_pondering(self, state: GameState) -> None:
        """``while_waiting`` in the team's process, given the position after our move (``state``)."""
        child = self.active
        if child is not None and child.ready and child.waits and child.busy is None:
            child.send((IDLE, state, self._team))

    def stop_pondering(self) -> None:
        child = self.active
        if child is not None and child.waits:
            child.send((END_IDLE,))

    def joined(self, room_id: str) -> None:
        for child in (self.active, self.standby):
            if child is not None:
                child.send((JOINED, room_id))

    def server_error(self, message: str) -> None:
        child = self.active
        if child is not None:
            child.send((SERVER_ERROR, message))

    def cancel(self) -> None:
        child = self.active
        if child is not None and child.busy is not None:
            child.send((STOP, child.busy[0]))

    def game_over(self, result: GameResult) -> None:
        """Give the team's player the result (see :meth:`finish`)."""
        child = self.active
        if child is not None and child.ready and child.busy is None:
            child.send((GAME_OVER, result))
        else:
            child = None
        self._over = child

    async def finish(self, timeout: float) -> None:
        """Wait up to ``timeout`` s for ``on_game_over`` to return (a line if it raised)."""
        child = getattr(self, "_over", None)
        if child is None or self._changed is None:
            return
        await self._until(lambda: child.done or not child.alive, time.monotonic() + timeout)
        answer = child.answers.pop(-1, None)
        if answer is not None:
            self.say(f"your player's {printable(str(answer['line']))}")

    def close(self) -> None:
        """End every process of the team's player and everything they started."""
        children = [c for c in (self.active, self.standby) if c is not None]
        self.active = self.standby = None
        if self._loop is not None:
            for child in children:
                with contextlib.suppress(Exception):
                    self._loop.remove_reader(child.child.popen.stdout.fileno())  # type: ignore[union-attr]
        for child in children:
            self._retire(child)
        for thread in self._stopping:
            thread.join(processes.ASK_GRACE_S + processes.TERM_GRACE_S + processes.REAP_S)
        processes.end_orphans()
