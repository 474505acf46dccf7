"""Pilot tests: every interaction of the game screen and the replay viewer, driven by keys."""

from __future__ import annotations

import gc
import warnings

import pytest
from textual import events
from textual.widgets._footer import FooterKey

from blokus.cli.play import main as play_main
from blokus.cli.replay import main as replay_main
from blokus.model.moves import MoveMistake, SetMove, SkipMove
from blokus.model.pieces import Color, Rotation, Shape, Team
from blokus.model.record import MoveEvent
from blokus.tui.app import BlokusApp
from blokus.tui.dialogs import ConfirmScreen, EndScreen, HelpScreen, QuitScreen, TurnScreen
from blokus.tui.game_screen import GameScreen
from blokus.tui.messages import ShapePicked
from blokus.tui.replay_screen import ReplayScreen
from blokus.tui.replays import load_replay
from blokus.tui.session import GhostStatus
from blokus.tui.widgets import FeedbackView, StatusBar
from tests.helpers import fixture_path, wait_until
from tests.tui_helpers import (  # noqa: F401  (keep_logging: an autouse fixture)
    GAME1,
    BlockingPlayer,
    InstantPlayer,
    exit_code,
    footer_keys_visible,
    game_app,
    keep_logging,
    screen_of,
    scripted_net_app,
    settle,
    widget_lines,
)

SIZE = (140, 44)
SMALL = (80, 24)  # the smallest terminal we support


async def test_fresh_game_preselects_start_piece_and_moves_the_ghost():
    app = game_app(Shape.PENTO_L)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        assert s.state.turn == 0 and s.is_human_turn()
        # the ghost starts where the start piece can be placed, near a corner (not in the middle)
        assert s.ghost is not None and s.ghost.shape is Shape.PENTO_L and s.placing.status()[0] is GhostStatus.LEGAL
        assert (s.ghost.x, s.ghost.y, s.ghost.rotation, s.ghost.flipped) == (0, 0, Rotation.NONE, False)
        await pilot.press("J", "L", "right", "l", "down", "j", "left", "up", "k")
        assert (s.ghost.x, s.ghost.y) == (6, 5)
        assert s.placing.status()[0] is GhostStatus.NO_CONTACT
        await pilot.press("H", "H", "H")  # clamped at the edge
        assert s.ghost.x == 0
        await pilot.press("J", "J", "J", "J")
        assert s.ghost.y == 16  # PENTO_L is 4 high
        assert s.placing.status()[0] is GhostStatus.LEGAL  # covers the corner (0, 19)


async def test_rotate_both_ways_180_and_flip():
    app = game_app(Shape.PENTO_L)
    async with app.run_test(size=SIZE) as pilot:
        g = screen_of(app).session.ghost
        await pilot.press("d")
        assert g.rotation is Rotation.RIGHT
        await pilot.press("a", "a")
        assert g.rotation is Rotation.LEFT
        await pilot.press("w")
        assert g.rotation is Rotation.RIGHT
        await pilot.press("s")
        assert g.rotation is Rotation.LEFT
        await pilot.press("f")
        assert g.flipped
        await pilot.press("d")  # flipped: clockwise on screen is LEFT of the unflipped shape
        assert g.rotation is Rotation.MIRROR
        await pilot.press("f")
        assert not g.flipped


async def test_select_cycles_only_placeable_shapes_and_escape_puts_back():
    app = game_app(Shape.PENTO_L, plies=4)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        assert s.ghost is None  # nothing forced on the player
        await pilot.press("tab")
        assert s.ghost.shape is Shape.MONO
        await pilot.press("n", "n")
        assert s.ghost.shape is Shape.TRIO_L
        await pilot.press("shift+tab")
        assert s.ghost.shape is Shape.DOMINO
        await pilot.press("b")
        assert s.ghost.shape is Shape.MONO
        await pilot.press("escape")
        assert s.ghost is None
        screen_of(app).select_shape(ShapePicked(Shape.PENTO_X))  # what a click in the panel / the palette does
        await pilot.pause()
        assert s.ghost.shape is Shape.PENTO_X


