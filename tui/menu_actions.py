"""The game's menu (composed into ``GameScreen``): help, XML pane, save, open a replay, analyse the finished
game, new game, quit (asking, and offering to save, while a game is in progress), the end dialog's choice.

The screen keeps the keys (``SCREEN_BINDINGS``) and hands each to the menu; the menu reaches the screen
only through what a ``BoardLayout`` is (its app, its repaint, its XML pane) and the callables it is given."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from model.pieces import Team
from tui.ai_runner import AIRunner
from tui.dialogs import HelpScreen, QuitScreen
from tui.layout import BoardLayout
from tui.placing_board import PLACING_BINDINGS
from tui.replay_screen import ReplayScreen, open_replay_picker
from tui.replays import ReplayData
from tui.session import Feedback, GameSession, Timeline

log = logging.getLogger(__name__)


class GameMenu:
    """Help, XML pane, save, open a replay, analyse, new game, quit — for one game screen.

    ``leave``: the screen's way out (a network screen closes its connection first); ``save_replay``: called
    with the screen, returns where it saved; ``new_game``: starts a fresh game (None: not offered)."""

    def __init__(
        self,
        screen: BoardLayout,
        session: GameSession,
        ai: AIRunner,
        leave: Callable[[], Awaitable[None]],
        network: bool,
        save_replay: Callable[[Any], str] | None,
        new_game: Callable[[], None] | None,
    ) -> None:
        self.screen, self.session, self.ai, self.leave = screen, session, ai, leave
        self.network, self.save_replay, self.new_game_fn = network, save_replay, new_game

    def say(self, text: str, error: bool = False) -> None:
        self.session.feedback = Feedback(text, error)
        self.screen.refresh_view()

    def xml(self) -> None:
        if not self.network:
            self.say("the XML pane shows the messages of network games (and of replays)", True)
            return
        self.screen.toggle_xml()

    def help(self) -> None:
        playing = [*PLACING_BINDINGS, *self.screen.BINDINGS]  # the piece's keys (on the board), then the game's
        app = self.screen.app
        app.push_screen(HelpScreen([("Playing", playing), ("Everywhere", app.BINDINGS)]))

    def open_replay(self) -> None:
        open_replay_picker(self.screen.app)

    def save(self) -> None:
        if self.save_replay is None or not self.session.has_game():
            self.say("nothing to save" if self.save_replay else "saving is not available", True)
            return
        try:
            self.say(f"saved {self.save_replay(self.screen)}")
        except Exception as exc:
            log.exception("saving failed")
            self.say(f"saving failed: {exc}", True)

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
        self.screen.app.push_screen(ReplayScreen(ReplayData(record, names, result), analyse=True))

    def new_game(self) -> None:
        if self.new_game_fn is not None:
            self.ai.cancel()
            self.new_game_fn()

    def game_in_progress(self) -> bool:
        s = self.session
        return s.has_game() and len(s.timeline) > 1 and not s.ended

    async def quit(self) -> None:
        if not self.game_in_progress():
            await self.leave()
            return

        async def answer(choice: str | None) -> None:
            if choice == "save":
                self.save()
                if self.session.feedback.error:
                    return  # not saved: stay, the message says why
            if choice in ("save", "quit"):
                await self.leave()

        question = "The game is not over. Quit anyway?"
        if self.network:
            question += " (Leaving a server game ends it for both players.)"
        self.screen.app.push_screen(QuitScreen(question, can_save=self.save_replay is not None), answer)

    async def end_choice(self, choice: str | None) -> None:
        """What was chosen in the end dialog."""
        if choice == "quit":
            await self.leave()
        elif choice == "save":
            self.save()
        elif choice == "new":
            self.new_game()
        elif choice == "analyse":
            self.analyse_game()
