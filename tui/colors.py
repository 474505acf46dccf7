"""The palette: the four piece colours and the board, for dark and light themes."""

from __future__ import annotations

from dataclasses import dataclass

from rich.color import Color as RichColor
from rich.style import Style

from model.pieces import Color

# Chosen to stay distinct on dark and light backgrounds and when reduced to 16 colours
# (blue, yellow, red, green keep their hue family).
PIECE_HEX: dict[Color, str] = {
    Color.BLUE: "#2f7fe0",
    Color.YELLOW: "#e8b610",
    Color.RED: "#e0403a",
    Color.GREEN: "#2eaa4a",
}


def _mix(a: str, b: str, t: float) -> str:
    ca, cb = RichColor.parse(a).triplet, RichColor.parse(b).triplet
    assert ca is not None and cb is not None
    r, g, bl = (round(x + (y - x) * t) for x, y in zip(ca, cb, strict=True))
    return f"#{r:02x}{g:02x}{bl:02x}"


@dataclass(frozen=True)
class Palette:
    dark: bool
    empty_a: str
    empty_b: str
    label: str
    corner: str
    dim_text: str
    frame: str  # background of the coordinate labels around the board

    def piece(self, color: Color) -> str:
        return PIECE_HEX[color]

    def piece_dim(self, color: Color) -> str:
        """A colour whose pieces are shown greyed out (shape panel)."""
        return _mix(PIECE_HEX[color], self.empty_a, 0.65)

    def piece_mid(self, color: Color) -> str:
        """Pieces of a colour that is not to move (panel greyed out a little)."""
        return _mix(PIECE_HEX[color], self.empty_a, 0.35)

    def ghost_fit(self, color: Color) -> str:
        return _mix(PIECE_HEX[color], self.empty_a, 0.55)

    def ghost_legal(self, color: Color) -> str:
        return _mix(PIECE_HEX[color], "#ffffff", 0.45)


DARK = Palette(True, empty_a="#1f2329", empty_b="#272c33", label="#8a94a3", corner="#c8ccd2", dim_text="#5c6570",
               frame="#15181c")
LIGHT = Palette(False, empty_a="#f4f5f7", empty_b="#e3e6ea", label="#5a6270", corner="#1f2329", dim_text="#a0a7b0",
                frame="#cfd4da")

BLOCKED_BG = "#7a1010"
BLOCKED_FG = "#ffb0b0"


def style(fg: str | None = None, bg: str | None = None, bold: bool = False) -> Style:
    return Style(color=fg, bgcolor=bg, bold=bold)
