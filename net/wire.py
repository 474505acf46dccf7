"""Serializing what the local server sends, through the message models of ``model.messages``.

The one place where the server's rooms (``net.rooms``) meet the message models; every XML text is
produced by ``model.messages.to_xml`` (pretty-printed like the official server, which exercises the
clients' framing), every state by ``model.convert.state_to_message`` and every result by
``model.result.result_to_data``. A :class:`SeasonWire` writes one season's forms; the module-level
functions are the 2021 ones.
"""

from __future__ import annotations

from blokus.model import convert
from blokus.model import messages as M
from blokus.model.moves import Move
from blokus.model.pieces import Team
from blokus.model.result import GameResult, result_to_data
from blokus.model.season import DEFAULT_SEASON, Season
from blokus.model.state import GameState

PRETTY = True


def xml(message) -> str:
    return M.to_xml(message, pretty=PRETTY)


class SeasonWire:
    """The messages of a server of ``season`` (the ``Wire`` interface of ``net.rooms``)."""

    def __init__(self, season: Season = DEFAULT_SEASON) -> None:
        self.season = season

    def joined(self, room_id: str) -> str:
        return xml(M.Joined(room_id=room_id))

    def left(self, room_id: str) -> str:
        return xml(M.Left(room_id=room_id))

    def welcome(self, room_id: str, team: Team) -> str:
        return xml(M.Room(room_id=room_id, data=M.WelcomeMessage(color=team)))

    def memento(self, room_id: str, state: GameState, names: tuple[str, str]) -> str:
        return xml(convert.state_to_message(state, room_id, names=names))

    def move_request(self, room_id: str) -> str:
        return xml(M.Room(room_id=room_id, data=M.MoveRequest(cls=self.season.move_request_class)))

    def move_element(self, move: Move) -> M.OriginalRequest:
        return convert.move_element(move, self.season, M.OriginalRequest)  # type: ignore[return-value]

    def room_error(self, room_id: str, message: str, move: Move | None) -> str:
        """In-room error: ``originalRequest`` as 21.3.3 writes it; 2027 names it ``originalMessage``
        (docs/spec/season-2027.md §3.5, derived)."""
        original = self.move_element(move) if move is not None else None
        if self.season.error_names_original_message:
            data = M.ErrorData(message=message, original_message=original)
        else:
            data = M.ErrorData(message=message, original_request=original)
        return xml(M.Room(room_id=room_id, data=data))

    def lobby_error(self, message: str, original: M.OriginalRequest | None = None) -> str:
        """21.3.3: ``<error>``; 2027: ``<errorpacket>`` (derived), the connection stays open in both."""
        if self.season.lobby_error_packet:
            return xml(M.ErrorPacket(message=message, original_request=original))
        return xml(M.LobbyError(message=message, original_request=original))

    def result(self, room_id: str, res: GameResult) -> str:
        return xml(self.result_message(room_id, res))

    def result_message(self, room_id: str, res: GameResult) -> M.Room:
        return M.Room(room_id=room_id, data=result_to_data(res, self.season))

    def paused(self, room_id: str, paused: bool) -> str:
        """27.x tells observers when a game is paused or resumed (test-27.0.4-sdk-room-paused.xml)."""
        return xml(M.Room(room_id=room_id, data=M.PausedData(paused=paused)))

    def prepared(self, room_id: str, codes: list[str]) -> str:
        return xml(M.Prepared(room_id=room_id, reservations=codes))

    def observed(self, room_id: str) -> str:
        return xml(M.Observed(room_id=room_id))

    def joined_game_room(self, room_id: str, existing: bool, player_count: int = 1) -> str:
        if self.season.joined_counts_players:
            return xml(M.JoinedGameRoom(room_id=room_id, player_count=player_count))  # derived
        return xml(M.JoinedGameRoom(room_id=room_id, existing=existing))

    def testing(self, test_mode: bool) -> str:
        return xml(M.Testing(test_mode=test_mode))

    def close(self) -> str:
        if self.season.close_tag == "close":
            return xml(M.Close())
        return xml(M.CloseConnection())


def memento_xml(room_id: str, state: GameState, names: tuple[str, str]) -> str:
    """A memento in its state's season (picklable for the server's encoder processes)."""
    return xml(convert.state_to_message(state, room_id, names=names))
