"""Peak memory and time of ``blokus moves`` and replay loading on hostile files (not a unit test).

Generates the files of issue 9 in a temporary directory and runs each reader as its own process,
reporting exit status, wall time and peak resident memory (measured by ``/usr/bin/time``), plus the
last line of its error output:

* ``blokus moves FILE`` on state files: an attribute bomb (90 000 attributes, 880 KiB), a gzip bomb
  (1 MB unpacking to 1 GiB), ``/dev/zero``, deep nesting, 100 000 elements, a normal state for reference;
* replay loading as ``blokus replay`` does it (``tui.replays.load_replay``, the TUI is not started) on
  replays: a gzip bomb, 200 games in one ``.gz`` (140 MB unpacked), 90 games (63 MB: loads its first
  1000 states), text between messages, ``/dev/zero``, a normal replay for reference.

Usage: python bench/bench_bad_files.py
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from blokus.model.moves import SkipMove  # noqa: E402
from blokus.model.pieces import Shape  # noqa: E402
from blokus.model.replay import dump_replay  # noqa: E402
from blokus.model.state import GameState  # noqa: E402

MIB = 1 << 20
LOAD = (
    "import sys; from blokus.tui.replays import ReplayError, load_replay\n"
    "try:\n    d = load_replay(__import__('pathlib').Path(sys.argv[1]))\n"
    "    print(len(d.timeline), 'states,', len(d.warnings), 'warnings', file=sys.stderr)\n"
    "except ReplayError as e:\n    print(e, file=sys.stderr); sys.exit(2)"
)


def a_game() -> bytes:
    state = GameState.new(start_piece=Shape.PENTO_L)
    states = [state.copy()]
    while not state.is_over:
        moves = state.legal_moves()
        state.push(moves[0] if moves else SkipMove(state.color))
        states.append(state.copy())
    return dump_replay(states)


def make_files(directory: Path) -> tuple[list[tuple[str, Path]], list[tuple[str, Path]]]:
    game = a_game()
    body = game[len(b"<protocol>\n") : -len(b"</protocol>")]
    states = [
        ("normal state (reference)", "state.xml", b"<state class='state' turn='0' startPiece='PENTO_L'/>"),
        (
            "attribute bomb, 90 000 attributes",
            "attrs.xml",
            b"<state " + b" ".join(b'a%d="x"' % i for i in range(90_000)) + b"/>",
        ),
        ("gzip bomb, 1 GiB unpacked", "bomb.xml.gz", gzip.compress(b"\0" * MIB, 9) * 1024),
        ("deep nesting", "deep.xml", b"<state>" + b"<a>" * 10_000 + b"</a>" * 10_000 + b"</state>"),
        ("100 000 elements", "many.xml", b"<state>" + b"<field/>" * 100_000 + b"</state>"),
    ]
    replays = [
        ("normal replay (reference)", "game.xml", game),
        ("gzip bomb, 1 GiB unpacked", "bomb.xml.gz", gzip.compress(b"\0" * MIB, 9) * 1024),
        ("200 games in one .gz", "200.xml.gz", gzip.compress(b"<protocol>\n" + body * 200 + b"</protocol>", 6)),
        ("90 games in one .gz", "90.xml.gz", gzip.compress(b"<protocol>\n" + body * 90 + b"</protocol>", 6)),
        (
            "text between messages, 70 MB",
            "text.xml.gz",
            gzip.compress(b"<protocol>") + gzip.compress(b"<!--" + b"z" * 900_000 + b"--><x/>", 9) * 80,
        ),
    ]
    out = ([], [])
    for group, items in zip(out, (states, replays), strict=True):
        for label, name, data in items:
            path = directory / (("s-" if items is states else "r-") + name)
            path.write_bytes(data)
            group.append((f"{label} ({len(data) / 1e6:.2f} MB file)", path))
        group.append(("/dev/zero", Path("/dev/zero")))
    return out


def measure(argv: list[str]) -> tuple[int, float, float, str]:
    """Exit status, seconds, peak RSS (MiB, by /usr/bin/time: a child of this process would inherit this
    process's peak in ru_maxrss across exec) and the last line on stderr."""
    with tempfile.NamedTemporaryFile(suffix=".rss") as rss:
        started = time.monotonic()
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", rss.name, *argv],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        elapsed = time.monotonic() - started
        peak_kib = int(Path(rss.name).read_text().split()[-1])
    err = proc.stderr.decode(errors="replace").strip().splitlines()
    return proc.returncode, elapsed, peak_kib / 1024, err[-1][:110] if err else ""


def main() -> None:
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        states, replays = make_files(Path(tmp))
        print("blokus moves FILE:")
        for label, path in states:
            code, secs, mib, err = measure([python, "-m", "blokus", "moves", "--count", str(path)])
            print(f"  {label:48s} exit {code}  {secs:5.2f} s  peak RSS {mib:6.1f} MiB  {err}")
        print("replay loading (blokus replay FILE without the TUI):")
        for label, path in replays:
            code, secs, mib, err = measure([python, "-c", LOAD, str(path)])
            print(f"  {label:48s} exit {code}  {secs:5.2f} s  peak RSS {mib:6.1f} MiB  {err}")


if __name__ == "__main__":
    main()
