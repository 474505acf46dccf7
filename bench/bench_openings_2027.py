"""Time per move of an AI on every 2027 opening (docs/spec/season-2027.md §1.2: up to 560 first placements).

For every 2027 start piece (12), the four colours' first moves are played by the AI under test with
``--move-time`` each; prints per start piece the number of legal first placements of each colour, the
slowest answer and the moves chosen (which border side, whether two colours start side by side).
Usage: ``python bench/bench_openings_2027.py [--ai lookahead] [--move-time 1600]``. The official server
allows 2000 ms per move.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from blokus.ai import make_player  # noqa: E402
from blokus.model.pieces import Shape  # noqa: E402
from blokus.model.season import SEASON_2027  # noqa: E402
from blokus.model.state import GameState  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ai", default="lookahead")
    parser.add_argument("--move-time", type=int, default=1600, metavar="MS")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    player = make_player(args.ai, args.seed)
    worst = 0.0
    for name in SEASON_2027.start_pieces:
        state = GameState.new(SEASON_2027, Shape[name])
        counts, times, moves = [], [], []
        for _ in range(4):
            counts.append(len(state.legal_moves()))
            start = time.monotonic()
            move = player.think(state.copy(), start + args.move_time / 1000, threading.Event())
            times.append(time.monotonic() - start)
            state.play(move)
            moves.append(f"{move.color.name[0]}@({move.x},{move.y})")
        worst = max(worst, *times)
        print(f"{name:8} first placements {counts}  max {1000 * max(times):5.0f} ms  {' '.join(moves)}", flush=True)
    print(f"slowest answer: {1000 * worst:.0f} ms (limit 2000 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
