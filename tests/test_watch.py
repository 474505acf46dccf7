"""``blokus watch``: observing a game on the local server as administrator (prepare, observe), the text
output, the analysis while watching, saving the replay, and the failures."""

from __future__ import annotations

import asyncio
import io
import re
import sys
from pathlib import Path

import pytest

from blokus.cli.watch import watch_options, watch_text
from blokus.model.exits import EXIT_OK
from blokus.model.moverecords import read_records
from blokus.model.pieces import Team
from blokus.model.replay import MoveEvent, load_replay
from blokus.model.season import SEASON_2021, season_named
from blokus.net.watch import Watcher, WatchFailed
from blokus.tui.app import BlokusApp
from blokus.tui.replay_screen import ReplayScreen
from blokus.tui.replays import load_replay as load_viewer_replay
from tests.helpers import (
    HOST,
    PASSWORD,
    fixture_path,
    play_client,
    run_bot,
    running_server,
    start_server,
    wait_until,
    watch_args,
)
from tests.tui_helpers import (  # noqa: F401  (keep_logging: an autouse fixture)
    GAME1,
    BlockingPlayer,
    InstantPlayer,
    footer_keys_visible,
    game_app,
    keep_logging,
    net_app,
    opponent,
    screen_of,
    scripted_net_app,
    settle,
    widget_lines,
)


@pytest.mark.parametrize("season", ["2021", "2027"])
async def test_prepare_prints_the_codes_and_watches_two_bots_play(tmp_path, season):
    server = await start_server(password=PASSWORD, seed=11, replay_dir=tmp_path / "server", season=season_named(season))
    port = server.port
    bots: list[asyncio.Task] = []
    out, err = io.StringIO(), io.StringIO()

    def started(watcher: Watcher) -> None:
        assert len(watcher.reservations) == 2
        bots.extend(
            asyncio.create_task(run_bot(server.port, code, ai, season))
            for code, ai in zip(watcher.reservations, ("greedy", "random"), strict=True)
        )

    try:
        args = watch_args(
            server.port, "--prepare", "alice", "bob", "--save-replay", str(tmp_path / "mine"), "--season", season
        )
        code = await asyncio.wait_for(watch_text(args, out, err, on_started=started), 120)
        bot_codes = await asyncio.gather(*bots)
    finally:
        await server.close()
    text = out.getvalue()
    assert code == EXIT_OK and bot_codes == [0, 0], err.getvalue()
    lines = text.splitlines()
    assert lines[0].startswith("prepared room ")
    assert lines[1].startswith("  ONE alice: ") and f"blokus bot -h {HOST} -p {port} -r " in lines[1]
    assert lines[2].startswith("  TWO bob: ")
    result_line = next(line for line in lines if line.startswith("result: "))
    assert "ONE (alice)" in result_line and "TWO (bob)" in result_line and "cause REGULAR" in result_line
    # the watcher's record is the server's game: same states as the server's own replay
    (official,) = (tmp_path / "server").glob("*.xml")  # (beside it, the server's records of the moves' times)
    (mine,) = (tmp_path / "mine").glob("*.xml")
    theirs, ours = load_replay(official), load_replay(mine)
    # beside each, the moves' times: as the server measured them, and as the watcher saw the states arrive
    made = [e.turn for e in ours.events if isinstance(e, MoveEvent)]
    for saved, source in ((official, "client"), (mine, "observed")):
        records = read_records(saved)
        assert records is not None and [r.turn for r in records.records] == made, saved
        assert all(r.source == source and r.seconds >= 0 for r in records.records)
    assert [s.key() for s in ours.states] == [s.key() for s in theirs.states]
    assert ours.result is not None and ours.result.winner == theirs.result.winner
    assert ours.states[-1].season.year == int(season) and mine.name.startswith(f"replay_swc_{season}_blokus_")
    pattern = rf"replay_swc_{season}_blokus_\d{{4}}-\d\d-\d\d_\d\d-\d\d-\d\d_alice_bob\.xml"
    assert re.fullmatch(pattern, mine.name) and re.fullmatch(pattern, official.name), (mine, official)
    move_lines = [line for line in lines if line.startswith("turn ") and "leaves the game" not in line]
    assert len(move_lines) == len(ours.moves)
    assert f"replay saved: {mine}" in text


@pytest.mark.slow  # a whole game end to end
async def test_observe_a_running_room_with_analysis():
    async with running_server(password=PASSWORD, seed=12) as server:
        watcher = Watcher(HOST, server.port, PASSWORD, prepare=("p1", "p2"), game_type=SEASON_2021.game_type)
        await watcher.start()
        codes = watcher.reservations
        await watcher.close()
        out, err = io.StringIO(), io.StringIO()
        room = watcher.room_id
        players: list[asyncio.Task] = []

        def started(_watcher: Watcher) -> None:
            players.extend(
                asyncio.create_task(play_client(server.port, seed=i, reservation=code)) for i, code in enumerate(codes)
            )

        args = watch_args(server.port, "--room", room, "--analyse", "--ai", "greedy", "--time", "20")
        code = await asyncio.wait_for(watch_text(args, out, err, on_started=started), 900)  # generous: under load
        await asyncio.gather(*players)
    assert code == EXIT_OK, err.getvalue()
    move_lines = [line for line in out.getvalue().splitlines() if line.startswith("turn ") and "leaves" not in line]
    assert len(move_lines) > 20
    assert sum("value " in line for line in move_lines) >= len(move_lines) - 4  # forced moves say so instead
    assert any("??" in line or "?" in line for line in move_lines)  # random play makes mistakes


