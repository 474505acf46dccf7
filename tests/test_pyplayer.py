"""``py:PATH[:CLASS]`` players: loading a team's file, its moves under the controller's clock, the
fallbacks (and ``strict``), the bot's summary and tracebacks."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import blokus.ai.players.player_api as api
from blokus.ai import processes
from blokus.ai.players.controller import check_move, decide
from blokus.ai.players.pyplayer import PlayerLoadError, load_player_class
from blokus.ai.players.registry import parse_player, parse_python_player
from blokus.ai.players.team_process import TeamPlayer, check_team_player
from blokus.cli.bot import EXIT_CODES, bot_lines, parse_options
from blokus.model.pieces import Shape
from blokus.model.result import regular_result
from blokus.model.season import SEASON_2021
from blokus.net.bot import Bot
from tests.helpers import (
    CAP,
    HOST,
    ROOT,
    ScriptedServer,
    admin_with_prepared_game,
    running_server,
    wait_until,
    wire_messages,
)
from tests.test_net_bot import _midgame

BIGGEST = """
from blokus.player import Move, Player


class Biggest(Player):
    def calculate_move(self) -> Move:
        return max(self.game_state.legal_moves(), key=lambda move: move.shape.size)
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def test_the_parts_of_a_python_player_name() -> None:
    def parts(text: str) -> tuple[str, str]:
        spec = parse_python_player(text)
        return spec.path, spec.class_name

    assert parts("py:a/b.py") == ("a/b.py", "")
    assert parts("py:a/b.py:Mine") == ("a/b.py", "Mine")
    assert parts("b.py") == ("b.py", "")
    assert parts("dir:x/b.py") == ("dir:x/b.py", "")  # a colon in the path is no class


def test_loading_finds_the_class_and_its_helpers(tmp_path: Path) -> None:
    write(tmp_path, "helper_for_test_loading.py", "SIZE_OF = lambda move: move.shape.size\n")
    path = write(
        tmp_path,
        "team.py",
        """
        from helper_for_test_loading import SIZE_OF
        from blokus.player import Player


        class Base(Player):
            pass


        class Logic(Base):
            def calculate_move(self):
                return max(self.game_state.legal_moves(), key=SIZE_OF)
        """,
    )
    # two classes: the socha template's name wins
    assert load_player_class(parse_player(f"py:{path}")).__name__ == "Logic"
    assert load_player_class(parse_player(f"py:{path}:Base")).__name__ == "Base"
    player = load_player_class(parse_player(f"py:{path}"))()
    move = player.answer(api.GameState.new(SEASON_2021, Shape.PENTO_L))
    assert move.shape is Shape.PENTO_L


@pytest.mark.parametrize(
    "text,words",
    [
        ("x = (\n", "team.py:1: SyntaxError"),
        ("import no_such_module_anywhere\n", "team.py:1: ModuleNotFoundError"),
        ("x = 1\n", "no class derived from blokus.player.Player"),
        (
            "from blokus.player import Player\nclass A(Player): pass\nclass B(Player): pass\n",
            "several player classes (A, B); name one",
        ),
    ],
)
def test_a_file_that_cannot_be_used_gives_one_line(tmp_path: Path, text: str, words: str) -> None:
    path = write(tmp_path, "team.py", text)
    with pytest.raises(PlayerLoadError, match=r"^[^\n]*$") as info:
        load_player_class(parse_player(f"py:{path}"))
    assert words in str(info.value)
    with pytest.raises(PlayerLoadError, match="no such file"):
        load_player_class(parse_player(f"py:{tmp_path / 'missing.py'}"))
    with pytest.raises(PlayerLoadError, match="no class Nope"):
        load_player_class(parse_player(f"py:{write(tmp_path, 'ok.py', BIGGEST)}:Nope"))


