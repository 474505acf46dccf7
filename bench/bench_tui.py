"""Benchmark of the TUI's responsiveness (not a test): key press → repainted board.

Drives the real app headless (Textual's Pilot, 140×44) in a mid-game position with a ghost piece and
measures, for each ghost-move key, the time from posting the key until the board's last repainted
line (``Board.render_line``) of the resulting screen update. Reports the median and the 90th
percentile, how many board lines were repainted per key (only the changed rows should be), and the
time of a full round trip through Pilot. Target: median ≤ 16 ms.

    python bench/bench_tui.py [--keys 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test helpers live in tests/ (not installed)

from blokus.model.pieces import Shape  # noqa: E402
from blokus.tui.board import Board  # noqa: E402
from tests.tui_helpers import game_app, settle  # noqa: E402


async def run(keys: int) -> dict[str, float]:
    app = game_app(Shape.PENTO_V, plies=14)
    latencies: list[float] = []
    round_trips: list[float] = []
    lines: list[int] = []
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot)
        await pilot.press("tab", "tab", "tab", "tab", "tab", "tab", "tab", "tab", "tab", "tab")  # a pentomino
        await pilot.press("v")  # with the overlay of legal fields
        board = app.screen.query_one(Board)
        stamps: list[float] = []
        original = board.render_line

        def timed_render_line(y: int):
            strip = original(y)
            stamps.append(time.perf_counter())
            return strip

        board.render_line = timed_render_line  # type: ignore[method-assign]
        sequence = ["right", "down", "left", "up", "l", "j", "h", "k", "d", "f"]
        for i in range(keys):
            key = sequence[i % len(sequence)]
            stamps.clear()
            t0 = time.perf_counter()
            await pilot.press(key)
            t1 = time.perf_counter()
            if stamps:
                latencies.append(stamps[-1] - t0)
                lines.append(len(stamps))
            round_trips.append(t1 - t0)
    latencies.sort()
    return {
        "samples": len(latencies),
        "median_ms": 1000 * statistics.median(latencies),
        "p90_ms": 1000 * latencies[int(0.9 * (len(latencies) - 1))],
        "lines_per_key": statistics.median(lines),
        "pilot_round_trip_ms": 1000 * statistics.median(round_trips),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--keys", type=int, default=200)
    args = p.parse_args()
    r = asyncio.run(run(args.keys))
    print(
        f"ghost-move key -> repainted board: median {r['median_ms']:.2f} ms, p90 {r['p90_ms']:.2f} ms "
        f"({r['samples']} keys; median {r['lines_per_key']:.0f} board lines repainted per key; "
        f"Pilot round trip {r['pilot_round_trip_ms']:.1f} ms); target <= 16 ms"
    )


if __name__ == "__main__":
    main()