async def test_illegal_placement_is_refused_with_the_rule():
    app = game_app(Shape.PENTO_L)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await pilot.press("J", "L", "enter")
        assert len(s.timeline) == 1
        assert s.feedback.error and MoveMistake.NOT_IN_CORNER.english in s.feedback.text
        assert MoveMistake.NOT_IN_CORNER.english in str(app.screen.query_one("#feedback").render())
        await pilot.press("left")  # the refusal was about the old position: it goes
        assert not s.feedback.error and "Not allowed" not in str(app.screen.query_one("#feedback").render())


async def test_legal_placement_then_the_ai_answers():
    app = game_app(Shape.PENTO_L)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await pilot.press("H", "H", "K", "K", "space")
        await settle(pilot)
        assert s.timeline.move_before(1) == SetMove(Color.BLUE, Shape.PENTO_L, x=0, y=0)
        assert s.state.turn == 2 and s.state.color is Color.RED  # YELLOW (AI) has answered
        assert [e.color for e in s.timeline.entries] == [Color.BLUE, Color.YELLOW]
        assert s.is_human_turn() and s.ghost.shape is Shape.PENTO_L


async def test_pass_needs_confirmation_and_is_refused_on_the_first_move():
    app = game_app(Shape.PENTO_L)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await pilot.press("P")
        assert not isinstance(app.screen, ConfirmScreen) and len(s.timeline) == 1
    app = game_app(Shape.PENTO_L, plies=4)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await pilot.press("P")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert len(s.timeline) == 5
        await pilot.press("P", "y")
        await settle(pilot)
        assert s.timeline.move_before(5) == SkipMove(Color.BLUE)
        assert any(e.text == "BLUE passed" for e in s.timeline.entries)


async def test_hint_shows_the_suggestion_as_ghost_and_ai_move_plays_it():
    hint = InstantPlayer("last")
    app = game_app(Shape.PENTO_L, plies=4, hint=hint)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await pilot.press("i")
        await settle(pilot)
        expected = s.state.legal_moves()[len(s.state.legal_moves()) - 1]
        assert s.ghost is not None and s.ghost.move(Color.BLUE) == expected
        assert s.placing.status()[0] is GhostStatus.LEGAL and len(s.timeline) == 5
        await pilot.press("m")
        await settle(pilot)
        assert s.timeline.move_before(5) == expected
        assert hint.calls == 2


async def test_undo_takes_back_the_ai_answer_too():
    app = game_app(Shape.PENTO_L, plies=4)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await pilot.press("m")
        await settle(pilot)
        assert s.state.turn == 6
        await pilot.press("u")
        await settle(pilot)
        assert s.state.turn == 4 and len(s.timeline) == 5


async def test_autopilot_plays_to_the_end_and_shows_the_result():
    app = game_app(Shape.PENTO_L, plies=52)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await pilot.press("o")
        for _ in range(400):
            await settle(pilot)
            if s.state.is_over:
                break
        assert s.state.is_over
        await pilot.pause()
        assert isinstance(app.screen, EndScreen)
        text = str(app.screen.query_one("#end-title").render())
        assert text.startswith("Game over")
        await pilot.press("enter")
        assert isinstance(app.screen, GameScreen)


async def test_autopilot_off_returns_the_turn():
    own = BlockingPlayer()
    app = game_app(Shape.PENTO_L, plies=4, own=own, move_time_ms=60_000)  # no deadline races the test
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await pilot.press("o")
        await pilot.pause()
        assert s.ai_thinking and not s.is_human_turn()
        await pilot.press("o")
        await pilot.pause()
        assert own.cancelled and s.is_human_turn() and not s.ai_thinking and len(s.timeline) == 5


async def test_keys_work_while_the_ai_thinks():
    ai = BlockingPlayer()
    app = game_app(Shape.PENTO_L, opponent=ai, move_time_ms=60_000)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await pilot.press("H", "H", "K", "K", "enter")
        await pilot.pause()
        assert s.ai_thinking and s.state.color is Color.YELLOW
        assert "AI thinking" in str(app.screen.query_one("#status").render())
        await pilot.press("left_square_bracket")  # step the view back while the AI thinks
        assert s.view == 0
        await pilot.press("g", "v", "question_mark")
        assert s.view is None and s.show_overlay and isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert s.ai_thinking  # still thinking: nothing waited for it
        ai.release()
        await settle(pilot)
        assert s.state.color is Color.RED and not s.ai_thinking


async def test_history_view_and_back_to_live():
    app = game_app(Shape.PENTO_L, plies=6)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert s.view == 4 and not s.is_live
        await pilot.press("enter")  # placing is disabled while viewing history
        assert len(s.timeline) == 7
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert s.is_live


