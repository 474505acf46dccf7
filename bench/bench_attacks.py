"""Attacks on a running ``blokus serve`` while an honest game is played on it (not a unit test).

Starts ``blokus serve`` (real time limits, ``--idle-timeout 5s`` so that it acts during one game),
prepares one game for two ``blokus bot`` processes
("honest1", "honest2") and, while they play, runs every attack of issue 9 from other source addresses
(127.0.0.2 ...), each in a loop until the honest game is over:

* attribute bomb: an element with 90 000 attributes (880 KiB), and one with 6 000 inside a ``<room>``
  (under the 64 KiB a client may send in one message);
* text flood between messages: 60 kB of text, then a small message, repeated, on 50 connections at once;
* 50 idle connections (``<protocol>`` and nothing more) and 100 more from one address (over the
  per-address limit);
* slow peer: a message one byte per 50 ms; silent peer: connects and never says a word;
* silent players: pairs that join a game and never move (their games end by hard timeout);
* floods: 1 MiB of garbage, 20 000 tiny unknown messages, unrequested moves, admin requests without
  authentication, endless unknown reservations;
* join flood (issue 39): 30 peers sending valid ``<join>`` messages of ~62 KB (255 ignored children with
  31 attributes: inside every bound of one client message), each on a new connection as soon as the
  server has answered the last one.

Reports the honest game's result line (worst move latency at the server: move request sent -> move
read), the attacks' counts, and the server's peak resident memory (VmHWM of the server process) and its
memory after the attacks. Run at normal priority; on a shared machine say so with the numbers.

Usage: python bench/bench_attacks.py [--move-time 300] [--ai NAME] [--baseline]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import socket
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from blokus.model import messages as M  # noqa: E402
from blokus.model.framing import END_OF_STREAM, StreamFramer  # noqa: E402

HOST = "127.0.0.1"
PASSWORD = "bench"
LATENCY = re.compile(r"max move latency (\d+) ms")
STATS: Counter[str] = Counter()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_kib(pid: int) -> tuple[int, int]:
    """(peak RSS, current RSS) of a process in KiB, from /proc."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmHWM"].split()[0]), int(fields["VmRSS"].split()[0])


async def connect(source: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection(HOST, PORT, local_addr=(source, 0))


async def drain_until_closed(reader: asyncio.StreamReader, timeout: float = 30.0) -> bool:
    """Read until the server closes the connection (True) or ``timeout`` passes (False)."""
    try:
        async with asyncio.timeout(timeout):
            while await reader.read(65536):
                pass
        return True
    except TimeoutError:
        return False
    except OSError:  # reset: closed as well
        return True


async def one_shot(source: str, data: bytes, name: str) -> None:
    """Connect, send ``data``, wait until the server closes the connection."""
    try:
        reader, writer = await connect(source)
        writer.write(data)
        await writer.drain()
        await drain_until_closed(reader)
        writer.close()
        STATS[name] += 1
    except OSError:
        STATS[name + " (connection error)"] += 1


def attribute_bomb(count: int, tag: bytes = b"pause") -> bytes:
    return b"<" + tag + b" " + b" ".join(b'a%d="x"' % i for i in range(count)) + b"/>"


async def loop_attack(stop: asyncio.Event, source: str, data: bytes, name: str) -> None:
    while not stop.is_set():
        await one_shot(source, data, name)


async def text_flood(stop: asyncio.Event, source: str) -> None:
    chunk = b" x" * 30_000 + b'<joinPrepared reservationCode="none"/>'
    while not stop.is_set():
        try:
            reader, writer = await connect(source)
            writer.write(b"<protocol>")
            for _ in range(20):  # the server drops it after 10 unknown reservations
                writer.write(chunk)
                await writer.drain()
                STATS["text between messages: 60 kB pieces sent"] += 1
            await drain_until_closed(reader)
            writer.close()
            STATS["text between messages (60 kB x 20)"] += 1
        except OSError:
            STATS["text flood (connection error)"] += 1


async def text_floods(stop: asyncio.Event, source: str, connections: int) -> None:
    await asyncio.gather(*(text_flood(stop, source) for _ in range(connections)))


async def idle_connections(stop: asyncio.Event) -> None:
    """50 connections that send ``<protocol>`` and nothing more; then 100 from one other address."""
    opened = []
    for source, count in (("127.0.0.3", 50), ("127.0.0.4", 100)):
        for _ in range(count):
            with contextlib.suppress(OSError):
                reader, writer = await connect(source)
                writer.write(b"<protocol>")
                opened.append((source, reader, writer))
    # refused connections are closed at once, the others only by the idle timeout
    closed = await asyncio.gather(*(drain_until_closed(reader, timeout=0.5) for _, reader, _ in opened))
    for (source, _, _), refused in zip(opened, closed, strict=True):
        STATS[f"idle connections from {source} " + ("refused" if refused else "accepted")] += 1
    for (source, reader, writer), refused in zip(opened, closed, strict=True):
        if not refused:
            await drain_until_closed(reader, timeout=max(0.1, 120 - time.monotonic() + STARTED))
            if not stop.is_set():
                STATS[f"idle connections from {source} closed by the idle timeout"] += 1
        writer.close()


async def slow_peer(stop: asyncio.Event) -> None:
    message = b'<protocol><joinPrepared reservationCode="' + b"s" * 10_000 + b'"/>'
    while not stop.is_set():
        try:
            _, writer = await connect("127.0.0.5")
            for byte in message:
                if stop.is_set() or writer.is_closing():
                    break
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.05)
            writer.close()
            STATS["slow peers"] += 1
        except (OSError, ConnectionError):
            STATS["slow peers closed by the server"] += 1


