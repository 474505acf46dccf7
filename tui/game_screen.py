"""The game screen: one game on the board, local, on a server, or against a team's program.

Made of parts that tell it by messages what happened: the board layout (``tui.layout``) with the placing board
(the piece's keys and the mouse, ``tui.placing_board``), the AI (``tui.ai_runner``), the menu
(``tui.menu_actions``), the link to a server (``tui.server_link``: network games and games against a program)
and a program's seat and log pane (``tui.program_pane``). The game itself is the session (``tui.session``), the
status lines are ``tui.status``; the screen applies what it hears to the session and repaints from it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen

from blokus.model.pieces import Color, Team
from blokus.model.text import printable
from blokus.tui.ai_runner import AIRunner, AISeats
from blokus.tui.board import Board, BoardView, Scale
from blokus.tui.colors import palette_for
from blokus.tui.jobs import Jobs
from blokus.tui.layout import LETTERS_STATUS_LINES, BoardLayout
from blokus.tui.menu_actions import GameChanged, GameMenu, LeaveAsked, MenuSaid, NewGameAsked
from blokus.tui.messages import (
    AIAsked,
    AIMoveReady,
    AIPurpose,
    AutopilotSwitched,
    GhostMoved,
    Placed,
    PlacementChanged,
    ShapePicked,
    UndoAsked,
)
from blokus.tui.network import (
    TIME_LIMIT_TITLE,
    XML_PANE_MIN_HEIGHT,
    NetworkOptions,
    apply_news,
    clock_left,
    network_session,
    time_limit_notice,
    waiting_status,
)
from blokus.tui.placing_board import PLACING_BINDINGS, PLAYING_BINDINGS, PlacingBoard, PlayArea
from blokus.tui.program_pane import POLL_S, PROGRAM_LOG_BINDING, ProgramLog, ProgramSeat, fit_program_key
from blokus.tui.server_link import Connecting, MessageIgnored, ServerLink, ServerNews, Traffic, TrafficLogged
from blokus.tui.session import Feedback, GameSession
from blokus.tui.status import StatusContext, game_status, waiting_for
from blokus.tui.widgets import FeedbackView, MoveLog, PanelView, StatusBar, XmlPane

log = logging.getLogger(__name__)

# The game's keys besides the player's (``PLACING_BINDINGS`` on the board, ``PLAYING_BINDINGS`` on the centre
# column): the XML pane and the menu's. The help screen, the command palette and the README key table list all.
SCREEN_BINDINGS: list[BindingType] = [
    Binding("x", "xml", "XML", show=False, tooltip="raw XML pane (network games)"),
    Binding("ctrl+s", "save", "Save", show=False, tooltip="save the game as a replay under replays/"),
    Binding("ctrl+r", "open_replay", "Open replay", show=False, tooltip="open a replay from replays/ (q comes back)"),
    Binding(
        "A", "analyse_game", "Analyse", show=False, tooltip="analyse the finished game (replay viewer, q comes back)"
    ),
    Binding("N", "new_game", "New game", show=False, tooltip="new game (local games, after the end)"),
    Binding("question_mark,f1", "help", "Help", tooltip="help with every key"),
    Binding("q", "quit", "Quit", tooltip="quit (asks, and offers to save, while a game is in progress)"),
]


GAME_BINDINGS: list[BindingType] = [*PLACING_BINDINGS, *PLAYING_BINDINGS, *SCREEN_BINDINGS]

TIME_LIMIT_NOTICE_S = 30  # the notice of a timed server stays this long (or until clicked): the first moves go by

SaveReplay = Callable[[GameSession, Sequence[Traffic]], str]  # the game and its messages → where it was saved


class GameScreen(Screen):
    """Plays one game: ``session`` with the AI of ``seats``; on a server through ``link``; ``program``: the
    opponent is a team's program (on an embedded server, through ``link``); ``save_replay`` saves the game
    (None: not offered); ``new_game`` starts the next one (None: not offered)."""

    AUTO_FOCUS = None
    BINDINGS = [*SCREEN_BINDINGS, PROGRAM_LOG_BINDING]

    def __init__(
        self,
        session: GameSession,
        seats: AISeats,
        *,
        link: ServerLink | None = None,
        program: ProgramSeat | None = None,
        save_replay: SaveReplay | None = None,
        new_game: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self.session, self.link, self.program, self.new_game = session, link, program, new_game
        self.jobs = Jobs(self)
        self.ai = AIRunner(session, seats, self.jobs)
        if link is not None:
            self.ai.clock = link.clock  # the AI answers within the server's clock
        save = None if save_replay is None else lambda: save_replay(session, link.traffic if link else ())
        keys = [*GAME_BINDINGS, *([PROGRAM_LOG_BINDING] if program else [])]
        self.menu = GameMenu(
            session, self.jobs, keys=keys, save=save, can_restart=bool(new_game), network=bool(link), program=program
        )
        self._change_pending = False
        self._followed = False  # the program's pane had its first look

    def compose(self) -> ComposeResult:
        program = self.program
        panes = [] if program is None else [ProgramLog(f"{program.label} · stderr (e hides)", id="program-log")]
        centre = PlayArea(self.session, id="centre")
        xml_from = None if self.link is None else XML_PANE_MIN_HEIGHT  # on a shorter terminal it would cover the board
        board, feedback = PlacingBoard(id="board"), FeedbackView(id="feedback")
        yield BoardLayout(feedback, board=board, centre=centre, panes=panes, xml_from=xml_from, letters=True)

    @property
    def board_layout(self) -> BoardLayout:
        return self.query_one(BoardLayout)

    def on_mount(self) -> None:
        board = self.query_one(PlacingBoard)
        board.attach(self.session)
        board.focus()  # the piece's keys live on the board, the keys of playing around it
        self.refresh_view()
        self.ai.maybe_start()
        self.refresh_board()  # "AI thinking…"
        self.menu.check_end()  # a game that is already over (loaded, or played to the end before)
        if self.link is not None:
            self.set_interval(0.2, self._tick_clock)
            self.link.start(self.jobs)
        if self.program is not None:
            self.set_interval(POLL_S, self._follow_program)

    # --- painting ---------------------------------------------------------------------------------

    def refresh_board(self) -> None:
        s, link, palette = self.session, self.link, palette_for(self.app)
        if link is not None and not s.started:  # no game yet: nobody is "to move" on the placeholder board
            self.query_one(StatusBar).show(waiting_status(link, s, palette))
            return
        self.query_one(Board).show(BoardView.of_session(s))
        status = self.query_one(StatusBar)
        left = None if link is None else clock_left(link, s, time.monotonic())
        waiting = (self.program.waiting_text(s) if self.program is not None else None) or waiting_for(s)
        lines = LETTERS_STATUS_LINES if one_feedback_line(self.board_layout) else None
        status.show(game_status(s, StatusContext(palette, status.content_size.width or 50, left, waiting, lines)))

    def refresh_view(self) -> None:
        """Repaint everything from the session (after moves; ghost moves only repaint the board)."""
        s = self.session
        self.refresh_board()
        self.board_layout.show_panels(PanelView.of_session(s, color) for color in Color)
        self.show_feedback()
        self.query_one(MoveLog).set_entries(s.timeline.entries, s.shown_index)
        if self.query_one(PlayArea).keys_changed():
            self.refresh_bindings()  # the footer rebuilds its keys on every refresh_bindings(): only on a change

    def show_feedback(self) -> None:
        feedback = self.session.feedback
        self.query_one(FeedbackView).tell(feedback.text, feedback.error, one_feedback_line(self.board_layout))

    def after_change(self) -> None:
        self.refresh_view()
        self.ai.maybe_start()
        self.refresh_board()  # "AI thinking…"
        self.menu.check_end()  # the end dialog, once the game is over

    # --- what the parts tell -----------------------------------------------------------------------------

    @on(AIMoveReady)
    def _ai_answered(self, message: AIMoveReady) -> None:
        self.ai.answered(message)
        self.after_change()

    @on(ServerNews)
    def _server_news(self, news: ServerNews) -> None:
        if isinstance(news, TrafficLogged):
            try:
                self.query_one(XmlPane).add_message(news.direction, news.xml, news.stamp)
            except Exception:
                log.exception("xml pane")
            return
        assert self.link is not None
        try:
            if isinstance(news, MessageIgnored):
                self.query_one(XmlPane).add_note(f"ignored: {printable(news.reason)}")
            apply_news(self.session, news, self.link)
            tell_time_limit(self, news, self.link)
            if self.program is not None:
                self.program.after_news(self.session, self.link.team)
        except Exception:  # never crash on a server message
            log.exception("handling %r failed", news)
        if not self._change_pending:  # one repaint for the news that arrived together (state + move request …)
            self._change_pending = True
            self.call_later(self._flush_change)

    def _flush_change(self) -> None:
        self._change_pending = False
        self.after_change()

    @on(MenuSaid)
    @on(PlacementChanged)
    def _repaint(self) -> None:
        self.refresh_view()

    @on(BoardLayout.Fitted)
    def _fitted(self) -> None:
        if self.focused is None:  # a terminal too small hid the board, which lost the focus: the keys come back
            self.query_one(PlacingBoard).focus()
        fit_program_key(self, self.program is not None)
        self.refresh_view()

    @on(Placed)
    @on(GameChanged)
    def _game_changed(self) -> None:
        self.after_change()

    @on(LeaveAsked)
    async def _leave_asked(self) -> None:
        await self.leave()

    @on(NewGameAsked)
    def _new_game_asked(self) -> None:
        if self.new_game is not None:
            self.ai.cancel()
            self.new_game()

    @on(AIAsked)
    def _ai_asked(self, message: AIAsked) -> None:
        if self.ai.hint_player is not None and self.session.is_human_turn():
            hint = message.purpose is AIPurpose.HINT
            self.session.feedback = Feedback("thinking about a hint…" if hint else "the AI is choosing your move…")
            self.ai.think(self.ai.hint_player, message.purpose)
            self.refresh_view()

    @on(AutopilotSwitched)
    def _autopilot_switched(self) -> None:
        s = self.session
        was_on = s.state.team in s.autopilot
        s.toggle_autopilot()
        if was_on and self.ai.purpose is AIPurpose.PLAY:
            self.ai.cancel()
        s.begin_turn()
        self.after_change()

    @on(UndoAsked)
    def _undo_asked(self) -> None:
        self.ai.cancel()
        if self.session.undo():
            self.menu.end_shown = False
        self.after_change()

    @on(GhostMoved)
    def _ghost_moved(self, message: GhostMoved) -> None:
        if message.refusal_dropped:
            self.show_feedback()
        self.refresh_board()

    @on(ShapePicked)
    def select_shape(self, message: ShapePicked) -> None:
        self.session.placing.select(message.shape)
        self.refresh_view()

    # --- the clock and the program ------------------------------------------------------------------------

    def _tick_clock(self) -> None:
        if self.link is not None and clock_left(self.link, self.session, time.monotonic()) is not None:
            self.refresh_board()

    def _follow_program(self) -> None:
        program = self.program
        if program is None:
            return
        if (judging := program.judging_text()) is not None:
            self.menu.say(judging)
        if not self._followed:  # the first look: on a tall terminal its log, not the XML, is the open pane
            self._followed = True
            if self.board_layout.xml_shown:
                self.board_layout.toggle_xml()
                self.action_program_log()
                return
        if program.moves_changed():
            self.refresh_board()
        self.query_one(ProgramLog).follow(program)

    def action_program_log(self) -> None:
        self._followed = True  # the user chose: the pane's first look (a timer tick later) must not undo it
        self.query_one(ProgramLog).toggle()
        self._follow_program()

    # --- the end ----------------------------------------------------------------------------------

    async def leave(self) -> None:
        self.ai.cancel()
        if self.program is not None:
            await self.program.close()
        if self.link is not None:
            await self.link.close()
        self.app.exit(1 if self.link is not None and self.link.failed else 0)

    # --- actions ----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "new_game":
            return True if self.new_game is not None and self.session.ended else None
        if action == "program_log":
            return self.program is not None
        return True  # xml: in a local game it says what the pane is for

    def action_xml(self) -> None:
        if self.link is None:
            self.menu.say("the XML pane shows the messages of network games (and of replays)", True)
        else:
            self.board_layout.toggle_xml()

    # --- the menu's keys (tui.menu_actions) -----------------------------------------------------------

    def action_help(self) -> None:
        self.menu.help()

    def action_open_replay(self) -> None:
        self.menu.open_replay()

    def action_save(self) -> None:
        self.menu.save()

    def action_analyse_game(self) -> None:
        self.menu.analyse_game()

    def action_new_game(self) -> None:
        self.menu.new_game()

    def action_quit(self) -> None:
        self.menu.quit()


def tell_time_limit(screen: Screen, news: ServerNews, link: ServerLink) -> None:
    """Once joined on a timed server: a notice of the limit and the ways out, which stays a while."""
    if isinstance(news, Connecting) and (notice := time_limit_notice(link)) is not None:
        screen.notify(notice, title=TIME_LIMIT_TITLE, severity="warning", timeout=TIME_LIMIT_NOTICE_S)


def one_feedback_line(layout: BoardLayout) -> bool:
    """The letter board (NO_COLOR, 80×24) is shown: two status lines above it, one line of feedback below."""
    return layout.plan is not None and layout.plan.scale is Scale.LETTERS


def network_screen(options: NetworkOptions) -> GameScreen:
    """The game screen of a game on a server (``blokus play -h HOST``)."""
    link = options.link()
    seats = AISeats(dict.fromkeys(Team, options.player), options.hint_player, options.move_time_ms)
    return GameScreen(network_session(link), seats, link=link, save_replay=options.save_replay)
