"""Benchmark of the game analysis (not a test): wall and CPU time per game at a setting.

For each replay (default: the official 21.3.3 games 1 and 2 of the test fixtures) it runs
``ai.analysis.analyse_game`` without the cache and prints the positions, the wall time, the CPU time
of the process (this one only: with ``--workers`` above 1 the work is in child processes, so compare wall
time), the time per position and the marks per team. ``--workers 1,2`` runs each game with each number of
worker processes (as ``blokus analyse`` uses one per core) and prints the wall-time ratio to the first.
Usage: python bench/bench_analysis.py [REPLAY...] [--time MS] [--ai NAME] [--depth PLIES] [--workers 1,2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from blokus.ai.analysis import DEFAULT_TIME, VALUE_DEPTH, AnalysisSettings, analyse_game, replay_moves  # noqa: E402
from blokus.model.pieces import Team  # noqa: E402
from blokus.model.replay import load_replay  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "sc2021"
GAMES = [FIXTURES / "gen-21.3.3-game1-replay-regular-end.xml", FIXTURES / "gen-21.3.3-game2-replay-round-limit-end.xml"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("replays", nargs="*", type=Path, default=GAMES)
    p.add_argument("--time", type=float, default=DEFAULT_TIME * 1000, help="ms per position")
    p.add_argument("--ai", default="")
    p.add_argument("--depth", type=int, default=VALUE_DEPTH)
    p.add_argument("--workers", default="1", help="numbers of worker processes, comma-separated")
    args = p.parse_args()
    settings = AnalysisSettings(engine=args.ai, time_per_position=args.time / 1000, value_depth=args.depth)
    print(
        f"engine {settings.engine_name()}, {args.time:g} ms per position, values to a round end <= {args.depth} plies"
    )
    worker_counts = [int(n) for n in args.workers.split(",")]
    for path in args.replays:
        replay = load_replay(path)
        first_wall = 0.0
        for workers in worker_counts:
            wall, cpu = time.perf_counter(), time.process_time()
            result = analyse_game(replay.states, replay_moves(replay) + [None], settings, workers=workers)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            first_wall = first_wall or wall
            marks = "  ".join(
                f"{t.name} {s.mistakes}? {s.blunders}??" for t, s in result.summaries().items() if t in Team
            )
            print(
                f"{path.name}: {workers} worker(s), {result.total} positions, {wall:.1f} s wall, {cpu:.1f} s CPU here, "
                f"{1000 * wall / max(1, result.total):.0f} ms per position, wall x{wall / first_wall:.2f}; {marks}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
