"""Benchmark of the AI (not a test): evaluation speed, and depth / nodes / time of the lookahead.

Usage: python bench/bench_ai.py [--positions N] [--move-time MS]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from blokus.ai.search.evaluate import evaluate  # noqa: E402
from blokus.ai.search.lookahead import LookaheadPlayer  # noqa: E402
from blokus.model.pieces import Shape  # noqa: E402
from blokus.model.season import DEFAULT_SEASON  # noqa: E402
from blokus.model.state import GameState  # noqa: E402


def positions(n: int, seed: int) -> list[GameState]:
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        state = GameState.new(start_piece=Shape[rng.choice(DEFAULT_SEASON.start_pieces)])
        stop_at = rng.randrange(0, 60)
        while not state.is_over and state.turn < stop_at:
            ids = state.legal_placements()
            state.push_placement(int(ids[rng.randrange(len(ids))]))
        if not state.is_over:
            out.append(state.copy())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--positions", type=int, default=12)
    ap.add_argument("--move-time", type=int, default=1600)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    states = positions(args.positions, args.seed)
    t = time.perf_counter()
    for _ in range(50):
        for s in states:
            evaluate(s)
    print(f"evaluate: {(time.perf_counter() - t) / (50 * len(states)) * 1e6:.1f} us per position")
    player = LookaheadPlayer(1)
    rows = []
    for s in states:
        start = time.monotonic()
        player.think(s, start + args.move_time / 1000, threading.Event())
        rows.append((time.monotonic() - start, player.last_info))
    times = [r[0] for r in rows]
    print(
        f"lookahead at {args.move_time} ms: depth {[r[1]['depth'] for r in rows]}, "
        f"median nodes {statistics.median(r[1]['nodes'] for r in rows):.0f}, "
        f"mean time {1000 * statistics.mean(times):.0f} ms, max {1000 * max(times):.0f} ms, "
        f"CPU share {[r[1]['cpu_share'] for r in rows]}"
    )


if __name__ == "__main__":
    main()
