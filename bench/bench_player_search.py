"""A two-ply search as a team writes it on ``blokus.player``, with an evaluation that uses the other colours'
mobility: nodes per second before issue 50's calls and after them (not a test).

The search is the template's, one ply deeper: for each of our moves (the ``--width`` biggest), the reply of the
next colour that is worst for us (all its replies), each leaf valued by one evaluation:

    points of our team - the other team's + W x (the mobility of our colours - the other team's colours')

with two measures of mobility, each computed the way before (what a team wrote by hand) and after:

* corners: a colour's free corners. Before: numpy over ``board()`` for every colour (the bottleneck a team
  met); after: ``len(state.corners(color))``.
* moves: a colour's number of legal moves. Before: ``len(state.to_model().legal_placements(color))`` (the only
  way to another colour's moves); after: ``state.legal_move_count(color)``.

Before and after must choose the same moves with the same values (checked): the same search, only faster. A
node is a position the search reaches (a push); nodes/s is per second of this process's CPU time (the machine's
load changes it less than the wall clock).

Usage: python bench/bench_player_search.py [--games N] [--width W] [--seed S]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import numpy as np

from blokus.player import Color, GameState, Move, Team

TURNS = (8, 20, 32, 44)  # positions taken from each game
WEIGHT = 0.05
_INNER = np.pad(np.ones((18, 18), dtype=bool), 1)  # False on the border


def corners_by_numpy(state: GameState, color: Color) -> int:
    """The number of free corners of ``color``, from ``board()`` alone (before ``corners()``)."""
    board = state.board()
    own = board == color
    free = board < 0
    if not own.any():  # before its first piece (2027): the free border fields
        return int((free & ~_INNER).sum())
    padded = np.pad(own, 1)
    edge = padded[:-2, 1:-1] | padded[2:, 1:-1] | padded[1:-1, :-2] | padded[1:-1, 2:]
    diag = padded[:-2, :-2] | padded[:-2, 2:] | padded[2:, :-2] | padded[2:, 2:]
    return int((free & diag & ~edge).sum())


Mobility = Callable[[GameState, Color], int]

MEASURES: dict[str, tuple[Mobility, Mobility]] = {
    "corners": (
        lambda state, color: corners_by_numpy(state, color) if color in state.valid_colors else 0,
        lambda state, color: len(state.corners(color)),
    ),
    "moves": (
        lambda state, color: len(state.to_model().legal_placements(color)) if color in state.valid_colors else 0,
        lambda state, color: state.legal_move_count(color),
    ),
}


def evaluate(state: GameState, team: Team, mobility: Mobility) -> float:
    """Points and mobility of ``team`` minus the other team's."""
    points = state.team_points(team) - state.team_points(team.opponent)
    ours = sum(mobility(state, c) for c in team.colors)
    theirs = sum(mobility(state, c) for c in team.opponent.colors)
    return points + WEIGHT * (ours - theirs)


class Counter:
    nodes = 0


def two_ply(state: GameState, width: int, mobility: Mobility, counter: Counter) -> tuple[Move, float]:
    """Our best move against the next colour's best reply (all its replies), and its value."""
    team = state.team
    moves = sorted(state.legal_moves(), key=lambda m: -m.shape.size)[:width]
    best, best_value = moves[0], float("-inf")
    for move in moves:
        state.push(move)
        counter.nodes += 1
        value = float("inf")
        replies = state.legal_moves() if not state.is_over else []
        for reply in replies:
            state.push(reply)
            counter.nodes += 1
            value = min(value, evaluate(state, team, mobility))
            state.pop()
        if not replies:
            value = evaluate(state, team, mobility)
        state.pop()
        if value > best_value:
            best, best_value = move, value
    return best, best_value


def positions(games: int, seed: int) -> list[GameState]:
    rng = random.Random(seed)
    found = []
    for game in range(games):
        state = GameState.new(2027, seed=seed * 1000 + game)
        while not state.is_over and state.turn <= TURNS[-1]:
            if state.turn in TURNS:
                found.append(state.copy())
            state.push(rng.choice(state.legal_moves()))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--width", type=int, default=4, help="our moves searched (the biggest first)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    from blokus.model.fast import warm_up

    warm_up()
    states = positions(args.games, args.seed)
    print(
        f"{len(states)} positions of {args.games} games of 2027 (turns {', '.join(map(str, TURNS))}), "
        f"two plies, {args.width} moves of ours x every reply; nodes per CPU second"
    )
    print(f"{'mobility':<9} {'before':>10} {'after':>10} {'faster':>7}  nodes")
    for name, (old, new) in MEASURES.items():
        rates, chosen = [], []
        for mobility in (old, new):
            counter = Counter()
            start = time.process_time()
            chosen.append([two_ply(state, args.width, mobility, counter) for state in states])
            rates.append(counter.nodes / (time.process_time() - start))
        assert chosen[0] == chosen[1], f"{name}: before and after chose differently"
        print(f"{name:<9} {rates[0]:>10,.0f} {rates[1]:>10,.0f} {rates[1] / rates[0]:>6.1f}x  {counter.nodes}")


if __name__ == "__main__":
    main()
