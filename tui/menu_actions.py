"""The game's menu (composed into ``GameScreen``): help, save, open a replay, analyse the finished game, new game,
quit (asking, and offering to save, while a game is in progress), the end dialog and its choice.

The screen keeps the keys (``SCREEN_BINDINGS``) and hands each to the menu; the menu opens its dialogs on the app
and tells the screen by messages what the screen must do: repaint (``MenuSaid``), leave (``LeaveAsked``), start
a new game (``NewGameAsked``), go on after a program's judgement (``GameChanged``)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from textual.binding import BindingType
from textual.message import Message

from blokus.model.pieces import Team
from blokus.tui.dialogs import EndScreen, HelpScreen, QuitScreen
from blokus.tui.jobs import Jobs
from blokus.tui.program_pane import ProgramSeat
from blokus.tui.replay_screen import ReplayScreen, open_replay_picker
from blokus.tui.replays import ReplayData
from blokus.tui.session import Feedback, GameSession, Timeline

log = logging.getLogger(__name__)


class MenuSaid(Message):
    """The menu wrote the feedback line (the screen repaints)."""


class LeaveAsked(Message):
    """Leave the game: the screen stops its AI, closes its link and ends the app."""


class NewGameAsked(Message):
    """Start a new game in place of this one."""


class GameChanged(Message):
    """The end dialog can come now (a program's judgement is known): the screen repaints and checks the end."""


class GameMenu:
    """Help, save, open a replay, analyse, new game, quit, the end dialog — for one game screen (``jobs``).

    ``keys``: the game's keys for the help screen; ``save``: saves the game, returns where (None: not offered);
    ``can_restart``: a new game is offered; ``network``: a game on a server (leaving it ends it for both);
    ``program``: the opponent is a team's program (the end dialog waits for its judgement and tells it)."""

    def __init__(
        self,
        session: GameSession,
        jobs: Jobs,
        *,
        keys: list[BindingType],
        save: Callable[[], str] | None = None,
        can_restart: bool = False,
        network: bool = False,
        program: ProgramSeat | None = None,
    ) -> None:
        self.session, self.jobs, self.keys = session, jobs, keys
        self.save_fn, self.can_restart, self.network, self.program = save, can_restart, network, program
        self.end_shown = False  # the end dialog came (undo takes the end back)

    def say(self, text: str, error: bool = False) -> None:
        self.session.feedback = Feedback(text, error)
        self.jobs.post(MenuSaid())

    def help(self) -> None:
        app = self.jobs.app
        app.push_screen(HelpScreen([("Playing", self.keys), ("Everywhere", app.BINDINGS)]))

    def open_replay(self) -> None:
        open_replay_picker(self.jobs.app)

    def save(self) -> str | None:
        """Save the game; returns where (None: not saved, the feedback says why)."""
        if self.save_fn is None or not self.session.has_game():
            self.say("nothing to save" if self.save_fn else "saving is not available", True)
            return None
        try:
            where = self.save_fn()
        except Exception as exc:
            log.exception("saving failed")
            self.say(f"saving failed: {exc}", True)
            return None
        self.say(f"saved {where}")
        return where

    def analyse_game(self) -> None:
        """A finished game in the replay viewer, with the analysis pane open (q comes back here)."""
        s = self.session
        if not s.has_game() or len(s.timeline) < 2:
            self.say("no moves to analyse yet", True)
            return
        if self.game_in_progress():
            self.say("analysis after the game (the AI would share the CPU with it)", True)
            return
        record = Timeline()  # a copy: the game screen's own timeline may go on (new game) meanwhile
        record.states, record.steps = list(s.timeline.states), list(s.timeline.steps)
        names = (s.names.get(Team.ONE, "ONE"), s.names.get(Team.TWO, "TWO"))
        result = s.final_result()
        self.jobs.app.push_screen(ReplayScreen(ReplayData(record, names, result), analyse=True))

    def new_game(self) -> None:
        if self.can_restart:
            self.jobs.post(NewGameAsked())

    def game_in_progress(self) -> bool:
        s = self.session
        return s.has_game() and len(s.timeline) > 1 and not s.ended

    def quit(self) -> None:
        if not self.game_in_progress():
            self.jobs.post(LeaveAsked())
            return

        def answer(choice: str | None) -> None:
            if choice == "save":
                where = self.save()
                if where is None:
                    return  # not saved: stay, the message says why
                farewell = getattr(self.jobs.app, "farewell", None)
                if farewell is not None:  # the screen closes: the terminal says where the game is
                    farewell.append(f"saved the game to {where} (blokus replay FILE opens it)")
            if choice in ("save", "quit"):
                self.jobs.post(LeaveAsked())

        question = "The game is not over. Quit anyway?"
        if self.network:
            question += " (Leaving a server game ends it for both players.)"
        self.jobs.app.push_screen(QuitScreen(question, can_save=self.save_fn is not None), answer)

    def check_end(self) -> None:
        """The end dialog, once the game is over (against a program: once its judgement is known, which needs the
        program stopped: its exit code)."""
        s = self.session
        if self.end_shown or not s.ended:
            return
        program = self.program
        if program is not None and not program.ready():
            if program.start_judging():
                self.say(program.judging_text() or "")  # the screen's poll of the program says it again
                self.jobs.start(self._await_judgement, group="judge")
            return
        texts = s.end_texts()
        if texts is None:
            return
        if program is not None:
            texts = program.end_texts(texts, s)
        self.end_shown = True
        dialog = EndScreen(texts.title, "\n".join(texts.lines), s.has_game(), self.can_restart, s.can_analyse())
        self.jobs.app.push_screen(dialog, self.end_choice)

    async def _await_judgement(self) -> None:
        if self.program is not None:
            await self.program.judge()
        self.jobs.post(GameChanged())

    def end_choice(self, choice: str | None) -> None:
        """What was chosen in the end dialog."""
        if choice == "quit":
            self.jobs.post(LeaveAsked())
        elif choice == "save":
            self.save()
        elif choice == "new":
            self.new_game()
        elif choice == "analyse":
            self.analyse_game()
