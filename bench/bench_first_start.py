"""Benchmark of the first start after a fresh install (not a test): numba compiles on the first start.

Copies the project's tracked files into a temporary directory (so numba's on-disk cache, which lives in
``__pycache__`` next to the code, starts empty) and measures there, twice each (first start = compile,
second start = cache):

* ``blokus moves FILE`` (the compiled rule engine);
* the compiled search of ``mcts`` (the default AI; first, from the empty cache) and of ``lookahead`` until it
  is ready (``compile_ahead``), then ``blokus bot --ai AI`` until it would connect (there is no server, so it
  then exits; on a first start it connects after at most ``net.bot.JOIN_WAIT_S`` and plays with the Python
  search until the compiled one is ready);
* the bot's first move: after the bot's preparation (``compile_ahead``, as above), the time of the default AI's
  first move at 1600 ms (a kernel first met in a move would be compiled there, past the 2-second limit);
* the TUI's first frame, headless, for the default opponent and for ``--opponent lookahead`` (both compiled:
  the compile runs in the background on the first move; the frame must not wait for it).

``--bundle FILE.zip`` measures a contest upload instead (``blokus bundle``): unpacked read-only into a
temporary folder and started as the contest does, by a bare system Python (``env -i PATH=/usr/bin:/bin
HOME=/nonexistent bash start.sh -h 127.0.0.1 -p PORT -r CODE``) against ``blokus serve`` (official time
limits) with a prepared game (``blokus watch --prepare``), the other seat a greedy ``blokus bot``: the time
until it joined, its first and slowest move (from the request's arrival), its summary line and the files
written into the unpacked folder (``find -newer``: must be none).

    python bench/bench_first_start.py
    python bench/bench_first_start.py --bundle upload.zip [--season 2027]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from blokus.model.convert import state_to_message
from blokus.model.messages import to_xml
from blokus.model.state import GameState

ROOT = Path(__file__).resolve().parent.parent

FIRST_FRAME = """
import asyncio, sys, time
t0 = time.perf_counter()
from blokus.cli.play import play_options
from blokus.tui.launch import build_local_app
args = play_options(sys.argv[1:])
app = build_local_app(args)
async def main():
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        print(f"{time.perf_counter() - t0:.2f}")
asyncio.run(main())
"""


FIRST_MOVE = """
import time
from blokus.ai import compile_ahead, make_player, parse_player
from blokus.model.pieces import Shape
from blokus.model.state import GameState
compile_ahead(parse_player("mcts"))
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


def _unpack_read_only(upload: Path, folder: Path) -> None:
    with zipfile.ZipFile(upload) as zf:
        zf.extractall(folder)
        for info in zf.infolist():
            if info.external_attr >> 16:
                (folder / info.filename).chmod((info.external_attr >> 16) & 0o555)
    subprocess.run(["chmod", "-R", "a-w", str(folder)], check=True)


