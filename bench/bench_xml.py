"""Benchmark of memento reading and writing (not a test).

For every memento of a replay (default: the official game-1 replay of the test fixtures) it times

* read: the bytes of one complete ``<room>`` → ``GameState`` (``parse_xml`` + ``read_state``, the path
  of a client; ``--stream`` also times ``MessageReader.feed``, the path of a socket);
* write: ``GameState`` → bytes (``state_to_message`` + ``to_xml(pretty=True)`` as the local server
  sends it, and the compact ``to_bytes``),

and prints the median and maximum in ms over all states and over the mid-game ones (turn 24–72).
Usage: python bench/bench_xml.py [--replay PATH] [--repeat N] [--stream] [--cpu] [--profile read|write]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lxml import etree

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model.convert import MessageReader, parse_xml, read_state, state_to_message  # noqa: E402
from model.framing import parse_stream  # noqa: E402
from model.messages import PROTOCOL_OPEN, to_bytes, to_xml  # noqa: E402

DEFAULT_REPLAY = Path(__file__).resolve().parents[1] / "tests/fixtures/sc2021/gen-21.3.3-game1-replay-regular-end.xml"


def mementos(path: Path) -> list[bytes]:
    """The raw bytes of every memento ``<room>`` of a replay, as they were written (pretty-printed)."""
    out = []
    for element in parse_stream(path.read_bytes(), strict=False).messages:
        data = element.find("data")
        if element.tag == "room" and data is not None and data.get("class") == "memento":
            out.append(etree.tostring(element, encoding="utf-8", with_tail=False))
    return out


CLOCK = time.perf_counter


def timed(fn: Callable[[], object], repeat: int) -> float:
    """Best-of-``repeat`` time of one call in ms (the median over states is taken by the caller)."""
    best = float("inf")
    for _ in range(repeat):
        start = CLOCK()
        fn()
        best = min(best, CLOCK() - start)
    return best * 1000


def report(label: str, times: list[float], turns: list[int]) -> None:
    mid = [t for t, turn in zip(times, turns, strict=True) if 24 <= turn <= 72]
    print(
        f"{label:<28} median {statistics.median(times):7.3f} ms  max {max(times):7.3f} ms  "
        f"mid-game median {statistics.median(mid):7.3f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replay", type=Path, default=DEFAULT_REPLAY)
    parser.add_argument("--repeat", type=int, default=7, help="calls per state; the best one counts")
    parser.add_argument("--stream", action="store_true", help="also time MessageReader.feed")
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="CPU time of this process instead of wall time (for a machine under other load)",
    )
    parser.add_argument("--profile", choices=("read", "write"), help="cProfile one pass over all states")
    args = parser.parse_args()

    global CLOCK
    if args.cpu:
        CLOCK = time.process_time
    raw = mementos(args.replay)
    reads = [read_state(parse_xml(data)) for data in raw]
    states = [r.state for r in reads]
    room_id = reads[0].room_id or "room"
    names = reads[0].names
    turns = [s.turn for s in states]

    def read(data: bytes) -> object:
        return read_state(parse_xml(data)).state

    def feed(data: bytes) -> object:
        reader = MessageReader()
        reader.feed(PROTOCOL_OPEN.encode())
        (message,) = reader.feed(data)
        return read_state(message).state  # type: ignore[arg-type]

    def write_pretty(state) -> bytes:
        return to_xml(state_to_message(state, room_id, names), pretty=True).encode()

    def write_compact(state) -> bytes:
        return to_bytes(state_to_message(state, room_id, names))

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for data, state in zip(raw, states, strict=True):
            read(data) if args.profile == "read" else write_pretty(state)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
        return

    # warm-up (first-use caches of pydantic/lxml)
    for data, state in zip(raw[:3], states[:3], strict=True):
        read(data)
        write_pretty(state)

    print(
        f"{len(raw)} mementos of {args.replay.name} ({min(map(len, raw))}–{max(map(len, raw))} bytes), "
        f"turns {turns[0]}–{turns[-1]}, best of {args.repeat} per state, {'CPU' if args.cpu else 'wall'} time"
    )
    report("read  parse_xml+read_state", [timed(lambda d=d: read(d), args.repeat) for d in raw], turns)
    if args.stream:
        report("read  MessageReader.feed", [timed(lambda d=d: feed(d), args.repeat) for d in raw], turns)
    report("write to_xml(pretty=True)", [timed(lambda s=s: write_pretty(s), args.repeat) for s in states], turns)
    report("write to_bytes", [timed(lambda s=s: write_compact(s), args.repeat) for s in states], turns)


if __name__ == "__main__":
    main()
