"""``py:PATH[:CLASS]``: a team's player written in Python on ``blokus.player`` — the side of it that runs in
a process of its own (``python -P -m blokus.ai.players.pyplayer PATH CLASS MEMORY_MIB SCRATCH [check]``, started by
``ai.players.team_process``).

``load_player_class`` imports the file (its folder first on ``sys.path``, so that its helper modules import)
and finds the class: the one named, else the file's one subclass of ``ai.players.player_api.Player``, else the one
called ``Logic`` (the socha template's name). It is only ever called in this child process: a team's file is
never imported in one of our commands' own processes.

The child talks to its parent over its stdin and stdout (kept for the protocol: the team's ``print`` and
anything it writes to its stdout go to the child's stderr, which the parent forwards and caps). Frames are a
4-byte big-endian length and a payload:

* parent → child, a pickled tuple (the parent is trusted): ``("move", rid, state, deadline, team)`` — the
  position (``model.state.GameState``), the ``time.monotonic()`` deadline (one clock for both processes) and
  the team to play; ``("stop", rid)`` — the answer is no longer wanted (``time_left()`` gives 0);
  ``("game_over", result)``; ``("quit",)``; the optional hooks: ``("joined", room_id)`` → ``on_game_joined``,
  ``("error", text)`` → ``on_error``, ``("idle", state, team)`` → ``while_waiting(stop)`` in a thread of its
  own (only for a class that has it: ``ready`` says ``waits``), stopped by the reader thread as soon as a
  ``move``, ``end_idle``, ``game_over`` or ``quit`` arrives. Unknown kinds are ignored.
* child → parent, a JSON object (read by the parent with a size limit, never unpickled: the team's code
  runs here): ``{"t": "engine"}`` (our compiled engine is loaded: a first start compiles it),
  ``{"t": "ready", "class": NAME, "waits": BOOL}`` (``waits``: it has ``while_waiting``),
  ``{"t": "load_error", "line": ...}``, ``{"t": "move", "rid": N, "move": "BLUE PENTO_L RIGHT false 3 0"}``
  (the move as plain values, ``model.moves.as_move``), ``{"t": "error", "rid": N, "kind": "ValueError",
  "line": ..., "trace": ...}`` (an exception, or an answer that is no move: kind ``not a move``),
  ``{"t": "done", "line": ...}`` (``on_game_over`` has returned; a line if it raised).

Before the team's file is imported the child lowers its own memory limit (``RLIMIT_DATA``: a big allocation
is a ``MemoryError`` in the team's code, not a machine out of memory), offers itself first to the kernel's
out-of-memory killer, closes the compile cache's folders and walls itself in (``ai.sandbox``: it writes only in
its scratch folder, its working directory from then on, connects to nothing and cannot reach our processes).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import inspect
import json
import os
import pickle
import queue
import re
import resource
import struct
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from blokus.ai import sandbox
from blokus.ai.interface import EngineError
from blokus.ai.players.registry import PlayerKind, PlayerSpec
from blokus.model.moves import NotAMove, as_move

if TYPE_CHECKING:
    import blokus.ai.players.player_api as api

HEADER = struct.Struct(">I")
TRACE_LIMIT = 8 * 1024  # characters of a traceback sent to the parent
EXIT_LOAD_FAILED = 4

# message kinds, parent → child
MOVE, STOP, GAME_OVER, QUIT = "move", "stop", "game_over", "quit"
JOINED, IDLE, END_IDLE, SERVER_ERROR = "joined", "idle", "end_idle", "error"
STOPS_IDLE = (MOVE, END_IDLE, GAME_OVER, QUIT)  # what ends a while_waiting
IDLE_JOIN_S = 0.05  # how long a move request waits for while_waiting to return after its stop is set


class PlayerLoadError(ValueError):
    """The player file cannot be loaded or has no usable class (one line, for a command's error)."""


class PlayerCodeError(EngineError):
    """The team's player could not answer (``kind``: the exception's type name, ``not a move``, ``process
    ended``, ...); ``str()`` is ``KIND at turn N: ...``."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind


# --- frames ----------------------------------------------------------------------------------------------


class FrameError(ValueError):
    """A frame over the size limit: the other side does not speak the protocol."""


class FrameReader:
    """Collects bytes and returns the complete payloads (each at most ``limit`` bytes)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        self._buffer += data
        frames = []
        while len(self._buffer) >= HEADER.size:
            (size,) = HEADER.unpack_from(self._buffer)
            if size > self.limit:
                raise FrameError(f"a message of {size} bytes (at most {self.limit})")
            if len(self._buffer) < HEADER.size + size:
                break
            frames.append(bytes(self._buffer[HEADER.size : HEADER.size + size]))
            del self._buffer[: HEADER.size + size]
        return frames


def frame(payload: bytes) -> bytes:
    return HEADER.pack(len(payload)) + payload


# --- loading ---------------------------------------------------------------------------------------------


def _module_name(path: Path) -> str:
    return "blokus_py_player_" + re.sub(r"\W", "_", str(path.resolve()))


def load_player_class(spec: PlayerSpec) -> type[api.Player]:
    """The team's player class of a ``py:PATH[:CLASS]`` spec (``PlayerLoadError`` in one line if there is none).

    Imports the team's file: call it only in the team's own process. A file is imported once per process."""
    import blokus.ai.players.player_api as api  # (lazily: numba loads only where a team's player runs)

    path, class_name = Path(spec.path), spec.class_name
    if not path.is_file():
        raise PlayerLoadError(f"{path}: no such file (write py:PATH[:CLASS], e.g. py:player.py)")
    name = _module_name(path)
    module = sys.modules.get(name)
    if module is None:
        folder = str(path.resolve().parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise PlayerLoadError(f"{path}: not a Python file")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        try:
            module_spec.loader.exec_module(module)
        except BaseException as exc:  # the team's code at import time: SyntaxError, ImportError, SystemExit ...
            del sys.modules[name]
            raise PlayerLoadError(f"{path}: cannot be loaded: {_where(exc, path)}") from None
    if class_name:
        cls = getattr(module, class_name, None)
        if not (inspect.isclass(cls) and issubclass(cls, api.Player)):
            raise PlayerLoadError(f"{path}: no class {class_name} derived from blokus.player.Player")
        return cls
    own = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, api.Player)
        and obj is not api.Player
        and obj.__module__ == module.__name__
    ]
    if len(own) == 1:
        return own[0]
    logic = [cls for cls in own if cls.__name__ == "Logic"]
    if len(logic) == 1:
        return logic[0]
    if not own:
        raise PlayerLoadError(f"{path}: no class derived from blokus.player.Player")
    names = ", ".join(sorted(cls.__name__ for cls in own))
    raise PlayerLoadError(f"{path}: several player classes ({names}); name one: py:{path}:CLASS")


