"""A team's program as the opponent of a game in the terminal (``blokus --opponent cmd:…``): ``ProgramSeat``, what
the game screen shows of it (no Textual: its name, its move times, its moves as they arrive, why it lost), and
``ProgramLog``, the pane with its output (its stderr, where a team's client writes its debug lines)."""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from blokus.model.moves import describe_move
from blokus.model.pieces import Team
from blokus.model.result import EndTexts
from blokus.tui.colors import palette_for
from blokus.tui.layout import FOOTER, PaneSwitched
from blokus.tui.session import Feedback, GameSession

if TYPE_CHECKING:  # net.external loads the compiled engine's modules: only games against a program need it
    from blokus.ai.arena.verdict import HostedOutcome
    from blokus.net.external import HostedGame, Program

PANE_HEIGHT = 10  # lines with the border, where the terminal has them
PANE_MIN_HEIGHT = 4  # below this the pane is not worth its lines: it stays closed (the board first)
POLL_S = 0.3  # how often the pane and the move times follow the program
JUDGE_WAIT_S = 30.0  # after the game: the longest wait for the program's end before the dialog comes anyway

PROGRAM_LOG_BINDING = Binding("e", "program_log", "Program log", tooltip="pane with the cmd: opponent's stderr on/off")
PROGRAM_KEY_WIDTH = 92  # columns from which the footer has room for "e Program log" beside the keys of playing


def fit_program_key(screen: Screen, program: bool) -> None:
    """The program's log key (a game against a ``program``) in the screen's footer only where the footer has room
    for it beside the keys of playing: below ``PROGRAM_KEY_WIDTH`` columns it would be cut to "e P" (it works all
    the same, and ? lists it)."""
    shown = screen.app.size.width >= PROGRAM_KEY_WIDTH
    bindings, key = screen._bindings, PROGRAM_LOG_BINDING.key
    if program and [b.show for b in bindings.key_to_bindings.get(key, [])] != [shown]:
        bindings.key_to_bindings[key] = [replace(PROGRAM_LOG_BINDING, show=shown)]
        screen.refresh_bindings()  # the footer lays its keys out anew


class ProgramSeat:
    """The program of ``team`` in ``hosted`` (``label``: its name); ``watch``: our AI plays it (--watch).

    After the game the judgement (``outcome``) needs the program stopped (its exit code): ``ready`` says whether
    the end dialog may come, ``judge`` waits for it in a job of the screen (at most ``JUDGE_WAIT_S``)."""

    def __init__(self, hosted: HostedGame, team: Team, label: str, *, watch: bool = False) -> None:
        self.hosted, self.team, self.label = hosted, team, label
        self.autopilot_first = watch  # (not `watch`: that is a method of every Textual node)
        self.outcome: HostedOutcome | None = None
        self.judging: float | None = None  # since when the program is being stopped after the game
        self.judge_gave_up = False
        self._moves_seen = 0
        self._moves_told = 0

    @property
    def program(self) -> Program | None:
        return self.hosted.programs.get(self.team)

    def times_text(self) -> str:
        times = [t * 1000 for t in self.hosted.times(self.team)]
        if not times:
            return ""
        return f"last {times[-1]:.0f} ms · mean {statistics.fmean(times):.0f} · max {max(times):.0f} ms"

    def moves_changed(self) -> bool:
        """A move arrived since the last look (the status's move times follow)."""
        moves = len(self.hosted.moves)
        changed, self._moves_seen = moves != self._moves_seen, moves
        return changed

    def after_news(self, session: GameSession, own_team: Team | None) -> None:
        """After each piece of the server's news: the program's name, our AI on (--watch, once), and the
        program's move with its time once it has arrived on our side (said once)."""
        s = session
        s.names[self.team] = self.label
        if own_team is not None and self.autopilot_first:
            self.autopilot_first = False  # once: o switches it off like any autopilot
            s.autopilot.add(own_team)  # --watch: our AI plays the program
            s.begin_turn()
        own = [m for m in list(self.hosted.moves) if m.team == self.team and m.latency is not None]
        last = own[-1] if own else None
        if (
            last is not None
            and len(own) > self._moves_told
            and last.move is not None
            and last.latency is not None
            and s.state.turn > last.turn
        ):
            self._moves_told = len(own)  # its move has arrived on our side: say it once, with its time
            move = describe_move(last.move)
            s.feedback = Feedback(f"{self.label}: {move} in {last.latency * 1000:.0f} ms ({self.times_text()})")

    def waiting_text(self, session: GameSession) -> str | None:
        """The status's last line while the program thinks (None: it is not the program's turn)."""
        if session.state.team != self.team:
            return None
        times = self.times_text()
        return f"{self.label} thinking …" + (f" ({times})" if times else "")

    # --- the end ----------------------------------------------------------------------------------------

    def ready(self) -> bool:
        """The judgement is known, or was waited for long enough (then the dialog tells the server's result)."""
        if self.outcome is None:
            self.outcome = self.hosted.wait(0)
        return self.outcome is not None or self.judge_gave_up

    def start_judging(self) -> bool:
        """True the first time: the screen then runs ``judge`` in a job."""
        if self.judging is not None:
            return False
        self.judging = time.monotonic()
        return True

    async def judge(self) -> None:
        self.outcome = await asyncio.to_thread(self.hosted.wait, JUDGE_WAIT_S)
        self.judge_gave_up = self.outcome is None  # the dialog then tells the server's result alone

    def judging_text(self) -> str | None:
        """While the program is being stopped: said, with the seconds it takes (the poll repeats it)."""
        if self.judging is None or self.outcome is not None:
            return None
        waited = time.monotonic() - self.judging
        return f"game over — stopping {self.label} …" + (f" {waited:.0f} s" if waited >= 1 else "")

    def end_texts(self, texts: EndTexts, session: GameSession) -> EndTexts:
        """The end dialog's texts with the one line of why a side lost and where the program's output is."""
        title, lines = texts.title, list(texts.lines)
        outcome = self.outcome
        if outcome is not None and outcome.forfeit and outcome.offender is not None:
            who = self.label if outcome.offender == self.team else "your side"
            if session.final_result() is None and outcome.result is not None:  # it never played
                title = f"Game over — {who} did not play"
            lines.insert(0, f"{who}: {outcome.forfeit}")
        program = self.program
        if program is not None:
            lines.append(f"Its output: {program.err_path} (stderr), {program.out_path.name} (stdout)")
        return replace(texts, title=title, lines=tuple(escape(line) for line in lines))  # stderr is text, not markup

    async def close(self) -> None:
        await asyncio.to_thread(self.hosted.close)


