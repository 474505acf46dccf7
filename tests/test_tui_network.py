"""Network play against the in-process server (``net.server``) on 127.0.0.1, port chosen by the OS."""

from __future__ import annotations

import asyncio
import gc
import warnings

import pytest
from textual import events

from blokus.model.pieces import Color, Shape, Team
from blokus.tui.app import BlokusApp
from blokus.tui.dialogs import EndScreen, QuitScreen
from blokus.tui.game_screen import GameScreen, network_screen
from blokus.tui.network import TIME_LIMIT_TITLE, NetworkOptions
from blokus.tui.widgets import StatusBar, XmlPane
from tests.helpers import running_server, wait_until
from tests.tui_helpers import (  # noqa: F401  (keep_logging: an autouse fixture)
    GAME1,
    BlockingPlayer,
    InstantPlayer,
    ScriptedConnection,
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

SIZE = (140, 44)
SMALL = (80, 24)  # the smallest terminal we support


@pytest.mark.slow  # a whole game end to end
async def test_network_game_keyboard_then_autopilot():
    async with running_server(start_piece=Shape.PENTO_L, seed=1) as server:
        app = net_app(server.port)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.main_screen
            assert isinstance(screen, GameScreen) and screen.link is not None
            hold = asyncio.Event()  # the opponent waits before its 5th move (turn 9) until released
            opp = asyncio.create_task(opponent(server.port, hold=hold, hold_at=4))
            s = screen.session
            await wait_until(lambda: s.is_human_turn(), pilot=pilot)
            assert screen.link.team is Team.ONE and s.state.color is Color.BLUE
            assert s.ghost is not None and s.ghost.shape is Shape.PENTO_L  # the start piece
            await settle(pilot)  # the ghost took the hint's move (a first piece); the keys start from the corner
            s.ghost = None  # where it starts by itself (near no earlier ghost)
            s.ghost = s.placing.new_ghost(Shape.PENTO_L)
            await pilot.press("J", "L", "enter")  # illegal in the middle: refused, nothing sent
            assert s.feedback.error and s.move_requested
            await pilot.press("H", "H", "K", "K", "enter")
            await wait_until(lambda: s.state.turn >= 2 and s.is_human_turn(), pilot=pilot)
            assert s.state.color is Color.RED
            pane = screen.query_one(XmlPane)
            assert pane.count >= 6  # protocol, join, joined, welcome, states, requests, our move
            await pilot.press("u")  # no undo on a server, and it says so
            assert len(s.timeline) == 3 and "only possible in local games" in s.feedback.text
            await pilot.press("o")  # autopilot: the AI plays RED, BLUE, RED … on its own
            await wait_until(lambda: s.state.turn >= 9, pilot=pilot)
            assert s.state.turn == 9 and s.state.team is Team.TWO  # the opponent holds
            await pilot.press("o")
            hold.set()
            await wait_until(lambda: s.is_human_turn(), pilot=pilot)
            assert s.state.turn == 10
            turn = s.state.turn
            await pilot.pause(0.1)
            assert s.state.turn == turn and s.state.team is Team.ONE  # autopilot is off again
            await pilot.press("x")
            assert not pane.has_class("shown")
            await pilot.press("q")  # the game is running: asks first
            assert isinstance(app.screen, QuitScreen)
            await pilot.press("escape")
            assert app.screen is screen and app.is_running
            opp.cancel()


async def test_network_opponent_leaves():
    async with running_server(start_piece=Shape.PENTO_L, seed=1) as server:
        app = net_app(server.port)
        async with app.run_test(size=SIZE) as pilot:
            opp = asyncio.create_task(opponent(server.port, stop_after=0))
            s = app.main_screen.session
            await wait_until(lambda: s.is_human_turn(), pilot=pilot)
            await pilot.press("m")  # AI, play this move
            await wait_until(lambda: isinstance(app.screen, EndScreen), pilot=pilot)
            details = str(app.screen.query_one("#end-details").render())
            assert "left" in details.lower()
            await asyncio.wait_for(opp, 5)


async def test_network_connection_refused_shows_reason():
    # a port nobody listens on: bind, read the port, close
    sock_server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = sock_server.sockets[0].getsockname()[1]
    sock_server.close()
    await sock_server.wait_closed()
    app = net_app(port)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: isinstance(app.screen, EndScreen), pilot=pilot)
        assert "connect" in str(app.screen.query_one("#end-details").render()).lower()
        status = str(app.main_screen.query_one("#status").render())
        assert "not connected" in status and "to move" not in status  # nobody moves on the placeholder


@pytest.mark.parametrize("argv", [["-p", "0"], ["-p", "70000"]])
def test_network_bad_port_exit_2(argv, capsys):
    from blokus.cli.play import main as play_main

    with pytest.raises(SystemExit) as exc:
        play_main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("blokus play: ") and "port" in err and len(err.splitlines()) == 1


