"""The smaller behaviours of issue 10, one test each: quitting asks, NO_COLOR, exit codes, no terminal,
new game, refusals that name the cells, keys that explain why they do nothing, the board at every size."""

from __future__ import annotations

import asyncio

import pytest
from rich.color import Color as RichColor
from rich.color import ColorSystem
from textual.color import Color as TextualColor

from blokus.cli.output import run_app
from blokus.cli.play import main as play_main
from blokus.cli.replay import main as replay_main
from blokus.model.moves import MoveMistake, SetMove
from blokus.model.pieces import Color, Shape
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState
from blokus.tui.app import BlokusApp
from blokus.tui.board import Board, Scale
from blokus.tui.colors import DARK, LETTER, LIGHT
from blokus.tui.dialogs import EndScreen, HelpScreen, QuitScreen
from blokus.tui.game_screen import network_screen
from blokus.tui.layout import BoardLayout, plan_layout
from blokus.tui.network import NetworkOptions
from blokus.tui.placing_board import PlacingBoard
from blokus.tui.widgets import ShapePanel
from tests.helpers import greedy_game, wait_until
from tests.tui_helpers import (  # noqa: F401  (keep_logging: an autouse fixture)
    InstantPlayer,
    exit_code,
    footer_keys_visible,
    game_app,
    keep_logging,
    settle,
    widget_lines,
)

SIZE = (120, 40)


