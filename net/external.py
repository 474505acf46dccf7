"""Programs as players (``cmd:COMMAND``): a team's own client plays a game on an embedded server.

A player named ``cmd:COMMAND`` (``cmd:./my-player/start.sh``, ``cmd:java -jar player.jar``) is started once
per game exactly as the contest system starts it: ``COMMAND -h 127.0.0.1 -p PORT -r RESERVATION`` (the
command line split like a shell does, no shell in between), in its own process group, with its stdout and
stderr in two log files, against a game server of our own (``net.server``, on a free loopback port, a
prepared game with one reservation per seat, the season's official time limits unless told otherwise).

:class:`HostedGame` runs that server on its own event loop in a thread (so neither the arena nor the TUI
can delay its clock), starts the programs of its seats, waits for the game and hands what happened (``Hosted``:
the server's result, the moves that arrived, who never joined, the programs' exit codes and last words) to
``ai.arena.verdict``, which judges it: the outcome (:class:`~ai.arena.verdict.HostedOutcome`), a lost game named
in one line, a failure of our own side a void game.

A seat of our own (:attr:`HostedSeat.ours`: a ``blokus bot`` against the program under test) plays on an inherited
socket that the server seats, so no code of it exists outside this process; the host watches it for a stop by a
signal and its seat taken by another connection.

Nothing is left behind (``ai.processes``): at the end a program gets a moment to leave by itself, then it
and everything it started (its group, whatever carries its token, detached descendants adopted by this
process as their subreaper) get SIGTERM and, after a grace period, SIGKILL; a program whose process ended
while a child of it still holds its connection loses with LEFT a second later; its log files are capped
(RLIMIT_FSIZE).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shlex
import shutil
import socket
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from blokus.ai import processes, sandbox
from blokus.ai.arena.verdict import ArrivedMove, Hosted, HostedOutcome, HostedSide, judge_hosted
from blokus.ai.players.pyplayer import PlayerLoadError
from blokus.ai.players.registry import PlayerKind, PlayerSpec
from blokus.ai.players.team_process import check_team_player
from blokus.ai.processes import describe_exit
from blokus.model.moves import Move
from blokus.model.pieces import Shape, Team
from blokus.model.season import DEFAULT_SEASON, Season
from blokus.model.text import printable
from blokus.net.guard import ConnectionLimits
from blokus.net.rooms import Room, RoomSeat, Timeouts
from blokus.net.server import GameServer, ServerConfig, room_replay

log = logging.getLogger("blokus.external")

HOST = "127.0.0.1"
JOIN_TIMEOUT_S = 30.0  # from the start of the program to its joinPrepared
EXIT_GRACE_S = 1.0  # after the game: time to leave by itself before SIGTERM
OURS_EXIT_GRACE_S = 5.0  # the same for our own side, whose exit code says whether it played every move itself
STOP_GRACE_S = 2.0  # SIGTERM → SIGKILL
ORPHAN_GRACE_S = 1.0  # the process ended but its connection is still open (a child holds it): LEFT after this
LOG_LIMIT_BYTES = 64 * 1024 * 1024  # per log file; beyond it the program gets SIGXFSZ (or write errors)
UNTIMED_HARD_S = 60.0  # --untimed / --no-timeout: a program that never answers still loses, after this
TAIL_BYTES = 16 * 1024  # read from the end of a log for its last lines
TRACE_FRAMES = 5  # frames of a crashed program's last Python traceback kept for the arena's --json


class ProgramError(Exception):
    """A program line that cannot be started (empty, not found, not executable): one line."""


# --- starting a player as a program ----------------------------------------------------------------------


def program_command(spec: PlayerSpec) -> list[str]:
    """The command line that starts a player as a program, before ``-h HOST -p PORT -r CODE``: a ``cmd:``
    program's own; a ``py:`` player is our bot playing the team's class as the contest runs an upload of it,
    but strict: its mistakes are judged as the contest judges them (named forfeits), not replaced."""
    if spec.kind is PlayerKind.PY:
        target = str(Path(spec.path).resolve()) + (f":{spec.class_name}" if spec.class_name else "")
        return [sys.executable, "-P", "-m", "blokus", "bot", "--player", target, "--strict"]
    if spec.kind is PlayerKind.CMD:
        return list(spec.argv)
    raise ProgramError(f"{spec.name!r} is no program")


def check_program(spec: PlayerSpec) -> None:
    """ProgramError with one line if the program of ``spec`` cannot be started at all."""
    if spec.kind is PlayerKind.PY:  # loaded in a child process of its own, with a time limit: never here
        try:
            check_team_player(spec)
        except PlayerLoadError as exc:
            raise ProgramError(str(exc)) from None
        return
    exe = program_command(spec)[0]
    if os.sep in exe:
        if not os.path.isfile(exe):
            raise ProgramError(f"{spec.name!r}: {exe} does not exist")
        if not os.access(exe, os.X_OK):
            raise ProgramError(f"{spec.name!r}: {exe} is not executable (chmod +x {shlex.quote(exe)})")
    elif shutil.which(exe) is None:
        raise ProgramError(f"{spec.name!r}: {exe} is not on the PATH")


def clean_line(text: str, width: int = 200) -> str:
    """One line of a program's output, safe to show (``model.text.printable``: every control, bidi and
    zero-width character escaped, cut to ``width``)."""
    return printable(text.rstrip("\r\n"), width)


# --- one program ---------------------------------------------------------------------------------------


class Program:
    """One started program (``ai.processes``: its own session, everything it starts found at the end) with
    its two log files."""

    def __init__(
        self,
        argv: list[str],
        log_stem: Path,
        *,
        log_limit: int = LOG_LIMIT_BYTES,
        cores: tuple[int, ...] | None = None,
        walled: bool = True,
        scratch_limit: int = sandbox.SCRATCH_LIMIT_BYTES,
    ) -> None:
        self.argv = list(argv)
        self.cores = cores  # its CPU affinity (None: this process's)
        self.out_path = log_stem.with_name(log_stem.name + ".out.log")
        self.err_path = log_stem.with_name(log_stem.name + ".err.log")
        # the one folder it may write in (its $TMPDIR; a py: seat's bot gives it to the team's processes):
        # beside its logs, removed when it is stopped
        self.scratch = log_stem.with_name(log_stem.name + ".scratch")
        self.log_limit = log_limit
        self.walled = walled  # a team's program: walled in (``ai.sandbox``); our own bot: not
        self.scratch_limit = scratch_limit
        self.scratch_full = ""  # why it was stopped for its scratch folder ("" if it was not)
        self.child: processes.Child | None = None

    def start(self, host: str, port: int, reservation: str, *, env: dict[str, str] | None = None) -> None:
        """Start it as the contest does: with ``-h HOST -p PORT -r CODE``; walled in (``walled``: it writes
        only in its scratch folder, connects only to ``port``, cannot reach our processes)."""
        self.scratch.mkdir(parents=True, exist_ok=True)
        own = {**sandbox.scratch_env(self.scratch), sandbox.SCRATCH_ENV: str(self.scratch)}
        reads = sandbox.program_reads(self.argv)
        walls = sandbox.Walls(self.scratch, reads, (port,), writes=self.paths) if self.walled else None
        self._start([*self.argv, "-h", host, "-p", str(port), "-r", reservation], {**own, **(env or {})}, walls=walls)

    def start_seated(self, sock: socket.socket, season: Season, env: dict[str, str] | None = None) -> None:
        """Start a player of ours (``blokus bot``) on an inherited socket that the host's server seats
        (``GameServer.seat_connection``): ``--socket-fd N``, no code anywhere for another process to read."""
        self._start([*self.argv, "--socket-fd", str(sock.fileno()), "--season", season.name], env, sock.fileno())

    def _start(
        self, argv: list[str], env: dict[str, str] | None, fd: int | None = None, walls: sandbox.Walls | None = None
    ) -> None:
        try:
            # the logs are files, so a program that floods its output costs this process nothing
            self.child = processes.start(
                argv,
                stdout=self.out_path,
                stderr=self.err_path,
                log_limit=self.log_limit,
                env=None if env is None else {**os.environ, **env},
                pass_fds=() if fd is None else (fd,),
                cores=self.cores,
                walls=walls,
            )
        except OSError as exc:
            raise ProgramError(_start_failure(self.argv[0], exc)) from None

    @property
    def paths(self) -> tuple[Path, Path]:
        return self.out_path, self.err_path

    @property
    def pid(self) -> int | None:
        return None if self.child is None else self.child.pid

    @property
    def started_at(self) -> float:
        return 0.0 if self.child is None else self.child.started_at

    @property
    def exited_at(self) -> float | None:
        return None if self.child is None else self.child.exited_at

    def exit_code(self) -> int | None:
        """The exit code once it has ended (negative: the signal), else None."""
        return None if self.child is None else self.child.poll()

    def wait_exit(self, timeout: float) -> int | None:
        return None if self.child is None else self.child.wait(timeout)

    def stop(self, grace: float = STOP_GRACE_S) -> None:
        """SIGTERM to the program and everything it started, SIGKILL to whatever is left after ``grace`` s;
        its scratch folder is removed."""
        if self.child is not None:
            self.child.stop(term_grace=grace)
        sandbox.clear(self.scratch)

    def check_scratch(self) -> bool:
        """While it runs: a scratch folder over its bounds stops it (``scratch_full`` says why). True if so."""
        if self.child is None or self.scratch_full or self.child.poll() is not None:
            return bool(self.scratch_full)
        why = sandbox.scratch_over(self.scratch, self.scratch_limit)
        if why:
            self.scratch_full = why
            self.child.stop(ask_grace=0, term_grace=0)
        return bool(why)

    def stderr_tail(self, lines: int = 50) -> list[str]:
        """The last ``lines`` lines of its stderr (read from the end of the log: bounded)."""
        return tail_lines(self.err_path, lines)

    def last_traceback(self) -> str:
        """The last Python traceback on its stderr (its last frames), "" if there is none."""
        return last_traceback(self.stderr_tail(200))

    def last_stderr_line(self) -> str:
        if self.scratch_full:
            return f"stopped: {self.scratch_full}"
        if self.hit_log_limit():
            return f"its output reached the log limit of {self.log_limit / 2**20:g} MiB"
        return next((line for line in reversed(self.stderr_tail(20)) if line.strip()), "")

    def hit_log_limit(self) -> bool:
        sizes = []
        for path in (self.out_path, self.err_path):
            with contextlib.suppress(OSError):
                sizes.append(path.stat().st_size)
        return max(sizes, default=0) >= self.log_limit


live_members = processes.group_members  # the live processes of a process group


def tail_lines(path: Path, lines: int, max_bytes: int = TAIL_BYTES) -> list[str]:
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - max_bytes))
            data = fh.read(max_bytes)
    except OSError:
        return []
    text = data.decode("utf-8", errors="replace").splitlines()
    if size > max_bytes and text:
        text = text[1:]  # the first line is cut
    return [clean_line(line) for line in text[-lines:]]


def last_traceback(lines: list[str], frames: int = TRACE_FRAMES) -> str:
    """The last Python traceback in ``lines`` (a program's stderr) up to its exception's line, with only its
    last ``frames`` frames; "" if there is none."""
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last):")]
    if not starts:
        return ""
    body: list[str] = []
    for line in lines[starts[-1] + 1 :]:
        body.append(line)
        if line and not line[0].isspace():  # the exception's line ends it
            break
    heads = [i for i, line in enumerate(body) if line.startswith('  File "')]
    cut = [f"  ... {len(heads) - frames} earlier frame(s)"] if len(heads) > frames else []
    if cut:
        body = body[heads[-frames] :]
    return "\n".join([lines[starts[-1]], *cut, *body])


def frame_of(trace: str) -> str:
    """``player.py:12 in score``: the last frame of a traceback (:func:`last_traceback`) in a file ("" without
    one: ``<string>`` of ``python -c`` or ``<frozen …>`` name none)."""
    found = re.findall(r'^  File "([^<].*)", line (\d+), in (.*)$', trace, re.MULTILINE)
    if not found:
        return ""
    path, line, name = found[-1]
    return f"{Path(path).name}:{line} in {name}"


# --- a hosted game -------------------------------------------------------------------------------------


@dataclass
class HostedSeat:
    """A seat of a hosted game: ``command`` is started with the seat's reservation; ``None``: the caller
    joins with :attr:`HostedGame.reservations` (the TUI, a test)."""

    name: str  # display name in the game (and the replay)
    command: list[str] | None = None
    can_timeout: bool = True
    # a player of this project (``blokus bot``), not the program under test: it plays on an inherited socket that
    # the server seats (no code for another process to read, a connection budget of its own), and any failure
    # of its side (a timeout, a stop, a crash, leaving, its seat taken, an illegal move) makes the game void:
    # the program under test runs as the same user and could have caused it
    ours: bool = False
    env: dict[str, str] | None = None  # added to the environment of ``command``
    cores: tuple[int, ...] | None = None  # the cores ``command`` runs on (its CPU affinity; None: this process's)
    # walled in (``ai.sandbox``): None, a program under test unless ``ours``; False for our bot playing a py:
    # team's player (its team's processes are walled in by the bot, its own compile cache stays writable)
    walled: bool | None = None


class HostedGame:
    """An embedded server with one prepared game; programs on some seats. Use :meth:`start`, then
    :meth:`wait` (or poll :attr:`done`), then :meth:`close` (always; also to stop a game early)."""

    def __init__(
        self,
        seats: tuple[HostedSeat, HostedSeat],
        *,
        season: Season = DEFAULT_SEASON,
        timeouts: Timeouts | None = None,
        start_piece: Shape | None = None,
        opening: tuple[Move, ...] = (),
        adjudicate: bool = False,
        seed: int | None = None,
        log_dir: Path | str | None = None,
        log_prefix: str = "game",
        join_timeout: float = JOIN_TIMEOUT_S,
        log_limit: int = LOG_LIMIT_BYTES,
        stop_grace: float = STOP_GRACE_S,
    ) -> None:
        self.seats = seats
        self.season = season
        self.timeouts = timeouts or Timeouts.of(season)
        self.start_piece = start_piece
        self.opening = opening  # moves made before the programs' first move (an arena's opening)
        self.adjudicate = adjudicate  # end the game once its winner can no longer change
        self.seed = seed
        self.join_timeout = join_timeout
        self.stop_grace = stop_grace
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.programs: dict[Team, Program] = {}
        for team, seat in zip(Team, seats, strict=True):
            if seat.command is not None:
                if self.log_dir is None:
                    raise ValueError("a seat with a program needs a log directory")
                stem = self.log_dir / f"{log_prefix}-{team.name}-{_file_part(seat.name)}"
                walled = seat.walled if seat.walled is not None else not seat.ours
                self.programs[team] = Program(seat.command, stem, log_limit=log_limit, cores=seat.cores, walled=walled)
        self.reservations: tuple[str, str] = (str(uuid.uuid4()), str(uuid.uuid4()))
        self.port = 0
        self.room: Room | None = None
        self.moves: list[ArrivedMove] = []  # every move that arrived, in order (appended in the server thread)
        self.failure: str | None = None  # the host itself could not run (port, a program that cannot start …)
        self._outcome: HostedOutcome | None = None
        self._no_join: tuple[Team, str] | None = None
        self._hurt: tuple[Team, str] | None = None  # our side was hurt (stopped, its seat taken): the game is void
        self._exit_codes: dict[Team, int | None] = {}  # before they were stopped (None: still running)
        self._ready = threading.Event()
        self._cancelled = threading.Event()
        self._done = threading.Event()
        self._judged = threading.Event()  # the programs are stopped and the outcome is known (before ``done``)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None

    # --- running --------------------------------------------------------------------------------------

    def start(self, timeout: float = 30.0) -> None:
        """Start the server thread, prepare the game and start the programs. ProgramError if that fails."""
        if self.programs:
            processes.adopt_orphans()  # a program's detached descendants come back to us, to be ended
        self._thread = threading.Thread(target=self._thread_main, name="blokus-hosted-game", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise ProgramError("the embedded server did not start")
        if self.failure is not None:
            self.close()
            raise ProgramError(self.failure)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> HostedOutcome | None:
        """The outcome once the game is over and every program is stopped (None if not by ``timeout``)."""
        if not self._judged.wait(timeout):
            return None
        return self._outcome

    def cancel(self) -> None:
        """Ask the game to stop (cancelled if it still runs; not started if it has not) without waiting:
        :meth:`close` waits."""
        self._cancelled.set()
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not self._done.is_set():
            with contextlib.suppress(RuntimeError):  # the loop has ended already
                loop.call_soon_threadsafe(stop.set)

    def close(self) -> None:
        """Stop the game (cancelled if it still runs), the programs and the server; waits for the thread."""
        self.cancel()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(self.stop_grace + 15)
        for program in self.programs.values():  # if the thread could not (it never started them: no-op)
            program.stop(self.stop_grace)

    def _thread_main(self) -> None:
        try:
            asyncio.run(self._main())
        except Exception as exc:  # never a traceback from the host thread: the game is judged as failed
            log.exception("hosted game failed")
            self.failure = self.failure or f"the embedded server failed: {exc}"
        finally:
            for program in self.programs.values():
                with contextlib.suppress(Exception):
                    program.stop(self.stop_grace)
            if self._outcome is None:
                self._outcome = HostedOutcome(None, forfeit=self.failure or "", logs=self._logs())
            self._ready.set()
            self._judged.set()
            self._done.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = stop = asyncio.Event()
        if self._cancelled.is_set():  # cancelled before its loop ran: no program is started
            stop.set()
        finished = asyncio.Event()
        hard = self.timeouts.hard if self.timeouts.hard is not None else UNTIMED_HARD_S
        config = ServerConfig(
            host=HOST,
            port=0,
            timeouts=Timeouts(self.timeouts.soft, hard),
            start_piece=self.start_piece,
            seed=self.seed,
            season=self.season,
            print_games=False,
            connections=ConnectionLimits(idle_timeout=self.join_timeout + 5),
        )
        server = GameServer(config, on_game_end=lambda record: finished.set())
        try:
            await server.start()
        except OSError as exc:
            self.failure = f"cannot listen on {HOST}: {exc.strerror or exc}"
            return
        try:
            self.port = server.port
            slots = [
                RoomSeat(team, display_name=seat.name, can_timeout=seat.can_timeout, reservation=code)
                for team, seat, code in zip(Team, self.seats, self.reservations, strict=True)
            ]
            self.room = room = server.prepare_game(slots)
            room.opening, room.adjudicate = self.opening, self.adjudicate
            self._watch_moves(room)
            self._watch_seats(room)
            for team, program in self.programs.items():
                seat = self.seats[team]
                if stop.is_set():
                    break
                try:
                    if seat.ours:
                        await self._start_seated(server, program, self.reservations[team], seat.env)
                    else:
                        program.start(HOST, self.port, self.reservations[team], env=seat.env)
                except ProgramError as exc:
                    self.failure = f"{seat.name} could not start: {exc}"
                    return
            self._ready.set()
            await self._await_join(room, stop)
            if self._no_join is None and self._hurt is None and room.started:
                await self._await_end(room, finished, stop)
            if room.started and not room.finished:
                room.cancel()  # stopped early
            await asyncio.to_thread(self._stop_programs)
            self._outcome = judge_hosted(self._hosted(room))
            self._judged.set()  # the outcome is known: nobody waits for the server's shutdown
        finally:
            await server.close()

    async def _start_seated(self, server: GameServer, program: Program, code: str, env: dict[str, str] | None) -> None:
        """Start a player of ours on one end of a socket pair whose other end the server seats with ``code``."""
        ours, theirs = socket.socketpair()
        try:
            await server.seat_connection(theirs, code)
            program.start_seated(ours, self.season, env)
        finally:
            ours.close()  # the player holds its own copy

    def _watch_ours(self, room: Room) -> bool:
        """Whether our side has been hurt (``_hurt``): one of its processes stopped by a signal (SIGSTOP …),
        seen by the kernel's word to its parent, however short the stop."""
        for team, program in self.programs.items():
            if self._hurt is None and self.seats[team].ours and program.child is not None:
                if program.child.suspended_yet():
                    state = room.state if room.started else None
                    when = f"seen at turn {state.turn}" if state is not None else "before the game started"
                    self._hurt = (team, f"was stopped by a signal ({when})")
        return self._hurt is not None

    async def _await_join(self, room: Room, stop: asyncio.Event) -> None:
        deadline = time.monotonic() + self.join_timeout
        while not room.started and not stop.is_set():
            if self._watch_ours(room):
                return
            for team, program in self.programs.items():
                code = program.exit_code()
                if code is not None and room.slots[team].peer is None:
                    if code == 0:
                        self._no_join = (team, "did not join (exited with code 0 before joining)")
                    else:
                        self._no_join = (team, f"crashed ({describe_exit(code)}) before joining{_said(program)}")
                    return
            if time.monotonic() >= deadline:
                team = next(t for t in Team if room.slots[t].peer is None)
                self._no_join = (team, f"did not join within {self.join_timeout:g} s")
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.05)

    async def _await_end(self, room: Room, finished: asyncio.Event, stop: asyncio.Event) -> None:
        while not finished.is_set() and not stop.is_set():
            if self._watch_ours(room):
                return  # void whatever follows: no need to play it out
            for team, program in self.programs.items():
                program.check_scratch()  # over its bounds: stopped, it leaves (a crash, said so)
                code = program.exit_code()
                peer = room.slots[team].peer
                # ended, but a child still holds the connection: the server cannot see it leave
                if (
                    code is not None
                    and peer is not None
                    and program.exited_at is not None
                    and time.monotonic() - program.exited_at > ORPHAN_GRACE_S
                ):
                    room.on_leave(peer)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(finished.wait(), 0.1)

    def _stop_programs(self) -> None:
        if self.room is not None:
            self._watch_ours(self.room)  # a stop in the last moments of the game
        start = time.monotonic()
        # our side's exit code is worth a wait only after a played game it was not hurt in (a stopped bot never ends)
        played = self.room is not None and self.room.result is not None and self._hurt is None
        for team, program in self.programs.items():  # leaving by itself after the result is the normal end
            grace = OURS_EXIT_GRACE_S if self.seats[team].ours and played else EXIT_GRACE_S
            self._exit_codes[team] = program.wait_exit(max(0.0, start + grace - time.monotonic()))
        for program in self.programs.values():
            program.stop(self.stop_grace)

    def _watch_moves(self, room: Room) -> None:
        """Record every move that arrives (sender, turn, latency) for the judge and the move times: the
        room's one entry point for moves, wrapped on this instance; the server itself is unchanged."""
        original = room.on_move

        def on_move(peer, move, error=None, mistake=None, at=None) -> None:
            slot = room.slot_of(peer)
            counted = len(room.latencies)
            turn = room.state.turn if room.state is not None else 0
            original(peer, move, error=error, mistake=mistake, at=at)
            if slot is not None:
                latency = room.latencies[-1] if len(room.latencies) > counted else None
                self.moves.append(ArrivedMove(slot.team, turn, move, mistake, latency))

        room.on_move = on_move  # type: ignore[method-assign]

    def _watch_seats(self, room: Room) -> None:
        """Our side's seat taken by a connection that is not the one the server seated for it (a code that
        leaked): hurt. Wraps the room's one entry point for players, as ``_watch_moves`` does for moves."""
        original = room.add_player

        def add_player(peer, slot) -> None:
            team = slot.team
            if self.seats[team].ours and getattr(peer, "seat", None) != self.reservations[team] and not self._hurt:
                self._hurt = (team, "lost its seat to another connection")
            original(peer, slot)

        room.add_player = add_player  # type: ignore[method-assign]

    # --- what happened ------------------------------------------------------------------------------

    def times(self, team: Team) -> list[float]:
        return [m.latency for m in list(self.moves) if m.team == team and m.latency is not None]

    def _logs(self) -> dict[Team, tuple[Path, Path]]:
        return {team: (p.out_path, p.err_path) for team, p in self.programs.items()}

    def _hosted(self, room: Room) -> Hosted:
        """What happened, for the verdict (``ai.arena.verdict``): after the programs were stopped."""
        sides = []
        for team, seat in zip(Team, self.seats, strict=True):
            program = self.programs.get(team)
            if program is None:
                sides.append(HostedSide(seat.name, seat.ours))
            else:
                code, said, trace = self._exit_codes.get(team), _said(program), program.last_traceback()
                sides.append(HostedSide(seat.name, seat.ours, True, code, said, trace))
        return Hosted(
            (sides[0], sides[1]),
            self.season,
            room.result,
            room.state,
            room.adjudicated,
            list(self.moves),
            {team: self.times(team) for team in Team},
            room_replay(room) if room.history_xml else None,
            self._logs(),
            self._no_join,
            self._hurt,
            self.timeouts.hard if self.timeouts.hard is not None else UNTIMED_HARD_S,
            OURS_EXIT_GRACE_S,
        )


def _said(program: Program) -> str:
    """``: <its last stderr line>``, with the place of its last Python traceback's last frame if the line
    does not name it already (``: KeyError: 'x' (client.py:31 in score)``); "" if it said nothing."""
    line = program.last_stderr_line()
    where = frame_of(program.last_traceback())
    if where and where.split(" in ")[0] not in line:
        line = f"{line} ({where})" if line else where
    return f": {line}" if line else ""


def _file_part(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name)[:40] or "program"


def _start_failure(exe: str, exc: OSError) -> str:
    """Why ``exe`` could not start, in one line: a script whose interpreter line names a missing program
    says so (the system's "No such file or directory" would name the script, which is there)."""
    if os.path.isfile(exe):
        with contextlib.suppress(OSError):
            with open(exe, "rb") as fh:
                first = fh.readline(200)
            words = first[2:].split() if first.startswith(b"#!") else []
            if words and not (os.path.isfile(words[0]) and os.access(words[0], os.X_OK)):
                line = clean_line(first.decode("utf-8", errors="replace"))
                return f"cannot start {exe}: its interpreter line {line!r} names no program that can run"
    return str(exc) if isinstance(exc, processes.StartError) else f"cannot start {exe}: {exc.strerror or exc}"
