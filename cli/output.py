"""What the commands write besides their own lines: the run of a Textual app (``blokus play``, ``blokus replay``)
with its exit code and the one line when it cannot run or fails; the line about output dropped by a writer."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

from blokus.model.exits import EXIT_USAGE
from blokus.net.lines import LineWriter

if TYPE_CHECKING:
    from textual.app import App

log = logging.getLogger(__name__)


def run_app(app: App, prog: str = "blokus") -> int:
    """Run the app in the terminal; a stdout that is not a terminal is one line of error (exit 2)."""
    if not sys.stdout.isatty():
        print(
            f"{prog}: the terminal interface needs a terminal; stdout is not one (a pipe or a file?)", file=sys.stderr
        )
        return EXIT_USAGE
    try:
        result = app.run()
    except Exception as exc:  # Textual restores the terminal before we get here
        log.exception("unexpected error")
        print(f"blokus: unexpected error: {exc} (details in the log file)", file=sys.stderr)
        return 1
    for line in getattr(app, "farewell", ()):  # what the screen can no longer show (a game saved on quitting)
        print(f"{prog}: {line}")
    if app.return_code not in (0, None):
        return int(app.return_code or 1)
    return int(result or 0)


def report_dropped(writer: LineWriter, program: str, wait: float = 0.5) -> None:
    """After :meth:`LineWriter.close`: one line on stderr if lines were dropped (from a thread of its own
    too, waited for at most ``wait`` seconds: stderr may be the stream that was not read)."""
    if writer.dropped:
        last = LineWriter(sys.stderr, capacity=1, name="stderr")
        last.write(f"{program}: {writer.dropped} output line(s) dropped ({writer.name} was not read in time)")
        last.close(wait)