async def test_q_asks_during_a_game_and_saves_before_quitting(tmp_path):
    saved = []
    app = game_app(
        Shape.PENTO_L,
        plies=4,
        save_replay=lambda session, traffic: saved.append(len(session.timeline)) or str(tmp_path / "game.xml"),
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
        assert isinstance(app.screen, QuitScreen)
        await pilot.press("escape")  # back to the game
        assert not isinstance(app.screen, QuitScreen) and app.is_running
        await pilot.press("q", "s")  # save and quit
        await pilot.pause()
    assert saved == [5] and app.return_value in (0, None)
    # the screen is gone: the terminal is told where the game went (cli.output prints it, issue 64)
    assert app.farewell == [f"saved the game to {tmp_path / 'game.xml'} (blokus replay FILE opens it)"]


async def test_q_quits_at_once_before_the_first_move():
    app = game_app(Shape.PENTO_L)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
        await pilot.pause()
        assert not isinstance(app.screen, QuitScreen)
    assert not app.is_running


@pytest.mark.parametrize("size", [(80, 24), (90, 28), (100, 30), (120, 40), (160, 50), (200, 60)])
async def test_no_color_writes_every_colour_s_letter_at_every_size(monkeypatch, size):
    """Under NO_COLOR every field carries its colour's letter from 80×24 on: where the half blocks would show only
    greys, a board of one letter per field takes their place, with two status lines (issue 64)."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = game_app(Shape.PENTO_L, plies=4)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        board = app.screen.query_one(Board)
        assert board.scale is not Scale.HALF
        text = "\n".join(board.render_line(y).text for y in range(board.scale.size[1]))
        for color in Color:
            assert LETTER[color] in text or LETTER[color].lower() in text
        if size == (80, 24):
            assert board.scale is Scale.LETTERS
            status = widget_lines(app.screen.query_one("#status"))
            assert len(status) == 2 and status[0].endswith("BLUE to move") and "tab/n" in status[1]
            assert {"q", "question_mark"} <= await footer_keys_visible(pilot)
            assert board.field_at(3, 19) == (0, 19) and board.field_at(22, 0) == (19, 0)


async def test_no_color_keeps_the_four_colours_apart(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = game_app(Shape.PENTO_L, plies=4)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        board = app.screen.query_one(Board)
        assert board.scale is Scale.NORMAL
        text = "\n".join(board.render_line(y).text for y in range(board.scale.size[1]))
        for color in Color:  # every placed colour is written with its letter (the last move in lower case)
            assert LETTER[color] * 2 in text or LETTER[color].lower() * 2 in text


def _terminal_grey(hex_colour: str, system: ColorSystem | None) -> int:
    """What a terminal shows for ``hex_colour`` under NO_COLOR: Textual's grey of it (its luminance), as a
    true-colour grey level (``system`` None) or as the palette entry of a 16- or 256-colour terminal."""
    grey = TextualColor.parse(hex_colour).monochrome
    if system is None:
        return grey.r
    return RichColor.parse(grey.hex).downgrade(system).number


@pytest.mark.parametrize("palette", [DARK, LIGHT], ids=["dark", "light"])
def test_no_color_keeps_the_colours_apart_on_the_half_block_board(palette):
    """At half-block scale a field has no room for a letter: only its grey tells the colours apart, on a
    true-colour terminal, on xterm-256color and on plain xterm (16 colours: four greys in all)."""
    pal = palette.as_mono()
    empties = (pal.empty_a, pal.empty_b)
    pieces = {c: pal.piece(c) for c in Color}
    true_grey = {c: _terminal_grey(h, None) for c, h in pieces.items()}
    levels = sorted([*true_grey.values(), *(_terminal_grey(e, None) for e in empties)])
    gaps = sorted(b - a for a, b in zip(levels, levels[1:], strict=False))
    assert gaps[1] >= 35  # the smallest gap is the checkerboard's own; every other is clear
    for system in (ColorSystem.EIGHT_BIT, ColorSystem.STANDARD):
        board = {_terminal_grey(e, system) for e in empties}
        shown = {c: _terminal_grey(h, system) for c, h in pieces.items()}
        assert not board & set(shown.values()), (system, shown, board)  # no colour vanishes into the board
        for a in Color:
            for b in Color:
                if a.team is not b.team:  # opponents never look alike
                    assert shown[a] != shown[b], (system, a, b)
        if system is ColorSystem.EIGHT_BIT:
            assert len(set(shown.values())) == 4
        # a blocked ghost and the letters stay visible too
        assert _terminal_grey(pal.blocked_bg, system) not in board
    for c in Color:  # letters in black or white, whichever contrasts with the field
        assert abs(_terminal_grey(pal.on_piece(c), None) - true_grey[c]) >= 100


async def test_failed_connection_exits_non_zero():
    sock = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = sock.sockets[0].getsockname()[1]
    sock.close()
    await sock.wait_closed()
    app = BlokusApp(
        lambda: network_screen(
            NetworkOptions("127.0.0.1", port, player=InstantPlayer(), hint_player=InstantPlayer(), stamp=lambda: "")
        )
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: isinstance(app.screen, EndScreen), pilot=pilot)
        assert not app.screen.can_save  # nothing to save: there was no game
        await pilot.press("q")
        await pilot.pause()
    assert app.return_value == 1


def test_a_stdout_that_is_not_a_terminal_is_one_line_of_error(capsys):
    assert play_main([]) == 2  # pytest's captured stdout is not a terminal
    err = capsys.readouterr().err
    assert err.startswith("blokus play: ") and "terminal" in err and len(err.splitlines()) == 1
    assert run_app(game_app(), "blokus replay") == 2


def test_replay_h_is_help_and_serve_h_is_the_host(capsys):
    assert exit_code(replay_main, ["-h"]) == 0 and "usage: blokus replay" in capsys.readouterr().out
    from blokus.cli.serve import build_parser

    assert build_parser().parse_args(["-h", "localhost"]).host == "localhost"


async def test_new_game_after_the_end():
    app = game_app(Shape.PENTO_L, plies=400)  # played to the end
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, EndScreen) and app.screen.can_restart
        old = app.main_screen
        await pilot.press("n")
        await settle(pilot)
        # a fresh screen and session (game_app's factory plays the same opening again, here to the end)
        assert app.main_screen is not old and app.main_screen.session is not old.session


def test_refusals_name_the_cells():
    state = GameState.new(SEASON_2021, Shape.PENTO_L)
    state.play(SetMove(Color.BLUE, Shape.PENTO_L, x=0, y=0))
    play_openings_state = state  # YELLOW to move: cover BLUE's cells
    mistake = play_openings_state.validate(SetMove(Color.YELLOW, Shape.PENTO_L, x=0, y=0))
    assert mistake is MoveMistake.OBSTRUCTED
    covering = SetMove(Color.YELLOW, Shape.PENTO_L, x=0, y=0)
    assert state.refused_fields(covering, mistake) == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 3)]
    assert state.refusal_text(covering, mistake) == f"{mistake.english} at (0,0) (0,1) (0,2) (0,3) (1,3)"
    corner = SetMove(Color.YELLOW, Shape.MONO, x=19, y=19)
    assert state.refusal_text(corner, MoveMistake.NOT_IN_CORNER) == MoveMistake.NOT_IN_CORNER.english


async def test_keys_that_cannot_act_say_why():
    app = game_app(Shape.PENTO_L)
    async with app.run_test(size=SIZE) as pilot:
        s = app.main_screen.session
        for key, words in (
            ("x", "XML pane"),
            ("tab", "only the start piece"),
            ("escape", "only choice"),
            ("P", "cannot pass"),
        ):
            await pilot.press(key)
            assert words in s.feedback.text, (key, s.feedback.text)
        await pilot.press("J", "L", "enter")  # refused …
        assert s.feedback.error
        await pilot.press("P")
        await pilot.pause()
        assert "cannot pass" in s.feedback.text


async def test_cancelled_pass_does_not_leave_an_old_refusal():
    app = game_app(Shape.PENTO_L, plies=4)
    async with app.run_test(size=SIZE) as pilot:
        s = app.main_screen.session
        await pilot.press("J", "L", "L", "enter")  # a refused placement …
        assert s.feedback.error
        await pilot.press("P", "n")  # … then a pass, cancelled
        await pilot.pause()
        assert not s.feedback.error and s.feedback.text == "not passed"


async def test_palette_keys_entry_opens_the_help_that_escape_closes():
    app = game_app(Shape.PENTO_L)
    async with app.run_test(size=SIZE) as pilot:
        commands = {c.title: c for c in app.get_system_commands(app.main_screen)}
        commands["Keys"].callback()
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


@pytest.mark.parametrize(
    "size,scale,panels,log",
    [
        ((80, 24), Scale.HALF, True, False),
        ((120, 40), Scale.NORMAL, True, False),
        ((140, 44), Scale.NORMAL, True, True),
        ((200, 60), Scale.LARGE, True, True),
    ],
)
def test_the_board_scales_with_the_terminal(size, scale, panels, log):
    plan = plan_layout(*size)
    assert (plan.scale, plan.panels, plan.log, plan.too_small) == (scale, panels, log, False)
    assert plan_layout(39, 24).too_small and plan_layout(80, 19).too_small


async def test_too_small_shows_a_notice_and_the_game_comes_back():
    app = game_app(Shape.PENTO_L)
    async with app.run_test(size=(36, 16)) as pilot:
        await pilot.pause()
        notice = str(app.screen.query_one("#too-small").render())
        assert "36×16" in notice and "40×20" in notice and app.screen.query_one(BoardLayout).has_class("-too-small")
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        layout = app.screen.query_one(BoardLayout)
        assert not layout.has_class("-too-small") and app.screen.query_one(Board).scale is Scale.HALF
        assert app.screen.focused is app.screen.query_one(PlacingBoard)  # hidden, it lost the focus: it is back


def test_light_theme_yellow_text_is_darker_than_the_piece():
    from blokus.tui.colors import LIGHT, PIECE_HEX

    assert LIGHT.piece_text(Color.YELLOW) != PIECE_HEX[Color.YELLOW]
    assert DARK.piece_text(Color.YELLOW) == PIECE_HEX[Color.YELLOW]


@pytest.mark.parametrize("size,large", [((140, 44), False), ((200, 60), True), ((200, 50), True)])
async def test_shape_panels_use_full_blocks_where_there_is_room(size, large):
    app = game_app(Shape.PENTO_V, plies=14)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        panels = list(app.screen.query(ShapePanel))
        assert [p.large for p in panels] == [large] * 4
        for panel in panels:  # every shape drawn inside its panel, none cut off
            assert panel.region.height >= panel.get_content_height(panel.region, panel.region, panel.content_size.width)
            assert panel.region.bottom <= size[1] - 1


@pytest.mark.parametrize("size", [(140, 44), (200, 60)])
async def test_a_long_move_log_entry_keeps_its_wrapped_line(size):
    """Entries just longer than the log is wide wrap onto a second line, also after the log is rebuilt (as
    the analysis does when it marks moves) and a scrollbar has appeared: no coordinates are lost."""
    from blokus.tui.session import LogEntry
    from blokus.tui.widgets import MoveLog

    app = game_app(Shape.PENTO_L, plies=4)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        log = app.screen.query_one(MoveLog)
        width = log.content_region.width
        # around the width: "NN " + text (the last token is the entry's own coordinates), then enough
        # short entries for a scrollbar
        long = [f"{'x' * (width - 14 + k)} @ ({k},0)" for k in range(8)]
        entries = [LogEntry(i, i, Color(i % 4), "move", text) for i, text in enumerate(long)]
        entries += [LogEntry(i, i, Color(i % 4), "move", "BLUE MONO") for i in range(len(long), 80)]
        log.set_entries(entries, 0)
        await settle(pilot)
        log.retheme()
        await settle(pilot)
        shown = "\n".join(log.render_line(y).text for y in range(log.scrollable_content_region.height))
        for k in range(len(long)):
            assert f"({k},0)" in shown, shown


def test_help_wraps_a_long_text_under_its_own_column_and_shows_brackets_as_keys():
    from rich.console import Console

    from blokus.tui.game_screen import GAME_BINDINGS
    from blokus.tui.keys import help_renderable
    from blokus.tui.replay_screen import VIEWER_BINDINGS

    console = Console(width=72, record=True, color_system=None)
    console.print(help_renderable([("Playing", GAME_BINDINGS), ("Replays", VIEWER_BINDINGS)]))
    lines = console.export_text().splitlines()
    first = next(i for i, line in enumerate(lines) if "move the piece (its top-left corner" in line)
    column = lines[first].index("move the piece")
    assert lines[first + 1][:column].strip() == "" and lines[first + 1][column:].strip()  # under its text
    assert any(line.lstrip().startswith("] ") and "next move marked" in line for line in lines)  # not markup


@pytest.fixture(scope="module")
def late_state():

    states, _ = greedy_game(64)
    return states[-1]


@pytest.mark.parametrize("width", [34, 40, 44, 60])
def test_the_score_line_never_cuts_the_score(width, late_state):
    """Late in a game (two-digit turns, three-digit scores) the narrow centre column drops the turn, never
    TWO's score."""
    from types import SimpleNamespace

    from blokus.model.pieces import Team
    from blokus.tui.status import score_line

    state = late_state
    one, two = state.team_points(Team.ONE), state.team_points(Team.TWO)
    assert one >= 100 and two >= 100  # the long case
    line = score_line(SimpleNamespace(shown=state), width).plain
    assert len(line) <= width and line.endswith(f"ONE {one} : {two} TWO") and line.startswith("2021")
    assert "17/25" in line  # the round, and the season (its rules differ) even in the narrowest column


@pytest.mark.parametrize("width", [28, 34, 60])
def test_the_keys_after_the_end_fit_the_status_column(width):
    from types import SimpleNamespace

    from blokus.tui.status import StatusContext, activity_lines

    over = SimpleNamespace(
        is_live=True,
        ghost=None,
        is_human_turn=lambda: False,
        ai_thinking=False,
        ended=True,
        local=True,
        can_analyse=lambda: True,
    )
    lines = activity_lines(over, StatusContext(DARK, width))
    text = " · ".join(line.plain for line in lines)
    assert all(len(line) <= width for line in lines) and len(lines) <= 2 and "…" not in text
    assert text.startswith("A analyse · N new") and text.endswith("ctrl+s save · q quit")


@pytest.mark.parametrize("width", [32, 60])
def test_the_view_line_keeps_how_to_return(width):
    from types import SimpleNamespace

    from blokus.tui.status import StatusContext, activity_lines

    viewing = SimpleNamespace(is_live=False, shown_index=37, timeline=[None] * 101)
    (line,) = activity_lines(viewing, StatusContext(DARK, width))
    assert len(line) <= width and line.plain.endswith("g returns") and "37" in line.plain


@pytest.mark.parametrize("width", [32, 60])
def test_no_piece_selected_fits_the_status_column(width):
    from types import SimpleNamespace

    from blokus.tui.status import StatusContext, activity_lines

    idle = SimpleNamespace(is_live=True, ghost=None, is_human_turn=lambda: True, ai_thinking=False)
    (line,) = activity_lines(idle, StatusContext(DARK, width))
    assert len(line) <= width and line.plain.endswith("tab/n picks one")


async def test_no_color_replay_viewer_writes_the_letters_at_80x24(monkeypatch):
    """The replay viewer too: the letter board with the turn and the score above it, the result below (issue 64)."""
    from blokus.tui.replay_screen import ReplayScreen
    from blokus.tui.replays import load_replay
    from tests.helpers import fixture_path
    from tests.tui_helpers import GAME1

    monkeypatch.setenv("NO_COLOR", "1")
    app = BlokusApp(lambda: ReplayScreen(load_replay(fixture_path(GAME1)), start_turn=30))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        board = app.screen.query_one(Board)
        assert board.scale is Scale.LETTERS
        text = "\n".join(board.render_line(y).text for y in range(board.scale.size[1]))
        assert all(LETTER[color] in text for color in Color)
        status = widget_lines(app.screen.query_one("#status"))
        assert len(status) == 2 and status[0].startswith("Round 8 · t 30") and status[1].startswith("ONE ")
        await pilot.press("end")
        await pilot.pause()
        assert "Game over" in widget_lines(app.screen.query_one("#result"))[0]
        assert {"q", "question_mark"} <= await footer_keys_visible(pilot)
