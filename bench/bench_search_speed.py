"""Benchmark of the compiled lookahead (not a test): evaluated positions per second and depth reached.

Thinks ``--move-time`` on positions at turns 12, 28, 44 and 56 of seeded random games (the kernels are
compiled or loaded from numba's cache first). Compare two versions of the code with the same arguments.
Usage: python bench/bench_search_speed.py [--games N] [--move-time S]
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from blokus.ai.search import fastsearch as FS  # noqa: E402
from blokus.model.pieces import Shape  # noqa: E402
from blokus.model.state import GameState  # noqa: E402

TURNS = (12, 28, 44, 56)


def positions(games: int) -> list[GameState]:
    out = []
    for seed in range(games):
        rng = random.Random(seed)
        state = GameState(Shape.PENTO_L)
        while not state.is_over and state.turn < max(TURNS):
            ids = state.legal_placements()
            state.push_placement(int(ids[rng.randrange(len(ids))]))
            if state.turn in TURNS:
                out.append(state.copy())
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=4)
    p.add_argument("--move-time", type=float, default=1.0)
    args = p.parse_args()
    FS.KERNELS.prepare(wait=True)
    player = FS.FastLookaheadPlayer(0)
    nodes = seconds = 0.0
    for state in positions(args.games):
        player.think_compiled(state.copy(), time.monotonic() + args.move_time, threading.Event())
        info = player.last_info
        nodes += info["nodes"]
        seconds += info["time"]
        print(
            f"turn {state.turn:2d}  depth {info['depth']:2d}  width {info.get('width', '-')}  "
            f"nodes {info['nodes']:7d}  {info['time']:.2f} s"
        )
    print(f"positions per second: {nodes / seconds:,.0f}")


if __name__ == "__main__":
    main()
