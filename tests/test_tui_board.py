"""tui/board.py, tui/placing.py and tui/colors.py: the board as drawn — pieces land where they fit, colours
that stay readable in 16 and 256 colours and in the light theme, free-standing column numbers, the ghost's
legality word, moves named as the board shows them, blank lines styled for NO_COLOR."""

from __future__ import annotations

import pytest
from rich.color import Color as RichColor
from rich.color import ColorSystem

from blokus.model.moves import MoveMistake, SetMove
from blokus.model.pieces import Color, Rotation, Shape, Team
from blokus.model.season import SEASON_2021, SEASON_2027
from blokus.tui.board import Board, Scale
from blokus.tui.colors import DARK, LIGHT
from blokus.tui.session import GameSession, Ghost, GhostStatus, ghost_word
from blokus.tui.status import StatusContext, activity_lines
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


def _hue(number: int) -> str:
    return {1: "red", 9: "red", 2: "green", 10: "green", 3: "yellow", 11: "yellow", 4: "blue", 12: "blue"}.get(
        number, "grey"
    )


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


@pytest.mark.parametrize("season, word", [(SEASON_2021, "not in a board corner"), (SEASON_2027, "not on the border")])
@pytest.mark.parametrize("width", [28, 34, 44, 60, 90])
def test_the_ghost_always_carries_its_legality_word(season, word, width):
    s = GameSession.new_local(Shape.PENTO_S, season=season)
    s.ghost = Ghost(Shape.PENTO_S, Rotation.LEFT, True, 9, 9)  # a first move in the middle of the board
    assert s.placing.status()[0] is GhostStatus.NO_CONTACT
    (line,) = activity_lines(s, StatusContext(DARK, width))
    assert len(line) <= width and line.plain.endswith(word)
    if width >= 60:
        assert line.plain.startswith("PENTO_S 270° flipped @ (9,9)")
    elif width >= 44:
        assert line.plain.startswith("PENTO_S (9,9)")


def test_the_words_of_the_ghost():
    assert ghost_word(GhostStatus.LEGAL, None) == "legal"
    assert ghost_word(GhostStatus.NO_CONTACT, MoveMistake.NO_SHARED_CORNER) == "no corner contact"
    assert ghost_word(GhostStatus.BLOCKED, MoveMistake.OBSTRUCTED) == "not placeable"
    s = GameSession.new_local(Shape.MONO, season=SEASON_2021)
    play = s.state.legal_moves()[0]
    s.ghost = Ghost(Shape.MONO, Rotation.RIGHT, True, play.x, play.y)  # turned and flipped: the same cells
    (line,) = activity_lines(s, StatusContext(DARK, 34))
    assert line.plain == f"MONO @ ({play.x},{play.y})  legal"


def test_a_move_is_named_without_turns_that_change_nothing():
    from blokus.model.moves import describe_move

    assert describe_move(SetMove(Team.ONE.colors[0], Shape.PENTO_I, Rotation.LEFT, True, 3, 4)) == (
        "BLUE PENTO_I 90° @ (3,4)"
    )
    assert describe_move(SetMove(Team.ONE.colors[0], Shape.PENTO_S, Rotation.LEFT, True, 3, 4)) == (
        "BLUE PENTO_S 270° flipped @ (3,4)"
    )


def test_blank_board_lines_carry_a_style_for_no_color():
    """NO_COLOR's monochrome filter reads every segment's colour: a blank line without a style crashed the
    game against a cmd: program at 120×40 (``AttributeError: 'NoneType' object has no attribute 'color'``)."""
    from blokus.tui.board import Board, Scale

    for scale in Scale:
        board = Board()
        board.scale = scale
        strip = board.render_line(scale.size[1] + 5)  # below the board: a blank line
        assert all(segment.style is not None for segment in strip)
