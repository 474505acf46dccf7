"""Load check of the local server (not a unit test).

N concurrent bot-vs-bot games through one ``blokus serve`` (in this process, real time limits
2000/10000 ms) with 2N ``blokus bot`` processes, everything pinned to two cores. Reports finished
games, causes, rule violations, timeouts, bot fallbacks and the move latency at the server (move
request sent -> move received), maximum and percentiles.

Usage: python bench/bench_server_load.py [--games 20] [--ai lookahead] [--move-time 1600] [--cores 0,1]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ai import DEFAULT_AI  # noqa: E402
from net.rooms import Timeouts  # noqa: E402
from net.server import GameServer, ServerConfig  # noqa: E402


async def run(args: argparse.Namespace) -> int:
    server = GameServer(ServerConfig(host="127.0.0.1", port=0, timeouts=Timeouts(2.0, 10.0), seed=args.seed))
    await server.start()
    print(f"server on 127.0.0.1:{server.port}; {args.games} games, ai {args.ai}, move time {args.move_time} ms, "
          f"cores {sorted(os.sched_getaffinity(0))}", flush=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    started = time.monotonic()
    procs = []
    for i in range(2 * args.games):
        procs.append(await asyncio.create_subprocess_exec(
            sys.executable, "-m", "blokus", "bot", "-h", "127.0.0.1", "-p", str(server.port), "--ai", args.ai,
            "--move-time", str(args.move_time), "--seed", str(i), "-v",
            cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE))
    outputs = await asyncio.gather(*(p.communicate() for p in procs))
    wall = time.monotonic() - started
    await server.close()

    codes = collections.Counter(p.returncode for p in procs)
    fallbacks = sum(err.decode(errors="replace").count("(fallback-") for _, err in outputs)
    records = server.records
    causes = collections.Counter(r.result.cause.value if r.result else "CANCELLED" for r in records)
    latencies = sorted(x for r in records for x in r.latencies)
    violations = causes.get("RULE_VIOLATION", 0)
    timeouts = causes.get("SOFT_TIMEOUT", 0) + causes.get("HARD_TIMEOUT", 0)
    print(f"finished games: {len(records)}/{args.games} in {wall:.0f} s; causes {dict(causes)}")
    print(f"bot exit codes: {dict(codes)}; bot fallback moves: {fallbacks}")
    print(f"rule violations: {violations}; timeouts: {timeouts}")
    if latencies:
        q = statistics.quantiles(latencies, n=100)
        print(f"move latency at the server over {len(latencies)} moves: max {latencies[-1] * 1000:.0f} ms, "
              f"p99 {q[98] * 1000:.0f} ms, p50 {q[49] * 1000:.0f} ms")
    for _out, err in outputs:
        if b"Traceback" in err:
            print(err.decode(errors="replace")[-2000:])
            break
    ok = len(records) == args.games and violations == 0 and timeouts == 0 and set(codes) == {0}
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--ai", default=DEFAULT_AI)
    p.add_argument("--move-time", type=int, default=1600)
    p.add_argument("--cores", default="0,1", help="CPU cores for the server and all bots (default 0,1)")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    if args.cores:
        cores = {int(c) for c in args.cores.split(",")} & os.sched_getaffinity(0)
        if cores:
            os.sched_setaffinity(0, cores)  # inherited by the bot processes
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