async def silent_peer(stop: asyncio.Event) -> None:
    while not stop.is_set():
        with contextlib.suppress(OSError):
            reader, writer = await connect("127.0.0.6")
            await drain_until_closed(reader, timeout=120)  # until the idle timeout closes it
            if stop.is_set():
                break
            writer.close()
            STATS["silent peers closed by the server"] += 1


async def silent_players(stop: asyncio.Event) -> None:
    """Two clients that join one game and never move: hard timeout."""
    join = M.to_xml(M.Join(game_type="swc_2021_blokus")).encode()
    while not stop.is_set():
        try:
            pair = [await connect("127.0.0.7") for _ in range(2)]
            for _, writer in pair:
                writer.write(b"<protocol>" + join)
                await writer.drain()
            await asyncio.gather(*(drain_until_closed(reader, timeout=60) for reader, _ in pair))
            for _, writer in pair:
                writer.close()
            STATS["silent player pairs"] += 1
        except OSError:
            STATS["silent players (connection error)"] += 1


async def unrequested_moves(stop: asyncio.Event) -> None:
    move = (
        b'<room roomId="x"><data class="sc.plugin2021.SetMove"><piece color="BLUE" kind="MONO" '
        b'rotation="NONE" isFlipped="false"><position x="0" y="0"/></piece></data></room>'
    )
    while not stop.is_set():
        await one_shot("127.0.0.8", b"<protocol>" + move * 500, "unrequested move floods")


def big_join() -> bytes:
    """A valid ``<join>`` of ~62 KB inside every bound of one message: 256 elements, 31 attributes each."""
    child = b"<x " + b" ".join(b'a%d="v"' % i for i in range(31)) + b"/>"
    return b'<join gameType="swc_2021_blokus">' + child * 255 + b"</join>"


async def join_flooder(stop: asyncio.Event, source: str) -> None:
    """Connect, send a big join, wait for the answer (seated, or the end of the stream), leave; again."""
    message = b"<protocol>" + big_join()
    while not stop.is_set():
        try:
            reader, writer = await connect(source)
            writer.write(message)
            await writer.drain()
            answer = await reader.read(65536)
            writer.close()
            STATS["join flood: 62 KB joins " + ("seated" if b"joined" in answer else "refused")] += 1
        except OSError:
            STATS["join flood: 62 KB joins refused"] += 1


async def join_flood(stop: asyncio.Event, source: str, peers: int = 30) -> None:
    await asyncio.gather(*(join_flooder(stop, source) for _ in range(peers)))


