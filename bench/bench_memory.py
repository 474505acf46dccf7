"""Benchmark of the bot's memory (not a test): the PSS (proportional set size, ``/proc/PID/smaps_rollup``: a page
shared by n processes counts 1/n in each, so the sum is what the processes take of the machine) of all of the
bot's processes during a game against ``blokus serve``: the bot, its engine process (``ai.players.engine_process``),
a team's player's processes (``ai.players.team_process``: the one that plays and its standby), with our default AI
and with a team's player (``--player``, a file made by ``blokus new-player``, or given).

The opponent is ``blokus bot --ai random --engine thread`` (its memory is not counted). The processes are looked at
every ``--every`` seconds; the table shows each one's largest PSS and the largest sum at one look, and the team's
process's data size (``VmData``, what its ``RLIMIT_DATA`` limit counts). Linux only (``smaps_rollup``: 4.14+).

Usage: python bench/bench_memory.py [--player FILE] [--season 2021|2027] [--move-time MS] [--every S]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from blokus.ai.players.team_process import BOT_MEMORY_MIB, default_memory_mib  # noqa: E402
from blokus.ai.search.cores import memory_budget  # noqa: E402

HOST = "127.0.0.1"


def kib(pid: int, path: str, key: str) -> int | None:
    """A ``key: N kB`` line of ``/proc/PID/<path>``, in KiB (None: the process is gone)."""
    try:
        with open(f"/proc/{pid}/{path}") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def children(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as fh:
                    stat = fh.read()
            except OSError:
                continue
            if int(stat[stat.rfind(")") + 2 :].split()[1]) == pid:
                found.append(int(name))
    return found


def role(pid: int, bot: int) -> str:
    if pid == bot:
        return "bot"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmdline = fh.read()
    except OSError:
        return "other"
    return "team" if b"blokus.ai.players.pyplayer" in cmdline else "engine"


def tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo += children(current)
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def wait_listening(port: int, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((HOST, port), 1.0).close()
            return
        except OSError:
            if time.monotonic() > end:
                raise SystemExit(f"bench_memory: the server does not listen on port {port}") from None
            time.sleep(0.1)


def measure(extra: list[str], season: str, move_time: int, every: float) -> dict[str, float]:
    """One game; the largest PSS (MiB) of each role (team: the largest of its processes, standby apart) and
    of all of them at one look, the team's largest VmData."""
    port = free_port()
    blokus = [sys.executable, "-m", "blokus"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(
        [*blokus, "serve", "-p", str(port), "--season", season], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wait_listening(port)  # a bot that comes too early does not retry: it says so and ends
    common = ["-h", HOST, "-p", str(port), "--season", season, "--move-time", str(move_time), "--idle-timeout", "60s"]
    bot = subprocess.Popen([*blokus, "bot", *common, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    opponent = subprocess.Popen(
        [*blokus, "bot", *common, "--ai", "random", "--engine", "thread"],
        stdout=subprocess.DEVNULL,
        stderr=sys.stderr,
        env=env,
    )
    peak: dict[str, float] = {"bot": 0.0, "engine": 0.0, "team": 0.0, "standby": 0.0, "all": 0.0, "team data": 0.0}
    try:
        while bot.poll() is None:
            sizes: dict[str, list[float]] = {}
            data = 0.0
            for pid in tree(bot.pid):
                pss = kib(pid, "smaps_rollup", "Pss")
                if pss is None:
                    continue
                kind = role(pid, bot.pid)
                sizes.setdefault(kind, []).append(pss / 1024)
                if kind == "team":
                    data = max(data, (kib(pid, "status", "VmData") or 0) / 1024)
            team = sorted(sizes.pop("team", []), reverse=True)
            for kind, values in [*sizes.items(), ("team", team[:1]), ("standby", team[1:2])]:
                peak[kind] = max(peak.get(kind, 0.0), sum(values))
            peak["all"] = max(peak["all"], sum(sum(v) for v in sizes.values()) + sum(team))
            peak["team data"] = max(peak["team data"], data)
            time.sleep(every)
        out, err = bot.communicate()
        if bot.returncode != 0:
            raise SystemExit(f"bench_memory: the bot ended with {bot.returncode}: {err.decode()[-500:]}")
        said = [line for line in err.decode().splitlines() if "thread" in line or "memory" in line]
        print(*said, out.decode().strip(), sep="\n", file=sys.stderr)
    finally:
        for process in (opponent, bot, server):
            if process.poll() is None:
                process.terminate()
            process.wait(10)
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--player", help="a team's player (default: one made by blokus new-player)")
    parser.add_argument("--season", default="2021", choices=("2021", "2027"))
    parser.add_argument("--move-time", type=int, default=1600, metavar="MS")
    parser.add_argument("--every", type=float, default=0.25, metavar="S")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        player = args.player
        if player is None:
            subprocess.run(
                [sys.executable, "-m", "blokus", "new-player", folder], check=True, stdout=subprocess.DEVNULL, cwd=ROOT
            )
            player = str(Path(folder) / "player.py")
        rows = [
            ("default AI (engine process)", measure([], args.season, args.move_time, args.every)),
            (f"--player {Path(player).name}", measure(["--player", player], args.season, args.move_time, args.every)),
        ]
    columns = ["bot", "engine", "team", "standby", "all", "team data"]
    head = f"{'PSS, MiB (largest in the game)':32}" + "".join(f"{c:>11}" for c in columns)
    print(head)
    print("-" * len(head))
    for name, peak in rows:
        print(f"{name:32}" + "".join(f"{peak.get(c, 0.0):11.0f}" for c in columns))
    memory = memory_budget()
    if memory is not None:
        print(
            f"this machine: {memory.describe()}; a team's process's default limit here "
            f"{default_memory_mib(memory.bytes)} MiB (what is left after the bot's {BOT_MEMORY_MIB} MiB); on the "
            f"contest's 1.5 GB: {default_memory_mib(1536 * 2**20)} MiB"
        )


if __name__ == "__main__":
    main()
