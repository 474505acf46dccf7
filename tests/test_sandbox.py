"""``ai.sandbox``: the walls around a team's program, tried as a team would, with players that behave until
turn 8 and strike then — a ``py:`` player (its process under our bot) and a ``cmd:`` program, each in a whole
game on an embedded server: writing outside its scratch folder (a journal, the compile cache), killing our bot,
reading its environment, connecting elsewhere, a daemon whose pid keeps changing, filling the disk; and the one
line said where the walls are missing (forced off)."""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from blokus.ai import processes, sandbox
from blokus.ai.players.controller import decide
from blokus.ai.players.registry import parse_player
from blokus.ai.players.team_process import TeamPlayer
from blokus.cli.arena import main as arena_main
from blokus.model import numba_cache
from blokus.model.pieces import Team
from blokus.model.season import season_named
from blokus.net.external import HostedGame, HostedSeat, program_command
from blokus.net.external_arena import OUR_ENV
from tests.test_net_bot import _midgame

CLIENT = [sys.executable, str(Path(__file__).with_name("ext_client.py"))]
WAIT = 600  # caps on a whole game under load (a game takes seconds once our kernels are compiled)
walled = pytest.mark.skipif(sandbox.abi() < 6, reason="needs Landlock ABI 6+ (Linux 6.12+): the walls and scoping")

# a team's player: plays its largest piece; at turn 8 (its first move from there on) it strikes once and says
# what happened on stderr (its scratch folder goes with the game; our bot forwards its output to the log)
ATTACKER = """
import json, os, signal, socket, sys, tempfile
from pathlib import Path

from blokus.player import Move, Player

TARGETS = json.loads((Path(__file__).parent / "targets.json").read_text())
FORK_LOOP = "import os, time\\nwhile True:\\n    if os.fork():\\n        os._exit(0)\\n    time.sleep(0.003)\\n"


def outcome(attempt):
    try:
        attempt()
    except OSError as exc:
        return "denied" if exc.errno in (1, 13) else f"error{exc.errno}"
    return "ok"


def append(path):
    with open(path, "a") as fh:
        fh.write("forged\\n")


def daemon():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execve(sys.executable, [sys.executable, "-c", FORK_LOOP, TARGETS["mark"]], {})
        os._exit(0)


def held():  # what this process's descriptors name
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            found.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass  # the listing's own
    return sorted(found)


def fill():  # 40 files of 8 MiB in one move
    for i in range(40):
        with open(f"fill-{i}", "wb") as fh:
            fh.write(b"x" * (8 << 20))


class Attacker(Player):
    struck = False

    def calculate_move(self) -> Move:
        if self.game_state.turn >= 8 and not self.struck:
            self.struck = True
            bot = os.getppid()
            found = {
                "journal": outcome(lambda: append(TARGETS["journal"])),
                "cache": outcome(lambda: append(os.path.join(TARGETS["cache"], "planted.nbi"))),
                "environ": outcome(lambda: open(f"/proc/{bot}/environ", "rb").read()),
                "fds": outcome(lambda: os.listdir(f"/proc/{bot}/fd")),
                "connect": outcome(lambda: socket.create_connection(("127.0.0.1", TARGETS["port"]), 5).close()),
                "listen": outcome(lambda: socket.create_server(("127.0.0.1", 0)).close()),
                "kill": outcome(lambda: os.kill(bot, TARGETS.get("signal", signal.SIGKILL))),
                "scratch": outcome(lambda: append("mine.txt")),
                "tmp": outcome(lambda: append(os.path.join(tempfile.gettempdir(), "mine.txt"))),
                "held": held(),
            }
            print("ATTACK " + json.dumps(found), file=sys.stderr, flush=True)
            if TARGETS.get("daemon"):
                daemon()
            if TARGETS.get("fill"):
                fill()
        return max(self.game_state.legal_moves(), key=lambda move: move.shape.size)
"""


def arena(tmp_path: Path, flags: str) -> tuple[int, dict]:
    out = tmp_path / "match.json"
    program = f"cmd:{' '.join(CLIENT)} {flags}"
    argv = [program, "random", "--games", "2", "--move-time", "200", "--quiet", "--json", str(out)]
    code = arena_main([*argv, "--logs", str(tmp_path / "logs")])
    return code, json.loads(out.read_text())


def marked(mark: str) -> list[int]:
    """The live processes whose command line holds ``mark`` (zombies are ended)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if mark.encode() in argv and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def play(tmp_path: Path, seat: HostedSeat, **kwargs) -> tuple[object, str]:
    """A whole 2021 game of ``seat`` (team ONE) against the contest-style client; the outcome and the text of
    ONE's stderr log."""
    game = HostedGame(
        (seat, HostedSeat("plain", CLIENT)),
        season=season_named("2021"),
        log_dir=tmp_path / "logs",
        join_timeout=WAIT,  # a first start of our bot compiles its kernels (a minute or two)
        **kwargs,
    )
    try:
        game.start()
        outcome = game.wait(3 * WAIT)
    finally:
        game.close()
    assert outcome is not None
    err = next((tmp_path / "logs").glob("game-ONE-*.err.log")).read_text(errors="replace")
    return outcome, err