async def test_wrong_password_and_unknown_room_are_one_line():
    async with running_server(password=PASSWORD) as server:
        bad = watch_options(
            ["-h", HOST, "-p", str(server.port), "--password", "wrong", "--text", "--prepare", "a", "b"]
        )
        err = io.StringIO()
        code = await asyncio.wait_for(watch_text(bad, io.StringIO(), err), 30)
        assert code != EXIT_OK
        assert err.getvalue().count("\n") == 1 and "prepare failed" in err.getvalue()
        assert "password" in err.getvalue()
        err = io.StringIO()
        code = await asyncio.wait_for(
            watch_text(watch_args(server.port, "--room", "no-such-room"), io.StringIO(), err), 30
        )
        assert code != EXIT_OK and err.getvalue().count("\n") == 1 and "observe failed" in err.getvalue()


async def test_no_server_is_a_connection_error():
    server = await start_server(password=PASSWORD)
    port = server.port
    await server.close()
    with pytest.raises(WatchFailed) as info:
        await Watcher(HOST, port, PASSWORD, room="x").start()
    assert info.value.connection and "cannot connect" in str(info.value)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--room", "r", "--prepare", "a", "b"],
        ["--room", "r", "--port", "0"],
        ["--room", "r", "--ai", "nobody"],
        ["--prepare", "a", " "],
    ],
)
def test_bad_options_exit_2(argv, capsys):
    import blokus

    with pytest.raises(SystemExit) as info:
        blokus.main(["watch", *argv])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("blokus watch: ")


# --- the live viewer (TUI) ----------------------------------------------------------------------------


@pytest.mark.slow  # a whole game end to end
async def test_live_viewer_follows_the_game_steps_back_and_shows_the_result(tmp_path, monkeypatch):
    from textual.widgets import Static

    from blokus.tui.app import BlokusApp
    from blokus.tui.watch import watch_screen

    monkeypatch.chdir(tmp_path)  # ctrl+s saves under ./replays
    async with running_server(password=PASSWORD, seed=13) as server:
        watcher = Watcher(HOST, server.port, PASSWORD, prepare=("alice", "bob"), game_type=SEASON_2021.game_type)
        await watcher.start()
        bots = [asyncio.create_task(run_bot(server.port, code, "random")) for code in watcher.reservations]
        async for _ in watcher.events():
            if watcher.replay.states:
                break
        app = BlokusApp(lambda: watch_screen(watcher))
        async with app.run_test(size=(140, 44)) as pilot:
            screen = app.main_screen
            await wait_until(lambda: len(screen.timeline) >= 6, pilot=pilot)
            await pilot.press("left", "left")
            held = screen.index
            assert held < len(screen.timeline) - 1
            grown = len(screen.timeline)
            await wait_until(lambda: len(screen.timeline) > grown + 2 or watcher.result is not None, pilot=pilot)
            assert screen.index == held  # stepping back while live: the view stays where the user is
            await pilot.press("end")
            await wait_until(lambda: watcher.result is not None and not screen.live, pilot=pilot)
            assert watcher.result is not None
            assert len(screen.timeline) == len(watcher.replay.states)
            assert screen.index == len(screen.timeline) - 1
            result = str(app.screen.query_one("#result", Static).render())
            assert "Game over" in result
            await pilot.press("ctrl+s")
        await asyncio.gather(*bots)
        (saved,) = (tmp_path / "replays").glob("*.xml")
        assert [s.key() for s in load_replay(saved).states] == [s.key() for s in watcher.replay.states]


def test_a_server_sending_endless_states_cannot_grow_the_record():
    from blokus.model.state import GameState
    from blokus.net import watch
    from blokus.net.connection import StateChanged

    watcher = Watcher(HOST, 1, PASSWORD, room="r")
    state = GameState.new(season=SEASON_2021)
    for turn in range(watch.MAX_STATES + 50):
        state = state.copy()
        state.turn = turn  # distinct states (a misbehaving server)
        watcher._apply(StateChanged(room_id="r", state=state))
    assert len(watcher.replay.states) == watch.MAX_STATES
    assert watcher.errors == [f"more than {watch.MAX_STATES} states: further states ignored"]


async def test_live_viewer_says_it_follows_instead_of_paused():
    data = load_viewer_replay(fixture_path(GAME1))
    data.live = True
    app = BlokusApp(lambda: ReplayScreen(data))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.main_screen
        await pilot.press("end")
        await pilot.pause()
        text = "\n".join(widget_lines(screen.query_one("#status")))
        assert "following live" in text and "paused" not in text and "Watching 2021" in text
        await pilot.press("left")
        await pilot.pause()
        text = "\n".join(widget_lines(screen.query_one("#status")))
        assert "stepped back" in text and "paused" not in text


def test_watching_names_our_ai_not_you(tmp_path, monkeypatch):
    """``blokus --watch --opponent cmd:…``: our seat is played by the AI, so it is not "you"."""
    from blokus.tui import external
    from blokus.tui.launch import PlayOptions

    monkeypatch.setattr(external, "program_log_dir", lambda: tmp_path)
    from blokus.ai.players.registry import parse_player

    client = parse_player(f"cmd:{sys.executable} {Path(__file__).with_name('ext_client.py')}")
    args = PlayOptions(opponent=client, time_limit=None, seed=1, ai=parse_player("random"), watch=True)
    app, hosted = external.build_external_app(args)
    try:
        screen = app._make_screen()
        assert screen.link.name == "AI random" and hosted.seats[0].name == "AI"
        assert screen.session.names[Team.ONE] == "AI random"
    finally:
        hosted.close()
