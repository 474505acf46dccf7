"""Benchmark of the MCTS's speed (not a test): simulations per second of CPU time.

For positions of seeded random games at the given turns, the default MCTS runs a fixed number of
simulations (after a warm-up search of the same size) and the thread's CPU time is measured, so a busy
machine changes the figures less than wall-clock time would. The tree statistics (nodes, edges, depth)
depend only on the code and the seed: two versions that print the same ones searched the same tree.
Usage: python bench/bench_mcts.py [--turns 8,16,24,32,40] [--simulations 4000] [--seed 3]
"""

from __future__ import annotations

import argparse
import random
import threading
import time

from ai.mcts import MctsPlayer, prepare
from model.pieces import Shape
from model.state import GameState


def position(turns: int, seed: int) -> GameState:
    rng = random.Random(seed)
    state = GameState(Shape.PENTO_L)
    while state.turn < turns and not state.is_over:
        ids = state.legal_placements()
        state.push_placement(int(ids[rng.randrange(len(ids))]))
    return state


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--turns", default="8,16,24,32,40")
    p.add_argument("--simulations", type=int, default=4000)
    p.add_argument("--seed", type=int, default=3)
    args = p.parse_args()
    prepare(None)
    print(f"{'turn':>4} {'moves':>5} {'sims/cpu-s':>10} {'nodes':>6} {'edges':>8} {'depth':>5}")
    for turns in (int(t) for t in args.turns.split(",")):
        state = position(turns, args.seed)
        player = MctsPlayer(1, max_simulations=args.simulations)
        player.think(state.copy(), time.monotonic() + 600, threading.Event())  # warm-up (caches, compiled code)
        start = time.thread_time()
        player.think(state.copy(), time.monotonic() + 600, threading.Event())
        spent = time.thread_time() - start
        nodes, edges, sims, depth = player.tree.counters.tolist()
        moves = len(state.legal_placements())
        print(f"{state.turn:>4} {moves:>5} {sims / spent:>10.0f} {nodes:>6} {edges:>8} {depth:>5}")


if __name__ == "__main__":
    main()