# one team player whose behaviour the test chooses through a file beside it (every process of it reads it)
MOODY = """
import os, re, subprocess, sys, time
from pathlib import Path

import numpy as np

from blokus.player import Move, Player, SetMove

HERE = Path(__file__).parent


class Moody(Player):
    def calculate_move(self) -> Move:
        mode = (HERE / "mode").read_text().strip()
        move = max(self.game_state.legal_moves(), key=lambda m: m.shape.size)
        if mode == "raise":
            raise ValueError("my bug")
        if mode == "illegal":
            return SetMove(move.color, move.shape, move.rotation, move.flipped, 19, 19)
        if mode == "numpy":
            x, y = np.argwhere(np.ones((20, 20)))[20 * move.y + move.x][::-1]  # numpy integers
            return SetMove(move.color, move.shape, int(move.rotation), np.bool_(move.flipped), x, y)
        if mode == "str":
            return str(move)
        if mode.startswith("c-loop"):  # holds the interpreter in C (catastrophic backtracking): seconds, or less
            re.match(r"(a+)+$", "a" * (20 if mode == "c-loop-short" else 26) + "!")
        if mode == "alloc":
            np.ones(3 * 2**30, dtype=np.uint8)
        if mode == "exit":
            os._exit(3)
        if mode == "flood":
            print(("x" * 99 + "\\n") * 30_000, flush=True)  # 3 MB
        if mode == "fork":  # a plain child, one in a session of its own, a detached grandchild without our token
            sleeper = [sys.executable, "-c", "import time; time.sleep(600)", str(HERE / "sleeper")]
            subprocess.Popen(sleeper)
            subprocess.Popen(sleeper, start_new_session=True)
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execve(sys.executable, sleeper, {})
                os._exit(0)
        return move

    def on_game_over(self, result) -> None:
        raise KeyError("oops")
"""


async def _team(tmp_path: Path, *, strict: bool = False) -> tuple[TeamPlayer, list[str]]:
    path = write(tmp_path, "moody.py", MOODY)
    (tmp_path / "mode").write_text("ok")
    said: list[str] = []
    player = TeamPlayer(parse_player(f"py:{path}"), say=said.append, strict=strict)
    player.start()
    await player.wait_ready()
    return player, said


async def _ask(player: TeamPlayer, tmp_path: Path, mode: str, *, strict: bool = False, hard_ms: int = 10_000):
    (tmp_path / "mode").write_text(mode)
    state = _midgame()
    decision = await decide(
        player, state, time.monotonic(), think_ms=min(5000, hard_ms), hard_ms=hard_ms, strict=strict
    )
    if not decision.source.startswith("strict"):
        assert check_move(state, decision.move) is None  # always a legal move, whatever the player did
    return decision


async def test_every_answer_of_the_team_player_is_judged_in_its_own_process(tmp_path: Path) -> None:
    player, said = await _team(tmp_path)
    try:
        pids = (player.active.pid, player.standby.pid)  # type: ignore[union-attr]
        assert os.getpid() not in pids  # the team's file was never imported here
        numpy = await _ask(player, tmp_path, "numpy")  # numpy integers, an int rotation: a plain move
        assert numpy.source == "engine" and type(numpy.move.x) is int and str(numpy.move).count(" ") == 5
        for _ in range(2):
            error = await _ask(player, tmp_path, "raise")
            assert error.source == "fallback-error" and error.detail.startswith("ValueError at turn 20, moody.py:")
            assert error.detail.endswith(" in calculate_move: my bug")  # the team's file and line
        assert sum("Traceback" in line for line in said) == 1  # once per kind
        assert any('moody.py", line' in line and "ValueError: my bug" in line for line in said)
        text = await _ask(player, tmp_path, "str")
        assert text.source == "fallback-error"
        assert "calculate_move returned str 'BLUE" in text.detail and "not a Move: use parse_move" in text.detail
        assert (await _ask(player, tmp_path, "illegal")).source == "fallback-illegal"
        assert (await _ask(player, tmp_path, "flood")).source == "engine"  # its output is capped, not the bot
        assert sum("output passed 1 MiB" in line for line in said) == 1 and player.output.dropped > 1_000_000
        assert (await _ask(player, tmp_path, "fork")).source == "engine"
        assert await _until(lambda: len(_running(tmp_path / "sleeper")) == 3)
        assert player.restarts == 0 and player.active.pid == pids[0]  # type: ignore[union-attr]
        # a C loop of seconds: that move is a fallback at the cut-off; the next one is answered at once by the
        # standby, given the position (never a cascade of late moves)
        # (each takeover below is by a standby that has loaded: under load a fresh one takes seconds, and a move
        # asked before that is rightly a fallback, "not ready yet")
        assert await _until(lambda: player.standby is not None and player.standby.ready)
        slow = await _ask(player, tmp_path, "c-loop", hard_ms=300)
        assert slow.source == "fallback-timeout"
        after = await _ask(player, tmp_path, "ok", hard_ms=1800)
        assert after.source == "engine" and player.active.pid == pids[1]  # type: ignore[union-attr]
        assert player.restarts == 1 and any("still busy with the move of turn 20" in line for line in said)
        # os._exit: that move is a fallback, the next one is the new standby's
        assert await _until(lambda: player.standby is not None and player.standby.ready)
        gone = await _ask(player, tmp_path, "exit")
        assert gone.source == "fallback-error" and "process ended (exit 3)" in gone.detail
        assert (await _ask(player, tmp_path, "ok")).source == "engine" and player.restarts == 2
        # 3 GiB: a MemoryError in the team's code (its process's memory limit), not a machine out of memory
        alloc = await _ask(player, tmp_path, "alloc")
        assert alloc.source == "fallback-error" and alloc.detail.startswith("MemoryError at turn 20")
        player.game_over(regular_result((50, 40), ("a", "b"), season=SEASON_2021))
        await player.finish(10)
        assert any("on_game_over raised KeyError" in line for line in said)
    finally:
        player.close()
    assert not any(processes.group_members(pid) for pid in pids)
    assert _running(tmp_path / "sleeper") == []  # whatever the team's code started ended with it