async def test_help_screen_and_quit():
    app = game_app(Shape.PENTO_L)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("q")  # closes help
        assert isinstance(app.screen, GameScreen)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_ctrl_q_quits_while_the_ai_thinks():
    ai = BlockingPlayer()
    app = game_app(Shape.PENTO_L, opponent=ai, move_time_ms=60_000)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("H", "H", "K", "K", "enter")
        await pilot.pause()
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert ai.cancelled and app.return_code == 0


async def test_save_replay_and_load_it_back(tmp_path, monkeypatch):
    from blokus.tui.launch import save_game_replay

    monkeypatch.chdir(tmp_path)
    app = game_app(Shape.PENTO_L, plies=5, save_replay=save_game_replay)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await pilot.press("ctrl+s")
        assert "saved" in s.feedback.text
    files = list((tmp_path / "replays").glob("replay_swc_2021_blokus_*_you_AI.xml"))
    assert len(files) == 1
    data = load_replay(files[0])
    assert [st.key() for st in data.timeline.states] == [st.key() for st in s.timeline.states]
    # beside it, a record of each move (model.moverecords): who made it, and the time it took
    assert sorted(data.records) == [e.turn for e in s.timeline.events if isinstance(e, MoveEvent)]
    assert {r.source for r in data.records.values()} <= {"human", "engine"}


# --- replay viewer -------------------------------------------------------------------------------------


async def test_replay_stepping_goto_autoplay():
    data = load_replay(fixture_path(GAME1))
    app = BlokusApp(lambda: ReplayScreen(data))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.main_screen
        assert isinstance(screen, ReplayScreen) and screen.index == 0
        await pilot.press("right", "right", "l")
        assert screen.index == 3
        await pilot.press("left", "h")
        assert screen.index == 1
        await pilot.press("end")
        assert screen.index == len(data.timeline) - 1
        assert "ONE wins 122 : 105" in str(screen.query_one("#result").render())  # a narrow column: the short title
        await pilot.press("home")
        assert screen.index == 0
        await pilot.press("t")
        assert isinstance(app.screen, TurnScreen)
        await pilot.press("5", "9", "enter")
        assert screen.timeline.states[screen.index].turn == 60  # turn 59 was GREEN's removal
        await pilot.press("plus", "plus", "minus", "space")  # 2 turns/s
        assert screen.autoplaying
        await wait_until(
            lambda: screen.index > data.timeline.index_of_turn(60), pilot=pilot
        )  # the autoplay's timer steps
        await pilot.press("space")
        assert not screen.autoplaying
        await pilot.press("x")  # the state's XML
        xml = str(screen.query_one("#xml").get_option_at_index(0).prompt)
        assert f'turn="{screen.timeline.states[screen.index].turn}"' in xml
        await pilot.press("q")
    assert app.return_code == 0


async def test_replay_log_lists_skips_and_removals():
    data = load_replay(fixture_path("sc2021/gen-21.3.3-game2-replay-round-limit-end.xml"))
    kinds = {e.kind for e in data.timeline.entries}
    assert kinds >= {"move", "skip"}
    data1 = load_replay(fixture_path(GAME1))
    removed = [(e.turn, e.color) for e in data1.timeline.entries if e.kind == "removed"]
    assert removed == [(59, Color.GREEN), (62, Color.RED), (64, Color.BLUE), (65, Color.YELLOW)]


# --- command line ------------------------------------------------------------------------------------