def targets(tmp_path: Path, **extra: object) -> tuple[Path, socket.socket, dict]:
    """A journal of ours, a listening port of ours, the compile cache's folder: what the attackers aim at."""
    journal = tmp_path / "journal.jsonl"
    journal.write_text("ours\n")
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    cache = numba_cache.locations("blokus.model.fast")[0]
    cache.mkdir(parents=True, exist_ok=True)
    found = {"journal": str(journal), "cache": str(cache), "port": listener.getsockname()[1], **extra}
    return journal, listener, found


def py_seat(tmp_path: Path, found: dict, env: dict[str, str] | None = None) -> HostedSeat:
    team = tmp_path / "team"
    team.mkdir()
    (team / "targets.json").write_text(json.dumps(found))
    (team / "attacker.py").write_text(textwrap.dedent(ATTACKER))
    command = [*program_command(parse_player(f"py:{team / 'attacker.py'}")), "--seed", "1"]
    return HostedSeat("attacker", command, env={**OUR_ENV, **(env or {})}, walled=False)  # as the arena seats it


def attack(err: str) -> dict:
    line = next(line for line in err.splitlines() if line.startswith("ATTACK "))
    return json.loads(line.removeprefix("ATTACK "))


@walled
def test_a_py_player_reaches_none_of_our_files_processes_or_ports(tmp_path: Path):
    mark = f"blokus-test-daemon-{os.getpid()}-py"
    journal, listener, found = targets(tmp_path, mark=mark, daemon=True)
    planted = Path(found["cache"]) / "planted.nbi"
    planted.unlink(missing_ok=True)  # left by an earlier run without walls: the check below is of this one
    with listener:
        outcome, err = play(tmp_path, py_seat(tmp_path, found))
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    report = attack(err)
    denied = ("journal", "cache", "environ", "fds", "connect", "listen", "kill")
    assert {name: report[name] for name in denied} == dict.fromkeys(denied, "denied"), err
    assert report["scratch"] == report["tmp"] == "ok"  # its own folder (its working directory, $TMPDIR)
    assert not [path for path in report["held"] if "numba" in path or "__pycache__" in path], report["held"]
    assert journal.read_text() == "ours\n" and not planted.exists()
    assert outcome.result is not None and outcome.result.regular and not outcome.void, (outcome, err)  # played on
    assert outcome.turn > 40
    assert marked(mark) == []  # the daemon whose pid kept changing ended with the game
    assert not list((tmp_path / "logs").glob("*.scratch"))  # its scratch folder too


@walled
def test_a_cmd_program_reaches_only_its_server(tmp_path: Path):
    journal, listener, found = targets(tmp_path)
    env = {"ATTACK_FILE": str(journal), "ATTACK_PORT": str(found["port"])}
    # its 5th own move is turn 8 (team ONE plays turns 0, 2, 4, …)
    seat = HostedSeat("walls", [*CLIENT, "--misbehave", "walls", "--at", "5"], env=env)
    with listener:
        outcome, err = play(tmp_path, seat)
        with pytest.raises(BlockingIOError):
            listener.accept()
    line = next(line for line in err.splitlines() if "ext_client: walls:" in line)
    assert line.endswith("write=denied signal=denied ptrace=denied connect=denied server=ok scratch=ok stderr=ok"), line
    assert journal.read_text() == "ours\n"
    assert outcome.result is not None and outcome.result.regular, outcome  # it played on to the end


@walled
def test_a_daemon_of_a_cmd_program_ends_with_the_game(tmp_path: Path):
    mark = f"blokus-test-daemon-{os.getpid()}-cmd"
    seat = HostedSeat("daemon", [*CLIENT, "--misbehave", "daemon", "--at", "5"], env={"DAEMON_MARK": mark})
    outcome, err = play(tmp_path, seat)
    assert "ext_client: started a daemon" in err and outcome.result is not None
    assert marked(mark) == []  # setsid, a double fork, an empty environment, a new pid every few ms: ended


@walled
def test_a_py_player_that_fills_its_scratch_folder_is_ended(tmp_path: Path):
    _, listener, found = targets(tmp_path, fill=True)
    listener.close()
    outcome, err = play(tmp_path, py_seat(tmp_path, found))
    # its host sees the folder grow (SIGTERM), or our bot sees it after the move (exit 4), whichever is first:
    # a crash of the team's player at that move, said so
    assert outcome.forfeit_class == "crashed" and outcome.forfeit.startswith("crashed ("), outcome.forfeit
    assert " at turn 8:" in outcome.forfeit, outcome.forfeit
    assert re.search(r"its scratch folder holds \d+ MiB \(at most 256 MiB\)", outcome.forfeit), outcome.forfeit
    assert not outcome.void and outcome.result is not None and outcome.result.winner is Team.TWO
    assert not list((tmp_path / "logs").glob("*.scratch"))  # removed with the game


