"""``blokus play`` on a server that cannot be reached: one line before the terminal interface opens."""

from __future__ import annotations

import socket
import subprocess
import sys


def _closed_port() -> int:
    with socket.socket() as s:  # a port that was free a moment ago: nobody listens there
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_server_is_one_line_before_the_tui():
    port = _closed_port()
    run = subprocess.run(
        [sys.executable, "-m", "blokus", "play", "-h", "127.0.0.1", "-p", str(port)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1
    assert run.stderr == f"blokus play: cannot connect to 127.0.0.1:{port}: Connection refused\n"
    assert run.stdout == ""  # the TUI never started (it would refuse a stdout that is no terminal anyway)


def test_unknown_host_is_one_line():
    run = subprocess.run(
        [sys.executable, "-m", "blokus", "play", "-h", "no-such-host.invalid"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1
    assert run.stderr.startswith("blokus play: cannot connect to no-such-host.invalid:") and run.stderr.count("\n") == 1
