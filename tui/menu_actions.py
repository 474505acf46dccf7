"""The game's menu actions (a part of ``GameScreen``): help, XML pane, save, open a replay, analyse the
finished game, new game, quit (asking, and offering to save, while a game is in progress)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from tui.ai_runner import AIRunner
from tui.dialogs import HelpScreen, QuitScreen
from tui.placing_board import PLACING_BINDINGS
from tui.replay_screen import open_replay_picker
from tui.session import GameSession

log = logging.getLogger(__name__)


class MenuHost(Protocol):
    """What ``GameMenuActions`` needs from its screen (``GameScreen``), besides
    being a ``BoardLayout`` screen."""

    session: GameSession
    network: bool
    save_replay_fn: Callable[[Any], str] | None  # called with the screen; returns where it saved
    new_game_fn: Callable[[], None] | None

    def say(self, text: str, error: bool = False) -> None: ...

    ai: AIRunner


# For mypy the actions are part of a BoardLayout screen that is a MenuHost; at run time a plain mixin.
if TYPE_CHECKING:
    from tui.layout import BoardLayout

    class _MenuActionsBase(BoardLayout, MenuHost):
        pass
else:
    _MenuActionsBase = object


class GameMenuActions(_MenuActionsBase):
    """Help, XML pane, save, open a replay, analyse, new game, quit."""

    def action_xml(self) -> None:
        if not self.network:
            self.say("the XML pane shows the messages of network games (and of replays)", True)
            return
        self.toggle_xml()

    def action_help(self) -> None:
        playing = [*PLACING_BINDINGS, *self.BINDINGS]  # the piece's keys (on the board), then the game's
        self.app.push_screen(HelpScreen([("Playing", playing), ("Everywhere", self.app.BINDINGS)]))

    def action_open_replay(self) -> None:
        open_replay_picker(self.app)

    def action_save(self) -> None:
        s = self.session
        if self.save_replay_fn is None or not s.has_game():
            self.say("nothing to save" if self.save_replay_fn else "saving is not available", True)
            return
        try:
            self.say(f"saved {self.save_replay_fn(self)}")
        except Exception as exc:
            log.exception("saving failed")
            self.say(f"saving failed: {exc}", True)

    def action_analyse_game(self) -> None:
        """A finished game in the replay viewer, with the analysis pane open (q comes back here)."""
        s = self.session
        if not s.has_game() or len(s.timeline) < 2:
            self.say("no moves to analyse yet", True)
            return
        if self.game_in_progress():
            self.say("analysis after the game (the AI would share the CPU with it)", True)
            return
        from model.pieces import Team
        from tui.replay_screen import ReplayScreen
        from tui.replays import ReplayData
        from tui.session import Timeline

        record = Timeline()  # a copy: the game screen's own timeline may go on (new game) meanwhile
        record.states, record.steps = list(s.timeline.states), list(s.timeline.steps)
        names = (s.names.get(Team.ONE, "ONE"), s.names.get(Team.TWO, "TWO"))
        result = s.final_result()
        self.app.push_screen(ReplayScreen(ReplayData(record, names, result), analyse=True))

    def action_new_game(self) -> None:
        if self.new_game_fn is not None:
            self.ai.cancel()
            self.new_game_fn()

    def game_in_progress(self) -> bool:
        s = self.session
        return s.has_game() and len(s.timeline) > 1 and not s.ended

    async def action_quit(self) -> None:
        if not self.game_in_progress():
            await self.leave()
            return

        async def answer(choice: str | None) -> None:
            if choice == "save":
                self.action_save()
                if self.session.feedback.error:
                    return  # not saved: stay, the message says why
            if choice in ("save", "quit"):
                await self.leave()

        question = "The game is not over. Quit anyway?"
        if self.network:
            question += " (Leaving a server game ends it for both players.)"
        self.app.push_screen(QuitScreen(question, can_save=self.save_replay_fn is not None), answer)

    async def leave(self) -> None:
        self.ai.cancel()
        self.app.exit()
