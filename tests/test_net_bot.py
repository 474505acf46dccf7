"""The bot: move timing and fallbacks, a scripted server replaying the official wire stream (cut at
random byte boundaries, with unknown messages, elements and attributes, and in the 21.2 dialect), and
the failure exits."""

from __future__ import annotations

import asyncio
import os
import random
import threading

import pytest
from lxml import etree

from blokus.ai.interface import Engine, Player
from blokus.ai.players.controller import check_move, decide
from blokus.ai.players.registry import parse_player
from blokus.cli.bot import EXIT_CODES, bot_lines, build_parser, parse_options
from blokus.model.framing import parse_stream
from blokus.model.moverecords import read_records, records_path
from blokus.model.moves import SetMove, SkipMove
from blokus.model.pieces import Color, Rotation, Shape
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState, move_of_placement
from blokus.net.bot import Bot
from tests.helpers import HOST, ScriptedServer, run_bot_against, wire_messages

# --- move timing --------------------------------------------------------------------------------------


def _midgame(seed: int = 3, turn: int = 20) -> GameState:
    rng = random.Random(seed)
    state = GameState.new(SEASON_2021, Shape.PENTO_L)
    while state.turn < turn:
        ids = state.legal_placements()
        state.push_placement(int(ids[rng.randrange(len(ids))]))
    return state


class Silent(Player):
    """Never answers (until cancelled by the event loop)."""

    def __init__(self) -> None:
        self.cancelled = False

    async def choose_move(self, state, deadline):
        await asyncio.Event().wait()

    def cancel(self) -> None:
        self.cancelled = True


class Stubborn(Engine):
    """A thinking thread that ignores ``stop`` for a while (a badly behaved engine)."""

    def think(self, state, deadline, stop):
        threading.Event().wait(0.5)
        return SkipMove(state.color)


class Answers(Player):
    def __init__(self, move) -> None:
        self.move = move

    async def choose_move(self, state, deadline):
        if isinstance(self.move, Exception):
            raise self.move
        return self.move


async def test_decide_uses_engine_move_when_legal():
    state = _midgame()
    good = next(iter(state.legal_moves()))
    decision = await decide(Answers(good), state, asyncio.get_running_loop().time(), think_ms=50, hard_ms=100)
    assert decision.move == good and decision.source == "engine"


@pytest.mark.parametrize(
    "player,source",
    [
        (Silent(), "fallback-timeout"),
        (Stubborn(), "fallback-timeout"),
        (Answers(RuntimeError("boom")), "fallback-error"),
        (Answers(SetMove(Color.BLUE, Shape.PENTO_X, Rotation.NONE, False, 9, 9)), "fallback-illegal"),
        (Answers("not a move"), "fallback-error"),
    ],
)
async def test_decide_falls_back_to_a_legal_move(player, source):
    import time

    state = _midgame()
    decision = await decide(player, state, time.monotonic(), think_ms=5, hard_ms=30)
    assert decision.source == source
    assert check_move(state, decision.move) is None
    assert isinstance(decision.move, SetMove)
    if isinstance(player, Silent):
        assert player.cancelled  # asked to stop at the think deadline


async def test_decide_never_skips_while_a_placement_exists():
    import time

    state = _midgame()
    decision = await decide(Answers(SkipMove(state.color)), state, time.monotonic(), think_ms=5, hard_ms=30)
    assert decision.source == "fallback-illegal" and isinstance(decision.move, SetMove)
    first = GameState.new(SEASON_2021, Shape.PENTO_L)
    assert check_move(first, SkipMove(Color.BLUE)) is not None  # never on a first move


# --- a scripted server --------------------------------------------------------------------------------


def _to_21_2(element: etree._Element) -> None:
    """The older 21.2 dialect: lowercase team names, linked-hash-set classes, board after startTeam."""
    data = element.find("data")
    if data is None:
        return
    if data.get("class") == "welcomeMessage":
        data.set("color", data.get("color").lower())
    state = data.find("state")
    if state is None:
        return
    for tag in ("blueShapes", "yellowShapes", "redShapes", "greenShapes", "validColors"):
        child = state.find(tag)
        if child is not None:
            child.set("class", "linked-hash-set")
    mono = state.find("lastMoveMono")
    if mono is not None:
        mono.set("class", "linked-hash-map")
    board = state.find("board")
    if board is not None:
        state.remove(board)
        state.insert(1, board)