def bundle_game(upload: Path, season: str) -> None:
    py = sys.executable
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    with tempfile.TemporaryDirectory(prefix="blokus-upload-") as tmp:
        folder = Path(tmp) / "unpacked"
        _unpack_read_only(upload, folder)
        marker = Path(tmp) / "marker"
        marker.write_text("")
        time.sleep(1.1)  # find -newer compares whole seconds on some file systems
        server = subprocess.Popen(
            [py, "-m", "blokus", "serve", "-p", "0", "--password", "pw", "--season", season],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            port = re.search(r":(\d+) ", server.stdout.readline()).group(1)
            watch = subprocess.Popen(
                [
                    py,
                    "-m",
                    "blokus",
                    "watch",
                    "-p",
                    port,
                    "--password",
                    "pw",
                    "--text",
                    "--prepare",
                    "upload",
                    "greedy",
                    "--season",
                    season,
                ],
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
            lines = [watch.stdout.readline() for _ in range(3)]
            codes = [line.split("-r ")[1].strip() for line in lines[1:]]
            started = time.monotonic()
            ours = subprocess.Popen(
                [
                    "env",
                    "-i",
                    "PATH=/usr/bin:/bin",
                    "HOME=/nonexistent",
                    "bash",
                    str(folder / "start.sh"),
                    "-h",
                    "127.0.0.1",
                    "-p",
                    port,
                    "-r",
                    codes[0],
                    "-v",
                    "--log",
                    str(Path(tmp) / "bot.log"),
                ],
                cwd=tmp,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            theirs = subprocess.Popen(
                [py, "-m", "blokus", "bot", "-p", port, "-r", codes[1], "--ai", "greedy"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            joined, moves, notes = None, [], []
            for line in ours.stderr:  # -v: the log on stderr (each kind of line three times)
                if joined is None and "joined room" in line:
                    joined = time.monotonic() - started
                elif "blokus bot:" in line:
                    notes.append(line.strip())
            log_lines = (Path(tmp) / "bot.log").read_text().splitlines()
            if os.environ.get("BENCH_SHOW_LOG"):
                print("\n".join(line for line in log_lines if line[:4].isdigit() and "blokus.xml" not in line))
            for line in log_lines:  # every move
                if match := re.search(r"turn \d+ \w+: .* \((engine|fallback-\w+|forced), (\d+) ms", line):
                    moves.append((match.group(1), int(match.group(2))))
            summary = ours.stdout.read().strip()
            ours.wait(60)
            theirs.wait(60)
            watch.wait(60)
        finally:
            server.terminate()
            server.wait(30)
        written = subprocess.run(["find", str(folder), "-newer", str(marker)], capture_output=True, text=True).stdout
        timed = [ms for source, ms in moves if source != "forced"]
        size = upload.stat().st_size / 2**20
        print(f"upload {upload} ({size:.1f} MiB), season {season}, exit code {ours.returncode}")
        print(f"joined after {joined:.1f} s" if joined is not None else "never joined")
        if timed:
            print(f"{len(moves)} moves: first {moves[0][1]} ms, slowest {max(timed)} ms (forced moves left out)")
        for note in notes:
            print(f"stderr: {note}")
        print(f"summary: {summary}")
        print(f"written into the unpacked folder: {written.split() or 'nothing'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, metavar="FILE.zip", help="measure this contest upload")
    parser.add_argument("--season", default="2021", choices=("2021", "2027"))
    args = parser.parse_args()
    if args.bundle is not None:
        bundle_game(args.bundle.resolve(), args.season)
        return
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    with tempfile.TemporaryDirectory(prefix="blokus-fresh-") as tmp:
        fresh = Path(tmp)
        for name in files:
            target = fresh / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target)
        env = {**os.environ, "PYTHONPATH": str(fresh)}
        env.pop("BLOKUS_NUMBA_CACHE", None)  # the fresh copy's own cache (its __pycache__), empty
        state = fresh / "state.xml"
        state.write_text(to_xml(state_to_message(GameState.new(), "bench")))
        py = sys.executable
        for run in ("first", "second"):
            t, _ = timed([py, "-m", "blokus", "moves", "--count", str(state)], env, fresh)
            print(f"blokus moves ({run} start): {t:.1f} s")
        for ai in ("mcts", "lookahead"):  # the default first: its first start compiles everything it needs
            for run in ("first", "second"):
                code = f"from blokus.ai import compile_ahead, parse_player; compile_ahead(parse_player({ai!r}))"
                t, _ = timed([py, "-c", code], env, fresh)
                print(f"compiled {ai} search ready ({run} start): {t:.1f} s")
            t, _ = timed([py, "-m", "blokus", "bot", "--ai", ai, "-p", "1"], env, fresh)
            print(f"blokus bot --ai {ai} until it connects (cache ready): {t:.1f} s")
        t, out = timed([py, "-c", FIRST_MOVE], env, fresh)
        print(f"the default AI's first two moves after compile_ahead, at 1600 ms: {out} ms")
        for label, argv in (("default opponent", []), ("--opponent lookahead", ["--opponent", "lookahead"])):
            t, out = timed([py, "-c", FIRST_FRAME, *argv], env, fresh)
            print(f"TUI first frame, {label}: {out} s (process {t:.1f} s)")


if __name__ == "__main__":
    main()
