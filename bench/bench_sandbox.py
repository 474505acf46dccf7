"""Benchmark of the walls around a team's program (``ai.sandbox``; not a test): what they cost per process start,
per game start and per move, against bubblewrap, the other mechanism at hand.

* **per process start**: the walls entered by a fresh Python process (``sandbox.confine``, as the team's process
  does), and ``/bin/true`` started and reaped through ``ai.processes.start`` ``--starts`` times:
  plain, walled by Landlock (the ruleset built in this process, entered between fork and exec), and inside
  bubblewrap (``bwrap``: user, PID, IPC, UTS and cgroup namespaces, the root read-only, a scratch folder
  writable; skipped if ``bwrap`` is not on the PATH);
* **per game start**: a team's ``py:`` player (its first legal move) started and ready
  (``TeamPlayer.start`` + ``wait_ready``: Python, our compiled engine loaded, the walls, the team's file) with
  the walls and without (``BLOKUS_SANDBOX=off``), ``--games`` times each;
* **per move**: its moves through the process boundary, walls and no walls, ``--positions`` positions each.

Medians and 95th percentiles of wall time. Usage: python bench/bench_sandbox.py [--starts 30] [--games 8]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_team_process import PLAYER, percentile, positions, through_process  # noqa: E402
from blokus.ai import processes, sandbox  # noqa: E402
from blokus.ai.players.registry import parse_player  # noqa: E402
from blokus.ai.players.team_process import TeamPlayer  # noqa: E402


def line(label: str, values: list[float]) -> str:
    median, p95 = statistics.median(values) * 1000, percentile(values, 0.95) * 1000
    return f"  {label:34} median {median:8.2f} ms   p95 {p95:8.2f} ms   (n={len(values)})"


def timed(count: int, start: Callable[[], None]) -> list[float]:
    found = []
    for _ in range(count):
        began = time.perf_counter()
        start()
        found.append(time.perf_counter() - began)
    return found


CONFINE = """
import sys, time
from pathlib import Path
from blokus.ai import sandbox
sandbox.abi()
began = time.perf_counter()
sandbox.confine(sandbox.Walls(Path(sys.argv[1]), (Path(sys.argv[1]).parent,)))
print(time.perf_counter() - began)
"""


def confine_times(count: int, scratch: Path) -> list[float]:
    """``sandbox.confine`` (the ruleset built and entered) in a fresh Python process, as the team's process does."""
    found = []
    for _ in range(count):
        done = subprocess.run([sys.executable, "-c", CONFINE, str(scratch)], capture_output=True, text=True, check=True)
        found.append(float(done.stdout))
    return found


def process_starts(count: int, scratch: Path) -> None:
    print(f"per process start (/bin/true, started and reaped), Landlock ABI {sandbox.abi()}:")
    walls = sandbox.Walls(scratch, sandbox.program_reads(["/bin/true"]), (13050,))

    def plain() -> None:
        processes.start(["/bin/true"]).wait(None)

    def walled() -> None:
        processes.start(["/bin/true"], walls=walls).wait(None)

    def ruleset() -> None:
        fd = sandbox.prepare(walls)
        if fd is not None:
            os.close(fd)

    timed(3, plain)
    print(line("the walls in a Python process", confine_times(count, scratch)))
    print(line("plain", timed(count, plain)))
    print(line("Landlock (build + enter)", timed(count, walled)))
    print(line("  of which building the ruleset", timed(count, ruleset)))
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        print("  bubblewrap: not installed (apt-get install bubblewrap)")
        return
    argv = [bwrap, "--ro-bind", "/", "/", "--bind", str(scratch), str(scratch), "--dev", "/dev", "--proc", "/proc"]
    argv += ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup"]
    argv += ["--die-with-parent", "--new-session", "/bin/true"]

    def wrapped() -> None:
        processes.start(argv).wait(None)

    print(line("bubblewrap (namespaces)", timed(count, wrapped)))


async def game_start(spec, walls: bool) -> tuple[float, TeamPlayer]:
    os.environ[sandbox.ENV] = "on" if walls else "off"
    sandbox.abi.cache_clear()
    player = TeamPlayer(spec, strict=True, say=lambda text: None)
    began = time.perf_counter()
    player.start()
    await player.wait_ready()
    return time.perf_counter() - began, player


async def games(count: int, moves: int) -> None:
    states = positions(moves)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "first.py"
        path.write_text(PLAYER)
        spec = parse_player(f"py:{path}")
        starts: dict[bool, list[float]] = {True: [], False: []}
        per_move: dict[bool, list[float]] = {True: [], False: []}
        _, warm = await game_start(spec, False)  # a first start may compile our engine: not counted
        warm.close()
        for round_ in range(count):
            for walls in (True, False) if round_ % 2 else (False, True):
                took, player = await game_start(spec, walls)
                starts[walls].append(took)
                try:
                    if round_ == 0:
                        await through_process(player, states[:20])  # warm-up
                        per_move[walls] = (await through_process(player, states))[0]
                finally:
                    player.close()
        os.environ.pop(sandbox.ENV, None)
        print("per game start (a py: player's process started until ready: Python, our engine, its file):")
        print(line("walls", starts[True]))
        print(line("no walls", starts[False]))
        print(f"per move ({moves} positions through the process boundary):")
        print(line("walls", per_move[True]))
        print(line("no walls", per_move[False]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--starts", type=int, default=30)
    p.add_argument("--games", type=int, default=8)
    p.add_argument("--positions", type=int, default=300)
    args = p.parse_args()
    processes.adopt_orphans()
    with tempfile.TemporaryDirectory() as folder:
        process_starts(args.starts, Path(folder))
    asyncio.run(games(args.games, args.positions))


if __name__ == "__main__":
    main()