@walled
def test_a_walled_program_that_kills_our_side_crashes_and_loses(tmp_path: Path):
    code, data = arena(tmp_path, "--misbehave kill-opponent --at 2")
    assert code == 0 and data["summary"]["void"] == 0  # our side was never hurt: the program's own crash
    assert [g["forfeit"].split(" at turn")[0] for g in data["games"]] == ["A crashed (exit 1)"] * 2, data["games"]
    assert all("PermissionError: [Errno 1] Operation not permitted" in g["forfeit"] for g in data["games"])


@walled
async def test_our_bot_ends_a_py_player_that_fills_its_folder_in_one_move(tmp_path: Path):
    # our bot's own look, after each move (here without a host watching the folder)
    _, listener, found = targets(tmp_path, fill=True)
    listener.close()
    py_seat(tmp_path, found)  # the team's files
    said: list[str] = []
    player = TeamPlayer(parse_player(f"py:{tmp_path / 'team' / 'attacker.py'}"), say=said.append, strict=True)
    player.start()
    try:
        await player.wait_ready()
        decision = await decide(player, _midgame(), time.monotonic(), think_ms=5000, hard_ms=60_000, strict=True)
    finally:
        player.close()
    assert decision.source == "strict-error"
    assert re.fullmatch(
        r"scratch at turn 20: its scratch folder holds \d+ MiB \(at most 256 MiB\): your player's processes were ended",
        decision.detail,
    ), decision.detail
    assert player.active is None and not player.scratch.exists()  # ended; its temporary folder removed


def test_without_walls_one_line_says_so_and_the_game_plays_as_before(tmp_path: Path, monkeypatch, caplog):
    journal, listener, found = targets(tmp_path, signal=0)  # (a SIGKILL would end our bot: nothing walls it)
    listener.close()
    # py: the bot says it, on stderr (its log), and the team's player plays; nothing is walled
    outcome, err = play(tmp_path, py_seat(tmp_path, found, {sandbox.ENV: "off"}))
    lines = [line for line in err.splitlines() if "walls missing" in line]
    assert lines == [
        "blokus bot: walls missing around team programs: all (BLOKUS_SANDBOX=off): it may write, connect"
        " and signal wherever this user may"
    ], err
    assert attack(err)["journal"] == "ok" and journal.read_text() == "ours\nforged\n"
    assert outcome.result is not None and outcome.result.regular
    # cmd: the host says it once (its log), the program runs as it is
    monkeypatch.setenv(sandbox.ENV, "off")
    monkeypatch.setattr(sandbox, "abi", lambda: 0)
    monkeypatch.setattr(processes, "_said", set())
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="blokus.ai.processes"):
        for _ in range(2):
            walls = sandbox.Walls(tmp_path / "scratch")
            code = f"open({str(journal)!r}, 'a').write('again\\n')"
            assert processes.run([sys.executable, "-c", code], timeout=30, walls=walls) == 0
    said = [r.getMessage() for r in caplog.records if "walls missing" in r.getMessage()]
    assert said == ["walls missing around team programs: all (BLOKUS_SANDBOX=off): it may write, connect and signal"
                    " wherever this user may"]  # fmt: skip
    assert journal.read_text().endswith("again\nagain\n")


@walled
def test_a_walled_program_starts_as_before_and_holds_none_of_our_descriptors(tmp_path: Path):
    secret = os.open(tmp_path, os.O_RDONLY)  # a folder of ours (as the compile cache's), inheritable or not
    os.set_inheritable(secret, True)
    try:
        code = "import os; print(sorted(os.listdir('/proc/self/fd')))"
        walls = sandbox.Walls(tmp_path / "scratch")
        child = processes.start([sys.executable, "-c", code], stdout="pipe", walls=walls)
        out = child.stdout.read().decode()  # type: ignore[union-attr]
        assert child.stop() == 0
    finally:
        os.close(secret)
    assert json.loads(out.replace("'", '"')) == ["0", "1", "2", "3"]  # its streams and the listing itself


def test_a_cache_that_others_could_write_is_not_loaded(tmp_path: Path):
    index = tmp_path / "kernel.nbi"
    index.write_bytes(b"")
    os.chmod(tmp_path, 0o700)
    assert numba_cache.trusted(tmp_path, folder=True) and numba_cache.trusted(index)
    os.chmod(index, 0o666)
    assert not numba_cache.trusted(index)
    os.chmod(index, 0o644)
    os.chmod(tmp_path, 0o777)
    assert not numba_cache.trusted(tmp_path, folder=True)
    link = tmp_path / "link.nbi"
    link.symlink_to(index)
    assert not numba_cache.trusted(link)


def test_the_kernels_abi_is_measured():
    done = subprocess.run(
        [sys.executable, "-c", "from blokus.ai import sandbox; print(sandbox.abi())"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, sandbox.ENV: "off"},
    )
    assert done.stdout.strip() == "0"  # forced off: no walls, whatever the kernel