@pytest.mark.parametrize("seed,mutate,dialect", [(1, False, None), (2, True, None), (3, True, "21.2")])
async def test_bot_plays_the_recorded_stream(seed, mutate, dialect, capsys, tmp_path):
    rng = random.Random(seed)
    elements = wire_messages()
    if dialect == "21.2":
        for element in elements:
            _to_21_2(element)
    script = ScriptedServer(elements, rng, mutate=mutate)
    code, bot = await run_bot_against(script.handle, "--save-replay", str(tmp_path))
    out, err = capsys.readouterr()
    assert code == 0, err
    # a plain bot asks for the default season's game (2027); the 2021 server's states decide: 2021 moves
    assert script.join.tag == "join" and script.join.get("gameType") == "swc_2027_blokus"
    assert len(script.moves) == 31 and not script.illegal
    assert out.strip().splitlines()[-1] == (
        "blokus bot: ONE (alice) [us] 122 : TWO (bob) 105, winner ONE (we won), cause REGULAR; "
        "moves: 30 random, 1 forced"
    )
    replay, records = sorted(tmp_path.iterdir(), key=lambda p: p.suffix == ".json")
    parsed = parse_stream(replay.read_bytes())
    assert len(parsed.messages) == 63  # 62 states and the result
    # beside it, our moves' records (model.moverecords): one a move sent, with its time and who made it
    moves = read_records(replay)
    assert moves is not None and records == records_path(replay) and len(moves.records) == 31
    assert sorted(r.source for r in moves.records).count("forced") == 1 and all(r.seconds >= 0 for r in moves.records)


@pytest.mark.parametrize("ponder", [False, True])
async def test_bot_ponders_after_each_move_it_sent_when_asked_to(ponder, monkeypatch):
    from blokus.ai.interface import RandomPlayer

    pondered: list[GameState] = []
    monkeypatch.setattr(RandomPlayer, "start_pondering", lambda self, state: pondered.append(state.copy()))
    script = ScriptedServer(wire_messages(), random.Random(6))
    code, _ = await run_bot_against(script.handle, *(["--ponder"] if ponder else []))
    assert code == 0 and len(script.moves) == 31 and not script.illegal
    if not ponder:
        assert not pondered
        return
    # the position after each move sent (the last one ended the game: nothing to think about)
    assert len(pondered) in (30, 31)
    assert [s.last_move for s in pondered] == script.moves[: len(pondered)]


async def test_bot_joins_with_reservation_and_exits_on_lost_connection(capsys):
    script = ScriptedServer(wire_messages(), random.Random(4), stop_after_requests=3)
    code, _ = await run_bot_against(script.handle, "-r", "RC-42")
    _, err = capsys.readouterr()
    assert script.join.tag == "joinPrepared" and script.join.get("reservationCode") == "RC-42"
    assert code == 1
    assert err.strip().startswith("blokus bot: connection lost") and len(err.strip().splitlines()) == 1
    assert len(script.moves) == 3


async def test_bot_exits_on_protocol_error(capsys):
    script = ScriptedServer(wire_messages(), random.Random(5), prefix=b"", stop_after_requests=1)
    script.script.insert(1, ('<!DOCTYPE x [<!ENTITY a "b">]>', False))
    script.states.insert(1, None)
    code, _ = await run_bot_against(script.handle, "--room", "some-room")
    _, err = capsys.readouterr()
    assert script.join.tag == "joinRoom"
    assert code == 3 and err.startswith("blokus bot: protocol error") and "Traceback" not in err