async def test_network_game_saved_with_xml_log(tmp_path, monkeypatch):
    from blokus.tui.launch import save_network_replay
    from blokus.tui.replays import load_replay

    monkeypatch.chdir(tmp_path)
    app = scripted_net_app(save_replay=save_network_replay)
    async with app.run_test(size=SIZE) as pilot:
        s = app.main_screen.session
        await wait_until(lambda: s.is_human_turn(), pilot=pilot)
        await pilot.press("m")
        await wait_until(lambda: s.is_human_turn() and s.state.turn >= 2, pilot=pilot)
        await pilot.press("ctrl+s")
        assert "saved" in s.feedback.text and not s.feedback.error
    replay = next((tmp_path / "replays").glob("*_alice_bob.xml"))
    assert len(load_replay(replay).timeline) == 3
    log = replay.with_name(replay.name.replace(".xml", ".traffic.txt")).read_text()
    assert "<joined" in log and "sc.plugin2021.SetMove" in log


async def test_network_clock_shows_a_countdown():

    app = BlokusApp(
        lambda: network_screen(
            NetworkOptions(
                "127.0.0.1",
                13050,
                player=InstantPlayer("first"),
                hint_player=InstantPlayer("first"),
                clock_limit=2.0,
                stamp=lambda: "",
                connection_factory=ScriptedConnection.factory(Shape.PENTO_L),
            )
        )
    )
    async with app.run_test(size=SIZE) as pilot:
        s = app.main_screen.session
        await wait_until(lambda: s.is_human_turn(), pilot=pilot)
        assert "⏱" in str(app.screen.query_one("#status").render())
        assert "2 s" in s.feedback.text  # the warning about the server's limit
        # told once, in a notice that stays a while: the limit and the ways out (issue 64)
        notices = [n for n in app._notifications if n.title == TIME_LIMIT_TITLE]
        assert len(notices) == 1 and notices[0].timeout >= 20
        text = notices[0].message
        assert "2 s per move" in text and "blokus serve --no-timeout" in text
        assert "m: the AI plays this move" in text and "o: autopilot" in text


async def test_an_untimed_server_gives_no_time_limit_notice():
    app = scripted_net_app()
    async with app.run_test(size=SIZE) as pilot:
        s = app.main_screen.session
        await wait_until(lambda: s.is_human_turn(), pilot=pilot)
        assert s.started and not [n for n in app._notifications if n.title == TIME_LIMIT_TITLE]


PLAYING_KEYS = {"tab", "d", "f", "i", "m", "o"}


async def test_network_end_status_is_whole_and_nothing_peeks_out():
    async with running_server(start_piece=Shape.PENTO_L, seed=1) as server:
        app = net_app(server.port)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = app.main_screen
            opp = __import__("asyncio").create_task(opponent(server.port))
            s = screen.session
            await wait_until(lambda: s.is_human_turn(), pilot=pilot)
            await pilot.press("o")
            await wait_until(lambda: s.final_result() is not None, pilot=pilot)
            await wait_until(lambda: isinstance(app.screen, EndScreen), pilot=pilot)
            await pilot.press("escape")
            await pilot.pause()
            status = widget_lines(screen.query_one("#status"))
            winner = s.final_result().winner
            one, two = s.state.team_points(Team.ONE), s.state.team_points(Team.TWO)
            assert status[1] == f"Game over — {winner.name} wins {one} : {two}"  # whole, no "…"
            assert s.feedback.text == status[1]  # below the board: one short line, nothing wraps
            keys = await footer_keys_visible(pilot)
            assert "q" in keys and not keys & PLAYING_KEYS  # no Rotate/Flip/Hint after the end
            opp.cancel()


def status_text(app) -> str:
    return str(app.main_screen.query_one(StatusBar).render())


async def test_waiting_for_an_opponent_while_the_room_is_not_full():
    from blokus.net.rooms import Timeouts
    from blokus.net.server import GameServer, ServerConfig

    server = GameServer(ServerConfig(host="127.0.0.1", port=0, timeouts=Timeouts(None, None)))
    await server.start()
    task = asyncio.create_task(server.serve_forever())
    try:
        app = BlokusApp(
            lambda: network_screen(
                NetworkOptions(
                    "127.0.0.1", server.port, player=InstantPlayer(), hint_player=InstantPlayer(), stamp=lambda: ""
                )
            )
        )
        async with app.run_test(size=SMALL) as pilot:
            screen = app.main_screen
            await wait_until(lambda: screen.link.joined, pilot=pilot)
            await pilot.pause()
            assert "waiting for an opponent …" in status_text(app)
            assert "waiting for the server" not in status_text(app)
    finally:
        task.cancel()
        await server.close()


async def test_no_warning_when_a_network_game_is_left_at_once():
    app = scripted_net_app(name=None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with app.run_test(size=SMALL) as pilot:
            for key in ("m", "q", "y"):
                app.post_message(events.Key(key, key))
            await wait_until(lambda: app._exit or isinstance(app.screen, QuitScreen), pilot=pilot)
            if not app._exit:
                await pilot.press("y")
        gc.collect()
    assert not [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
