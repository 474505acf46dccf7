"""``py:PATH[:CLASS]`` players: loading a team's file, its moves under the controller's clock, the
fallbacks (and ``strict``), the bot's summary and tracebacks."""

from __future__ import annotations

import asyncio
import io
import textwrap
import time
from pathlib import Path

import pytest

from ai.controller import check_move, decide
from ai.players import parse_player, parse_python_player
from ai.pyplayer import PlayerLoadError, PyPlayer, load_player_class
from cli.bot import parse_options
from model.pieces import Shape
from model.result import regular_result
from model.state import GameState
from net.bot import Bot
from tests.helpers import HOST, ScriptedServer, wire_messages
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
    player = PyPlayer(parse_player(f"py:{path}"))
    move = player.choose_move_sync(GameState.new(Shape.PENTO_L), move_time=1.0)
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


def team_player(tmp_path: Path, body: str, name: str = "team.py") -> tuple[PyPlayer, io.StringIO]:
    path = write(
        tmp_path,
        name,
        "from blokus.player import Move, Player\nimport threading\n\n\nclass Team(Player):\n"
        + textwrap.indent(textwrap.dedent(body), "    "),
    )
    err = io.StringIO()
    return PyPlayer(parse_player(f"py:{path}"), stderr=err), err


async def test_an_exception_becomes_a_legal_fallback_with_its_traceback_once(tmp_path: Path) -> None:
    player, err = team_player(
        tmp_path,
        """
        def calculate_move(self) -> Move:
            raise ValueError("my bug")
        """,
    )
    state = _midgame()
    for _ in range(2):
        decision = await decide(player, state, time.monotonic(), think_ms=5000, hard_ms=10000)
        assert decision.source == "fallback-error"
        assert decision.detail == f"ValueError at turn {state.turn}: my bug"
        assert check_move(state, decision.move) is None
    shown = err.getvalue()
    assert shown.count("Traceback") == 1  # once per kind
    assert 'team.py", line 8, in calculate_move' in shown and "ValueError: my bug" in shown
    strict = await decide(player, state, time.monotonic(), think_ms=5000, hard_ms=10000, strict=True)
    assert strict.source == "strict-error"


async def test_an_illegal_answer_is_replaced_or_under_strict_sent_as_it_is(tmp_path: Path) -> None:
    player, _ = team_player(
        tmp_path,
        """
        def calculate_move(self) -> Move:
            return self.game_state.legal_moves()[0].__class__(self.game_state.color, self.game_state.start_piece)
        """,
    )
    state = _midgame()
    decision = await decide(player, state, time.monotonic(), think_ms=5000, hard_ms=10000)
    assert decision.source == "fallback-illegal" and check_move(state, decision.move) is None
    strict = await decide(player, state, time.monotonic(), think_ms=5000, hard_ms=10000, strict=True)
    assert strict.source == "strict-illegal" and check_move(state, strict.move) is not None


async def test_a_player_past_its_time_gets_a_fallback_and_is_not_asked_twice_at_once(tmp_path: Path) -> None:
    player, _ = team_player(
        tmp_path,
        """
        release = threading.Event()
        seen_time_left = []

        def calculate_move(self) -> Move:
            self.seen_time_left.append(self.time_left())
            self.release.wait()
            return self.game_state.legal_moves()[0]
        """,
    )
    team = player.team_player
    state = _midgame()
    try:
        late = await decide(player, state, time.monotonic(), think_ms=20, hard_ms=60)
        assert late.source == "fallback-timeout" and check_move(state, late.move) is None
        assert team.seen_time_left[0] <= 0.02  # type: ignore[attr-defined]  # the think time, counting down
        busy = await decide(player, state, time.monotonic(), think_ms=20, hard_ms=60)
        assert busy.source == "fallback-error" and "still busy with the move of turn" in busy.detail
    finally:
        team.release.set()  # type: ignore[attr-defined]
    await asyncio.wait_for(_until(lambda: not player._busy.locked()), 30)  # the abandoned answer has come
    # under strict a late answer is waited for and sent (late: the server judges it)
    team.release.clear()  # type: ignore[attr-defined]
    asked = time.monotonic()
    task = asyncio.ensure_future(decide(player, state, asked, think_ms=5, hard_ms=20, strict=True))
    await asyncio.wait_for(_until(lambda: len(team.seen_time_left) == 2), 30)  # type: ignore[attr-defined]
    assert not task.done()
    await asyncio.wait_for(_until(lambda: time.monotonic() > asked + 0.05), 30)  # well past the hard cut-off
    assert not task.done()
    team.release.set()  # type: ignore[attr-defined]
    decision = await task
    assert decision.source == "engine" and decision.elapsed > 0.02


async def _until(condition) -> None:
    while not condition():
        await asyncio.sleep(0.01)


def test_on_game_over_gets_the_result_and_its_errors_are_shown(tmp_path: Path) -> None:
    player, err = team_player(
        tmp_path,
        """
        results = []

        def calculate_move(self) -> Move:
            return self.game_state.legal_moves()[0]

        def on_game_over(self, result) -> None:
            self.results.append(result)
            raise KeyError("oops")
        """,
    )
    result = regular_result((50, 40), ("a", "b"))
    player.game_over(result)
    assert player.team_player.results == [result]  # type: ignore[attr-defined]
    assert "on_game_over raised KeyError" in err.getvalue()


async def _bot_game(tmp_path: Path, body: str, *extra: str) -> tuple[int, Bot, ScriptedServer]:
    import random

    path = write(tmp_path, "bot_team.py", "from blokus.player import Move, Player\n\n\nclass Team(Player):\n")
    path.write_text(path.read_text() + textwrap.indent(textwrap.dedent(body), "    "))
    script = ScriptedServer(wire_messages(), random.Random(1), cut=False)
    server = await asyncio.start_server(script.handle, HOST, 0)
    port = server.sockets[0].getsockname()[1]
    try:
        args = parse_options(["-h", HOST, "-p", str(port), "--player", str(path), "--move-time", "300", *extra])
        bot = Bot(args)
        code = await asyncio.wait_for(bot.run(), 60)
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
    from cli.bot import main

    assert main(["--player", str(write(tmp_path, "bad.py", "x = (\n"))]) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.py:1: SyntaxError" in err
