"""The greedy player: the legal move with the best one-ply evaluation (``ai.search.evaluate``)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from blokus.ai.interface import Engine, StopFlag, TimeKeeper, fallback_move
from blokus.ai.search.evaluate import DEFAULT_WEIGHTS, Weights, evaluate, static_scores
from blokus.model.moves import Move, SkipMove
from blokus.model.state import GameState, move_of_placement


def no_placement_move(state: GameState, rng) -> Move:
    """The move when the colour to move has no placement: a skip (or any move if skipping is illegal)."""
    if state.can_skip():
        return SkipMove(state.color)
    return fallback_move(state, rng)


def ordered(state: GameState, pids: np.ndarray) -> list[int]:
    """Placements sorted by the cheap static score, best first."""
    if len(pids) <= 1:
        return pids.tolist()
    scores = static_scores(state, pids, state.color)
    return pids[np.argsort(-scores, kind="stable")].tolist()


class GreedyPlayer(Engine):
    name = "greedy"

    def __init__(
        self,
        seed: int | None = None,
        *,
        weights: Weights | None = None,
        noise: float = 0.0,
        clock: Callable[[], float] | None = None,
    ) -> None:
        super().__init__(seed, clock=clock)
        self.weights = weights or DEFAULT_WEIGHTS
        self.noise = noise  # a random term up to this size on every value (a weaker, beatable level)

    def think(self, state: GameState, deadline: float, stop: StopFlag) -> Move:
        timer = TimeKeeper(self.clock, deadline, stop, self.cpu_clock)
        pids = state.legal_placements()
        if state.is_over or not len(pids):
            return no_placement_move(state, self.rng)
        sign = 1.0 if state.color % 2 == 0 else -1.0
        w = self.weights
        best, best_pids = -float("inf"), []
        for i, pid in enumerate(ordered(state, pids)):
            if i & 15 == 15 and timer.expired():
                break
            state.push_placement(pid)
            v = sign * evaluate(state, w)
            state.pop()
            if self.noise:
                v += self.rng.random() * self.noise
            if v > best + 1e-9:
                best, best_pids = v, [pid]
            elif v > best - 1e-9:
                best_pids.append(pid)
        self.last_info = {"moves": len(pids), "value": best}
        return move_of_placement(state.color, self.rng.choice(best_pids))