def test_replay_bad_input_exit_2(tmp_path, capsys):
    assert replay_main([str(tmp_path / "missing.xml")]) == 2
    bad = tmp_path / "bad.xml"
    bad.write_text("this is not xml")
    assert replay_main([str(bad)]) == 2
    empty = tmp_path / "empty.xml"
    empty.write_text("<protocol></protocol>")
    assert replay_main([str(empty)]) == 2
    damaged = tmp_path / "damaged.xml.gz"
    damaged.write_bytes(b"\x1f\x8b\x08garbage")
    assert replay_main([str(damaged)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(line.startswith("blokus replay: ") for line in err)
    assert err[3].endswith("not a replay file (damaged gzip data)")
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["--start-piece", "FOO"],
        ["--season", "2021", "--start-piece", "PENTO_X"],
        ["--opponent", "nobody"],
        ["--ai", "nobody"],
        ["--move-time", "-1"],
        ["--ai-time", "1"],
        ["--team", "THREE"],
        ["--seed", "x"],
    ],
)
def test_play_bad_options_exit_2(argv, capsys):
    assert exit_code(play_main, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("blokus play: ") and len(err.strip().splitlines()) == 1


def test_pento_x_is_never_a_start_piece(capsys):
    assert exit_code(play_main, ["--season", "2021", "--start-piece", "pento_x"]) == 2
    assert "PENTO_X is never a start piece in 2021" in capsys.readouterr().err


def test_play_help_mentions_host(capsys):
    with pytest.raises(SystemExit) as exc:
        play_main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "-h HOST, --host HOST" in out and "--opponent" in out


async def test_cli_builds_a_local_game():
    from blokus.cli.play import play_options
    from blokus.tui.launch import build_local_app

    args = play_options(
        ["--season", "2021", "--seed", "3", "--opponent", "random", "--team", "TWO", "--move-time", "50"]
    )
    app = build_local_app(args)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        assert s.seats[Team.TWO].value == "human"
        await wait_until(s.is_human_turn, pilot=pilot)
        assert s.state.color is Color.YELLOW and s.ghost.shape is s.state.start_piece


async def test_unexpected_error_is_one_readable_line(tmp_path):
    from blokus.tui.app import setup_logging

    setup_logging(str(tmp_path / "blokus.log"))
    app = game_app(Shape.PENTO_L)

    def broken(*_args):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        async with app.run_test(size=SIZE) as pilot:
            screen_of(app).session.placing.move_ghost = broken  # a bug in the controller
            await pilot.press("right")
            await pilot.pause()
    assert app.return_code == 1
    assert "boom" in (tmp_path / "blokus.log").read_text()


def _palette_offers(app, text: str) -> bool:
    """The command palette's search is done and its highlighted (first) command mentions ``text``."""
    from textual.command import CommandList, CommandPalette

    if not isinstance(app.screen, CommandPalette):
        return False
    commands = app.screen.query_one(CommandList)
    if commands.highlighted is None:
        return False
    prompt = commands.get_option_at_index(commands.highlighted).prompt
    return text.lower() in getattr(prompt, "plain", str(prompt)).lower()


async def test_command_palette_runs_actions_and_selects_pieces():
    app = game_app(Shape.PENTO_L, plies=4)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await pilot.press("ctrl+p")
        await pilot.press(*"PENTO_X")
        await wait_until(lambda: _palette_offers(app, "PENTO_X"), pilot=pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert s.ghost is not None and s.ghost.shape is Shape.PENTO_X
        await pilot.press("ctrl+p")
        await pilot.press(*"overlay")
        await wait_until(lambda: _palette_offers(app, "overlay"), pilot=pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert s.show_overlay


async def test_mouse_click_selects_in_panel_and_places_on_board():
    from blokus.tui.board import Board
    from blokus.tui.widgets import ShapePanel

    app = game_app(Shape.PENTO_L)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await pilot.click(Board, offset=(3 + 2 * 0, 1 + 0))  # field (0, 0)
        await settle(pilot)
        assert s.timeline.move_before(1) == SetMove(Color.BLUE, Shape.PENTO_L, x=0, y=0)
        await pilot.click(Board, offset=(3 + 2 * 5, 1 + 5), button=3)  # right click flips
        assert s.ghost.flipped
        panel = app.screen.query_one("#panel-RED", ShapePanel)
        assert panel.view is not None and panel.view.selected is Shape.PENTO_L


async def test_theme_toggle_repaints():
    from blokus.tui.board import Board

    app = game_app(Shape.PENTO_L)
    async with app.run_test(size=SIZE) as pilot:
        board = app.screen.query_one(Board)
        assert board._palette.dark
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert not app.current_theme.dark and not board._palette.dark


async def test_open_saved_replay_from_the_game_and_come_back(tmp_path, monkeypatch):
    from blokus.tui.dialogs import ReplayPicker
    from blokus.tui.launch import save_game_replay

    monkeypatch.chdir(tmp_path)
    app = game_app(Shape.PENTO_L, plies=6, save_replay=save_game_replay)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+s", "ctrl+r")
        assert isinstance(app.screen, ReplayPicker) and len(app.screen.files) == 1
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ReplayScreen) and len(app.screen.timeline) == 7
        await pilot.press("end")
        assert "Game not finished" in str(app.screen.query_one("#result").render())
        await pilot.press("q")
        assert isinstance(app.screen, GameScreen)


class _BrokenPlayer(InstantPlayer):
    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode

    async def choose_move(self, state, deadline):
        if self.mode == "raise":
            raise RuntimeError("engine bug")
        return SetMove(state.color, Shape.MONO, x=10, y=10)  # illegal


@pytest.mark.parametrize("mode", ["raise", "illegal"])
async def test_a_failing_ai_does_not_stall_the_game(mode):
    app = game_app(Shape.PENTO_L, opponent=_BrokenPlayer(mode))
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await pilot.press("H", "H", "K", "K", "enter")
        await settle(pilot)
        assert s.state.turn == 2 and s.is_human_turn()  # YELLOW got a legal fallback move
        assert s.feedback.error and "AI" in s.feedback.text


class _PonderingPlayer(InstantPlayer):
    def __init__(self) -> None:
        super().__init__()
        self.pondered: list = []
        self.cancels = 0

    def start_pondering(self, state) -> None:
        self.pondered.append(state.copy())

    def cancel(self) -> None:
        self.cancels += 1


@pytest.mark.parametrize("ponder", [False, True])
async def test_the_ai_opponent_ponders_during_the_humans_turn_when_asked(ponder):
    opponent = _PonderingPlayer()
    app = game_app(Shape.PENTO_L, opponent=opponent, ponder=ponder)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await pilot.press("H", "H", "K", "K", "enter")  # BLUE; the AI answers with YELLOW
        await settle(pilot)
        assert s.state.turn == 2 and s.is_human_turn()
        # the position after the AI's move, the human (RED) to move
        assert [p.turn for p in opponent.pondered] == ([2] if ponder else [])
        cancels = opponent.cancels
        await pilot.press("u")  # undo: the position it thinks about is gone, so is its pondering
        assert opponent.cancels == cancels + (1 if ponder else 0)


async def test_a_ghost_move_repaints_only_the_changed_board_rows():
    from blokus.tui.board import HEIGHT, Board

    app = game_app(Shape.PENTO_L, plies=4)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("tab")  # MONO at (8, 8)
        board = app.screen.query_one(Board)
        before = board.renders
        await pilot.press("right")
        assert 1 <= board.renders - before < HEIGHT  # row 8 only, not the whole board
        before = board.renders
        await pilot.press("down")
        assert 1 <= board.renders - before <= 2 + 1  # rows 8 and 9


async def test_hotseat_both_teams_play_with_keys():
    app = game_app(Shape.PENTO_L, hotseat=True)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await pilot.press("H", "H", "K", "K", "enter")  # BLUE at (0, 0)
        assert s.state.color is Color.YELLOW and s.is_human_turn()
        assert s.ghost.shape is Shape.PENTO_L  # YELLOW's first move: the start piece again
        await pilot.press("J", "J", "J", "J", "enter")  # y clamps to 16: covers the corner (0, 19)
        assert s.state.color is Color.RED, s.feedback.text
        await pilot.press("u")  # hotseat undo: one move back
        assert s.state.color is Color.YELLOW


async def test_cli_watch_mode_ai_against_ai():
    from blokus.cli.play import play_options
    from blokus.tui.launch import build_local_app

    args = play_options(
        ["--season", "2021", "--watch", "--seed", "5", "--opponent", "random", "--ai", "random", "--move-time", "50ms"]
    )
    app = build_local_app(args)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        assert not s.human_teams() and s.wants_ai()
        await wait_until(lambda: len(s.timeline) >= 4, pilot=pilot)
        assert not s.is_human_turn()
        assert await footer_keys_visible(pilot) - {"ctrl+p"} == {"question_mark", "q"}  # no keys for playing
        await pilot.press("q")


@pytest.mark.parametrize("size", [(100, 30), (120, 40), (160, 50)])
async def test_replay_status_lines_never_wrap_and_quit_stays_in_the_footer(size):
    data = load_replay(fixture_path(GAME1))
    app = BlokusApp(lambda: ReplayScreen(data, start_turn=31))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        lines = widget_lines(app.main_screen.query_one("#status"))
        assert (
            lines[1].startswith("Turn 31 ") and "/" not in lines[1] and lines[1].endswith("next: GREEN")
        )  # not "next:" / "GREEN"
        assert lines[2].startswith("ONE 67 : 54 TWO") and lines[3] == "move: RED passed"
        assert {"q", "question_mark"} <= await footer_keys_visible(pilot)


@pytest.mark.parametrize("size", [(100, 30), (140, 44)])
async def test_game_status_keeps_its_four_lines_with_a_long_name(size):
    app = game_app(Shape.PENTO_L)
    async with app.run_test(size=size) as pilot:
        screen = screen_of(app)
        screen.session.names[Team.ONE] = "Alexander the Great of Macedonia, King of Kings"
        screen.refresh_view()
        await pilot.pause()
        lines = widget_lines(screen.query_one("#status"))
        assert lines[1].startswith("Alexander the") and lines[1].endswith("… — BLUE (team ONE) to move")
        assert lines[3] == "PENTO_L @ (0,0)  legal"
        assert {"q", "question_mark"} <= await footer_keys_visible(pilot)


async def test_footer_follows_a_resize():
    app = game_app(Shape.PENTO_L)
    async with app.run_test(size=(160, 50)) as pilot:
        assert "ctrl+p" in await footer_keys_visible(pilot)
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        keys = await footer_keys_visible(pilot)
        assert {"q", "question_mark"} <= keys and "ctrl+p" not in keys
        await pilot.resize_terminal(160, 50)
        await pilot.pause()
        assert "ctrl+p" in await footer_keys_visible(pilot)


def test_level_option_picks_the_opponent_strength(capsys):
    from blokus.cli.play import play_options, play_parser
    from blokus.tui.launch import build_local_app

    app = build_local_app(play_options(["--season", "2021", "--seed", "3", "--level", "2", "--team", "TWO"]))
    screen = app._make_screen()
    assert screen.session.names[Team.ONE] == "AI level2"
    assert screen.ai.players[Team.ONE].name == "level2"
    with pytest.raises(SystemExit):
        play_parser().parse_args(["--level", "7"])
    assert "--level" in capsys.readouterr().err


PLAYING_KEYS = {"tab", "d", "f", "i", "m", "o"}


async def test_ctrl_c_asks_the_same_question_as_q():
    app = game_app(Shape.PENTO_L, plies=4)  # a game in progress: q asks first
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen)  # our question, not Textual's "Press … to quit" toast
        assert not app._notifications
        await pilot.press("escape")
        assert app.screen is app.main_screen and app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause()
        await pilot.press("ctrl+c")  # asked twice: the answer is yes
        await pilot.pause()
    assert app.return_code == 0
    fresh = game_app(Shape.PENTO_L)  # nothing to lose yet: ctrl+c quits at once, like q
    async with fresh.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert fresh.return_code == 0 and not fresh._notifications


async def test_footer_offers_no_playing_keys_after_a_local_game_ends():
    app = game_app(Shape.PENTO_V, plies=14)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot)
        assert PLAYING_KEYS <= await footer_keys_visible(pilot)
        s = screen_of(app).session
        await pilot.press("o")
        for _ in range(400):
            await settle(pilot)
            if s.state.is_over:
                break
        assert s.state.is_over
        await pilot.press("escape")
        await pilot.pause()
        keys = await footer_keys_visible(pilot)
        assert "q" in keys and not keys & PLAYING_KEYS
        assert not any(k.key in PLAYING_KEYS for k in app.screen.query(FooterKey))


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_season_is_on_screen(size):
    from blokus.cli.play import play_options
    from blokus.tui.launch import build_local_app

    app = build_local_app(play_options(["--season", "2027", "--opponent", "random"]))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        status = widget_lines(screen_of(app).query_one("#status"))
        assert status[0].startswith("2027") and "1/24" in status[0]