async def test_a_doctype_after_a_plain_join_is_the_reason_not_a_second_join(capsys):
    """A server that answers a plain join with a DOCTYPE broke the protocol: that is the one line (issue 61),
    not the "Connection refused" of a second join for the other season on a server that has gone."""
    connections = []

    async def doctype_server(reader, writer):
        connections.append(writer)
        await reader.read(1000)
        writer.write(b'<protocol><!DOCTYPE x [<!ENTITY a "b">]><room roomId="r"/>')
        await writer.drain()
        await reader.read(1000)
        writer.close()

    code, _ = await run_bot_against(doctype_server)
    _, err = capsys.readouterr()
    assert err == "blokus bot: protocol error: <!DOCTYPE is not allowed in the protocol stream\n" and code == 3
    assert len(connections) == 1


async def test_bot_exits_on_lobby_error(capsys):
    async def handler(reader, writer):
        await reader.read(1000)
        writer.write(
            b'<protocol><error message="Couldn&apos;t find a reservation for the provided token.">'
            b'<originalRequest class="joinPrepared" reservationCode="x"/></error>'
        )
        await writer.drain()
        await reader.read(1000)  # the bot leaves
        writer.close()

    code, _ = await run_bot_against(handler, "-r", "x")
    _, err = capsys.readouterr()
    assert code == 3 and "server error: the server knows no reservation with this code" in err


