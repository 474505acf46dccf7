"""What the weaker levels are made of (the levels themselves are in the registry of ``ai.players.registry``:
``LEVELS``): :class:`CappedTime`, another engine with less time per move."""

from __future__ import annotations

from blokus.ai.interface import Engine, StopFlag
from blokus.model.moves import Move
from blokus.model.state import GameState


class CappedTime(Engine):
    """Another engine with at most ``seconds`` per move (a weaker level that also answers sooner)."""

    def __init__(self, inner: Engine, seconds: float) -> None:
        super().__init__(None, clock=inner.clock)
        self.inner = inner
        self.seconds = seconds

    def think(self, state: GameState, deadline: float, stop: StopFlag) -> Move:
        move = self.inner.think(state, min(deadline, self.inner.clock() + self.seconds), stop)
        self.last_info = self.inner.last_info
        return move
