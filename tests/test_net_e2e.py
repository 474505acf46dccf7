"""End to end: `blokus serve` and two `blokus bot` processes play a full game over TCP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys

import pytest

from blokus.model.framing import parse_stream
from tests.helpers import ROOT, spawn


@pytest.mark.slow  # a whole game end to end
@pytest.mark.parametrize("season", ["2027", "2021"])
async def test_serve_and_two_bot_processes_play_a_game(tmp_path, season):
    # 2027, the default, without a flag; 2021 with --season 2021 for the server and the bots
    flag = ["--season", season] if season != "2027" else []
    server = await spawn(
        sys.executable,
        "-m",
        "blokus",
        "serve",
        "-p",
        "0",
        "--seed",
        "7",
        "--start-piece",
        "PENTO_V",
        "--save-replay",
        str(tmp_path),
        *flag,
    )
    try:
        banner = (await asyncio.wait_for(server.stdout.readline(), 30)).decode()
        match = re.search(r"listening on 127\.0\.0\.1:(\d+)", banner)
        assert match, banner
        port = match.group(1)
        bot_args = ["-p", port, "--ai", "random", "--move-time", "50", "-v", *flag]
        one = await spawn(sys.executable, "-m", "blokus", "bot", *bot_args, "--log", str(tmp_path / "one.log"))
        # the second player through the contest entry point
        two = await spawn("sh", str(ROOT / "start.sh"), "--host", "127.0.0.1", *bot_args)
        (out1, err1), (out2, err2) = await asyncio.wait_for(asyncio.gather(one.communicate(), two.communicate()), 60)
        assert one.returncode == 0, err1.decode()
        assert two.returncode == 0, err2.decode()
        line1, line2 = out1.decode().strip(), out2.decode().strip()

        # whoever joined first is team ONE; both report the same game from their side
        def neutral(line):
            return re.sub(r" \[us\]| \(we (won|lost)\)|; moves: .*", "", line)  # each counts its own moves

        assert neutral(line1) == neutral(line2)
        # "Unknown" is 21.3.3's name of a slot nobody named (2027's is blank): not shown
        assert sorted(["ONE [us]" in line1, "ONE [us]" in line2]) == [False, True] and "Unknown" not in line1
        assert line1.startswith("blokus bot: ONE ") and "cause REGULAR" in line1
        assert "(fallback-" not in err1.decode() + err2.decode()
        game_line = (await asyncio.wait_for(server.stdout.readline(), 30)).decode()
        assert game_line.startswith("game ") and "PENTO_V" in game_line and "REGULAR" in game_line
        log_text = (tmp_path / "one.log").read_text()
        assert f'<join gameType="swc_{season}_blokus"/>' in log_text and f"sc.plugin{season}.SetMove" in log_text
        assert banner.split("(", 1)[1].startswith(f"swc_{season}_blokus")
    finally:
        if server.returncode is None:
            server.send_signal(signal.SIGTERM)
        rest, _ = await asyncio.wait_for(server.communicate(), 30)
    assert server.returncode == 0
    assert "stopped after 1 game" in rest.decode() and "1 games" not in rest.decode()
    (replay,) = tmp_path.glob("replay_*.xml")  # (beside it, the moves' records)
    parsed = parse_stream(replay.read_bytes())
    assert parsed.ended and len(parsed.messages) >= 2


def test_start_sh_is_posix_with_lf_and_passes_arguments():
    text = (ROOT / "start.sh").read_bytes()
    assert text.startswith(b"#!/bin/sh\n") and b"\r" not in text
    assert b'"$@"' in text
    assert os.access(ROOT / "start.sh", os.X_OK)
