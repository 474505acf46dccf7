"""Running a Textual app of a command (``blokus play``, ``blokus replay``) in the terminal: its exit code and
the one line when it cannot run or fails."""

from __future__ import annotations

import logging
import sys

from textual.app import App

from model.exits import EXIT_USAGE

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
    if app.return_code not in (0, None):
        return int(app.return_code or 1)
    return int(result or 0)