def _running(marker: Path) -> list[str]:
    found = subprocess.run(["pgrep", "-f", str(marker)], capture_output=True, text=True).stdout.split()
    return [pid for pid in found if Path(f"/proc/{pid}/stat").exists() and " Z " not in _stat(pid)]


def _stat(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return " Z "


async def _until(condition, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def test_strict_judges_as_the_contest_would(tmp_path: Path) -> None:
    player, _ = await _team(tmp_path, strict=True)
    try:
        assert player.standby is None
        assert (await _ask(player, tmp_path, "raise", strict=True)).source == "strict-error"
        illegal = await _ask(player, tmp_path, "illegal", strict=True)
        assert illegal.source == "strict-illegal" and check_move(_midgame(), illegal.move) is not None
        late = await _ask(player, tmp_path, "c-loop-short", strict=True, hard_ms=20)
        assert late.source == "engine" and late.elapsed > 0.02  # waited for and sent late: the server judges it
        assert (await _ask(player, tmp_path, "exit", strict=True)).source == "strict-error"
    finally:
        player.close()


@pytest.mark.parametrize(
    "text,words",
    [
        ("import os\nos._exit(0)\n", "bad.py: while loading, the process ended (exit 0)"),
        ("import time\ntime.sleep(3600)\n", "bad.py: still loading after 1 s (a loop or a wait at import?)"),
        ("x = (\n", "bad.py: cannot be loaded: bad.py:1: SyntaxError"),
    ],
)
def test_checking_a_file_never_imports_it_here(tmp_path: Path, text: str, words: str) -> None:
    path = write(tmp_path, "bad.py", text)
    started = time.monotonic()
    with pytest.raises(PlayerLoadError) as info:
        check_team_player(parse_player(f"py:{path}"), timeout=1.0)
    assert str(info.value).startswith(str(path) + words[len("bad.py") :])
    assert time.monotonic() - started < 30


def test_checking_a_good_file_names_its_class(tmp_path: Path) -> None:
    # once, not after each bad file above: every check starts an interpreter (~1 s of CPU)
    assert check_team_player(parse_player(f"py:{write(tmp_path, 'ok.py', BIGGEST)}")) == "Biggest"


async def _bot_game(tmp_path: Path, body: str, *extra: str) -> tuple[int, Bot, ScriptedServer]:
    import random

    path = write(tmp_path, "bot_team.py", "from blokus.player import Move, Player\n\n\nclass Team(Player):\n")
    path.write_text(path.read_text() + textwrap.indent(textwrap.dedent(body), "    "))
    script = ScriptedServer(wire_messages(), random.Random(1), cut=False)
    server = await asyncio.start_server(script.handle, HOST, 0)
    port = server.sockets[0].getsockname()[1]
    try:
        args = parse_options(["-h", HOST, "-p", str(port), "--player", str(path), "--move-time", "300", *extra])
        bot = Bot(args, lines=bot_lines())
        code = EXIT_CODES[await asyncio.wait_for(bot.run(), 60)]
    finally:
        server.close()
    return code, bot, script


BUGGY_AT_TURN_10 = """
def calculate_move(self) -> Move:
    if self.game_state.turn in (10, 11, 12, 13):
        raise ValueError("bug")
    return max(self.game_state.legal_moves(), key=lambda move: move.shape.size)
"""


async def test_the_bot_counts_the_fallbacks_of_a_team_player(tmp_path: Path, capsys) -> None:
    code, bot, script = await _bot_game(tmp_path, BUGGY_AT_TURN_10)
    out, err = capsys.readouterr()
    assert code == 0 and not script.illegal
    turns = [label for label in bot.mistakes]
    assert turns and all(label.startswith("ValueError at turn 1") for label in turns)
    summary = out.strip().splitlines()[-1]
    assert f"moves: {bot.engines['yours']} yours, {len(turns)} fallback ({turns[0]}" in summary
    assert err.count("Traceback") == 1 and err.count("your player: ValueError") == 1


async def test_strict_bot_leaves_the_game_when_the_team_player_raises(tmp_path: Path, capsys) -> None:
    code, bot, script = await _bot_game(tmp_path, BUGGY_AT_TURN_10, "--strict")
    _, err = capsys.readouterr()
    assert code == 4
    assert "your player failed at turn 1" in err and "--strict: left the game" in err
    assert script.illegal == ["no move"]  # the server saw the client go, as with a crashed contest client


def test_bot_refuses_an_unloadable_player_in_one_line(tmp_path: Path, capsys) -> None:
    from blokus.cli.bot import main

    assert main(["--player", str(write(tmp_path, "bad.py", "x = (\n"))]) == 4
    err = capsys.readouterr().err
    err = "".join(line for line in err.splitlines(True) if "walls missing" not in line)  # (ai.sandbox's, if any)
    assert err.count("\n") == 1 and "bad.py:1: SyntaxError" in err


# --- the optional hooks and the starter (python player.py -h HOST -p PORT -r CODE) -----------------------------

HOOKED = """
import os
import time

from blokus.player import Move, Player, run

HERE = os.path.dirname(os.path.abspath(__file__))
LOG = "hooks.log"  # in its working directory: its scratch folder, the one it may write in


def note(text: str) -> None:
    with open(LOG, "a") as fh:
        fh.write(text + "\\n")


class Hooked(Player):
    def on_game_joined(self, room_id: str) -> None:
        note(f"joined {room_id}")

    def on_error(self, message: str) -> None:
        note(f"error {message}")

    def while_waiting(self, stop) -> None:
        note(f"waiting at turn {self.game_state.turn}")
        if os.path.exists(os.path.join(HERE, "ignore-the-stop")):
            end = time.monotonic() + 20
            while time.monotonic() < end:  # Python that never looks at the stop: it only slows the next move
                pass
            note("ignored")
            return
        stop.wait(30)  # a threading.Event: returns once the next move is asked
        note("stopped" if stop.is_set() else "not stopped")
        raise KeyError("after the stop")  # shown on stderr, costs nothing

    def calculate_move(self) -> Move:
        return max(self.game_state.legal_moves(), key=lambda move: move.shape.size)

    def on_game_over(self, result) -> None:
        note("over")


if __name__ == "__main__":
    run(__file__)
"""


def _log(folder: Path) -> list[str]:
    path = folder / "scratch" / "hooks.log"  # the team's scratch folder (given: its host's, kept)
    return path.read_text().splitlines() if path.exists() else []


async def test_the_hooks_teams_know_think_on_the_opponents_time_and_hear_of_joins_and_errors(tmp_path: Path) -> None:
    path = write(tmp_path, "hooked.py", HOOKED)
    said: list[str] = []
    player = TeamPlayer(parse_player(f"py:{path}"), say=said.append, scratch=tmp_path / "scratch")
    player.start()
    try:
        await player.wait_ready()
        assert player.thinks_while_waiting  # the class has while_waiting: the bot tells it when it may think
        player.joined("room-7")
        player.server_error("Fehler: ungültiger Zug")
        state = _midgame()
        player._team = state.team
        player.start_pondering(state)
        await wait_until(lambda: "waiting at turn 20" in _log(tmp_path), message=str(_log(tmp_path)))
        log = _log(tmp_path)  # (the standby hears of the join too: it may take over)
        assert "joined room-7" in log and log.index("joined room-7") < log.index("error Fehler: ungültiger Zug")
        decision = await decide(player, state, time.monotonic(), think_ms=1600, hard_ms=1900)
        assert decision.source == "engine" and check_move(state, decision.move) is None
        await wait_until(lambda: "stopped" in _log(tmp_path), message=str(_log(tmp_path)))  # stopped by the request
        # a hook that ignores the stop for seconds: the move is still answered by the bot in time
        (tmp_path / "ignore-the-stop").write_text("")
        player.start_pondering(state)
        await wait_until(lambda: _log(tmp_path).count("waiting at turn 20") == 2)
        started = time.monotonic()
        late = await decide(player, state, started, think_ms=1600, hard_ms=1900)
        assert check_move(state, late.move) is None and late.source in ("engine", "fallback-timeout")
        assert "ignored" not in _log(tmp_path)  # it was still running (for 20 s) while the move was asked
        player.start_pondering(state)  # while that one runs on, no second one beside it
        player.server_error("after")  # handled in order, after the idle request
        await wait_until(lambda: "error after" in _log(tmp_path))
        assert _log(tmp_path).count("waiting at turn 20") == 2
    finally:
        player.close()
    assert any("while_waiting raised KeyError: 'after the stop'" in line for line in said), said


async def test_a_player_file_plays_a_game_on_its_own_with_the_options_in_any_order(tmp_path: Path) -> None:
    path = write(tmp_path, "hooked.py", HOOKED)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BLOKUS_SCRATCH": str(tmp_path / "scratch")}
    async with running_server(password="secret") as server:
        admin, prepared = await admin_with_prepared_game(server.port, "secret", pause=False)
        ours = await asyncio.create_subprocess_exec(
            sys.executable, str(path), "--port", str(server.port), "--reservation", prepared.reservations[0],
            "--host", HOST, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        other = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "blokus", "bot", "-h", HOST, "-p", str(server.port), "-r", prepared.reservations[1],
            "--ai", "random", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        (out, err), _ = await asyncio.wait_for(asyncio.gather(ours.communicate(), other.communicate()), CAP)
        await admin.close()
    text = out.decode() + err.decode()
    assert ours.returncode == 0 and other.returncode == 0, text
    assert text.count("while_waiting raised KeyError") == 1, text  # shown once, never a lost move
    log = _log(tmp_path)
    assert log[0].startswith("joined ") and log[-1] == "over", log
    assert sum(line.startswith("waiting at turn") for line in log) >= 5 and "not stopped" not in log


def test_a_player_file_with_bad_options_says_one_line_and_exits_2(tmp_path: Path) -> None:
    path = write(tmp_path, "hooked.py", HOOKED)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BLOKUS_SCRATCH": str(tmp_path / "scratch")}
    done = subprocess.run(
        [sys.executable, str(path), "-p", "13050", "--reservaton", "code"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=CAP, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.splitlines() == ["blokus bot: unrecognized arguments: --reservaton code"], done.stderr
    assert _log(tmp_path) == []  # the team's player never started


async def test_a_player_file_hears_of_the_servers_error(tmp_path: Path) -> None:
    path = write(tmp_path, "hooked.py", HOOKED)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BLOKUS_SCRATCH": str(tmp_path / "scratch")}
    async with running_server() as server:
        ours = await asyncio.create_subprocess_exec(
            sys.executable, str(path), "-h", HOST, "-p", str(server.port), "-r", "no-such-code",
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(ours.communicate(), CAP)
    text = out.decode() + err.decode()
    assert ours.returncode not in (0, 2) and "Traceback" not in text, text
    assert [line for line in _log(tmp_path) if line.startswith("error ")], (_log(tmp_path), text)  # on_error


def test_the_starter_hands_its_options_to_the_bot_unchanged(tmp_path: Path, monkeypatch) -> None:
    import blokus.player

    started: list[list[str]] = []

    def execv(program: str, command: list[str]) -> None:
        started.append(command)
        raise SystemExit(0)

    monkeypatch.setattr(os, "execv", execv)
    monkeypatch.setattr(sys, "argv", ["player.py", "-h", HOST, "-p", "13051", "-r", "code"])
    with pytest.raises(SystemExit):
        blokus.player.run(tmp_path / "player.py")
    with pytest.raises(SystemExit):
        blokus.player.run("player.py", [])  # no options: the bot's defaults (localhost:13050, any open game)
    bot = [sys.executable, "-P", "-m", "blokus", "bot", "--player"]
    assert started[0] == [*bot, str(tmp_path / "player.py"), "-h", HOST, "-p", "13051", "-r", "code"]
    assert started[1] == [*bot, os.path.abspath("player.py")]
    default = parse_options(["--player", "p.py"])  # what no options mean: socha's Starter's defaults
    assert (default.host, default.port, default.reservation) == ("localhost", 13050, None)
