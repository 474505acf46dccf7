"""Playing against a team's own program: ``blokus --opponent cmd:./start.sh`` (``--watch``: it plays our AI).

The program plays on an embedded server (``net.external.HostedGame``: started as the contest starts it,
with the official time limits for its seat; the human's seat has none); this screen is the network game
screen joined to that server with the other reservation. Beside the usual game it shows the program's name
and its move times (the status while it thinks, the line below the board after its move), the tail of its
stderr in a pane (``e``), and at the end the one line of why it lost (illegal move with the rule, timeout,
crash with its exit code and last stderr line, …) with the path of its output.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding, BindingType

from ai.base import Player
from ai.players import default_player
from model.exits import fail
from model.moves import describe_move
from model.pieces import Team
from model.result import EndTexts
from model.season import DEFAULT_SEASON
from net.external import HOST, HostedGame, Outcome, ProgramError, Seat, check_program, program_command
from net.rooms import Timeouts
from tui.app import BlokusApp, run_app
from tui.game_screen import SCREEN_BINDINGS
from tui.jobs import start_job
from tui.layout import FOOTER
from tui.network import NetworkGameScreen, NetworkOptions
from tui.placing import Feedback
from tui.program_pane import PANE_HEIGHT, PANE_MIN_HEIGHT, ProgramLog
from tui.widgets import XmlPane

POLL_S = 0.3  # how often the pane and the move times follow the program
JUDGE_WAIT_S = 30.0  # after the game: the longest wait for the program's end before the dialog comes anyway


def program_log_dir() -> Path:
    """Where the TUI keeps the output of cmd: opponents: $XDG_CACHE_HOME/blokus-tui/programs."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "blokus-tui" / "programs"


