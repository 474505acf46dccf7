"""Serializing what the local server sends, through the message models of ``model.messages``.

The one place where the server's rooms (``net.rooms``) meet the message models; every XML text is
produced by ``model.messages.to_xml`` (pretty-printed like the official server, which exercises the
clients' framing) and every state by ``model.convert.state_to_message``.
"""

from __future__ import annotations

from model import convert
from model import messages as M
from model.moves import Move, SetMove, SkipMove
from model.pieces import Team
from model.state import GameState
from net.rooms import GameResult

PRETTY = True


def xml(message) -> str:
    return M.to_xml(message, pretty=PRETTY)


def joined(room_id: str) -> str:
    return xml(M.Joined(room_id=room_id))


def left(room_id: str) -> str:
    return xml(M.Left(room_id=room_id))


def welcome(room_id: str, team: Team) -> str:
    return xml(M.Room(room_id=room_id, data=M.WelcomeMessage(color=team)))


def memento(room_id: str, state: GameState, names: tuple[str, str]) -> str:
    return xml(convert.state_to_message(state, room_id, names=names))


def move_request(room_id: str) -> str:
    return xml(M.Room(room_id=room_id, data=M.MoveRequest()))


def move_element(move: Move, cls=M.OriginalRequest) -> M.MoveElement:
    if isinstance(move, SetMove):
        piece = M.Piece(color=move.color, kind=move.shape, rotation=move.rotation, is_flipped=move.flipped,
                        position=M.Position(x=move.x, y=move.y))
        return cls(cls=M.SET_MOVE_CLASS, piece=piece)
    assert isinstance(move, SkipMove)
    return cls(cls=M.SKIP_MOVE_CLASS, color=move.color)


def room_error(room_id: str, message: str, move: Move | None) -> str:
    original = move_element(move) if move is not None else None
    return xml(M.Room(room_id=room_id, data=M.ErrorData(message=message, original_request=original)))


def lobby_error(message: str, original: M.OriginalRequest | None = None) -> str:
    return xml(M.LobbyError(message=message, original_request=original))


def result(room_id: str, res: GameResult) -> str:
    return xml(result_message(room_id, res))


def result_message(room_id: str, res: GameResult) -> M.Room:
    """The 21.3.3 result; ``<winner>`` as 21.3.3 chooses it (rules.md §12), which may differ from the
    Gewinner parts after a timeout or LEFT — hence not ``convert.result_to_message``."""
    definition = M.Definition(fragments=[
        M.Fragment(name="Gewinner", aggregation="SUM", relevant_for_ranking=True),
        M.Fragment(name="\u2205 Punkte", aggregation="AVERAGE", relevant_for_ranking=True),
    ])
    scores = [M.Score(cause=s.cause.value, reason=s.reason, parts=list(s.parts)) for s in res.scores]
    winners = [M.Winner(display_name=res.names[t], color=M.TeamRef.of(t)) for t in res.winners]
    return M.Room(room_id=room_id, data=M.ResultData(definition=definition, scores=scores, winners=winners))


def prepared(room_id: str, codes: list[str]) -> str:
    return xml(M.Prepared(room_id=room_id, reservations=codes))


def observed(room_id: str) -> str:
    return xml(M.Observed(room_id=room_id))


def joined_game_room(room_id: str, existing: bool) -> str:
    return xml(M.JoinedGameRoom(room_id=room_id, existing=existing))


def testing(test_mode: bool) -> str:
    return xml(M.Testing(test_mode=test_mode))


def close() -> str:
    return xml(M.CloseConnection())
