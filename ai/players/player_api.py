"""The player API's implementation: a team's ``Player`` base class; the ``GameState`` it searches on is the one
position class, ``model.state.GameState`` (docs/position.md), re-exported here.

The public face is ``blokus.player`` (it re-exports these names with the reference in
``docs/player-api.md``). They live here, below ``net`` and ``cli``, so that ``ai.players.pyplayer`` (the loader of
``py:PATH[:CLASS]`` players) can build them while imports keep pointing one way. Importing this module loads the
compiled engine (``model.fast``, numba), so every position's move lists, counts, corners and push/pop run compiled
underneath; the reference engine checks moves in ``play``/``is_legal``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from blokus.model import fast as _fast  # noqa: F401  (numba loaded: positions use the compiled engine)
from blokus.model.moves import Move, parse_move
from blokus.model.pieces import Team
from blokus.model.state import GameState

if TYPE_CHECKING:
    from blokus.model.result import GameResult

__all__ = ["GameState", "Player", "move_of_text"]


def move_of_text(text: str) -> Move:
    """Parse a move in its one printed form (``str(move)``): ``BLUE PENTO_L RIGHT false 3 0`` or ``BLUE SKIP``.

    COLOR SHAPE ROTATION FLIPPED X Y: ROTATION is NONE, RIGHT (90° clockwise), MIRROR (180°) or LEFT
    (270°); FLIPPED is true or false (mirrored left-right before the rotation); (X, Y) is the top-left
    corner of the placed piece's bounding box. Raises ``ValueError`` for anything else.
    """
    return parse_move(text)


class StopSignal(Protocol):
    """What ``while_waiting`` gets: ``is_set()`` is true once it should return (a ``threading.Event``)."""

    def is_set(self) -> bool:
        """True once ``while_waiting`` should return."""
        ...


class Player:
    """The base class of your player: subclass it and write ``calculate_move``.

    Shaped like the official ``socha`` client's ``IClientHandler``: ``on_update(state)`` gets the position
    before each of your moves (the default keeps it as ``self.game_state``), ``calculate_move()`` returns
    your move, ``on_game_over(result)`` gets the result. ``time_left()`` says how many seconds of the move's
    think time are left. Optional hooks: ``while_waiting(stop)`` (think on the opponent's time),
    ``on_game_joined(room_id)``, ``on_error(message)``. ``blokus bot --player FILE``, ``python FILE -h HOST
    -p PORT -r CODE`` (with :func:`blokus.player.run` at its end) and ``blokus arena py:FILE ...`` load your
    class.
    """

    game_state: GameState | None = None

    #: your team (set before your first move)
    team: Team | None = None

    _deadline: float | None = None  # time.monotonic() value, set by the loader before each calculate_move
    _stop: Callable[[], bool] | None = None  # the answer is no longer wanted

    def on_update(self, state: GameState) -> None:
        """Called with the current position before every ``calculate_move`` (your colour is to move).
        The default keeps it as ``self.game_state``."""
        self.game_state = state

    def calculate_move(self) -> Move:
        """Return a legal move for the colour to move in ``self.game_state`` before ``time_left()`` runs out.

        Any problem (an exception, an illegal move, a late answer) is replaced by a legal move by
        ``blokus bot`` (and counted in its summary); ``--strict`` and the arena judge it as the contest does.
        """
        raise NotImplementedError("write calculate_move in your Player subclass")

    def on_game_over(self, result: GameResult) -> None:  # noqa: B027 - optional hook
        """Called once with the result (``result.winner``, ``result.points(team)``, ``result.reason``)."""

    def while_waiting(self, stop: StopSignal) -> None:  # noqa: B027 - optional hook
        """Think on the opponent's time: called in a thread of its own after each of your moves, with
        ``self.game_state`` the position after it. Return soon after ``stop.is_set()`` becomes true (the next
        move is asked, or the game ends): check it often, e.g. once per node of your search. Keep what you
        learn (a transposition table, a tree) for your next ``calculate_move``. An exception is shown on
        stderr and costs no move; a hook that ignores the stop only slows your next move, which the bot
        answers in time anyway (a fallback move, counted)."""

    def on_game_joined(self, room_id: str) -> None:  # noqa: B027 - optional hook
        """Called once the game is joined, with the server's room id (before the first position)."""

    def on_error(self, message: str) -> None:  # noqa: B027 - optional hook
        """Called with the text of an error the server sent (its German text, as received)."""

    def answer(self, state: GameState, seconds: float = 1.6) -> Move:
        """What the bot does for each move, for your tests and experiments: ``on_update(state)``, then
        ``calculate_move()`` with ``seconds`` to think (``time_left()`` counts them down)."""
        self._deadline = time.monotonic() + seconds
        self._stop = None
        self.on_update(state)
        return self.calculate_move()

    def time_left(self) -> float:
        """Seconds left to think about this move (0 once the time is up or the answer is no longer wanted)."""
        if self._deadline is None:
            return float("inf")
        if self._stop is not None and self._stop():
            return 0.0
        return max(0.0, self._deadline - time.monotonic())