class ExternalGameScreen(NetworkGameScreen):
    """A game against a program on an embedded server (see the module docstring)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *SCREEN_BINDINGS,
        Binding("e", "program_log", "Program log", tooltip="pane with the cmd: opponent's stderr on/off"),
    ]

    def __init__(
        self,
        hosted: HostedGame,
        program_team: Team,
        label: str,
        *,
        player: Player,
        hint_player: Player,
        move_time_ms: int = 1000,
        name: str | None = None,
        watch: bool = False,
        save_replay: Callable | None = None,
    ) -> None:
        own = program_team.opponent
        super().__init__(
            NetworkOptions(
                HOST,
                hosted.port,
                reservation=hosted.reservations[own],
                player=player,
                hint_player=hint_player,
                move_time_ms=move_time_ms,
                name=name,
                team=own,
                clock_limit=None,
                save_replay=save_replay,
                season=hosted.season,
            )
        )
        self.title_text = f"Blokus against {label}"
        self.hosted = hosted
        self.program_team = program_team
        self.label = label
        self.autopilot_first = watch  # --watch (not `watch`: that is a method of every Textual node)
        self.outcome: Outcome | None = None
        self._judging: float | None = None  # since when the program is being stopped after the game
        self._judge_gave_up = False
        self._moves_seen = 0
        self._moves_told = 0
        self._followed = False

    def compose(self) -> ComposeResult:
        yield from super().compose()
        # the pane's timer follows the program (no on_mount here: Textual calls every class's handler)
        yield ProgramLog(
            f"{self.label} · stderr (e hides)", follow=self._follow_program, every=POLL_S, id="program-log"
        )

    # --- the program ----------------------------------------------------------------------------------

    def _program(self):
        return self.hosted.programs.get(self.program_team)

    def times_text(self) -> str:
        times = [t * 1000 for t in self.hosted.times(self.program_team)]
        if not times:
            return ""
        return f"last {times[-1]:.0f} ms · mean {statistics.fmean(times):.0f} · max {max(times):.0f} ms"

    def _follow_program(self) -> None:
        self._tell_judging()
        if not self._followed:  # the first look: on a tall terminal its log, not the XML, is the open pane
            self._followed = True
            xml = self.query_one(XmlPane)
            if xml.has_class("shown"):
                xml.remove_class("shown")
                self.action_program_log()
                return
        moves = list(self.hosted.moves)
        if len(moves) != self._moves_seen:
            self._moves_seen = len(moves)
            self.refresh_board()
        pane = self.query_one(ProgramLog)
        program = self._program()
        if pane.has_class("shown") and program is not None:
            times = self.times_text()
            pane.border_title = f"{self.label} · stderr" + (f" · {times}" if times else "") + " · e hides"
            pane.show_lines(program.stderr_tail(200), str(program.err_path))

    def handle_server_event(self, event: object) -> None:
        super().handle_server_event(event)
        s = self.session
        s.names[self.program_team] = self.label
        if self.my_team is not None and self.autopilot_first:
            self.autopilot_first = False  # once: o switches it off like any autopilot
            s.autopilot.add(self.my_team)  # --watch: our AI plays the program
            s.begin_turn()
        own = [m for m in list(self.hosted.moves) if m.team == self.program_team and m.latency is not None]
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

    def waiting_text(self) -> str:
        if self.session.state.current_team == self.program_team:
            times = self.times_text()
            return f"{self.label} thinking …" + (f" ({times})" if times else "")
        return super().waiting_text()

    # --- the log pane -----------------------------------------------------------------------------------

    def action_program_log(self) -> None:
        self._followed = True  # the user chose: the pane's first look (a timer tick later) must not undo it
        pane = self.query_one(ProgramLog)
        pane.toggle_class("shown")
        wanted = pane.has_class("shown")
        width, height = self.app.size
        self.fit_to(width, height)
        if wanted and not pane.has_class("shown"):
            need = FOOTER + self.min_centre_lines() + PANE_MIN_HEIGHT
            self.notify(
                f"The program's log needs a terminal of at least {need} lines (this one has {height}).",
                severity="warning",
            )
        self._follow_program()

    def reserved_lines(self, width: int, height: int) -> int:
        reserved = super().reserved_lines(width, height)
        panes = self.query(ProgramLog)
        if not panes or not panes.first().has_class("shown"):
            return reserved
        pane = panes.first()
        lines = min(PANE_HEIGHT, height - FOOTER - reserved - self.min_centre_lines())
        if lines < PANE_MIN_HEIGHT:  # the board first
            pane.remove_class("shown")
            return reserved
        pane.styles.height = lines
        return reserved + lines

    # --- the end ----------------------------------------------------------------------------------------

    def check_end(self) -> None:
        s = self.session
        if s.ended and self.outcome is None:
            self.outcome = self.hosted.wait(0)
        if s.ended and not self._end_shown and self.outcome is None and not self._judge_gave_up:
            if self._judging is None:  # the judgement needs the program stopped (its exit code): a moment
                self._judging = time.monotonic()
                self._tell_judging()
                start_job(self, self._await_judgement, group="judge")
            return
        super().check_end()

    def _tell_judging(self) -> None:
        """While the program is being stopped: say so, with the seconds it takes (the poll timer repeats it)."""
        if self._judging is not None and self.outcome is None:
            waited = time.monotonic() - self._judging
            self.say(f"game over — stopping {self.label} …" + (f" {waited:.0f} s" if waited >= 1 else ""))

    async def _await_judgement(self) -> None:
        self.outcome = await asyncio.to_thread(self.hosted.wait, JUDGE_WAIT_S)
        self._judge_gave_up = self.outcome is None  # the dialog then tells the server's result alone
        self.after_change()

    def end_texts(self) -> EndTexts | None:
        texts = super().end_texts()
        if texts is None:
            return None
        title, lines = texts.title, list(texts.lines)
        outcome = self.outcome
        if outcome is not None and outcome.forfeit and outcome.offender is not None:
            who = self.label if outcome.offender == self.program_team else "your side"
            if self.session.final_result() is None and outcome.result is not None:  # it never played
                title = f"Game over — {who} did not play"
            lines.insert(0, f"{who}: {outcome.forfeit}")
        program = self._program()
        if program is not None:
            lines.append(f"Its output: {program.err_path} (stderr), {program.out_path.name} (stdout)")
        return replace(texts, title=title, lines=tuple(escape(line) for line in lines))  # stderr is text, not markup

    async def leave(self) -> None:
        await asyncio.to_thread(self.hosted.close)
        await super().leave()


def external_timeouts(args: argparse.Namespace) -> Timeouts:
    """The program's limits: the season's, a soft limit of ``--time-limit`` seconds, none (``--no-timeout``)."""
    season = args.season or DEFAULT_SEASON
    official = Timeouts.of(season)
    if args.time_limit is None:
        return Timeouts(None, None)
    if abs(args.time_limit - official.soft) < 1e-9:
        return official
    return Timeouts(args.time_limit, max(args.time_limit, official.hard or 0.0))


def start_external_game(args: argparse.Namespace) -> tuple[HostedGame, Team]:
    """The embedded server and the program for ``blokus --opponent cmd:…`` (ProgramError: one line)."""
    season = args.season or DEFAULT_SEASON
    own = args.team or Team.ONE
    label = args.opponent.label  # a spec (``cli.play`` parses the names)
    seats = {
        own: Seat(args.name or ("AI" if args.watch else "you"), None, can_timeout=False),  # "you": a human only
        own.opponent: Seat(label, program_command(args.opponent)),
    }
    hosted = HostedGame(
        (seats[Team.ONE], seats[Team.TWO]),
        season=season,
        timeouts=external_timeouts(args),
        start_piece=args.start_piece,
        seed=args.seed,
        log_dir=program_log_dir(),
        log_prefix=f"tui-{datetime.now():%Y-%m-%d_%H-%M-%S}",
    )
    hosted.start()
    return hosted, own.opponent


def external_app(
    hosted: HostedGame,
    program_team: Team,
    *,
    player: Player,
    hint_player: Player,
    move_time_ms: int = 1000,
    name: str | None = None,
    watch: bool = False,
    theme: str = "textual-dark",
    save_replay: Callable | None = None,
) -> BlokusApp:
    label = hosted.seats[program_team].name
    return BlokusApp(
        lambda: ExternalGameScreen(
            hosted,
            program_team,
            label,
            player=player,
            hint_player=hint_player,
            move_time_ms=move_time_ms,
            name=name,
            watch=watch,
            save_replay=save_replay,
        ),
        theme=theme,
    )


def build_external_app(args: argparse.Namespace, save_replay: Callable | None = None) -> tuple[BlokusApp, HostedGame]:
    hosted, program_team = start_external_game(args)
    ai = args.ai or default_player()
    player = ai.build(args.seed)
    hint = ai.build(None if args.seed is None else args.seed + 7)
    app = external_app(
        hosted,
        program_team,
        player=player,
        hint_player=hint,
        move_time_ms=args.move_time or 1500,
        name=args.name or (f"AI {ai.name}" if args.watch else None),  # --watch: our AI plays, not "you"
        watch=args.watch,
        theme="textual-light" if args.light else "textual-dark",
        save_replay=save_replay,
    )
    return app, hosted


def play_external(args: argparse.Namespace, save_replay: Callable | None = None) -> int:
    """``blokus --opponent cmd:COMMAND``: one game against the program; it is stopped when the app ends."""
    try:
        check_program(args.opponent)
        app, hosted = build_external_app(args, save_replay)
    except (ProgramError, ValueError) as exc:
        return fail("blokus play", str(exc))
    try:
        return run_app(app, "blokus play")
    finally:
        hosted.close()