async def probe(stop: asyncio.Event, times: list[float]) -> None:
    """The server's own response time: an unknown reservation every 100 ms, answered by an error."""
    request = b'<joinPrepared reservationCode="probe"/>'
    while not stop.is_set():
        reader, writer = await connect("127.0.0.13")
        writer.write(b"<protocol>")
        framer = StreamFramer()
        for _ in range(9):  # the server drops a connection after 10 unknown reservations
            sent = time.monotonic()
            writer.write(request)
            await writer.drain()
            answered = False
            while not answered:
                data = await reader.read(65536)
                if not data:
                    return
                answered = any(f is not END_OF_STREAM and f.tag == "error" for f in framer.feed(data))
            times.append(time.monotonic() - sent)
            await asyncio.sleep(0.1)
            if stop.is_set():
                break
        writer.close()


async def prepare_honest_game() -> list[str]:
    reader, writer = await asyncio.open_connection(HOST, PORT)
    prepare = M.Prepare(
        game_type="swc_2021_blokus", pause=False, slots=[M.Slot(display_name="honest1"), M.Slot(display_name="honest2")]
    )
    writer.write(b"<protocol>" + M.to_xml(M.Authenticate(password=PASSWORD)).encode() + M.to_xml(prepare).encode())
    await writer.drain()
    framer = StreamFramer()
    while True:
        data = await reader.read(65536)
        if not data:
            raise SystemExit("the server closed the admin connection")
        for frame in framer.feed(data):
            if frame is not END_OF_STREAM and frame.tag == "prepared":
                ADMIN.append(writer)
                return [r.text for r in frame.iter("reservation")]


async def run(args: argparse.Namespace, attacks: bool) -> dict:
    global PORT
    PORT = free_port()
    python = sys.executable
    server = await asyncio.create_subprocess_exec(
        python,
        "-m",
        "blokus",
        "serve",
        "-p",
        str(PORT),
        "--password",
        PASSWORD,
        "--idle-timeout",
        IDLE,
        stdout=asyncio.subprocess.PIPE,
        cwd=ROOT,
    )
    line = await server.stdout.readline()
    if b"listening" not in line:
        raise SystemExit(f"server did not start: {line!r}")
    lines: list[str] = []

    async def read_server() -> None:
        while raw := await server.stdout.readline():
            lines.append(raw.decode().rstrip())

    reader_task = asyncio.create_task(read_server())
    codes = await prepare_honest_game()
    bots = [
        await asyncio.create_subprocess_exec(
            python,
            "-m",
            "blokus",
            "bot",
            "-h",
            HOST,
            "-p",
            str(PORT),
            "-r",
            code,
            "--move-time",
            str(args.move_time),
            *(["--ai", args.ai] if args.ai else []),
            stdout=asyncio.subprocess.PIPE,
            cwd=ROOT,
        )
        for code in codes
    ]
    stop = asyncio.Event()
    tasks = []
    STATS.clear()
    global STARTED
    started = STARTED = time.monotonic()
    cpu_before = cpu_seconds(server.pid)
    probe_times: list[float] = []
    probe_task = asyncio.create_task(probe(stop, probe_times))
    if attacks:
        attacks_run = [(name, make) for name, make in ATTACKS if not args.only or args.only in name]
        tasks = [asyncio.create_task(make(stop)) for _, make in attacks_run]
    outs = await asyncio.gather(*(bot.communicate() for bot in bots))
    duration = time.monotonic() - started
    server_cpu = cpu_seconds(server.pid) - cpu_before
    peak_during, _ = memory_kib(server.pid)
    stop.set()
    for task in [*tasks, probe_task]:
        task.cancel()
    await asyncio.gather(*tasks, probe_task, return_exceptions=True)
    await asyncio.sleep(1.0)
    peak, after = memory_kib(server.pid)
    server.terminate()
    await server.wait()
    await reader_task
    for writer in ADMIN:
        writer.close()
    ADMIN.clear()
    honest = [line for line in lines if "honest1 (ONE) vs honest2 (TWO)" in line]
    return {
        "honest": honest,
        "bots": [out[0].decode().strip() for out in outs],
        "duration": duration,
        "peak_kib": max(peak, peak_during),
        "after_kib": after,
        "stats": dict(STATS),
        "games": len([line for line in lines if line.startswith("game ")]),
        "last": lines[-1:],
        "probe": sorted(probe_times),
        "server_cpu": server_cpu,
        "hard_timeouts": sum("HARD_TIMEOUT" in line for line in lines),
    }


