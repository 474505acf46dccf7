"""Benchmark of the compiled evaluation (not a test): median time of one ``ai.search.fasteval.evaluate`` call with
the default weights (``TUNED_WEIGHTS``), per band of ten turns, on positions of seeded random games (the
late terms, legal-move count and stranded squares, each cost a move generation).
Usage: python bench/bench_evaluate.py [--games N] [--season 2021|2027]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

from bench_movegen import positions  # bench/ is the script's directory

from blokus.ai.search import fasteval as FE
from blokus.ai.search.evaluate import TUNED_WEIGHTS
from blokus.model.fast import FastState
from blokus.model.season import SEASONS

REPEAT = 50


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--season", choices=list(SEASONS), default="2021")
    args = parser.parse_args()
    w = FE.weight_vector(TUNED_WEIGHTS)
    bands: dict[int, list[FastState]] = defaultdict(list)
    for state in positions(args.games, 7, args.season):
        bands[state.turn // 10 * 10].append(FastState.from_state(state))
    first = next(iter(bands.values()))[0]
    FE.evaluate(first.b, first.m, first.first_cells, w)  # compile or load from numba's cache
    print(f"ai.search.fasteval.evaluate, default weights, season {args.season}, {args.games} random games")
    for band in sorted(bands):
        times = []
        for fs in bands[band]:
            t = time.perf_counter()
            for _ in range(REPEAT):
                FE.evaluate(fs.b, fs.m, fs.first_cells, w)
            times.append((time.perf_counter() - t) / REPEAT)
        median = statistics.median(times) * 1e6
        print(f"turns {band:2d}-{band + 9:2d}: {len(times):4d} positions, median {median:6.2f} µs")


if __name__ == "__main__":
    main()
