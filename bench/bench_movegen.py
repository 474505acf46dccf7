"""Benchmark of the rule engine's inner loop (not a test).

Median time to list all legal moves on mid-game positions (turns 16–64 of seeded random games),
moves per second, and the cost of apply+undo. Usage: python bench/bench_movegen.py [--games N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from model.pieces import Shape
from model.season import SEASON
from model.state import GameState


def positions(games: int, seed: int) -> list[GameState]:
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        state = GameState.new(Shape[rng.choice(SEASON.start_pieces)])
        while not state.is_over and state.turn <= 64:
            if 16 <= state.turn <= 64:
                out.append(state.copy())
            ids = state.legal_placements()
            state.push_placement(int(ids[rng.randrange(len(ids))]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    states = positions(args.games, args.seed)
    gen_times, counts = [], []
    for state in states:
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            ids = state.legal_placements()
            best = min(best, time.perf_counter() - t0)
        gen_times.append(best)
        counts.append(len(ids))
    push_times = []
    for state in states:
        ids = state.legal_placements()
        pid = int(ids[0])
        t0 = time.perf_counter()
        for _ in range(args.repeat):
            state.push_placement(pid)
            state.pop()
        push_times.append((time.perf_counter() - t0) / args.repeat)
    med = statistics.median(gen_times)
    print(f"positions: {len(states)} (turns 16-64 of {args.games} seeded random games)")
    print(f"legal moves per position: median {statistics.median(counts):.0f}, max {max(counts)}")
    p90 = sorted(gen_times)[len(gen_times) * 9 // 10]
    print(f"full legal-move list: median {med * 1e3:.3f} ms, p90 {p90 * 1e3:.3f} ms")
    print(f"moves generated per second: {sum(counts) / sum(gen_times):,.0f}")
    print(f"apply+undo (push_placement + pop): median {statistics.median(push_times) * 1e6:.1f} µs")


if __name__ == "__main__":
    main()