async def test_a_long_last_move_takes_two_lines_at_80x24():
    from blokus.model.moves import SetMove, describe_move

    data = load_replay(fixture_path("sc2021/gen-21.3.3-game2-replay-round-limit-end.xml"))
    app = BlokusApp(lambda: ReplayScreen(data))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.main_screen
        width = screen.query_one("#status").content_size.width
        index = next(
            i
            for i in range(1, len(data.timeline))
            if isinstance(m := data.timeline.move_before(i), SetMove) and len(describe_move(m)) > width
        )
        screen.index = index
        await pilot.pause()
        text = describe_move(data.timeline.move_before(index))
        piece, where = text.split(" @ ")
        lines = widget_lines(screen.query_one("#status"))
        assert piece in lines and f"@ {where}" in lines  # whole, never "@ (1…"


def status_text(app) -> str:
    return str(app.main_screen.query_one(StatusBar).render())


def feedback_text(app) -> str:
    return str(app.main_screen.query_one(FeedbackView).render())


QUICK_EXITS = [
    ["enter", "q", "y"],  # a move, then quit at once (the AI starts thinking in the same frame)
    ["enter", "q", "u", "e", "s"],  # "question" typed after a move: q asks, s saves and quits
    ["m", "q", "y"],
    ["i", "q", "y"],
    ["enter", "ctrl+q"],
    ["o", "ctrl+c", "q"],
]


