"""Every colour of the TUI, for the dark and the light theme (no colour literal lives anywhere else).

Widgets styled by CSS use the theme variables in ``blokus.tcss``; the board, the shape panels and the
status lines are drawn as rich text and take their colours from a ``Palette`` here. Under ``NO_COLOR``
the palette keeps the four colours apart by brightness, and the board and the panels add letters and
patterns (``Palette.mono``).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.color import Color as RichColor

from blokus.model.pieces import Color

# Chosen to stay distinct on dark and light backgrounds and when reduced to 16 colours
# (blue, yellow, red, green keep their hue family).
PIECE_HEX: dict[Color, str] = {
    Color.BLUE: "#2f7fe0",
    Color.YELLOW: "#e8b610",
    Color.RED: "#e0403a",
    Color.GREEN: "#2eaa4a",
}
# Under NO_COLOR the terminal shows grey levels: Textual turns every colour into its luminance, and a terminal
# of 16 colours (TERM=xterm) has only four greys (black, bright black, white, bright white), one of which is the
# empty board. So the four colours get greys at least 40 apart that land on three different levels of 16 colours,
# the partners sharing one (opponents always differ), none on the empty board's. The letters on the fields keep
# all four apart where there is room for a glyph (every scale but the half-block board).
MONO_DARK: dict[Color, str] = {
    Color.BLUE: "#505050",  # bright black in 16 colours
    Color.RED: "#7d7d7d",  # bright black
    Color.GREEN: "#b9b9b9",  # white
    Color.YELLOW: "#f5f5f5",  # bright white
}
MONO_LIGHT: dict[Color, str] = {
    Color.BLUE: "#464646",  # bright black
    Color.RED: "#787878",  # bright black
    Color.GREEN: "#101010",  # black
    Color.YELLOW: "#b0b0b0",  # white
}
# the empty board's checkerboard under NO_COLOR: both fields on the background's level in 16 colours
MONO_EMPTY_DARK = ("#1c1c1c", "#262626")
MONO_EMPTY_LIGHT = ("#f5f5f5", "#e6e6e6")
# What the shades of a colour that is not to move (``Palette.piece_mid``) and of pieces that cannot be placed
# (``piece_dim``) are mixed towards: the colour's own dark (dark theme) or pale (light theme) hue, not the grey
# background, so that a reduced palette keeps them apart: with 16 colours (TERM=xterm) the shade of each colour
# stays in its hue (red must not turn into the dark yellow of SGR 33), with 256 the four shades stay four colours.
SHADE_DARK: dict[Color, str] = {
    Color.BLUE: "#000080",
    Color.YELLOW: "#808000",
    Color.RED: "#800000",
    Color.GREEN: "#008000",
}
SHADE_LIGHT: dict[Color, str] = {
    Color.BLUE: "#a0b8ff",
    Color.YELLOW: "#ffff80",
    Color.RED: "#ffa0a0",
    Color.GREEN: "#90ff90",
}
# Letters that name a colour where colour alone is not enough (NO_COLOR).
LETTER: dict[Color, str] = {Color.BLUE: "B", Color.YELLOW: "Y", Color.RED: "R", Color.GREEN: "G"}


def mix(a: str, b: str, t: float) -> str:
    """The colour ``t`` of the way from ``a`` to ``b``."""
    ca, cb = RichColor.parse(a).triplet, RichColor.parse(b).triplet
    assert ca is not None and cb is not None
    r, g, bl = (round(x + (y - x) * t) for x, y in zip(ca, cb, strict=True))
    return f"#{r:02x}{g:02x}{bl:02x}"


def readable_on(background: str) -> str:
    """Black or white, whichever reads better on the grey ``background`` (NO_COLOR)."""
    grey = RichColor.parse(background).triplet
    assert grey is not None
    return "#000000" if grey.green >= 0x80 else "#ffffff"


@dataclass(frozen=True)
class Palette:
    dark: bool
    empty_a: str
    empty_b: str
    label: str
    corner: str
    dim_text: str
    frame: str  # background of the coordinate labels around the board
    text: str
    good: str  # legal ghost, results
    bad: str  # errors, blocked ghost, the last second of the clock
    warn: str  # AI thinking, autoplay, "no corner contact"
    selected_bg: str  # the selected shape in a panel
    xml_in: str
    xml_out: str
    mono: bool = False  # NO_COLOR: letters and patterns as well

    def piece(self, color: Color) -> str:
        if self.mono:
            return (MONO_DARK if self.dark else MONO_LIGHT)[color]
        return PIECE_HEX[color]

    def piece_text(self, color: Color) -> str:
        """A colour name written in its colour: yellow is darkened on the light theme to stay readable."""
        if not self.dark and not self.mono and color is Color.YELLOW:
            return mix(PIECE_HEX[color], "#000000", 0.4)
        return self.piece(color)

    def on_piece(self, color: Color) -> str:
        """Text drawn on a field of ``color`` (the letters under NO_COLOR, the last-move marker)."""
        if self.mono:
            return readable_on(self.piece(color))
        return "#000000" if color in (Color.YELLOW, Color.GREEN) else "#ffffff"

    def piece_dim(self, color: Color) -> str:
        """A colour whose pieces are shown greyed out (shape panel)."""
        if self.mono:
            return mix(self.piece(color), self.empty_a, 0.65)
        return mix(self.piece_mid(color), self.empty_a, 0.5)

    def piece_mid(self, color: Color) -> str:
        """Pieces of a colour that is not to move (panel greyed out a little)."""
        if self.mono:
            return mix(self.piece(color), self.empty_a, 0.35)
        return mix(self.piece(color), (SHADE_DARK if self.dark else SHADE_LIGHT)[color], 0.5 if self.dark else 0.4)

    def ghost_fit(self, color: Color) -> str:
        return mix(self.piece(color), self.empty_a, 0.55)

    def ghost_legal(self, color: Color) -> str:
        return mix(self.piece(color), "#ffffff", 0.45)

    def last_move(self, color: Color) -> str:
        """A field of the last move at HALF scale (no room for a marker glyph): a lighter shade."""
        return mix(self.piece(color), "#ffffff", 0.35)

    def on_ghost(self, color: Color) -> str:
        """The brackets of a legal ghost."""
        return readable_on(self.ghost_legal(color)) if self.mono else "#000000"

    @property
    def blocked_bg(self) -> str:
        # under NO_COLOR dark red would turn as dark as the empty board
        return "#8c8c8c" if self.mono else "#7a1010"

    @property
    def blocked_fg(self) -> str:
        return "#000000" if self.mono else "#ffb0b0"

    @property
    def badge(self) -> tuple[str, str]:
        """Foreground and background of a badge (AUTOPILOT, VIEW, OUT)."""
        return "#000000", "#e8b610"

    def as_mono(self) -> Palette:
        empty_a, empty_b = MONO_EMPTY_DARK if self.dark else MONO_EMPTY_LIGHT
        return Palette(**{**self.__dict__, "mono": True, "empty_a": empty_a, "empty_b": empty_b})


DARK = Palette(
    True,
    empty_a="#1f2329",
    empty_b="#272c33",
    label="#8a94a3",
    corner="#c8ccd2",
    dim_text="#5c6570",
    frame="#15181c",
    text="#e0e0e0",
    good="#40c060",
    bad="#ff6060",
    warn="#e8b610",
    selected_bg="#4a5260",
    xml_in="#e0e0e0",
    xml_out="#9fd3ff",
)
LIGHT = Palette(
    False,
    empty_a="#f4f5f7",
    empty_b="#e3e6ea",
    label="#5a6270",
    corner="#1f2329",
    dim_text="#a0a7b0",
    frame="#cfd4da",
    text="#1f2329",
    good="#1d7a35",
    bad="#c0201a",
    warn="#8a6a00",
    selected_bg="#b8c0cc",
    xml_in="#1f2329",
    xml_out="#0b4f8a",
)


# Analysis marks and the chart (tui/analysis_view.py, tui/chart.py).
MISTAKE = "#e8b610"  # "?" and the progress bar
BLUNDER = "#ff5050"  # "??" and failures
CHART_EVAL, CHART_POINTS = "#e8b610", "#b0b8c4"
CHART_CURSOR_DARK, CHART_CURSOR_LIGHT = "#3a4250", "#c8ccd2"
CHART_GRID = "#505860"


def palette_for(app) -> Palette:
    """The palette of the app's current theme (dark before the app runs); the mono variant under NO_COLOR."""
    try:
        pal = DARK if app.current_theme.dark else LIGHT
        return pal.as_mono() if getattr(app, "no_color", False) else pal
    except Exception:  # not mounted yet
        return DARK
