"""What a newcomer tripped over (issue 38): pieces that land where they fit, one quit question, readable
colours in 16 and 256 colours, the light theme everywhere, free-standing column numbers, the analysis
pane's verdict on small terminals, a short end status, the footer after the end, the live viewer's state,
the season on screen."""

from __future__ import annotations

import pytest
from rich.color import Color as RichColor
from rich.color import ColorSystem
from textual.widgets._footer import FooterKey

from ai.analysis import AnalysisSettings, GameAnalysis, Mark, PositionAnalysis
from model.moves import parse_move
from model.pieces import Color, Shape, Team
from tests.helpers import fixture_path, running_server, wait_until
from tests.tui_helpers import (  # noqa: F401  (keep_logging: an autouse fixture)
    GAME1,
    footer_keys_visible,
    game_app,
    keep_logging,
    net_app,
    opponent,
    screen_of,
    settle,
    widget_lines,
)
from tui.analysis_view import pane_text
from tui.app import BlokusApp
from tui.board import Board, Scale
from tui.colors import DARK, LIGHT
from tui.dialogs import EndScreen, QuitScreen
from tui.replay_screen import ReplayScreen
from tui.replays import load_replay
from tui.session import GhostStatus

PLAYING_KEYS = {"tab", "d", "f", "i", "m", "o"}


async def test_tab_lands_every_piece_where_it_fits():
    """tab/n picks the next piece that can be placed now, at a legal placement near the previous ghost:
    the newcomer who tabs through the pieces never meets a "not placeable" ghost."""
    app = game_app(Shape.PENTO_V, plies=14)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        s = screen_of(app).session
        seen = []
        for _ in range(8):
            before = s.ghost
            await pilot.press("tab")
            assert s.placing.status() == (GhostStatus.LEGAL, None), (s.ghost, s.placing.status())
            if before is not None:  # near where the previous piece was: within a few fields
                assert abs(s.ghost.x - before.x) + abs(s.ghost.y - before.y) <= 10
            seen.append(s.ghost.shape)
        assert len(set(seen)) == 8  # eight different pieces
        await pilot.press("enter")  # and the one shown is played as it is
        assert s.state.turn > 14


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


def _hue(number: int) -> str:
    return {1: "red", 9: "red", 2: "green", 10: "green", 3: "yellow", 11: "yellow", 4: "blue", 12: "blue"}.get(
        number, "grey"
    )


@pytest.mark.parametrize("palette", [DARK, LIGHT], ids=["dark", "light"])
def test_panel_shades_keep_their_colour_in_16_and_256_colours(palette):
    """TERM=xterm: a colour not to move must not turn into another colour's hue (red was SGR 33, yellow);
    256 colours: the four shades of a level are four colours (dimmed blue and green were both 23)."""
    for shade in (palette.piece, palette.piece_mid, palette.piece_dim):
        standard = {c: RichColor.parse(shade(c)).downgrade(ColorSystem.STANDARD).number for c in Color}
        eight_bit = {c: RichColor.parse(shade(c)).downgrade(ColorSystem.EIGHT_BIT).number for c in Color}
        assert len(set(eight_bit.values())) == 4, (shade.__name__, eight_bit)
        for c in Color:
            assert _hue(standard[c]) in (c.name.lower(), "grey"), (shade.__name__, c, standard[c])
    for c in Color:  # the panel of a colour that is not to move keeps its hue with 16 colours
        assert _hue(RichColor.parse(palette.piece_mid(c)).downgrade(ColorSystem.STANDARD).number) == c.name.lower()


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)])
async def test_light_theme_paints_every_cell(size):
    """--light on a dark terminal: no cell is left to the terminal's own (dark) background."""
    app = game_app(Shape.PENTO_L, theme="textual-light")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        strips = app.screen._compositor.render_strips()
        assert len(strips) == size[1]
        for strip in strips:
            assert strip.cell_length == size[0]
            for segment in strip:
                bg = segment.style.bgcolor if segment.style is not None else None
                assert bg is not None and bg.triplet is not None, segment
                assert sum(bg.triplet) / 3 > 128, (segment.text, bg)  # light, never the dark default


async def test_column_numbers_stand_free_at_normal_scale():
    app = game_app(Shape.PENTO_L)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        board = screen_of(app).query_one(Board)
        assert board.scale is Scale.NORMAL
        top, bottom = board.render_line(0).text, board.render_line(Scale.NORMAL.size[1] - 1).text
        assert "910" not in top and "1011" not in top and "1011" not in bottom
        numbers = {int(n) for n in top.split()} | {int(n) for n in bottom.split()}
        assert numbers == set(range(20))  # every column is numbered above or below the board
        for line in (top, bottom):
            assert all(len(n) <= 2 for n in line.split())


def test_analysis_pane_keeps_the_verdict_when_lines_are_few():
    best, played = parse_move("BLUE PENTO_W NONE false 2 13"), parse_move("BLUE TRIO_L NONE true 2 14")
    position = PositionAnalysis(4, 4, Color.BLUE, played, best, 17.3, 8.8, 8.5, Mark.MISTAKE, 136)
    analysis = GameAnalysis(AnalysisSettings(), "key", {4: position}, total=10)

    class Runner:
        settings = AnalysisSettings()
        running, error, preparing, ticks = True, "", "", 0

        def __init__(self) -> None:
            self.analysis = analysis

        def at(self, index: int):
            return analysis.positions.get(index)

    from model.replay import load_replay as load_model_replay

    state = next(s for s in load_model_replay(fixture_path(GAME1)).states if s.turn == 4)
    full = pane_text(Runner(), 4, state).plain.splitlines()
    assert len(full) == 6 and any(line.startswith("best") for line in full)
    for lines in (2, 3, 4):
        text = pane_text(Runner(), 4, state, max_lines=lines).plain.splitlines()
        assert len(text) == lines
        assert text[0].startswith("turn 4 · BLUE to move · value")
        assert text[1].startswith("played loss 8.5 ? · TRIO_L flipped @ (2,14)")  # the verdict first, no colour


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


async def test_live_viewer_says_it_follows_instead_of_paused():
    data = load_replay(fixture_path(GAME1))
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


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_season_is_on_screen(size):
    from cli.play import play_options
    from tui.launch import build_local_app

    app = build_local_app(play_options(["--season", "2027", "--opponent", "random"]))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        status = widget_lines(screen_of(app).query_one("#status"))
        assert status[0].startswith("2027") and "1/24" in status[0]


async def test_a_long_last_move_takes_two_lines_at_80x24():
    from model.moves import SetMove, describe_move

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
