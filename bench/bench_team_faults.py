"""What a faulty team player does to ``blokus bot --player`` (not a test): one game per fault against
``blokus serve`` (the official limits: 2 s soft, 10 s hard) and ``blokus bot --ai random``, non-strict.

The faults (issue 49): a move with numpy integers (``np.argwhere``), a move with an int rotation, a C loop of
about 3 s at one move (catastrophic regex backtracking: it holds the interpreter), a 3 GiB allocation at one
move, ``os._exit(0)`` at one move. Per fault: the bot's exit code, its summary (the server's verdict as the bot
read it), its slowest answer (``-v``), the bot's own lines on stderr, and how many processes the team's code
left behind.

``--root DIR`` runs another checkout of the project (e.g. an export of an older commit, to compare: ``git
archive COMMIT | tar -x -C DIR``); every command runs with ``PYTHONPATH=DIR`` and ``python -P``.

Usage: python bench/bench_team_faults.py [--root DIR] [--only FAULT ...]
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAD = """
import os, re, time
from pathlib import Path

import numpy as np

from blokus.player import Move, Player, Rotation, SetMove

FLAG = Path(__file__).with_name("done")  # the fault happens once a game, whichever process plays


def once(turn):
    if turn < 10 or FLAG.exists():
        return False
    FLAG.write_text("x")
    return True


def backtracking_seconds(n):
    started = time.perf_counter()
    re.match(r"(a+)+$", "a" * n + "!")
    return time.perf_counter() - started


class Faulty(Player):
    def calculate_move(self) -> Move:
        move = max(self.game_state.legal_moves(), key=lambda m: m.shape.size)
"""

FAULTS = {
    "numpy-int": """
        x, y = np.argwhere(self.game_state.board() > -2)[20 * move.y + move.x][::-1]  # numpy integers
        return SetMove(move.color, move.shape, move.rotation, move.flipped, x, y)
""",
    "int-rotation": """
        return SetMove(move.color, move.shape, int(move.rotation), move.flipped, move.x, move.y)
""",
    "c-loop-3s": """
        if once(self.game_state.turn):
            re.match(r"(a+)+$", "a" * (N + 3) + "!")  # about 8 x 0.4 s, in one C call
        return move


N = 16
while backtracking_seconds(N) < 0.4:  # calibrated at import: each further "a" doubles the time
    N += 1
""",
    "alloc-3GiB": """
        if once(self.game_state.turn):
            np.ones(3 * 2**30, dtype=np.uint8)
        return move
""",
    "os-exit": """
        if once(self.game_state.turn):
            os._exit(0)
        return move
""",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_port(port: int, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise SystemExit(f"the server did not listen on {port}")


def run(fault: str, root: Path, folder: Path) -> dict:
    player = folder / fault / "faulty.py"
    player.parent.mkdir()
    player.write_text(HEAD + FAULTS[fault])
    env = {**os.environ, "PYTHONPATH": str(root)}
    blokus = [sys.executable, "-P", "-m", "blokus"]
    port = free_port()
    server = subprocess.Popen([*blokus, "serve", "-p", str(port)], env=env, stdout=subprocess.DEVNULL)
    try:
        wait_port(port)
        ours = subprocess.Popen(
            [*blokus, "bot", "-p", str(port), "--player", str(player), "-v", "--idle-timeout", "120s"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=player.parent,
        )
        theirs = subprocess.Popen(
            [*blokus, "bot", "-p", str(port), "--ai", "random", "--idle-timeout", "120s"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            out, err = ours.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            ours.kill()
            out, err = ours.communicate()
        theirs.wait(60)
    finally:
        server.terminate()
        server.wait(10)
    token_left = subprocess.run(["pgrep", "-f", str(player)], capture_output=True, text=True).stdout.split()
    slowest = re.search(r"slowest answer (\d+) ms", err)
    return {
        "exit": ours.returncode,
        "summary": (out.strip().splitlines() or ["(none)"])[-1],
        "slowest": f"{slowest.group(1)} ms" if slowest else "?",
        "lines": [line for line in err.splitlines() if line.startswith("blokus")],
        "left": len(token_left),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    p.add_argument("--only", nargs="*", choices=sorted(FAULTS), default=None)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="blokus-faults-") as tmp:
        for fault in args.only or FAULTS:
            started = time.monotonic()
            found = run(fault, args.root.resolve(), Path(tmp))
            took = time.monotonic() - started
            print(f"{fault}: exit {found['exit']}, slowest answer {found['slowest']}, {took:.0f} s")
            print(f"  summary: {found['summary']}")
            for line in found["lines"][:6]:
                print(f"  stderr: {line[:200]}")
            if found["left"]:
                print(f"  processes of the player left running: {found['left']}")


if __name__ == "__main__":
    main()