@pytest.mark.parametrize("key, told", [("m", "the AI is choosing your move"), ("i", "thinking about a hint")])
async def test_m_and_a_hint_show_at_once_that_the_ai_works(key, told):
    slow = BlockingPlayer()
    app = game_app(Shape.PENTO_L, hint=slow, move_time_ms=600_000)  # no fallback on a loaded machine
    try:
        async with app.run_test(size=SMALL) as pilot:
            await settle(pilot)
            await pilot.press(key)  # the same frame: the AI has not answered (it waits for release())
            assert not slow.go.is_set()
            assert "AI thinking…" in status_text(app) and told in feedback_text(app)
            slow.release()
            await settle(pilot)
            assert "AI thinking…" not in status_text(app)
    finally:
        slow.release()


@pytest.mark.parametrize("keys", QUICK_EXITS, ids=" ".join)
@pytest.mark.parametrize("opponent", ["instant", "blocking"])
async def test_no_warning_on_a_quick_way_out(keys, opponent, tmp_path):
    player = InstantPlayer() if opponent == "instant" else BlockingPlayer()
    app = game_app(
        Shape.PENTO_L, opponent=player, hint=player, save_replay=lambda session, traffic: str(tmp_path / "x")
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with app.run_test(size=SMALL) as pilot:
            await settle(pilot)
            for key in keys:  # all in one frame, as a terminal delivers fast typing
                app.post_message(events.Key(key, key if len(key) == 1 else None))
            await wait_until(lambda: app._exit or isinstance(app.screen, QuitScreen), pilot=pilot)
            if not app._exit:
                await pilot.press("y")
        if isinstance(player, BlockingPlayer):
            player.release()
        gc.collect()
    assert not [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("season_name", ["2021", "2027"])
async def test_the_first_piece_s_ghost_starts_on_the_hint_s_move(season_name):
    """A colour's first piece starts where ``i`` would put it (the hint player is asked without a word), in both
    seasons; before the answer, and without a hint player, 2027's starts in the middle of a side, not in a corner
    (a trap: the piece there has the least room to grow) (issue 64)."""
    from blokus.model.season import season_named
    from tests.tui_helpers import last_move

    season = season_named(season_name)
    start = Shape[season.start_pieces[0]]
    app = game_app(start, first_ghost=True, season=season)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        s = screen_of(app).session
        hint = last_move(s.state)
        g = s.ghost
        assert (g.shape, g.rotation, g.flipped, g.x, g.y) == (hint.shape, hint.rotation, hint.flipped, hint.x, hint.y)
        assert s.placing.status()[0] is GhostStatus.LEGAL and "where the AI would place it" in s.feedback.text
    corners = {(0, 0), (0, 19), (19, 0), (19, 19)}
    if season_name == "2027":
        app = game_app(start, season=season)  # no first-ghost hint: where it starts by itself
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            s = screen_of(app).session
            assert s.placing.status()[0] is GhostStatus.LEGAL and not corners & set(s.ghost.cells())


async def test_a_first_ghost_the_human_moved_stays_where_they_put_it():
    hint = BlockingPlayer()
    app = game_app(Shape.PENTO_L, hint=hint, first_ghost=True)
    async with app.run_test(size=SIZE) as pilot:
        s = screen_of(app).session
        await wait_until(hint.started.is_set, pilot=pilot)
        assert not s.ai_thinking  # asked without "AI thinking…": the keys work
        await pilot.press("J")
        before = (s.ghost.x, s.ghost.y)
        hint.release()
        await settle(pilot)
        assert (s.ghost.x, s.ghost.y) == before == (0, 5)