def report(title: str, result: dict) -> None:
    print(f"== {title} ({result['duration']:.0f} s)")
    for line in result["honest"] or ["honest game: no result line!"]:
        print("  server:", line)
        match = LATENCY.search(line)
        if match:
            print(f"  worst move latency of the honest game at the server: {match.group(1)} ms")
    for line in result["bots"]:
        print("  bot:", line)
    peak, after = result["peak_kib"] / 1024, result["after_kib"] / 1024
    print(
        f"  server peak RSS {peak:.0f} MiB, after the attacks {after:.0f} MiB; {result['games']} games ended "
        f"({result['hard_timeouts']} of silent players by hard timeout)"
    )
    print(
        f"  server CPU time during the honest game: {result['server_cpu']:.1f} s "
        f"({result['server_cpu'] / result['duration'] * 100:.0f} % of one core)"
    )
    probe = result["probe"]
    if probe:
        p99 = probe[min(len(probe) - 1, int(len(probe) * 0.99))]
        print(
            f"  server response time ({len(probe)} probes): median {probe[len(probe) // 2] * 1000:.1f} ms, "
            f"p99 {p99 * 1000:.1f} ms, max {probe[-1] * 1000:.1f} ms"
        )
    for name, count in sorted(result["stats"].items()):
        print(f"  {count:6d} {name}")


ATTACKS = [  # (name, coroutine function of the stop event)
    (
        "attribute-bomb",
        lambda stop: loop_attack(
            stop, "127.0.0.2", b"<protocol>" + attribute_bomb(90_000), "attribute bombs (90 000 attributes, 880 KiB)"
        ),
    ),
    (
        "attribute-bomb-under-cap",
        lambda stop: loop_attack(
            stop,
            "127.0.0.2",
            b"<protocol><room roomId='x'>" + attribute_bomb(6_000) + b"</room>",
            "attribute bombs under the cap (6 000 attributes)",
        ),
    ),
    ("text-flood", lambda stop: text_floods(stop, "127.0.0.9", 50)),
    ("idle-connections", idle_connections),
    ("slow-peer", slow_peer),
    ("silent-peer", silent_peer),
    ("silent-players", silent_players),
    (
        "garbage-flood",
        lambda stop: loop_attack(stop, "127.0.0.10", b"<protocol>" + os.urandom(1 << 20), "garbage floods (1 MiB)"),
    ),
    (
        "unknown-flood",
        lambda stop: loop_attack(
            stop, "127.0.0.10", b"<protocol>" + b"<x/>" * 20_000, "unknown-message floods (20 000)"
        ),
    ),
    ("unrequested-moves", unrequested_moves),
    (
        "admin-flood",
        lambda stop: loop_attack(
            stop,
            "127.0.0.11",
            b"<protocol>" + b'<pause roomId="x" pause="true"/>' * 1000,
            "unauthenticated admin floods",
        ),
    ),
    (
        "reservation-guessing",
        lambda stop: loop_attack(
            stop, "127.0.0.12", b"<protocol>" + b'<joinPrepared reservationCode="g"/>' * 1000, "reservation guessing"
        ),
    ),
    ("join-flood", lambda stop: join_flood(stop, "127.0.0.14")),
]
ADMIN: list[asyncio.StreamWriter] = []
PORT = 0
IDLE = "5s"  # the server's idle timeout here (default 60 s), so that it acts during one game
STARTED = 0.0


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--move-time", type=int, default=300, help="think time of the honest bots (ms, default 300)")
    parser.add_argument("--ai", help="AI of the honest bots (default: the bot's)")
    parser.add_argument("--baseline", action="store_true", help="first play one game without attacks")
    parser.add_argument(
        "--only",
        metavar="NAME",
        help="only the attacks whose name contains NAME: " + ", ".join(name for name, _ in ATTACKS),
    )
    args = parser.parse_args()
    try:
        with socket.socket() as probe:
            probe.bind(("127.0.0.2", 0))
    except OSError:
        raise SystemExit("needs the loopback addresses 127.0.0.2-14 (Linux)") from None
    if args.baseline:
        report("baseline: honest game alone", await run(args, attacks=False))
    report("honest game under all attacks", await run(args, attacks=True))


if __name__ == "__main__":
    asyncio.run(main())
