"""Load check of the local server (not a unit test).

N concurrent bot-vs-bot games through one ``blokus serve`` (in this process, real time limits
2000/10000 ms) with 2N ``blokus bot`` processes, everything pinned to two cores. Reports finished
games, causes, rule violations, timeouts, bot fallbacks and the move latency at the server (move
request sent -> move received), maximum and percentiles.

By default the games are prepared (paused) and start together once all bots have joined, so the
bots' start-up (imports) does not overlap the games; ``--storm`` lets them join open games at once.

Usage: python bench/bench_server_load.py [--games 20] [--ai lookahead] [--move-time 1600] [--cores 0,1]
       [--engine process|thread] [--storm]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from blokus.ai import DEFAULT_AI  # noqa: E402
from blokus.model.pieces import Team  # noqa: E402
from blokus.net.rooms import Room, RoomSeat, Timeouts  # noqa: E402
from blokus.net.server import GameServer, ServerConfig  # noqa: E402

HANDLING: list[float] = []  # seconds the server's loop spent handling one move (validate, apply, send)


def _measure_move_handling() -> None:
    original = Room.on_move

    def timed(self, *a, **kw):
        t = time.perf_counter()
        try:
            return original(self, *a, **kw)
        finally:
            HANDLING.append(time.perf_counter() - t)

    Room.on_move = timed


async def run(args: argparse.Namespace) -> int:
    _measure_move_handling()
    server = GameServer(
        ServerConfig(
            host="127.0.0.1", port=0, timeouts=Timeouts(2.0, 10.0), seed=args.seed, encode_workers=args.encode_workers
        )
    )
    await server.start()
    print(
        f"server on 127.0.0.1:{server.port}; {args.games} games, ai {args.ai}, move time {args.move_time} ms, "
        f"cores {sorted(os.sched_getaffinity(0))}",
        flush=True,
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    lags: list[float] = []
    monitor = asyncio.create_task(_loop_lag(lags))
    started = time.monotonic()
    rooms = []
    codes_for_bots: list[list[str]] = []
    if args.storm:  # every bot joins any open game as soon as it has started: games overlap the start-up
        codes_for_bots = [[] for _ in range(2 * args.games)]
    else:  # prepared paused games; all start together once every bot has joined
        for g in range(args.games):
            slots = [
                RoomSeat(Team.ONE, f"bot{2 * g}", reservation=f"rc-{g}-1"),
                RoomSeat(Team.TWO, f"bot{2 * g + 1}", reservation=f"rc-{g}-2"),
            ]
            rooms.append(server._new_room(prepared=True, paused=True, slots=slots))
            codes_for_bots += [["-r", f"rc-{g}-1"], ["-r", f"rc-{g}-2"]]
    procs = []
    for i, extra in enumerate(codes_for_bots):
        procs.append(
            await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "blokus",
                "bot",
                "-h",
                "127.0.0.1",
                "-p",
                str(server.port),
                "--ai",
                args.ai,
                "--move-time",
                str(args.move_time),
                "--seed",
                str(i),
                "-v",
                "--engine",
                args.engine,
                *extra,
                cwd=ROOT,
                env=env,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                preexec_fn=(lambda: os.nice(-args.server_nice)) if args.server_nice else None,
            )
        )
    if rooms:
        while not all(r.started for r in rooms):
            await asyncio.sleep(0.1)
        print(f"all {len(procs)} bots joined after {time.monotonic() - started:.0f} s; starting the games", flush=True)
        await asyncio.sleep(1.0)  # let the bots settle
        lags.clear()
        started = time.monotonic()
        for room in rooms:  # a tournament server does not start all games in the same millisecond
            room.set_paused(False)
            await asyncio.sleep(args.stagger / 1000)
    outputs = await asyncio.gather(*(p.communicate() for p in procs))
    wall = time.monotonic() - started
    monitor.cancel()
    await server.close()
    bot_ms = [
        int(m)
        for _, err in outputs
        for m in re.findall(r"\((?:engine|fallback-\w+|forced), (\d+) ms\)", err.decode(errors="replace"))
    ]

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
        print(
            f"move latency at the server over {len(latencies)} moves: max {latencies[-1] * 1000:.0f} ms, "
            f"p99 {q[98] * 1000:.0f} ms, p50 {q[49] * 1000:.0f} ms"
        )
    if bot_ms:
        print(f"bot-side answer time (request arrival -> move decided): max {max(bot_ms)} ms")
    if lags:
        print(f"server event-loop lag: max {max(lags) * 1000:.0f} ms")
    if HANDLING:
        print(
            "server loop time per move (validate, apply, serialize unless offloaded, send): mean "
            f"{statistics.mean(HANDLING) * 1000:.1f} ms, "
            f"max {max(HANDLING) * 1000:.0f} ms"
        )
    for _out, err in outputs:
        if b"Traceback" in err:
            print(err.decode(errors="replace")[-2000:])
            break
    ok = len(records) == args.games and violations == 0 and timeouts == 0 and set(codes) == {0}
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


async def _loop_lag(lags: list[float]) -> None:
    """How late the server's event loop wakes up (a measure of its own starvation)."""
    loop = asyncio.get_running_loop()
    while True:
        before = loop.time()
        await asyncio.sleep(0.05)
        lags.append(loop.time() - before - 0.05)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--ai", default=DEFAULT_AI)
    p.add_argument("--move-time", type=int, default=1600)
    p.add_argument("--cores", default="0,1", help="CPU cores for the server and all bots (default 0,1)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--server-nice",
        type=int,
        default=0,
        help="scheduling priority change for the server process (e.g. -5; needs root)",
    )
    p.add_argument("--encode-workers", type=int, default=1, help="server processes serializing states (1)")
    p.add_argument("--stagger", type=int, default=100, metavar="MS", help="delay between game starts (100)")
    p.add_argument("--engine", choices=("process", "thread"), default="process", help="bot engine mode")
    p.add_argument(
        "--storm",
        action="store_true",
        help="bots join open games while the others are still starting (start-up load overlaps)",
    )
    args = p.parse_args()
    if args.server_nice:
        os.nice(args.server_nice)  # the bots get the default priority back below
    if args.cores:
        cores = {int(c) for c in args.cores.split(",")} & os.sched_getaffinity(0)
        if cores:
            os.sched_setaffinity(0, cores)  # inherited by the bot processes
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
