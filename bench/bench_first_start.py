"""Benchmark of the first start after a fresh install (not a test): numba compiles on the first start.

Copies the project's tracked files into a temporary directory (so numba's on-disk cache, which lives in
``__pycache__`` next to the code, starts empty) and measures there, twice each (first start = compile,
second start = cache):

* ``blokus moves FILE`` (the compiled rule engine);
* ``blokus bot --ai mcts`` (the default AI; first, from the empty cache) and ``blokus bot --ai lookahead``
  until it would connect (it compiles the search before connecting; there is no server, so it then exits);
* the bot's first move: after the bot's preparation (``compile_ahead``, as above), the time of the default AI's
  first move at 1600 ms (a kernel first met in a move would be compiled there, past the 2-second limit);
* the TUI's first frame, headless, for the default opponent and for ``--opponent lookahead`` (both compiled:
  the compile runs in the background on the first move; the frame must not wait for it).

    python bench/bench_first_start.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from model.convert import state_to_message
from model.messages import to_xml
from model.state import GameState

ROOT = Path(__file__).resolve().parent.parent

FIRST_FRAME = """
import asyncio, sys, time
t0 = time.perf_counter()
from tui.cli import build_local_app, play_parser
args = play_parser().parse_args(sys.argv[1:])
app = build_local_app(args)
async def main():
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        print(f"{time.perf_counter() - t0:.2f}")
asyncio.run(main())
"""


FIRST_MOVE = """
import time
from ai import compile_ahead, make_player
from model.pieces import Shape
from model.state import GameState
compile_ahead("mcts")
state = GameState(Shape.PENTO_L)
for _ in range(4):
    state.push_placement(int(state.legal_placements()[0]))
player = make_player("mcts", 1)
for _ in range(2):
    t0 = time.monotonic()
    state.play(player.choose_move_sync(state, move_time=1.6))
    print(f"{(time.monotonic() - t0) * 1000:.0f}", end=" ")
"""


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=900)
    return time.perf_counter() - start, done.stdout.strip()


def main() -> None:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    with tempfile.TemporaryDirectory(prefix="blokus-fresh-") as tmp:
        fresh = Path(tmp)
        for name in files:
            target = fresh / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target)
        env = {**os.environ, "PYTHONPATH": str(fresh)}
        state = fresh / "state.xml"
        state.write_text(to_xml(state_to_message(GameState.new(), "bench")))
        py = sys.executable
        for run in ("first", "second"):
            t, _ = timed([py, "-m", "blokus", "moves", "--count", str(state)], env, fresh)
            print(f"blokus moves ({run} start): {t:.1f} s")
        for ai in ("mcts", "lookahead"):  # the default first: its first start compiles everything it needs
            for run in ("first", "second"):
                t, _ = timed([py, "-m", "blokus", "bot", "--ai", ai, "-p", "1"], env, fresh)
                print(f"blokus bot --ai {ai} until it connects ({run} start): {t:.1f} s")
        t, out = timed([py, "-c", FIRST_MOVE], env, fresh)
        print(f"the default AI's first two moves after compile_ahead, at 1600 ms: {out} ms")
        for label, argv in (("default opponent", []), ("--opponent lookahead", ["--opponent", "lookahead"])):
            t, out = timed([py, "-c", FIRST_FRAME, *argv], env, fresh)
            print(f"TUI first frame, {label}: {out} s (process {t:.1f} s)")


if __name__ == "__main__":
    main()