def _where(exc: BaseException, path: Path) -> str:
    """``player.py:12: NameError: name 'x' is not defined`` — where in the team's files it went wrong."""
    if isinstance(exc, SyntaxError):
        return f"{Path(exc.filename or path).name}:{exc.lineno}: SyntaxError: {exc.msg}"
    frame = _team_frame(exc, path)
    where = f"{Path(frame.filename).name}:{frame.lineno}: " if frame is not None else ""
    return f"{where}{type(exc).__name__}: {exc}"


def _team_frame(exc: BaseException, path: Path) -> traceback.FrameSummary | None:
    """The last frame of the exception's traceback in the team's folder (the one of ``path``), else its last."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if Path(f.filename).resolve().parent == path.resolve().parent] or frames
    return own[-1] if own else None


def _cut(text: str, limit: int = 1000) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _team_trace(exc: BaseException) -> str:
    """The traceback from the team's frames on (this file's frames left out)."""
    tb = exc.__traceback__
    while tb is not None and Path(tb.tb_frame.f_code.co_filename).resolve() == Path(__file__).resolve():
        tb = tb.tb_next
    text = "".join(traceback.format_exception(type(exc), exc, tb)).rstrip()
    return text if len(text) <= TRACE_LIMIT else "…" + text[-TRACE_LIMIT:]


# --- the child -------------------------------------------------------------------------------------------


class _Channel:
    """The child's end of the protocol: frames in (a reader thread), JSON frames out."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._lock = threading.Lock()
        self.inbox: queue.Queue[tuple] = queue.Queue()
        self.stopped: set[int] = set()  # request ids whose answer is no longer wanted
        self.idle_stop = threading.Event()  # set: while_waiting should return (a move is asked, or the game ends)
        self.idle_stop.set()

    def send(self, **message: object) -> None:
        data = frame(json.dumps(message).encode("utf-8"))
        with self._lock:
            view = memoryview(data)
            while view:
                try:
                    view = view[os.write(self._write_fd, view) :]
                except OSError:  # the parent is gone: nothing to answer to
                    os._exit(0)

    def read_forever(self) -> None:
        reader = FrameReader(1 << 30)  # the parent is trusted
        while True:
            try:
                data = os.read(self._read_fd, 1 << 16)
            except OSError:
                data = b""
            if not data:
                self.inbox.put((QUIT,))
                return
            for payload in reader.feed(data):
                message = pickle.loads(payload)
                if message[0] == STOP:
                    self.stopped.add(message[1])
                    continue
                if message[0] in STOPS_IDLE:
                    self.idle_stop.set()  # at once, from this thread: the main one may be busy
                self.inbox.put(message)


