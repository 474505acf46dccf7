"""Benchmark of memento reading and writing (not a test).

For every memento of a replay (default: the official game-1 replay of the test fixtures) it times

* read: the bytes of one complete ``<room>`` → ``GameState`` (``parse_xml`` + ``read_state``, the path
  of a client; ``--stream`` also times ``MessageReader.feed``, the path of a socket);
* write: ``GameState`` → bytes (``state_to_message`` + ``to_xml(pretty=True)`` as the local server
  sends it, and the compact ``to_bytes``),

and prints the median and maximum in ms over all states and over the mid-game ones (turn 24–72).

``--against REV`` measures the code of a git revision (checked out into a temporary worktree) and the working
tree's in one run, alternating ``--rounds`` times in fresh processes, and prints the median of each figure
and the ratio new/old (e.g. ``--against main`` before a change to the message code is merged).
Usage: python bench/bench_xml.py [--replay PATH] [--repeat N] [--stream] [--cpu] [--profile read|write]
                                 [--against REV [--rounds N]]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lxml import etree

ROOT = Path(__file__).resolve().parents[1]
# the code measured: this tree's, or (in a run of --against) the one named by BENCH_XML_CODE
sys.path.insert(0, os.environ.get("BENCH_XML_CODE") or str(ROOT))

from blokus.model.convert import MessageReader, parse_xml, read_state, state_to_message  # noqa: E402
from blokus.model.framing import parse_stream  # noqa: E402
from blokus.model.messages import PROTOCOL_OPEN, to_bytes, to_xml  # noqa: E402

DEFAULT_REPLAY = ROOT / "tests/fixtures/sc2021/gen-21.3.3-game1-replay-regular-end.xml"


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
    parser.add_argument("--against", metavar="REV", help="also measure the code of this git revision, alternating")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each tree with --against")
    args = parser.parse_args()
    if args.against:
        compare(args)
        return

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


def compare(args: argparse.Namespace) -> None:
    """This script on the code of ``args.against`` and on the working tree's, alternating in fresh processes."""
    own = [a for a in sys.argv[1:] if a not in ("--against", args.against, "--rounds", str(args.rounds))]
    own = [a for a in own if not a.startswith(("--against=", "--rounds="))]

    def git(*words: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *words], check=True, capture_output=True, text=True).stdout

    revision = git("rev-parse", "--short", args.against).strip()
    runs: dict[str, list[dict[str, str]]] = {revision: [], "working tree": []}
    with tempfile.TemporaryDirectory(prefix="bench_xml_") as tmp:
        tree = Path(tmp) / revision
        git("worktree", "add", "--detach", str(tree), revision)
        try:
            for _ in range(args.rounds):
                for name, code in ((revision, tree), ("working tree", ROOT)):
                    env = dict(os.environ, BENCH_XML_CODE=str(code))
                    done = subprocess.run(
                        [sys.executable, __file__, *own], env=env, capture_output=True, text=True, check=False
                    )
                    if done.returncode != 0:
                        raise SystemExit(f"bench_xml: the run on {name} failed:\n{done.stderr.strip()[-2000:]}")
                    lines = done.stdout.splitlines()
                    print(f"-- {name}: {lines[0]}")
                    runs[name].append({line[:28].strip(): line[28:] for line in lines[1:]})
        finally:
            git("worktree", "remove", "--force", str(tree))
    print(f"median of {args.rounds} alternating runs per tree (ms): old = {revision}, new = the working tree")
    print(f"{'':<28} {'old':>8} {'new':>8} {'new/old':>8}   (median; mid-game median)")
    for label in runs[revision][0]:
        old = [_figures(run[label]) for run in runs[revision]]
        new = [_figures(run[label]) for run in runs["working tree"]]
        o, n = statistics.median(f[0] for f in old), statistics.median(f[0] for f in new)
        om, nm = statistics.median(f[2] for f in old), statistics.median(f[2] for f in new)
        print(f"{label:<28} {o:>8.3f} {n:>8.3f} {n / o:>8.2f}   {om:.3f} -> {nm:.3f} ({nm / om:.2f})")


def _figures(text: str) -> tuple[float, ...]:
    """median, max and mid-game median of one line of :func:`report`."""
    return tuple(float(word) for word in text.split() if word.replace(".", "", 1).isdigit())


if __name__ == "__main__":
    main()
