"""Benchmark of the rule engines' inner loop (not a test).

Median time to list all legal moves on mid-game positions (turns 16–64 of seeded random games),
moves per second, and the cost of apply+undo, for the numpy reference engine (``model.state`` on the reference alone,
``on_reference``), the one position class as the AI and the player API use it (``position``: ``model.state.GameState``
on the compiled engine underneath) and the compiled engine itself (``model.fast``; compiled or loaded from numba's
cache before timing). A move list is timed
by the best of ``--repeat`` calls, apply+undo by the thread's CPU time (a busy machine changes them less).
Usage: python bench/bench_movegen.py [--games N] [--engine numpy|position|fast|both] [--season 2021|2027]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from blokus.model.fast import TABLES, FastState, push_pop_loop, warm_up
from blokus.model.pieces import Shape
from blokus.model.season import SEASONS, season_named
from blokus.model.state import GameState, on_reference


def positions(games: int, seed: int, season_name: str = "2021", reference: bool = True) -> list[GameState]:
    season = season_named(season_name)
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        state = GameState.new(season, Shape[rng.choice(season.start_pieces)])
        if reference:
            on_reference(state)
        while not state.is_over and state.turn <= 64:
            if 16 <= state.turn <= 64:
                out.append(state.copy())
            ids = state.legal_placements()
            state.push_placement(int(ids[rng.randrange(len(ids))]))
    return out


def measure(name: str, states: list, repeat: int) -> None:
    gen_times, counts = [], []
    for state in states:
        best = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            ids = state.legal_placements()
            best = min(best, time.perf_counter() - t0)
        gen_times.append(best)
        counts.append(len(ids))
    push_times = []
    for state in states:
        ids = state.legal_placements()
        pid = int(ids[0])
        t0 = time.thread_time()
        for _ in range(repeat):
            state.push_placement(pid)
            state.pop()
        push_times.append((time.thread_time() - t0) / repeat)
    med = statistics.median(gen_times)
    p90 = sorted(gen_times)[len(gen_times) * 9 // 10]
    print(f"[{name}] legal moves per position: median {statistics.median(counts):.0f}, max {max(counts)}")
    print(f"[{name}] full legal-move list: median {med * 1e6:.1f} µs, p90 {p90 * 1e6:.1f} µs")
    print(f"[{name}] moves generated per second: {sum(counts) / sum(gen_times):,.0f}")
    print(f"[{name}] apply+undo (push_placement + pop): median {statistics.median(push_times) * 1e6:.2f} µs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--engine", choices=("numpy", "position", "fast", "both"), default="both")
    parser.add_argument("--season", choices=sorted(SEASONS), default="2021")
    args = parser.parse_args()
    states = positions(args.games, args.seed, args.season)
    print(f"positions: {len(states)} (turns 16-64 of {args.games} seeded random games, season {args.season})")
    if args.engine in ("numpy", "both"):
        measure("numpy", states, args.repeat)
    if args.engine in ("position", "both"):
        warm_up()
        measure("position", positions(args.games, args.seed, args.season, reference=False), args.repeat)
    if args.engine in ("fast", "both"):
        warm_up()
        fast_states = [FastState.from_state(s) for s in states]
        measure("fast", fast_states, args.repeat)
        inner = []
        for fs in fast_states:  # the same, called from compiled code (as the AI's playouts do)
            pid = int(fs.legal_placements()[0])
            t0 = time.thread_time()
            push_pop_loop(TABLES, fs.b, fs.m, fs._stack_b, fs._stack_m, pid, fs.first_cells, 100 * args.repeat)
            inner.append((time.thread_time() - t0) / (100 * args.repeat))
        print(f"[fast] apply+undo inside compiled code: median {statistics.median(inner) * 1e6:.2f} µs")


if __name__ == "__main__":
    main()
