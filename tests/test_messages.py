"""Message models and conversion: every fixture reads, output equals the 21.3.3 serializer's form."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from blokus.model import messages as M
from blokus.model.convert import (
    GameResult,
    MessageReader,
    derive_set_move,
    detect_season,
    is_message_type,
    move_from_message,
    move_to_message,
    parse_message,
    parse_xml,
    read_state,
    result_from_message,
    result_to_message,
    state_from_message,
    state_from_xml,
    state_to_message,
    state_to_model,
    to_xml,
)
from blokus.model.framing import END_OF_STREAM, MalformedXml, parse_document, parse_stream
from blokus.model.moves import SetMove, SkipMove
from blokus.model.pieces import COLORS, SHAPES, Color, Rotation, Shape, Team
from blokus.model.season import GAME_TYPE, SEASON_2021, SEASON_2027, Season
from blokus.model.state import GameState
from tests.helpers import elements_of, fixture_files, fixture_path

ROOM = "cb3bc426-5c70-48b9-9307-943bc328b503"

# Bare elements of test literals (not protocol messages) and the model that reads them.
BARE = {
    "state": M.State,
    "board": M.Board,
    "piece": M.Piece,
    "score": M.Score,
    "winner": M.Winner,
    "slotDescriptor": M.Slot,
    "welcomeMessage": M.WelcomeMessage,
    "result": M.ResultData,
}


def read_bare(element: etree._Element):
    model = BARE[element.tag]
    if model.__xml_tag__ != element.tag:  # e.g. <result>/<welcomeMessage> stand for <data>
        element = etree.fromstring(etree.tostring(element))
        element.tag = model.__xml_tag__
    return model.from_xml_tree(element)


def read_any(element: etree._Element):
    if element.tag in BARE:
        value = read_bare(element)
        if isinstance(value, M.State) and value.start_piece is not None:
            return read_state(value)
        return value
    return parse_message(element)


def canonical(element: etree._Element) -> tuple:
    """Structure of an element: tag, attributes (any order), stripped text, children in order."""
    return (
        element.tag,
        sorted(element.attrib.items()),
        (element.text or "").strip(),
        [canonical(child) for child in element if isinstance(child.tag, str)],
    )


def same_structure(xml: str, path: Path) -> bool:
    return canonical(etree.fromstring(xml.encode())) == canonical(parse_document(path.read_bytes()))


# --- every fixture reads -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", fixture_files("sc2021") + fixture_files("replays"), ids=lambda p: p.name)
def test_every_2021_fixture_reads(path: Path) -> None:
    for element in elements_of(path):
        value = read_any(element)
        if path.name.startswith(("gen-", "docs-", "issue-", "player_ruby")) and "TestGame" not in path.name:
            assert not isinstance(value, M.UnknownMessage), value


@pytest.mark.parametrize("path", fixture_files("sc2027"), ids=lambda p: p.name)
def test_every_2027_fixture_is_understood(path: Path) -> None:
    """Every 2027 message is read as what it is (never as an unknown message; documentation templates with
    placeholders such as TEAM_FARBE and the server's TestGame aside), and a 2027 state form is recognised as
    2027."""
    template = "TestGame" in path.name or "template" in path.name or path.name.endswith("welcomeMessage.xml")
    for element in elements_of(path):
        value = read_any(element) if element.tag != "state" else read_bare(element)
        assert template or not isinstance(value, M.UnknownMessage), value
        season = detect_season(value) if isinstance(value, M.State) else None
        assert season in (None, SEASON_2027), (path.name, season)


def test_wire_stream_as_typed_messages() -> None:
    data = fixture_path("sc2021/gen-21.3.3-game1-wire-stream-to-player-one.xml").read_bytes()
    reader = MessageReader()
    messages = [m for i in range(0, len(data), 1000) for m in reader.feed(data[i : i + 1000])]
    reader.close()
    assert messages[-1] is END_OF_STREAM and reader.ended
    messages = messages[:-1]
    assert isinstance(messages[0], M.Joined) and isinstance(messages[-1], M.Left)
    rooms = [m.data for m in messages if isinstance(m, M.Room)]
    assert len(rooms) == 95 and rooms[0] == M.WelcomeMessage(color=Team.ONE)
    mementos = [d for d in rooms if isinstance(d, M.Memento)]
    assert len(mementos) == 62 and sum(isinstance(d, M.MoveRequest) for d in rooms) == 31
    # a move request always follows a memento, and only on team ONE's turns
    for before, request in zip(rooms, rooms[1:], strict=False):
        if isinstance(request, M.MoveRequest):
            assert isinstance(before, M.Memento)
            assert state_from_message(before).color.team is Team.ONE
    assert result_from_message(rooms[-1]).winner is Team.ONE


def test_fixtures_present() -> None:
    assert len(fixture_files("sc2021")) > 50 and len(fixture_files("sc2027")) > 30


# --- output: the 21.3.3 forms ------------------------------------------------------------------------


def test_client_messages_match_the_server_form() -> None:
    setmove = move_to_message(
        SetMove(Color.BLUE, Shape.PENTO_V, Rotation.RIGHT, False, 17, 0), ROOM, season=SEASON_2021
    )
    skipmove = move_to_message(SkipMove(Color.BLUE), ROOM, season=SEASON_2021)
    cases = {
        "gen-21.3.3-c2s-setmove.xml": setmove,
        "gen-21.3.3-c2s-skipmove.xml": skipmove,
        "gen-21.3.3-c2s-join.xml": M.Join(game_type=SEASON_2021.game_type),
        "gen-21.3.3-c2s-joinPrepared.xml": M.JoinPrepared(reservation_code="RC1"),
        "gen-21.3.3-both-closeconnection.xml": M.CloseConnection(),
    }
    for name, message in cases.items():
        path = fixture_path(f"sc2021/{name}")
        assert same_structure(to_xml(message), path), name
        assert to_xml(message, pretty=True) == path.read_text(encoding="utf-8").rstrip("\n"), name
    assert 'class="sc.plugin2021.SetMove"' in to_xml(setmove)
    assert SEASON_2021.skip_move_class in to_xml(skipmove) and "<color>BLUE</color>" in to_xml(skipmove)
    assert to_xml(M.Join()) == f'<join gameType="{GAME_TYPE}"/>' == '<join gameType="swc_2027_blokus"/>'


def test_admin_and_server_messages_match_the_server_form() -> None:
    cases = {
        "gen-21.3.3-admin-authenticate.xml": M.Authenticate(password="examplepassword"),
        "gen-21.3.3-admin-cancel.xml": M.Cancel(room_id=ROOM),
        "gen-21.3.3-admin-freeReservation.xml": M.FreeReservation(reservation="RC1"),
        "gen-21.3.3-admin-joinedGameRoom.xml": M.JoinedGameRoom(room_id=ROOM, existing=False),
        "gen-21.3.3-admin-observe.xml": M.Observe(room_id=ROOM),
        "gen-21.3.3-admin-observed.xml": M.Observed(room_id=ROOM),
        "gen-21.3.3-admin-pause.xml": M.Pause(room_id=ROOM, pause=False),
        "gen-21.3.3-admin-step.xml": M.Step(room_id=ROOM, forced=False),
        "gen-21.3.3-admin-testMode.xml": M.TestMode(test_mode=True),
        "gen-21.3.3-admin-testing.xml": M.Testing(test_mode=True),
        "gen-21.3.3-admin-timeout.xml": M.Timeout(room_id=ROOM, activate=False, slot=0),
        "gen-21.3.3-admin-scoreForPlayer.xml": M.ScoreForPlayer(display_name="p1"),
        "gen-21.3.3-admin-prepare.xml": M.Prepare(
            pause=True,
            slots=[M.Slot(display_name="p1", can_timeout=False), M.Slot(display_name="p2", can_timeout=False)],
            game_type=SEASON_2021.game_type,
        ),
        "gen-21.3.3-admin-prepared.xml": M.Prepared(room_id=ROOM, reservations=["RC1", "RC2"]),
        "gen-21.3.3-admin-paused-event.xml": M.Room(
            room_id=ROOM, data=M.PausedData(next_player=M.PlayerInfo(display_name="One", color=M.TeamRef.of(Team.ONE)))
        ),
        "gen-21.3.3-s2c-joined.xml": M.Joined(room_id=ROOM),
        "gen-21.3.3-s2c-left.xml": M.Left(room_id=ROOM),
        "gen-21.3.3-s2c-welcomeMessage-ONE.xml": M.Room(room_id=ROOM, data=M.WelcomeMessage(color=Team.ONE)),
        "gen-21.3.3-s2c-welcomeMessage-TWO.xml": M.Room(room_id=ROOM, data=M.WelcomeMessage(color=Team.TWO)),
        "gen-21.3.3-s2c-moverequest.xml": M.Room(room_id=ROOM, data=M.MoveRequest()),
        "gen-21.3.3-s2c-memento-initial-PENTO_V.xml": state_to_message(
            GameState.new(SEASON_2021, Shape.PENTO_V), ROOM, ("One", "Two")
        ),
        "gen-21.3.3-s2c-error-lobby-example.xml": M.LobbyError(
            message="Couldn't find a reservation for the provided token.",
            original_request=M.OriginalRequest(cls="joinPrepared", reservation_code="wrong"),
        ),
        "gen-21.3.3-s2c-error-invalid-move-DUPLICATE_SHAPE.xml": M.Room(
            room_id="11111111-2222-4333-8444-555555555555",
            data=M.ErrorData(
                message="Ungueltiger Zug von 'bob'.\nInvalidMoveException(mistake=Der gewählte "
                "Stein wurde bereits gesetzt, move=null)"
            ),
        ),
    }
    for name, message in cases.items():
        path = fixture_path(f"sc2021/{name}")
        assert to_xml(message, pretty=True) == path.read_text(encoding="utf-8").rstrip("\n"), name


@pytest.mark.parametrize(
    "path",
    [p for p in fixture_files("sc2021") if p.name.startswith("gen-21.3.3-") and "-game" not in p.name],
    ids=lambda p: p.name,
)
def test_generated_messages_round_trip_byte_for_byte(path: Path) -> None:
    message = parse_message(parse_document(path.read_bytes()))
    assert not isinstance(message, M.UnknownMessage)
    assert to_xml(message, pretty=True) == path.read_text(encoding="utf-8").rstrip("\n")
    assert parse_xml(to_xml(message)) == message


def test_results_written_from_the_model() -> None:
    for name in ("gen-21.3.3-s2c-result-example-win.xml", "gen-21.3.3-s2c-result-example-draw.xml"):
        path = fixture_path(f"sc2021/{name}")
        message = parse_xml(path.read_bytes())
        rebuilt = result_to_message(result_from_message(message), ROOM, season=SEASON_2021)
        assert to_xml(rebuilt, pretty=True) == path.read_text(encoding="utf-8").rstrip("\n")


def test_strict_output() -> None:
    move = SetMove(Color.GREEN, Shape.TRIO_L, Rotation.NONE, True, 5, 9)
    text = to_xml(move_to_message(move, "r", season=SEASON_2021))
    assert 'isFlipped="true"' in text and "hint" not in text
    # an input move with a debug hint is read, the hint is never written back
    hinted = parse_xml(
        b'<room roomId="r"><data class="sc.plugin2021.SetMove"><hint content="x"/>'
        b'<piece color="GREEN" kind="TRIO_L" rotation="NONE" isFlipped="TRUE" extra="1">'
        b'<position x="5" y="9"/><shape>X</shape></piece></data></room>'
    )
    assert move_from_message(hinted) == move
    assert to_xml(hinted) == text
    with pytest.raises(ValueError):
        to_xml(M.CloseShort())
    with pytest.raises(TypeError):
        move_to_message("BLUE SKIP", "r", season=SEASON_2021)  # type: ignore[arg-type]
    assert "<color/>" not in to_xml(M.Room(room_id="r", data=M.SkipMoveData()))


def test_attribute_values_are_escaped() -> None:
    nasty = "a'b\"c<d>e&f\ng"
    text = to_xml(M.Joined(room_id=nasty))
    assert text == '<joined roomId="a&apos;b&quot;c&lt;d&gt;e&amp;f&#xa;g"/>'
    assert parse_xml(text) == M.Joined(room_id=nasty)
    memento = state_to_message(GameState.new(SEASON_2021, Shape.PENTO_L), nasty, (nasty, "ü∅"))
    again = read_state(parse_xml(to_xml(memento).encode()))
    assert again.names == (nasty, "ü∅") and again.room_id == nasty


# --- reading: lenient ----------------------------------------------------------------------------------


def test_unknown_messages_are_values_not_exceptions() -> None:
    cases = [
        (b"<hello/>", "unknown message element"),
        (b'<room roomId="r"><data class="sc.plugin2021.PassMove"/></room>', "unknown data class"),
        (b'<room roomId="r"><data class="setmove"><piece/></data></room>', "unknown data class"),
        (b'<room roomId="r"/>', "without <data>"),
        (b'<room roomId="r"><data class="welcomeMessage" color="THREE"/></room>', "unreadable"),
        (
            b'<room roomId="r"><data class="sc.plugin2021.SetMove"><piece color="PINK" kind="MONO" '
            b'rotation="NONE" isFlipped="false"><position x="0" y="0"/></piece></data></room>',
            "unreadable",
        ),
        (b"<joined/>", "unreadable"),
    ]
    for xml, reason in cases:
        message = parse_xml(xml)
        assert isinstance(message, M.UnknownMessage), xml
        assert reason in message.reason and message.raw_xml.startswith("<") and str(message)


def test_unknown_attributes_and_children_are_ignored() -> None:
    path = fixture_path("sc2021/gen-21.3.3-s2c-memento-initial-PENTO_V.xml")
    plain = read_state(parse_xml(path.read_bytes())).state
    tree = parse_document(path.read_bytes())
    state = tree.find("data/state")
    state.set("futureAttribute", "42")
    state.insert(0, etree.fromstring(b"<future><x/></future>"))
    state.find("validColors").set("class", "something-else")
    state.find("board").append(etree.fromstring(b'<field x="3" y="4" content="GREEN" color="x"/>'))
    state.find("board").insert(0, etree.fromstring(b"<unknown/>"))
    changed = read_state(parse_message(tree)).state
    assert changed.color_at(3, 4) is Color.GREEN and changed.turn == plain.turn
    assert changed.valid_colors == plain.valid_colors and changed.pieces_left(Color.RED) == SHAPES


def test_welcome_in_any_case() -> None:
    for text, team in (("ONE", Team.ONE), ("one", Team.ONE), ("Two", Team.TWO), ("two", Team.TWO)):
        message = parse_xml(f'<room roomId="r"><data class="welcomeMessage" color="{text}"/></room>')
        assert isinstance(message, M.Room) and message.data == M.WelcomeMessage(color=team)
    fragment = fixture_path("sc2021/docs-2021-welcome-and-memento-initial-21.2-format.xml").read_bytes()
    welcome = parse_message(parse_stream(fragment, prepend_protocol=True, strict=False).messages[0])
    assert welcome.data.color is Team.TWO


def test_move_requests_old_and_new() -> None:
    for name in (
        "sc2021/gen-21.3.3-s2c-moverequest.xml",
        "sc2027/docs-27-xml-s2c-moveRequest.xml",
        "sc2027/test-27.0.4-sdk-room-moveRequest.xml",
    ):
        message = parse_xml(fixture_path(name).read_bytes())
        assert is_message_type(message, M.MoveRequest), name
    assert (
        to_xml(M.Room(room_id="r", data=M.MoveRequest()))
        == '<room roomId="r"><data class="sc.framework.plugins.protocol.MoveRequest"/></room>'
    )


def test_join_forms() -> None:
    assert parse_xml(b"<join/>") == M.Join(game_type=None)
    assert parse_xml(b"<join />").game_type is None
    assert parse_xml(b'<join gameType="swc_2021_blokus"/>') == M.Join(game_type=SEASON_2021.game_type)
    assert parse_xml(b'<joinRoom roomId="ROOM_ID" />') == M.JoinRoom(room_id="ROOM_ID")
    assert parse_xml(b'<joinPrepared reservationCode="RC"/>') == M.JoinPrepared(reservation_code="RC")


def test_close_forms() -> None:
    for tag in ("sc.protocol.responses.CloseConnection", "sc.protocol.CloseConnection", "close"):
        assert isinstance(parse_xml(f"<{tag}/>"), M.CloseConnection), tag
    assert to_xml(M.CloseConnection()) == "<sc.protocol.responses.CloseConnection/>"


def test_admin_forms_of_both_releases() -> None:
    assert parse_xml(b'<joinedGameRoom roomId="r" existing="true"/>') == M.JoinedGameRoom(room_id="r", existing=True)
    assert parse_xml(b'<joinedGameRoom roomId="r" playerCount="1"/>') == M.JoinedGameRoom(room_id="r", player_count=1)
    prepare = parse_xml(fixture_path("sc2021/test-21.4.0-sdk-prepare-request.xml").read_bytes())
    assert [s.reserved for s in prepare.slots] == [False, True] and prepare.pause is False
    prepare = parse_xml(fixture_path("sc2021/test-21.4.0-sdk-prepare-request-deserialize-input.xml").read_bytes())
    assert prepare.slots[0].display_name == "Häschenschule" and prepare.pause is None
    paused = parse_xml(fixture_path("sc2027/test-27.0.4-sdk-room-paused.xml").read_bytes())
    assert paused.data == M.PausedData(paused=False)
    paused = parse_xml(fixture_path("sc2021/gen-21.3.3-admin-paused-event.xml").read_bytes())
    assert paused.data.next_player.team is Team.ONE


# --- errors ------------------------------------------------------------------------------------------


def test_in_room_errors() -> None:
    error = parse_xml(fixture_path("sc2021/gen-21.3.3-s2c-error-invalid-move-OBSTRUCTED.xml").read_bytes())
    assert isinstance(error.data, M.ErrorData)
    assert error.data.message.startswith("Ungueltiger Zug von 'alice'.\nInvalidMoveException")
    assert move_from_message(error.data.original) == SetMove(Color.RED, Shape.PENTO_I, Rotation.NONE, False, 19, 17)
    newer = parse_xml(to_xml(error).replace("originalRequest", "originalMessage"))
    assert newer.data.original_request is None and move_from_message(newer.data.original) == move_from_message(
        error.data.original
    )
    duplicate = parse_xml(fixture_path("sc2021/gen-21.3.3-s2c-error-invalid-move-DUPLICATE_SHAPE.xml").read_bytes())
    assert duplicate.data.original is None
    exchange = parse_stream(
        fixture_path("replays/issue-backend-316-skipmove-error-exchange.xml").read_bytes(),
        prepend_protocol=True,
        strict=False,
    )
    skip, reply = (parse_message(e) for e in exchange.messages)
    assert move_from_message(skip) == SkipMove(Color.BLUE)
    assert move_from_message(reply.data.original) == SkipMove(Color.YELLOW)


def test_lobby_errors() -> None:
    error = parse_xml(fixture_path("sc2021/gen-21.3.3-s2c-error-lobby-example.xml").read_bytes())
    assert isinstance(error, M.LobbyError) and error.original_request.reservation_code == "wrong"
    assert move_from_message(error.original_request) is None
    packet = parse_xml(b'<errorpacket message="nope"><originalRequest class="joinRoom" roomId="x"/></errorpacket>')
    assert isinstance(packet, M.ErrorPacket) and packet.message == "nope"
    assert packet.original_request.room_id == "x"


# --- moves -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", [p for p in fixture_files("sc2021") + fixture_files("sc2027") if "-piece-" in p.name], ids=lambda p: p.name
)
def test_piece_fixtures(path: Path) -> None:
    piece = M.Piece.from_xml_tree(parse_document(path.read_bytes()))
    move = move_from_message(piece)
    color, kind, rotation = path.stem.split("-piece-")[1].split("-")[:3]
    assert (move.color.name, move.shape.name, move.rotation.name) == (color, kind, rotation)
    assert move.flipped == ("flipped" in path.name)
    assert (
        M.Piece.from_xml_tree(etree.fromstring(M.to_bytes(move_to_message(move, "r", season=SEASON_2021).data.piece)))
        == piece
    )
    assert derive_set_move(move.color, move.cells) == move


def test_skip_without_colour_is_no_move() -> None:
    message = parse_xml(b'<room roomId="r"><data class="sc.plugin2021.SkipMove"/></room>')
    assert isinstance(message.data, M.SkipMoveData) and move_from_message(message) is None
    attribute_form = parse_xml(b'<room roomId="r"><data class="sc.plugin2021.SkipMove" color="BLUE"/></room>')
    assert move_from_message(attribute_form) is None  # the server ignores the attribute too


def test_moves_round_trip() -> None:
    for move in (SetMove(Color.YELLOW, Shape.PENTO_Y, Rotation.LEFT, True, 3, 12), SkipMove(Color.GREEN)):
        assert move_from_message(parse_xml(to_xml(move_to_message(move, "r", season=SEASON_2021)))) == move


# --- states ------------------------------------------------------------------------------------------


def state_of(name: str):
    path = fixture_path(name)
    data = path.read_bytes()
    try:
        return state_from_xml(data)
    except MalformedXml:  # stream fragment: the memento is the last element
        elements = parse_stream(data, prepend_protocol=True, strict=False).messages
        return read_state(parse_message(elements[-1]))


def _in_season(state: GameState, season: Season) -> GameState:
    """The same position in another season (a position's equality includes its season)."""
    other = state.copy()
    other.season = season
    return other


def test_all_state_dialects_give_the_same_model() -> None:
    initial = [
        state_of(n)
        for n in (
            "sc2021/test-21.0.3-state-initial-with-board-currentColorIndex.xml",
            "sc2021/test-21.2.1-state-initial-with-board.xml",
            "sc2021/test-21.3.0-state-initial-with-board.xml",
        )
    ]
    assert initial[0].state == initial[1].state == initial[2].state
    expected = GameState.from_parts(
        start_piece=Shape.PENTO_L,
        turn=0,
        undeployed={c: SHAPES for c in COLORS},
        valid_colors=COLORS,
        cells=[(0, 0, Color.RED), (1, 3, Color.GREEN), (8, 6, Color.YELLOW), (5, 9, Color.BLUE)],
        season=SEASON_2021,
    )
    assert initial[0].state == expected and not initial[0].warnings

    pento_v = [
        state_of(n)
        for n in (
            "sc2021/gen-21.3.3-s2c-memento-initial-PENTO_V.xml",
            "sc2021/docs-2021-welcome-and-memento-initial-21.2-format.xml",
        )
    ]
    assert pento_v[0].state == pento_v[1].state == GameState.new(SEASON_2021, Shape.PENTO_V)
    assert pento_v[0].names == pento_v[1].names == ("One", "Two")

    ruby = [
        state_of(n)
        for n in (
            "replays/player_ruby-v21.1.0-memento-early-format.xml",
            "replays/player_ruby-v21.2.0-memento-validColors-format.xml",
        )
    ]
    assert ruby[0].state == ruby[1].state and ruby[0].names == ("OwO", "UwU")
    assert ruby[0].state.color is Color.RED and ruby[0].state.valid_colors == (
        Color.BLUE,
        Color.RED,
        Color.GREEN,
    )

    turn0 = [
        state_of(n)
        for n in (
            "sc2021/test-21.4.0-state-minimal-PENTO_I-Bob-Alice.xml",
            "replays/backend-21.4.0-state-turn0.xml",
            "sc2027/test-27.0.4-state-turn0-PENTO_I.xml",
        )
    ]
    assert turn0[0].state == turn0[1].state == GameState.new(SEASON_2021, Shape.PENTO_I)
    assert turn0[2].state == GameState.new(SEASON_2027, Shape.PENTO_I)  # equal but for the season
    assert turn0[0].names == ("Bob", "Alice")

    turn70 = [
        state_of(n)
        for n in (
            "sc2021/test-21.4.0-state-complete-turn70.xml",
            "replays/backend-21.4.0-state-turn70.xml",
            "sc2027/test-27.0.4-state-turn70-PENTO_L-complete.xml",
        )
    ]
    assert turn70[0].state == turn70[1].state and turn70[2].state.season is SEASON_2027
    assert turn70[2].state == _in_season(turn70[0].state, SEASON_2027)  # equal but for the season
    s = turn70[0].state
    assert (s.turn, s.round, s.color) == (70, 18, Color.RED)
    assert s.valid_colors == (Color.YELLOW, Color.RED, Color.GREEN) and s.pieces_left(Color.BLUE) == ()
    assert s.pieces_left(Color.GREEN) == (Shape.MONO, Shape.DOMINO, Shape.TRIO_L, Shape.TRIO_I)
    assert s.last_move == SetMove(Color.BLUE, Shape.MONO, Rotation.NONE, False, 0, 0)
    assert s.last_mono == {Color.BLUE: True} and s.points(Color.BLUE) == 109


def test_legacy_current_color_index_mapping() -> None:
    xml = (
        '<state currentColorIndex="{i}" turn="{t}" round="1" startPiece="PENTO_L"><orderedColors>'
        "<color>BLUE</color><color>RED</color><color>GREEN</color></orderedColors>"
        "<startColor>BLUE</startColor></state>"
    )
    for index, turn, expected_turn in ((0, 0, 0), (1, 5, 6), (2, 5, 7), (0, 3, 4), (1, 2, 2)):
        read = state_from_xml(xml.format(i=index, t=turn))
        assert read.state.turn == expected_turn, (index, turn)
        assert read.state.color is (Color.BLUE, Color.RED, Color.GREEN)[index]
        assert read.state.valid_colors == (Color.BLUE, Color.RED, Color.GREEN)
        assert read.state.round == 1 + expected_turn // 4
        assert not [w for w in read.warnings if "Shapes" not in w]
    bad = state_from_xml(xml.format(i=7, t=1))
    assert bad.state.turn == 1 and any("currentColorIndex" in w for w in bad.warnings)


def test_round_is_recomputed_and_mismatches_reported() -> None:
    read = state_from_xml(
        '<state turn="9" round="1" startPiece="PENTO_L"><validColors><color>BLUE</color></validColors></state>'
    )
    assert read.state.round == 3
    assert any("not in validColors" in w for w in read.warnings)
    assert any("Shapes" in w for w in read.warnings)  # missing shape lists are reported


def test_non_empty_board_never_reads_as_empty() -> None:
    four = fixture_path("sc2021/test-21.4.0-board-four-fields.xml").read_bytes()
    checked = 0
    for folder in ("sc2021", "replays", "sc2027"):
        for path in fixture_files(folder):
            if "-game" in path.name:
                continue
            for element in elements_of(path):
                for board in element.iter("board"):
                    count = len(list(board.iter("field")))
                    model = M.Board.from_xml_tree(board)
                    assert len(model.all_fields) == count, path.name
                    checked += count > 0
    assert checked >= 8
    wrapped = four.replace(b"<board>", b"<board><fields>").replace(b"</board>", b"</fields></board>")
    for data in (four, wrapped):
        board = M.Board.from_xml_tree(parse_document(data))
        assert {(f.x, f.y, f.content) for f in board.all_fields} == {
            (0, 0, Color.RED),
            (1, 3, Color.GREEN),
            (8, 6, Color.YELLOW),
            (5, 9, Color.BLUE),
        }
    state = state_from_xml(
        b'<state turn="0" startPiece="PENTO_L"><board><fields>'
        b'<field x="1" y="2" content="BLUE"/></fields></board></state>'
    ).state
    assert state.cells() == [(1, 2, Color.BLUE)]
    assert M.Board.from_xml_tree(parse_document(b"<board/>")).all_fields == []


def test_state_round_trip() -> None:
    turn70 = state_of("sc2021/test-21.4.0-state-complete-turn70.xml").state
    for state in (GameState.new(SEASON_2021, Shape.PENTO_W), turn70):
        message = state_to_message(state, "room", ("a", "b"))
        again = read_state(parse_xml(to_xml(message)))
        assert again.state == state and again.names == ("a", "b") and again.room_id == "room"
        assert state_from_message(message.data.state) == state
    bare = to_xml(state_to_model(turn70, with_class=False), pretty=True)
    expected = fixture_path("sc2021/test-21.4.0-state-complete-turn70.xml").read_text().rstrip("\n")
    assert bare == expected


def test_state_from_other_messages_is_refused() -> None:
    with pytest.raises(ValueError):
        read_state(M.Room(room_id="r", data=M.MoveRequest()))
    with pytest.raises(ValueError):
        state_from_xml(b'<state turn="3"/>')  # no start piece: no position


# --- results -----------------------------------------------------------------------------------------


def result_of(name: str) -> GameResult:
    element = parse_document(fixture_path(name).read_bytes())
    value = read_bare(element) if element.tag == "result" else parse_message(element)
    return result_from_message(value)


def test_results_2021() -> None:
    win = result_of("sc2021/gen-21.3.3-s2c-result-example-win.xml")
    assert (win.winner, win.draw, win.regular) == (Team.ONE, False, True)
    assert [p.points for p in win.players] == [64, 51] and win.players[0].name == "One"
    assert win.fragments == ("Gewinner", "∅ Punkte")
    draw = result_of("sc2021/gen-21.3.3-s2c-result-example-draw.xml")
    assert (draw.winner, draw.draw) == (None, True) and draw.winner_names == ("One", "Two")
    for name, cause, winner in (
        ("rule-violation-DUPLICATE_SHAPE", "RULE_VIOLATION", Team.ONE),
        ("rule-violation-OBSTRUCTED", "RULE_VIOLATION", Team.TWO),
        ("soft-timeout", "SOFT_TIMEOUT", Team.ONE),
        ("hard-timeout", "HARD_TIMEOUT", Team.ONE),
        ("left", "LEFT", Team.ONE),
    ):
        result = result_of(f"sc2021/gen-21.3.3-s2c-result-{name}.xml")
        assert result.winner is winner and not result.regular and not result.draw, name
        assert result.player(winner.opponent).cause == cause and result.reason


def test_results_newer_forms() -> None:
    for name, winner, points in (
        ("sc2027/docs-27-xml-s2c-result-ONE-wins-137-74.xml", Team.ONE, (137, 74)),
        ("sc2027/player_rust-s2c-result-ONE-wins-121-106.xml", Team.ONE, (121, 106)),
    ):
        result = result_of(name)
        assert (result.winner, result.draw, result.regular) == (winner, False, True)
        assert tuple(p.points for p in result.players) == points
        assert result.players[1].name == "Spieler 2" and result.reason.startswith("Spieler 1")
    violation = result_of("sc2027/test-27.0.4-sdk-gameresult-rule-violation-TWO.xml")
    assert violation.winner is Team.TWO and not violation.regular
    assert result_of("sc2027/test-27.0.4-sdk-gameresult-winner-ONE.xml").winner is Team.ONE
    no_winner = result_of("sc2027/test-27.0.4-sdk-gameresult-no-winner.xml")
    assert no_winner.winner is Team.ONE  # from the first parts: 1 > 0
    tie = fixture_path("sc2027/docs-27-xml-s2c-result-tie-winner-element.xml").read_text()
    scores = (
        '<scores><entry><player name="A" team="ONE"/><score><part>1</part><part>7</part></score></entry>'
        '<entry><player name="B" team="TWO"/><score><part>1</part><part>7</part></score></entry></scores>'
    )
    result = result_from_message(parse_xml(f'<room roomId="r"><data class="result">{scores}{tie}</data></room>'))
    assert (result.winner, result.draw, result.regular) == (None, True, True)
    intermediate = (
        '<room roomId="r"><data class="result"><scores><entry><player name="A" team="ONE"/>'
        '<score cause="REGULAR" reason=""><part>2</part></score></entry><entry>'
        '<player name="B" team="TWO"/><score cause="LEFT" reason="Player left"><part>0</part>'
        '</score></entry></scores><winner team="ONE"/></data></room>'
    )
    result = result_from_message(parse_xml(intermediate))
    assert (result.winner, result.draw, result.regular, result.reason) == (Team.ONE, False, False, "Player left")
    assert result.player(Team.TWO).cause == "LEFT"


def test_sdk_result_test_data_does_not_crash() -> None:
    for name in (
        "sc2021/test-21.4.0-sdk-gameresult-DISABLED-TEST-no-winner.xml",
        "sc2021/test-21.4.0-sdk-gameresult-DISABLED-TEST-with-winner.xml",
    ):
        result = result_of(name)
        assert result.winner is Team.ONE and not result.regular
    replay_result = parse_stream(
        fixture_path("sc2021/test-21.4.0-server-minimal-replay-TestGame.xml").read_bytes()
    ).messages[1]
    result = result_from_message(parse_message(replay_result))
    assert result.draw and result.winner_names == ("", "")
