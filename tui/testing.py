"""Deterministic players and app factories for the TUI tests, the screenshots and the benchmark."""

from __future__ import annotations

import asyncio
import threading

from ai.base import Player
from model.moves import Move, SkipMove
from model.pieces import Shape, Team
from model.state import GameState
from tui.app import BlokusApp
from tui.game_screen import GameScreen
from tui.session import GameSession


def first_move(state: GameState) -> Move:
    moves = state.legal_moves()
    return moves[0] if len(moves) else SkipMove(state.current_color)


def last_move(state: GameState) -> Move:
    moves = state.legal_moves()
    return moves[len(moves) - 1] if len(moves) else SkipMove(state.current_color)


class InstantPlayer(Player):
    """Answers at once with a fixed legal move (the first or the last one in generator order)."""

    def __init__(self, pick: str = "first") -> None:
        self.pick = first_move if pick == "first" else last_move
        self.calls = 0

    async def choose_move(self, state: GameState, deadline: float) -> Move:
        self.calls += 1
        return self.pick(state)


class BlockingPlayer(Player):
    """Thinks in a worker thread until the test calls ``release()`` (or the move is cancelled)."""

    name = "blocking"

    def __init__(self) -> None:
        self.go = threading.Event()
        self.started = threading.Event()
        self.cancelled = False

    def release(self) -> None:
        self.go.set()

    def cancel(self) -> None:
        self.cancelled = True
        self.go.set()

    async def choose_move(self, state: GameState, deadline: float) -> Move:
        self.started.set()
        await asyncio.to_thread(self.go.wait, 30)
        return first_move(state)


def play_openings(session: GameSession, plies: int, pick: str = "first") -> None:
    """Advance a local session by ``plies`` moves chosen deterministically (ignores seats)."""
    chooser = first_move if pick == "first" else last_move
    for _ in range(plies):
        if session.state.is_over:
            break
        session.apply(chooser(session.state))
    session.feedback.text = ""


def game_app(
    start_piece: Shape = Shape.PENTO_L,
    *,
    human: Team | None = Team.ONE,
    hotseat: bool = False,
    opponent: Player | None = None,
    own: Player | None = None,
    hint: Player | None = None,
    plies: int = 0,
    theme: str = "textual-dark",
    save_replay=None,
) -> BlokusApp:
    """A local game with deterministic players: the human (team ONE) against ``opponent``."""
    session = GameSession.new_local(start_piece, human=human, hotseat=hotseat)
    if plies:
        play_openings(session, plies)
        session.begin_turn()
    players: dict[Team, Player] = {}
    for team in Team:
        if session.seats[team].value == "ai":
            players[team] = opponent or InstantPlayer("first")
        else:
            players[team] = own or InstantPlayer("first")
    hint_player = hint or InstantPlayer("last")
    return BlokusApp(lambda: GameScreen(session, players, hint_player, ai_time=0.5, save_replay=save_replay),
                     theme=theme)


async def settle(pilot, rounds: int = 50) -> None:
    """Wait until no AI move is pending (stub players answer at once)."""
    for _ in range(rounds):
        await pilot.pause()
        screen = pilot.app.main_screen
        if getattr(screen, "_ai_purpose", None) is None:
            await pilot.pause()
            return
        await asyncio.sleep(0.01)