class ProgramLog(Static):
    """The last lines of the program's stderr, newest at the bottom; the lines come cleaned of control
    characters (``net.external.clean_line``), so they are shown as plain text, never as markup."""

    DEFAULT_CSS = """
    ProgramLog { display: none; height: 10; width: 100%; border: round $panel-lighten-2; padding: 0 1; }
    ProgramLog.shown { display: block; }
    """

    def __init__(self, title: str, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.border_title = title
        self.lines: list[str] = []

    @property
    def wanted(self) -> bool:
        return self.has_class("shown")

    @property
    def has_lines(self) -> bool:
        return self.has_class("shown")

    def toggle(self) -> None:
        """``e``: the pane on or off (the layout fits itself anew; no room below the board is said)."""
        self.toggle_class("shown")
        self.post_message(PaneSwitched(self))

    def fit(self, width: int, room: int) -> int:
        """Lines of the pane below the board (0: not shown, or fewer than ``PANE_MIN_HEIGHT`` of the ``room``
        the board leaves: it closes, the board first)."""
        if not self.has_class("shown"):
            return 0
        lines = min(PANE_HEIGHT, room)
        if lines < PANE_MIN_HEIGHT:
            self.remove_class("shown")
            return 0
        self.styles.height = lines
        return lines

    def refusal(self, height: int, min_centre_lines: int) -> str:
        need = FOOTER + min_centre_lines + PANE_MIN_HEIGHT
        return f"The program's log needs a terminal of at least {need} lines (this one has {height})."

    def follow(self, seat: ProgramSeat) -> None:
        """The program's newest lines and move times, when the pane is shown."""
        program = seat.program
        if self.has_class("shown") and program is not None:
            times = seat.times_text()
            self.border_title = f"{seat.label} · stderr" + (f" · {times}" if times else "") + " · e hides"
            self.show_lines(program.stderr_tail(200), str(program.err_path))

    def show_lines(self, lines: list[str], note: str = "") -> None:
        self.lines = list(lines)
        room = max(1, self.content_size.height or PANE_HEIGHT - 2)
        shown = lines[-room:]
        text = Text(
            "\n".join(shown) if shown else "(nothing on stderr yet)",
            Style(color=palette_for(self.app).text) if shown else Style(color=palette_for(self.app).label),
        )
        self.border_subtitle = note
        self.update(text)