def _limit_memory(mib: int) -> None:
    if mib <= 0:
        return
    wanted = mib * 2**20
    with contextlib.suppress(ValueError, OSError):
        _, hard = resource.getrlimit(resource.RLIMIT_DATA)
        limit = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as fh:
        fh.write("1000")  # the first to go if the machine runs out of memory: never the bot


def _answer(channel: _Channel, player: api.Player, message: tuple, path: Path) -> None:
    import blokus.ai.players.player_api  # noqa: F401  (lazily: numba loads only where a team's player runs)

    _, rid, state, deadline, team = message
    turn = state.turn
    player.team = team
    player._deadline = deadline
    player._stop = lambda: rid in channel.stopped
    try:
        player.on_update(state.copy())
        answer = player.calculate_move()
    except BaseException as exc:  # SystemExit: sys.exit() in the team's code; the child plays on
        kind = type(exc).__name__
        frame = _team_frame(exc, path)  # the team's file and line: "KeyError at turn 9, player.py:31 in score: 'x'"
        where = f", {Path(frame.filename).name}:{frame.lineno} in {frame.name}" if frame is not None else ""
        line = _cut(f"{kind} at turn {turn}{where}: {exc}")
        channel.send(t="error", rid=rid, kind=kind[:60], line=line, trace=_team_trace(exc))
        return
    try:
        move = as_move(answer, "calculate_move returned")
    except NotAMove as exc:
        channel.send(t="error", rid=rid, kind="not a move", line=_cut(f"not a move at turn {turn}: {exc}"), trace="")
        return
    channel.send(t="move", rid=rid, move=str(move))


_HOOK_ERRORS_SHOWN: set[tuple[str, str]] = set()


def _hook(name: str, call: Callable[[], object]) -> None:
    """Call one of the team's optional hooks: an exception is said on stderr (the parent forwards it; its
    traceback once per hook and kind), never fatal and never a move's loss."""
    try:
        call()
    except BaseException as exc:  # SystemExit too: the child plays on
        kind = type(exc).__name__
        if (name, kind) not in _HOOK_ERRORS_SHOWN:
            _HOOK_ERRORS_SHOWN.add((name, kind))
            line = f"{name} raised {kind}: {_cut(str(exc))} (further ones are not shown)\n{_team_trace(exc)}"
            print(line, file=sys.stderr, flush=True)


def _start_idle(channel: _Channel, player: api.Player, message: tuple) -> threading.Thread:
    """``while_waiting`` in a thread of its own, given the position after our move; it returns when the
    stop is set (a move request, the end of the game) — or the move is answered beside it, which it slows."""
    import blokus.ai.players.player_api  # noqa: F401  (lazily: numba loads only where a team's player runs)

    _, state, team = message
    player.team = team
    _hook("on_update", lambda: player.on_update(state.copy()))
    channel.idle_stop.clear()
    stop = channel.idle_stop
    thread = threading.Thread(target=_hook, args=("while_waiting", lambda: player.while_waiting(stop)), daemon=True)
    thread.name = "while_waiting"
    thread.start()
    return thread


