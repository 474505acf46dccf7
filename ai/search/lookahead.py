"""The main AI: greedy-pruned alpha-beta lookahead through the four-colour turn order.

Blokus 2021 is a zero-sum game between two teams (BLUE+RED against YELLOW+GREEN) whose colours move
in the order BLUE, YELLOW, RED, GREEN, so the search is a two-sided minimax in which the side to move is
the team of the colour to move (colours that were removed are skipped by the model, so the same team
may move twice in a row). Each ply is pruned to a beam:

* at every node the legal placements are ranked by a cheap vectorised score (``static_scores``), the
  best ``prefilter`` are applied and evaluated (``evaluate``), and only the ``width`` best of those
  (for the team to move) are searched further; at the last ply that evaluation is the node's value;
* at the root every legal move is evaluated (depth 1 = the greedy player), and deeper iterations
  search the ``root_width`` best moves of the previous iteration, best first, with alpha-beta.

Iterative deepening makes it anytime: when the deadline comes (or ``stop`` is set) the best move of
the deepest iteration is returned; a partly searched iteration counts if it already refuted the
previous choice. The loop checks the clock at every node (each costs well under 5 ms).

The same search is the analysis's yardstick (``value_to_turn``, ``ai.analysis``): every line searched to a
fixed turn instead of a ply count, a finished game worth its final point difference.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from blokus.ai.interface import Engine, StopFlag, TimeKeeper
from blokus.ai.search.evaluate import (
    DEFAULT_WEIGHTS,
    Weights,
    decided_value,
    evaluate,
    static_scores,
    terminal_value,
)
from blokus.ai.search.greedy import no_placement_move
from blokus.model.moves import Move
from blokus.model.state import GameState, move_of_placement

INF = float("inf")


class SearchStopped(Exception):
    """The search's time is up, or it was stopped."""


@dataclass
class SearchParams:
    root_width: int = 20
    width: int = 6
    prefilter: int = 14
    max_depth: int = 12


class Searcher:
    """``horizon``: every line ends at that turn, not after a number of plies (a colour out of the game takes no
    ply but its turn passes, so every line ends at the same point of the round) and a finished game is worth its
    final point difference (``terminal_value``), not a certain win's value: the analysis's yardstick."""

    def __init__(
        self, state: GameState, weights: Weights, params: SearchParams, timer: TimeKeeper, horizon: int | None = None
    ) -> None:
        self.state = state
        self.w = weights
        self.p = params
        self.timer = timer
        self.horizon = horizon
        self.team = state.color % 2
        self.sign = 1.0 if self.team == 0 else -1.0
        self.nodes = 0

    def check(self) -> None:
        if self.timer.expired():
            raise SearchStopped

    def value(self) -> float:
        """Static value of the current position for the root team (a finished game: decided)."""
        if self.state.is_over:
            end = decided_value(self.state) if self.horizon is None else terminal_value(self.state, self.w)
            return self.sign * end
        return self.sign * evaluate(self.state, self.w)

    def scored_children(self, pids: np.ndarray, limit: int | None) -> list[tuple[float, int]]:
        """(value for the root team, pid) after each of the best ``limit`` placements by static score."""
        state = self.state
        if limit is not None and len(pids) > limit:
            scores = static_scores(state, pids, state.color)
            pids = pids[np.argpartition(-scores, limit)[:limit]]
        out = []
        push, pop, value = state.push_placement, state.pop, self.value
        for i, pid in enumerate(pids.tolist()):
            if i & 7 == 7:
                self.check()
            push(pid)
            out.append((value(), pid))
            pop()
        self.nodes += len(out)
        return out

    def alphabeta(self, depth: int, alpha: float, beta: float) -> float:
        """Minimax value (for the root team) of the current, not finished position, ``depth`` plies deep (or to
        the ``horizon``)."""
        self.check()
        state = self.state
        maximize = state.color % 2 == self.team
        pids = state.legal_placements()
        if not len(pids):  # only with a hand-built state: the colour can only skip
            return self.value()
        children = self.scored_children(pids, self.p.prefilter)
        if (depth <= 1) if self.horizon is None else (state.turn + 1 >= self.horizon):  # every child is a leaf
            return max(children)[0] if maximize else min(children)[0]
        children.sort(reverse=maximize)
        best = -INF if maximize else INF
        for child_value, pid in children[: self.p.width]:
            state.push_placement(pid)
            try:
                leaf = state.is_over or (self.horizon is not None and state.turn >= self.horizon)
                v = child_value if leaf else self.alphabeta(depth - 1, alpha, beta)
            finally:
                state.pop()
            if maximize:
                if v > best:
                    best = v
                if best > alpha:
                    alpha = best
            else:
                if v < best:
                    best = v
                if best < beta:
                    beta = best
            if alpha >= beta:
                break
        return best


