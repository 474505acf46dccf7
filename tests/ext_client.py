"""A small contest-style client for the tests of ``cmd:`` players (``net.external``).

Started like every Software-Challenge client: ``python tests/ext_client.py -h HOST -p PORT -r CODE``. It
plays quickly (a placement of its largest placeable piece, seeded), both seasons (the server's states
say which), and misbehaves on request (``--misbehave KIND``, at its ``--at``-th own move):

* ``illegal``: sends a move that covers an occupied field
* ``slow``: answers after ``--delay`` seconds (default 2.5: beyond the official 2 s)
* ``crash``: writes a line to stderr and exits with code 3
* ``raise``: raises a KeyError (a Python client's bug: a traceback on stderr, exit 1)
* ``leave``: closes its connection and exits with 0
* ``never-join``: never connects
* ``never-answer``: joins, then never answers from the ``--at``-th request on
* ``stubborn``: ignores SIGTERM and forks a child that ignores it too, then plays normally
* ``flood``: writes to stdout and stderr without pause while it plays
* ``steal-seat``: looks for a reservation code on the command line of its siblings (``/proc/*/cmdline``,
  for up to ``--delay`` seconds), joins that seat first and keeps it, then plays its own
* ``hog-connections``: opens 63 idle connections to the server first, then plays
* ``kill-opponent``: SIGKILLs its siblings (the other side's processes) at its ``--at``-th own move
* ``stop-opponent``: SIGSTOPs its siblings at its ``--at``-th own move and SIGCONTs them ``--delay`` seconds
  later (never, with a delay beyond the game)
* ``stop-engine``: SIGSTOPs the children of its siblings (the other side's engine, not the bot that carries it)
  at its ``--at``-th own move, for good
* ``read-reservation``: at its start, before it imports anything heavy, SIGSTOPs each sibling and reads what
  waits on its stdin (``/proc/PID/fd/0``) or stands after ``-r`` on its command line (for up to ``--delay``
  seconds); with a code it keeps them stopped, joins that seat first and plays it with its smallest pieces
  (a loss that looks real), then plays its own; without one it lets them go on and plays its own
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import sys
import threading
import time
from pathlib import Path


def _siblings() -> dict[int, list[str]]:
    """The other children of our parent (the host that started us: the other side's processes)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                argv = fh.read().decode(errors="replace").split("\0")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getppid():
            found[int(entry)] = argv
    return found


def _children_of(parents: set[int]) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as fh:
                if int(fh.read().rsplit(")", 1)[1].split()[1]) in parents:
                    found.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _code_in(argv: list[str], own: str | None) -> str | None:
    for flag, value in zip(argv, argv[1:], strict=False):
        if flag in ("-r", "--reservation") and value not in (own, "-"):
            return value
    return None


def _read_stdin_of(pid: int) -> str | None:
    """A line waiting on the stdin of ``pid`` (a pipe), read through /proc without blocking."""
    try:
        fd = os.open(f"/proc/{pid}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        data = os.read(fd, 256)
    except OSError:
        return None
    finally:
        os.close(fd)
    line = data.decode("ascii", errors="replace").strip()
    return line or None


def read_reservation(own: str | None, wait: float) -> str | None:
    """Stop every sibling as soon as it appears, read its stdin and its command line until a code shows
    (at most ``wait`` s), then let them go on."""
    stopped: set[int] = set()
    code = None
    deadline = time.monotonic() + wait
    try:
        while code is None and time.monotonic() < deadline:
            for pid, argv in _siblings().items():
                if pid not in stopped:
                    try:
                        os.kill(pid, signal.SIGSTOP)
                    except OSError:
                        continue
                    stopped.add(pid)
                code = _code_in(argv, own) or _read_stdin_of(pid)
                if code is not None:
                    break
            time.sleep(0.005)
    finally:
        for pid in stopped if code is None else ():  # with a code, the other side stays stopped: it would notice
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass
    return code


def _argument(flag: str) -> str | None:
    argv = sys.argv[1:]
    return argv[argv.index(flag) + 1] if flag in argv[:-1] else None


# an attacker is quick: it acts before the imports below (which take a moment) and before our side reads its stdin
STOLEN = (
    read_reservation(_argument("-r"), float(_argument("--delay") or 2.5))
    if __name__ == "__main__" and _argument("--misbehave") == "read-reservation"
    else None
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from blokus.model import placements as P  # noqa: E402
from blokus.model.moves import SetMove  # noqa: E402
from blokus.model.pieces import SHAPES  # noqa: E402
from blokus.model.state import GameState, move_of_placement  # noqa: E402
from blokus.net.connection import Closed, Connection, MoveRequested  # noqa: E402

KINDS = (
    "none",
    "illegal",
    "slow",
    "crash",
    "raise",
    "leave",
    "never-join",
    "never-answer",
    "stubborn",
    "flood",
    "steal-seat",
    "hog-connections",
    "kill-opponent",
    "stop-opponent",
    "stop-engine",
    "read-reservation",
)


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("-h", "--host", default="localhost")
    p.add_argument("-p", "--port", type=int, default=13050)
    p.add_argument("-r", "--reservation")
    p.add_argument("--misbehave", choices=KINDS, default="none")
    p.add_argument("--at", type=int, default=3, help="own move number of the misbehaviour (1 = first)")
    p.add_argument("--delay", type=float, default=2.5)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def largest_piece(state: GameState, rng: random.Random):
    ids = state.legal_placements()
    if len(ids) == 0:
        return None
    sizes = [SHAPES[int(P.P_SHAPE[i])].size for i in ids]
    best = max(sizes)
    choices = [i for i, size in zip(ids, sizes, strict=True) if size == best]
    return move_of_placement(state.color, int(rng.choice(choices)))


def smallest_piece(state: GameState):
    ids = state.legal_placements()
    if len(ids) == 0:
        return None
    return move_of_placement(state.color, int(min(ids, key=lambda i: SHAPES[int(P.P_SHAPE[i])].size)))


async def play_badly(conn: Connection) -> None:
    """Answer every move request of ``conn`` (a stolen seat) with the smallest piece: a weak, real-looking game."""
    async for event in conn:
        if isinstance(event, MoveRequested) and event.state is not None:
            await conn.send_move(smallest_piece(event.state), check=False)
        elif isinstance(event, Closed):
            break


def illegal_move(state: GameState) -> SetMove:
    """A move of an unplaced shape over an occupied field (OBSTRUCTED or worse, never a start-piece error)."""
    legal = largest_piece(state, random.Random(0))
    assert isinstance(legal, SetMove)
    for dx in range(-4, 5):
        for dy in range(-4, 5):
            move = SetMove(legal.color, legal.shape, legal.rotation, legal.flipped, legal.x + dx, legal.y + dy)
            mistake = state.validate(move)
            if mistake is not None and mistake.carries_move:
                return move
    return SetMove(legal.color, legal.shape, legal.rotation, legal.flipped, 30, 30)


def flood() -> None:
    line = b"x" * 1000 + b"\n"
    while True:
        os.write(1, line)
        os.write(2, line)


def stolen_code(own: str | None, wait: float) -> str | None:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        for argv in _siblings().values():
            code = _code_in(argv, own)
            if code is not None:
                return code
        time.sleep(0.05)
    return None


def stop_siblings(delay: float) -> None:
    """SIGSTOP the other side's processes now, SIGCONT them after ``delay`` s (in a thread: we play on)."""
    pids = list(_siblings())
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)

    def go_on() -> None:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass

    timer = threading.Timer(delay, go_on)
    timer.daemon = True
    timer.start()


async def play(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    kept = []  # connections held open to hurt the other side
    if args.misbehave in ("steal-seat", "read-reservation"):
        code = stolen_code(args.reservation, args.delay) if args.misbehave == "steal-seat" else STOLEN
        print(f"ext_client: stolen code: {code}", file=sys.stderr, flush=True)
        if code is not None:
            thief = Connection(args.host, args.port)
            await thief.open()
            await thief.join(reservation=code)
            kept.append(thief)
            if args.misbehave == "read-reservation":
                kept.append(asyncio.create_task(play_badly(thief)))
    if args.misbehave == "hog-connections":
        for _ in range(63):
            kept.append(await asyncio.open_connection(args.host, args.port))
        print("ext_client: 63 idle connections open", file=sys.stderr, flush=True)
    conn = Connection(args.host, args.port)
    await conn.open()
    await conn.join(reservation=args.reservation)
    print(f"ext_client: joined with {args.reservation}", file=sys.stderr, flush=True)
    own = 0
    async for event in conn:
        if isinstance(event, MoveRequested) and event.state is not None:
            own += 1
            state = event.state
            now = own == args.at
            if now and args.misbehave == "crash":
                print(f"ext_client: simulated crash at turn {state.turn}", file=sys.stderr, flush=True)
                os._exit(3)
            if now and args.misbehave == "raise":
                {}["simulated bug"]  # noqa: B018
            if now and args.misbehave == "leave":
                await conn.close()
                return 0
            if own >= args.at and args.misbehave == "never-answer":
                continue
            if now and args.misbehave == "kill-opponent":
                for pid in _siblings():
                    os.kill(pid, signal.SIGKILL)
                print("ext_client: killed the other side", file=sys.stderr, flush=True)
            if now and args.misbehave == "stop-engine":
                siblings = set(_siblings())
                for pid in _children_of(siblings):
                    os.kill(pid, signal.SIGSTOP)
                print("ext_client: stopped the other side's engine", file=sys.stderr, flush=True)
            if now and args.misbehave == "stop-opponent":
                stop_siblings(args.delay)
                print(f"ext_client: stopped the other side for {args.delay:g} s", file=sys.stderr, flush=True)
            if now and args.misbehave == "slow":
                await asyncio.sleep(args.delay)
            move = illegal_move(state) if now and args.misbehave == "illegal" else largest_piece(state, rng)
            print(f"ext_client: turn {state.turn}: {move}", file=sys.stderr, flush=True)
            await conn.send_move(move, check=False)
        elif isinstance(event, Closed):
            break
    await conn.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.misbehave == "never-join":
        print("ext_client: not joining", file=sys.stderr, flush=True)
        while True:
            time.sleep(60)
    if args.misbehave == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if os.fork() == 0:  # the child ignores SIGTERM too (inherited) and outlives the game
            while True:
                time.sleep(60)
    if args.misbehave == "flood":
        threading.Thread(target=flood, daemon=True).start()
    return asyncio.run(play(args))


if __name__ == "__main__":
    raise SystemExit(main())