def waits(cls: type[api.Player]) -> bool:
    """Whether the class thinks on the opponent's time (overrides ``while_waiting``)."""
    import blokus.ai.players.player_api as api  # (lazily: numba loads only where a team's player runs)

    return getattr(cls, "while_waiting", None) is not api.Player.while_waiting


def _wall_in(scratch: Path, folder: Path) -> None:
    """Right before the team's file is imported (our modules and compiled kernels are loaded): this process
    lets go of our descriptors (the compile cache's folders), works in ``scratch`` and is walled in
    (``ai.sandbox``: it writes only there, reads the team's ``folder`` and what Python needs, connects to
    nothing, cannot reach a process outside it). Where Landlock is missing the parent has said so."""
    numba_cache = sys.modules.get("blokus.model.numba_cache")
    if numba_cache is not None:
        numba_cache.close_folders()
    with contextlib.suppress(OSError):
        os.chdir(scratch)
    sandbox.confine(sandbox.Walls(scratch, reads=(folder,)))


def serve(argv: list[str]) -> int:
    """The child's main: ``PATH CLASS MEMORY_MIB SCRATCH [check]`` (CLASS may be empty; SCRATCH: the folder the
    team's code may write in, walled in by ``ai.sandbox``, "" for no walls; ``check``: load the file, make the
    player and end, without our compiled engine)."""
    path, class_name, memory, scratch, *mode = argv
    read_fd, write_fd = os.dup(0), os.dup(1)  # the protocol's ends (not inherited by the team's processes)
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(2, 1)  # the team's stdout joins its stderr: the parent forwards both
    with contextlib.suppress(AttributeError, ValueError):
        sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    channel = _Channel(read_fd, write_fd)
    if mode != ["check"]:
        from blokus.model.fast import warm_up

        warm_up()  # the compiled engine behind the API's GameState: loaded (or compiled) before any clock runs
    import blokus.ai.players.player_api  # noqa: F401  (the API the team's file imports: loaded before the walls)

    channel.send(t="engine")
    _limit_memory(int(memory))
    real = os.path.abspath(path)  # the team's file, wherever its working directory is from now on
    if scratch:
        _wall_in(Path(scratch), Path(real).parent)
    spec = PlayerSpec(PlayerKind.PY, real, path=real, class_name=class_name)
    try:
        cls = load_player_class(spec)
        try:
            player = cls()
        except BaseException as exc:
            raise PlayerLoadError(f"{real}: {cls.__name__}() failed: {_where(exc, Path(real))}") from None
    except PlayerLoadError as exc:
        line = str(exc)
        line = path + line[len(real) :] if line.startswith(real) else line  # the file named as the parent did
        channel.send(t="load_error", line=_cut(line))
        return EXIT_LOAD_FAILED
    channel.send(t="ready", waits=waits(cls), **{"class": cls.__name__})
    if mode == ["check"]:
        return 0
    threading.Thread(target=channel.read_forever, name="protocol", daemon=True).start()
    idle: threading.Thread | None = None
    while True:
        message = channel.inbox.get()
        if idle is not None and message[0] in STOPS_IDLE:
            idle.join(IDLE_JOIN_S)  # its stop is set (by the reader): a well-behaved hook has returned
        if idle is not None and not idle.is_alive():
            idle = None  # (one that ignores its stop runs on: never a second one beside it)
        if message[0] == MOVE:
            _answer(channel, player, message, Path(real))
        elif message[0] == IDLE:
            if idle is None:
                idle = _start_idle(channel, player, message)
        elif message[0] == JOINED:
            _hook("on_game_joined", functools.partial(player.on_game_joined, str(message[1])))
        elif message[0] == SERVER_ERROR:
            _hook("on_error", functools.partial(player.on_error, str(message[1])))
        elif message[0] == GAME_OVER:
            line = ""
            try:
                player.on_game_over(message[1])
            except BaseException as exc:
                line = _cut(f"on_game_over raised {type(exc).__name__}: {exc}")
                print(f"{line}\n{_team_trace(exc)}", file=sys.stderr, flush=True)
            channel.send(t="done", line=line)
        elif message[0] == QUIT:
            return 0


if __name__ == "__main__":
    code = serve(sys.argv[1:])
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)  # the team's threads do not keep the process alive