def value_to_turn(state: GameState, horizon: int, weights: Weights, stop: StopFlag) -> float:
    """The value of ``state`` for team ONE by the search with every line ending at the turn ``horizon`` (the
    analysis's yardstick: no clock, a finished game worth its final point difference). SearchStopped once
    ``stop`` is set."""
    if state.is_over:
        return terminal_value(state, weights)
    timer = TimeKeeper(time.monotonic, INF, stop)  # no deadline: only ``stop`` ends it
    searcher = Searcher(state.copy(), weights, SearchParams(), timer, horizon=horizon)
    return searcher.sign * searcher.alphabeta(horizon - state.turn, -INF, INF)


class LookaheadPlayer(Engine):
    name = "lookahead"

    def __init__(
        self,
        seed: int | None = None,
        *,
        weights: Weights | None = None,
        params: SearchParams | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        super().__init__(seed, clock=clock)
        self.weights = weights or DEFAULT_WEIGHTS
        self.params = params or SearchParams()

    def think(self, state: GameState, deadline: float, stop: StopFlag) -> Move:
        timer = TimeKeeper(self.clock, deadline, stop, self.cpu_clock)
        color = state.color
        pids = state.legal_placements()
        if state.is_over or not len(pids):
            return no_placement_move(state, self.rng)
        # a random (seeded) first choice, so that even an immediate stop returns a legal move
        best_pid = int(pids[self.rng.randrange(len(pids))])
        s = Searcher(state, self.weights, self.params, timer)
        depth_done = 0
        root: list[tuple[float, int]] = []
        try:
            # depth 1: every legal move, evaluated, in static order (tiny random jitter breaks ties)
            scores = static_scores(state, pids, color) + np.array([self.rng.random() * 1e-3 for _ in pids])
            for i, pid in enumerate(pids[np.argsort(-scores)].tolist()):
                if i & 7 == 7:
                    s.check()
                state.push_placement(pid)
                root.append((s.value(), pid))
                state.pop()
            s.nodes += len(root)
            root.sort(key=lambda t: -t[0])
            best_pid, depth_done = root[0][1], 1
            ranked = [pid for _, pid in root]
            if len(ranked) > 1:
                for depth in range(2, self.params.max_depth + 1):
                    ranked, complete = self._iteration(s, ranked[: self.params.root_width], depth, ranked)
                    best_pid = ranked[0]
                    if complete:
                        depth_done = depth
                    else:
                        break
        except SearchStopped:
            if depth_done == 0 and root:
                best_pid = max(root)[1]
        self.last_info = {
            "depth": depth_done,
            "nodes": s.nodes,
            "moves": len(pids),
            "time": timer.elapsed(),
            "cpu_share": round(timer.share, 2),
        }
        return move_of_placement(color, best_pid)

    def _iteration(self, s: Searcher, candidates: list[int], depth: int, ranked: list[int]) -> tuple[list[int], bool]:
        """One root iteration; returns the new ranking and whether it completed.

        On a timeout, the moves searched so far are ranked by their new values (the first of them is
        the previous best, so the choice changes only if another move proved better).
        """
        state = s.state
        results: list[tuple[float, int]] = []
        alpha = -INF
        try:
            for pid in candidates:
                state.push_placement(pid)
                try:
                    v = s.value() if state.is_over else s.alphabeta(depth - 1, alpha, INF)
                finally:
                    state.pop()
                results.append((v, pid))
                if v > alpha:
                    alpha = v
        except SearchStopped:
            if len(results) < 2:
                return ranked, False
            complete = False
        else:
            complete = True
        results.sort(key=lambda t: -t[0])
        # moves that failed low keep only an upper bound: their order among themselves is meaningless,
        # but they rank after the best one; unsearched moves keep their previous order
        searched = [pid for _, pid in results]
        seen = set(searched)
        return searched + [pid for pid in ranked if pid not in seen], complete
