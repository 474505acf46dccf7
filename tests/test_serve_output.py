"""``blokus serve`` whose stdout nobody reads (a full pipe, a terminal paused with Ctrl-S) keeps playing: its
lines go through a writer thread (``net.lines``); dropped lines are counted and reported at the end."""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from blokus.net.lines import LineWriter

ROOT = Path(__file__).resolve().parent.parent
CLIENT = [sys.executable, str(Path(__file__).with_name("ext_client.py"))]
CAP = 60.0  # seconds: a cap on every wait


def test_a_writer_that_cannot_write_never_blocks_and_counts_what_it_drops():
    read, write = os.pipe()
    stream = os.fdopen(write, "w")
    try:
        writer = LineWriter(stream, capacity=10)
        for n in range(100_000):  # far beyond a pipe's 64 KiB: the writer thread blocks, we do not
            writer.write(f"line {n}")
        assert writer.dropped > 0
        assert writer.close(wait=0.1) == writer.dropped >= 100_000 - 10 - writer.written
    finally:
        os.close(read)


def _full_pipe() -> tuple[int, int]:
    read, write = os.pipe()
    try:  # a small pipe (Linux); elsewhere the padding below fills the usual 64 KiB
        fcntl.fcntl(write, 1031, 4096)  # F_SETPIPE_SZ
    except OSError:
        pass
    os.set_blocking(write, False)
    try:
        while True:
            os.write(write, b"." * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(write, True)
    return read, write


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.mark.skipif(not hasattr(fcntl, "fcntl"), reason="POSIX pipes")
def test_serve_with_a_stdout_nobody_reads_plays_every_game():
    read, write = _full_pipe()
    port = _free_port()
    serve = subprocess.Popen(
        [sys.executable, "-m", "blokus", "serve", "-p", str(port), "--encode-workers", "0"],
        stdout=write,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        cwd=ROOT,
        start_new_session=True,
    )
    os.close(write)
    try:
        end = time.monotonic() + CAP
        while not _listening(port):  # its "listening on" line cannot be read: ask the port
            assert time.monotonic() < end and serve.poll() is None, "the server did not start"
            time.sleep(0.05)
        for game in range(3):  # every game line lands in the full pipe; each game still starts and ends
            clients = [
                subprocess.Popen([*CLIENT, "-p", str(port), "--seed", str(game * 2 + i)], stderr=subprocess.DEVNULL)
                for i in range(2)
            ]
            for client in clients:
                assert client.wait(CAP) == 0, f"game {game + 1} did not end"
        serve.send_signal(signal.SIGINT)
        _, err = serve.communicate(timeout=CAP)  # it also ends, though its last lines cannot be written
        assert serve.returncode == 0
        assert b"output line(s) dropped (stdout was not read in time)" in err
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait(CAP)
        os.close(read)
