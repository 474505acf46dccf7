"""The status lines above the board of a game: round and score, who is to move, the points of each
colour, the piece being placed. Lines never wrap (``StatusBar``): below ``WIDE`` columns the short forms
are used, and a part that does not fit moves to the next line instead of being cut."""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text

from blokus.model.moves import describe_piece
from blokus.model.pieces import Color, Team
from blokus.tui.colors import Palette
from blokus.tui.session import GameSession, GhostStatus, ghost_word

WIDE = 44  # columns from which the long forms fit


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` columns (at least 8) with "…"."""
    width = max(width, 8)
    return text if len(text) <= width else text[: width - 1] + "…"


def first_that_fits(width: int, *forms: str) -> str:
    """The first of ``forms`` (longest first) that fits ``width`` columns; the last one cut to fit if none."""
    return next((form for form in forms if len(form) <= width), fit(forms[-1], width))


def pack(parts: list[Text], width: int, sep: str = " · ") -> list[Text]:
    """The parts joined by ``sep`` on as few lines of ``width`` columns as possible (a part is never split)."""
    lines: list[Text] = []
    for part in parts:
        if lines and len(lines[-1]) + len(sep) + len(part) <= width:
            lines[-1] = Text.assemble(lines[-1], sep, part)
        else:
            lines.append(part.copy())
    return lines


@dataclass(frozen=True)
class StatusContext:
    """What the status lines need besides the session."""

    palette: Palette
    width: int  # columns of one line
    clock_left: float | None = None  # seconds left on the server's clock for the human's move
    waiting: str = ""  # the last line while another player is to move
    lines: int | None = None  # at most this many lines (beside the letter board): who is to move, then what goes on


def score_line(s: GameSession, width: int) -> Text:
    st = s.shown
    one, two = st.team_points(Team.ONE), st.team_points(Team.TWO)
    r, limit, season = min(st.round, st.season.round_limit), st.season.round_limit, st.season.name
    rounds = f"Round {r}/{limit}"
    score = f"ONE {one} : {two} TWO"  # always whole: the turn goes first where the column is narrow
    # the season (its rules differ: first piece, round limit) stays on screen down to the narrowest column
    return Text(
        first_that_fits(
            width,
            f"{season} · {rounds} · turn {st.turn}   {score}",
            f"{season} · {rounds} · t {st.turn}   {score}",
            f"{season} R{r}/{limit} · t {st.turn}   {score}",
            f"{season} R{r}/{limit}   {score}",
            f"{rounds}   {score}",
            score,
        ),
        Style(bold=True),
    )


def to_move_line(s: GameSession, ctx: StatusContext) -> Text:
    st, pal = s.shown, ctx.palette
    t = Text()
    end = s.end_texts() if st.is_over or s.is_live else None
    if end is not None:
        t.append(fit(end.short, ctx.width), Style(bold=True))
        return t
    color = st.color
    team = color.team
    rest = f" (team {team.name}) to move" if ctx.width >= WIDE else " to move"
    extras = (11 if team in s.autopilot else 0) + (10 if ctx.clock_left is not None else 0)
    name_room = ctx.width - len(rest) - len(color.name) - 3 - extras
    t.append(fit(s.names.get(team, team.name), name_room) + " — ")
    t.append(color.name, Style(color=pal.piece_text(color), bold=True))
    t.append(rest)
    if team in s.autopilot:
        fg, bg = pal.badge
        t.append("  AUTOPILOT", Style(color=fg, bgcolor=bg, bold=True))
    if ctx.clock_left is not None:
        left = max(0.0, ctx.clock_left)
        t.append(f"  ⏱ {left:.1f} s", Style(color=pal.bad if left < 1 else pal.text, bold=True))
    return t


def points_line(s: GameSession, ctx: StatusContext) -> Text:
    st, pal = s.shown, ctx.palette
    t = Text()
    for i, color in enumerate(Color):
        if i:
            t.append(" · ")
        name = color.name if ctx.width >= WIDE else color.name[0]
        t.append(f"{name} {st.points(color)}", Style(color=pal.piece_text(color)))
    return t


def activity_lines(s: GameSession, ctx: StatusContext) -> list[Text]:
    """What is going on now: the view is not live, the ghost and its state, the AI, waiting …"""
    pal = ctx.palette
    if not s.is_live:
        fg, bg = pal.badge
        shown, last = s.shown_index, len(s.timeline) - 1
        text = first_that_fits(
            ctx.width,
            f"VIEW state {shown} / {last} — not live; g returns",
            f"VIEW {shown}/{last} — not live; g returns",
            f"VIEW {shown}/{last} — g returns",
        )
        return [Text(text, Style(color=fg, bgcolor=bg, bold=True))]
    if s.ai_thinking and s.is_human_turn():  # m or a hint: the ghost waits for the AI's answer
        return [Text("AI thinking…", Style(color=pal.warn, bold=True))]
    if s.ghost is not None and s.is_human_turn():
        g = s.ghost
        piece = describe_piece(g.shape, g.rotation, g.flipped)
        gs = s.placing.status()
        if gs is None:
            return [Text(fit(f"{piece} @ ({g.x},{g.y})", ctx.width))]
        colour = {GhostStatus.LEGAL: pal.good, GhostStatus.BLOCKED: pal.bad}.get(gs[0], pal.warn)
        word = ghost_word(*gs)
        # one line at every width: the piece's description gives way, never the legality word
        room = ctx.width - len(word) - 2
        where = next(
            (
                w
                for w in (
                    f"{piece} @ ({g.x},{g.y})",
                    f"{piece} ({g.x},{g.y})",
                    f"{g.shape.name} ({g.x},{g.y})",
                    g.shape.name,
                )
                if len(w) <= room
            ),
            "",
        )
        return [Text.assemble(where, "  " if where else "", (word, Style(color=colour, bold=True)))]
    if s.is_human_turn():
        return [
            Text(
                first_that_fits(ctx.width, "no piece selected — tab/n picks one", "no piece — tab/n picks one"),
                Style(color=pal.label),
            )
        ]
    if s.ai_thinking:
        return [Text("AI thinking…", Style(color=pal.warn, bold=True))]
    if s.ended:
        keys = ["A analyse" if s.can_analyse() else "", "N new game" if s.local else "", "ctrl+s save", "q quit"]
        short = [key.replace(" game", "") for key in keys]
        line = first_that_fits(ctx.width, " · ".join(k for k in keys if k), " · ".join(k for k in short if k))
        if len(line) <= ctx.width and not line.endswith("…"):
            return [Text(line, Style(color=pal.label))]
        return pack([Text(k, Style(color=pal.label)) for k in short if k], ctx.width)  # two lines, none cut
    return [Text(ctx.waiting, Style(color=pal.label))] if ctx.waiting else []


def waiting_for(s: GameSession) -> str:
    """The status's last line while another player is to move."""
    team = s.state.color.team
    return f"waiting for {fit(s.names.get(team, team.name), 20)} …"


def game_status(s: GameSession, ctx: StatusContext) -> Text:
    if ctx.lines is not None:  # the panels' headers show the points; the round and the score give way
        return Text("\n").join([to_move_line(s, ctx), *activity_lines(s, ctx)][: ctx.lines])
    lines = [score_line(s, ctx.width), to_move_line(s, ctx), points_line(s, ctx), *activity_lines(s, ctx)]
    return Text("\n").join(lines)
