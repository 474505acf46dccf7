"""``py:PATH[:CLASS]``: a team's player written in Python on ``blokus.player``, as one of our ``Player``\\ s.

``load_player_class`` imports the file (its folder first on ``sys.path``, so that its helper modules import)
and finds the class: the one named, else the file's one subclass of ``ai.player_api.Player``, else the one
called ``Logic`` (the socha template's name). ``PyPlayer`` adapts an instance to the ``ai.base.Player``
interface: before each move it gives the team's player the position (``on_update``), its deadline
(``time_left``) and asks ``calculate_move``.

The team's code runs in a daemon thread of its own (one at a time): a ``calculate_move`` that never
returns is abandoned by the controller (``ai.controller.decide`` sends a fallback move) and cannot keep the
process from exiting; while it still runs, later requests are answered at once with a "still busy" error
(also a fallback). An exception's traceback is printed on stderr once per exception type; the controller
and the bot count the fallbacks.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import re
import sys
import threading
import traceback
from pathlib import Path

import ai.player_api as api
from ai.base import Engine, EngineError, StopFlag
from ai.players import PlayerSpec
from model.moves import Move
from model.result import GameResult
from model.state import GameState


class PlayerLoadError(ValueError):
    """The player file cannot be loaded or has no usable class (one line, for a command's error)."""


class PlayerCodeError(EngineError):
    """The team's code raised (``kind``: the exception's type name) or could not be asked."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind


def _module_name(path: Path) -> str:
    return "blokus_py_player_" + re.sub(r"\W", "_", str(path.resolve()))


def load_player_class(spec: PlayerSpec) -> type[api.Player]:
    """The team's player class of a ``py:PATH[:CLASS]`` spec (``PlayerLoadError`` in one line if there is none).

    A file is imported once per process (a second call finds it in ``sys.modules``)."""
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
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if Path(f.filename).resolve().parent == path.resolve().parent] or frames
    where = f"{Path(own[-1].filename).name}:{own[-1].lineno}: " if own else ""
    return f"{where}{type(exc).__name__}: {exc}"


class PyPlayer(Engine):
    """A team's ``blokus.player.Player`` subclass behind the one ``ai.base.Player`` interface."""

    def __init__(self, spec: PlayerSpec, seed: int | None = None, *, clock=None, stderr=None) -> None:
        super().__init__(seed, clock=clock)
        cls = load_player_class(spec)
        path = Path(spec.path)
        self.name = spec.label
        self._stderr = stderr  # None: sys.stderr at the time of writing
        try:
            self.team_player: api.Player = cls()
        except Exception as exc:
            raise PlayerLoadError(f"{path}: {cls.__name__}() failed: {_where(exc, path)}") from None
        from model.fast import warm_up

        warm_up()  # the compiled engine behind the API's GameState: loaded (or compiled) now, not in a move
        self._busy = threading.Lock()
        self._busy_turn = -1
        self._shown: set[str] = set()

    # --- the engine interface ---------------------------------------------------------------------

    async def choose_move(self, state: GameState, deadline: float) -> Move:
        """``think`` in a daemon thread (an abandoned ``calculate_move`` cannot block the exit)."""
        self._stop = stop = threading.Event()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Move] = loop.create_future()

        def run() -> None:
            try:
                move = self.think(state.copy(), deadline, stop)
            except Exception as exc:  # reported to the controller, which falls back
                loop.call_soon_threadsafe(_settle, future, None, exc)
            except BaseException as exc:  # never hand a KeyboardInterrupt or the like to the event loop
                loop.call_soon_threadsafe(_settle, future, None, EngineError(f"{type(exc).__name__}: {exc}"))
            else:
                loop.call_soon_threadsafe(_settle, future, move, None)

        threading.Thread(target=run, name=f"{self.name}-turn-{state.turn}", daemon=True).start()
        return await future

    def think(self, state: GameState, deadline: float, stop: StopFlag) -> Move:
        """Ask the team's player for its move in ``state`` (raises ``PlayerCodeError`` if its code raised)."""
        if not self._busy.acquire(blocking=False):
            raise PlayerCodeError("busy", f"still busy with the move of turn {self._busy_turn} at turn {state.turn}")
        try:
            self._busy_turn = state.turn
            player = self.team_player
            player.team = state.current_team
            player._deadline = deadline
            player._stop = stop.is_set
            try:
                player.on_update(api.GameState(state))
                move = player.calculate_move()
            except (Exception, SystemExit) as exc:  # SystemExit: sys.exit() in the team's code
                kind = type(exc).__name__
                self._report(kind, f"your player raised {kind} at turn {state.turn}", exc)
                raise PlayerCodeError(kind, f"{kind} at turn {state.turn}: {exc}") from None
            return move  # whatever it is (the annotation is a wish): the controller checks it
        finally:
            self._busy.release()

    def game_over(self, result: GameResult) -> None:
        """Give the team's player the result (an exception there is shown, and changes nothing)."""
        try:
            self.team_player.on_game_over(result)
        except Exception as exc:
            self._report(f"on_game_over {type(exc).__name__}", f"on_game_over raised {type(exc).__name__}", exc)

    def _report(self, kind: str, headline: str, exc: BaseException) -> None:
        """The traceback of the team's code on stderr, once per kind."""
        if kind in self._shown:
            return
        self._shown.add(kind)
        tb = exc.__traceback__
        while tb is not None and Path(tb.tb_frame.f_code.co_filename).resolve() == Path(__file__).resolve():
            tb = tb.tb_next  # from the team's frames on
        text = "".join(traceback.format_exception(type(exc), exc, tb)).rstrip()
        more = f" (further {kind}s are counted, not shown)" if not kind.startswith("on_game_over") else ""
        print(f"blokus: {headline}{more}:\n{text}", file=self._stderr or sys.stderr, flush=True)


def _settle(future: asyncio.Future, move: Move | None, exc: BaseException | None) -> None:
    if future.done():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(move)