async def test_bot_says_when_the_port_is_no_game_server(capsys):
    async def http_server(reader, writer):
        await reader.read(1000)
        writer.write(b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    code, _ = await run_bot_against(http_server)
    _, err = capsys.readouterr()
    assert code == 3 and len(err.strip().splitlines()) == 1
    assert "is not a Software-Challenge game server (it answered 'HTTP/1.1 400 Bad Request')" in err


@pytest.mark.parametrize(
    "argv,words",
    [
        (["bot", "--bogus"], "blokus bot: unrecognized arguments: --bogus"),
        (["bot", "-p", "70000"], "blokus bot: argument -p/--port: invalid port 70000"),
        (["bot", "--move-time", "1"], "1 ms is not a usable time (at least 10 ms); did you mean 1s?"),
        (["bot", "--ai", "nobody"], "blokus bot: unknown AI 'nobody'"),
        (["bot", "--threads", "0"], "blokus bot: --threads needs 1 to 64, not 0"),
        (["bot", "--threads", "2", "--ai", "greedy"], "blokus bot: --threads: 'greedy' is not our search"),
        (["serve", "-p", "99999"], "blokus serve: argument -p/--port: invalid port 99999"),
        (["serve", "-h"], "blokus serve: -h is the server host and needs a name (-h localhost); --help shows the help"),
        (["serve", "--season", "2021", "--start-piece", "PENTO_X"], "PENTO_X is never a start piece in 2021"),
        (["serve", "--soft-timeout", "0"], "blokus serve: --soft-timeout"),
        (["arena", "foo", "random"], "blokus arena: unknown AI 'foo'"),
        (["frobnicate"], "blokus: unknown subcommand 'frobnicate'"),
    ],
)
def test_bad_options_give_one_line_and_exit_2(argv, words, capsys):
    import blokus

    try:
        code = blokus.main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


async def test_bot_connection_refused(capsys):
    server = await asyncio.start_server(lambda r, w: None, HOST, 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    args = parse_options(["-h", HOST, "-p", str(port), "--ai", "random", "--engine", "thread"])
    code = EXIT_CODES[await Bot(args, lines=bot_lines()).run()]
    _, err = capsys.readouterr()
    assert code == 1
    assert err.strip() == f"blokus bot: cannot connect to {HOST}:{port}: Connection refused"


def test_the_bot_says_how_many_threads_it_searches_with_and_threads_caps_them():
    import subprocess
    import sys

    from blokus.ai.search.cores import available_cores, core_budget, memory_budget

    assert parse_options(["--threads", "1"]).ai == parse_player("mcts:threads=1")
    assert parse_options(["--threads", "64", "--ai", "level5"]).ai == parse_player(f"mcts:threads={available_cores()}")
    assert parse_options(["--threads", "2", "--ai", "mcts:threads=1"]).ai == parse_player("mcts:threads=1")
    assert parse_options([]).ai is None  # the default AI: all cores
    sock = __import__("socket").socket()
    sock.bind((HOST, 0))
    port = sock.getsockname()[1]  # bound, not listening: the connection is refused
    run = subprocess.run(
        [sys.executable, "-m", "blokus", "bot", "-h", HOST, "-p", str(port), "--threads", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    sock.close()
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 1 and all(line.startswith("blokus bot: ") for line in lines), run.stderr
    said = (
        f"blokus bot: mcts:threads=1 searches with 1 thread ({core_budget().describe()}; memory "
        f"{memory_budget().describe()}; --threads N caps it)"
    )
    assert lines[0] == said, run.stderr  # (a cold compile cache may add its own line before the end)
    assert lines[-1].startswith(f"blokus bot: cannot connect to {HOST}:{port}"), run.stderr


def test_bot_help_and_host_flag():
    parser = build_parser()
    args = parser.parse_args(["-h", "gameserver", "-p", "13051", "--reservation=abc"])
    assert (args.host, args.port, args.reservation, args.move_time) == ("gameserver", 13051, "abc", 1600)
    assert "-h HOST" in parser.format_help() and "--help" in parser.format_help()


async def test_process_player_thinks_in_a_worker_process():
    import time

    from blokus.ai.players.engine_process import ProcessPlayer

    player = ProcessPlayer(parse_player("greedy"), seed=1)
    try:
        state = _midgame()
        move = await player.choose_move(state.copy(), time.monotonic() + 0.2)
        assert check_move(state, move) is None
        # the watchdog path: ask, stop at once, still get a legal answer through decide()
        decision = await decide(player, state, time.monotonic(), think_ms=1, hard_ms=2000)
        assert check_move(state, decision.move) is None
    finally:
        player.close()
    assert _ended(player)


def _ended(player) -> bool:
    """The worker process is gone after ``close`` (reaped within a generous cap: under load it takes a while)."""
    player._proc.join(60)
    return not player._proc.is_alive()


async def test_process_player_is_ready_before_its_first_move():
    import time

    from blokus.ai.players.engine_process import ProcessPlayer

    player = ProcessPlayer(parse_player("mcts"), seed=1)
    try:
        assert await asyncio.to_thread(player.wait_ready, 600)  # compiled or loaded in the worker
        state = _midgame()
        move = await player.choose_move(state.copy(), time.monotonic() + 0.3)
        assert check_move(state, move) is None
        # the worker's first answer comes from the compiled search, not from its fallback
        # (how many simulations fit depends on the machine's load: the worker runs at a lower priority)
        assert "fallback" not in player.last_info and "simulations" in player.last_info, player.last_info
    finally:
        player.close()


async def test_process_player_ponders_until_the_next_request_and_answers_it(monkeypatch):
    import time

    import blokus.ai.search.mcts.player
    from blokus.ai.players.engine_process import ProcessPlayer

    # Only the next request can end the worker's pondering in time (the worker is forked: it inherits this),
    # and the worker runs at normal priority, so that a loaded machine does not starve it.
    monkeypatch.setattr(blokus.ai.search.mcts.player, "PONDER_LIMIT_S", 3600.0)
    player = ProcessPlayer(parse_player("mcts"), seed=2, nice=0)
    try:
        assert await asyncio.to_thread(player.wait_ready, 600)
        state = _midgame()
        for _ in range(3):  # our move, pondering on the position after it, the opponent's move, ours again
            move = await player.choose_move(state.copy(), time.monotonic() + 0.2)
            assert check_move(state, move) is None
            state.play(move)
            player.start_pondering(state)
            ids = state.legal_placements()
            state.play(move_of_placement(state.color, int(ids[0])) if len(ids) else SkipMove(state.color))
        # the pondering worker takes the next request (not after its own limit, an hour here): the answer is
        # the engine's, not the fallback's; the cut-off is generous, for a loaded machine
        decision = await decide(player, state, time.monotonic(), think_ms=200, hard_ms=120_000)
        assert decision.source == "engine" and check_move(state, decision.move) is None
        player.start_pondering(state)
    finally:
        player.close()  # while pondering
    assert _ended(player)


def test_pondering_in_the_worker_ends_with_the_next_request_or_a_stop():
    import multiprocessing

    from blokus.ai.players.engine_process import SharedFlag, _UntilNextRequest

    ours, theirs = multiprocessing.Pipe()
    stop = SharedFlag(None)
    until = _UntilNextRequest(theirs, stop)
    assert not until.is_set()
    ours.send((7, None, None))  # a move request arrives
    assert until.is_set()
    theirs.recv()
    assert not until.is_set()
    stop.set()  # cancel or close
    assert until.is_set()
    stop.clear()
    ours.close()  # the bot is gone
    assert until.is_set()


async def test_process_player_that_died_answers_with_the_python_search_and_says_so():
    import time

    from blokus.ai.players.engine_process import ProcessPlayer

    player = ProcessPlayer(parse_player("random"), seed=1)
    try:
        player._proc.kill()
        player._proc.join(5)
        state = _midgame()
        decision = await decide(player, state, time.monotonic(), think_ms=300, hard_ms=10_000)
        assert decision.source == "engine" and check_move(state, decision.move) is None
        assert player.last_info["fallback"] == "lookahead (engine process ended)"
        assert "depth" in player.last_info  # the lookahead's own statistics: it searched
        assert player.status.startswith("failed: engine process ended")
    finally:
        player.close()


def _broken_kernels(spec):
    raise RuntimeError("numba is broken here")


def _dying_worker(spec, send):
    os._exit(3)  # the engine process dies while it prepares its search


@pytest.mark.parametrize(
    "target,broken,label",
    [("kernels_of", _broken_kernels, "compiled engine failed"), ("_prepare", _dying_worker, "engine process ended")],
)
async def test_a_broken_compiled_engine_leaves_the_python_search_playing_and_says_so(
    target, broken, label, monkeypatch, capsys
):
    import blokus.ai.players.engine_process

    monkeypatch.setattr(
        blokus.ai.players.engine_process, target, broken
    )  # the engine process is forked: it inherits it
    script = ScriptedServer(wire_messages(), random.Random(8))
    code, _ = await run_bot_against(script.handle, "--engine", "process", "--ai", "mcts", "--move-time", "150")
    out, err = capsys.readouterr()
    assert code == 0 and len(script.moves) == 31 and not script.illegal
    # one line says so at once; every move comes from the Python search (none from a fallback move)
    assert err.count("\n") == 1 and err.startswith("blokus bot: mcts: the compiled search failed (")
    assert "the Python lookahead plays every move" in err
    assert out.strip().splitlines()[-1].endswith(f"; moves: 30 lookahead ({label}), 1 forced")


def _boom(*args, **kwargs):
    raise RuntimeError("injected")


@pytest.mark.parametrize("task", ["answer", "event", "callback"])
async def test_a_failure_in_any_task_of_the_bot_is_one_line_and_the_game_goes_on(task, monkeypatch, capsys):
    """A bug of ours in the task that answers a move request (a fallback move is sent for it), in the one that
    handles the server's messages, or in a callback of the event loop: one line, counted, never silence."""
    import blokus.net.bot

    injected = []

    def once(original):
        def wrapper(*args, **kwargs):
            if not injected:
                injected.append(task)
                return _boom()
            return original(*args, **kwargs)

        return wrapper

    if task == "answer":
        monkeypatch.setattr(blokus.net.bot, "decide", once(blokus.net.bot.decide))
    elif task == "event":
        monkeypatch.setattr(Bot, "_on_event", once(Bot._on_event))
    else:
        original = Bot._on_event

        async def on_event(self, event):
            if not injected:
                injected.append(task)
                asyncio.get_running_loop().call_soon(_boom)
            await original(self, event)

        monkeypatch.setattr(Bot, "_on_event", on_event)
    script = ScriptedServer(wire_messages(), random.Random(5))
    code, bot = await run_bot_against(script.handle)
    out, err = capsys.readouterr()
    assert injected == [task] and code == 0
    assert len(script.moves) == 31 and not script.illegal  # every request answered with a legal move
    lines = [line for line in err.splitlines() if "internal error" in line]
    assert len(lines) == 1 and "RuntimeError: injected" in lines[0]
    assert out.strip().splitlines()[-1].endswith("; 1 internal error")
    if task == "answer":
        assert "1 fallback" in out
