"""Season 2027 (``swc_2027_blokus``): the rules of the profile, and every 2027 fixture read (and, for the
forms we write, written back equal after canonicalisation). Forms the spec marks as *derived* are
tested as derived here (``DERIVED`` comments) so that a later real capture can replace them."""

from __future__ import annotations

import random

import pytest

from blokus.model import messages as M
from blokus.model.convert import detect_season, move_to_message, parse_xml, read_state, state_from_xml, state_to_message
from blokus.model.framing import parse_document
from blokus.model.moves import IllegalMoveError, MoveMistake, SetMove, SkipMove
from blokus.model.pieces import COLORS, SHAPES, Color, Rotation, Shape, Team
from blokus.model.result import Cause, irregular_result, regular_result, result_from_data, result_to_data
from blokus.model.season import SEASON_2021, SEASON_2027, season_named
from blokus.model.state import GameState
from tests.helpers import canonical, fixture_path

FIXTURES = "sc2027"


def _text(name: str) -> bytes:
    return fixture_path(f"{FIXTURES}/{name}").read_bytes()


# --- rules ----------------------------------------------------------------------------------------------


def _new(piece: Shape, season=SEASON_2027) -> GameState:
    return GameState.new(season, piece)


@pytest.mark.parametrize(
    "x,y,rotation",
    [
        (7, 0, Rotation.RIGHT),  # top edge, horizontal I
        (0, 7, Rotation.NONE),  # left edge, vertical I
        (19, 3, Rotation.NONE),  # right edge
        (9, 19, Rotation.RIGHT),  # bottom edge
    ],
)
def test_first_piece_on_each_border_side(x, y, rotation):
    move = SetMove(Color.BLUE, Shape.PENTO_I, rotation, False, x, y)
    assert _new(Shape.PENTO_I).validate(move) is None
    # the 2021 rule wants a corner
    assert _new(Shape.PENTO_I, SEASON_2021).validate(move) is MoveMistake.NOT_IN_CORNER


def test_first_piece_off_the_border_is_not_on_border():
    state = _new(Shape.PENTO_L)
    move = SetMove(Color.BLUE, Shape.PENTO_L, Rotation.NONE, False, 5, 5)
    assert state.validate(move) is MoveMistake.NOT_ON_BORDER
    with pytest.raises(IllegalMoveError) as info:
        state.play(move)
    assert str(info.value) == ("Der erste Zug muss an den Rand gesetzt werden bei 'Setze PENTO_L(Farbe Blau)[5,5]'")
    assert MoveMistake.NOT_ON_BORDER.german == "Der erste Zug muss an den Rand gesetzt werden"
    assert state.legal_moves().__contains__(move) is False


def test_wrong_first_shape_and_x_start():
    state = _new(Shape.PENTO_X)
    assert state.validate(SetMove(Color.BLUE, Shape.PENTO_L, Rotation.NONE, False, 0, 0)) is MoveMistake.WRONG_SHAPE
    # X touching the bottom border (the docs' captured memento) is legal
    state.play(SetMove(Color.BLUE, Shape.PENTO_X, Rotation.NONE, False, 6, 17))
    assert state.turn == 1 and state.color is Color.YELLOW
    assert "PENTO_X" in SEASON_2027.start_pieces and "PENTO_X" not in SEASON_2021.start_pieces
    drawn = {GameState.new(rng=random.Random(i), season=SEASON_2027).start_piece for i in range(300)}
    assert Shape.PENTO_X in drawn and len(drawn) == 12


@pytest.mark.parametrize(
    "piece,count",
    [
        ("PENTO_L", 544),
        ("PENTO_T", 272),
        ("PENTO_I", 136),
        ("PENTO_P", 560),
        ("PENTO_U", 280),
        ("PENTO_W", 272),
        ("PENTO_X", 68),
    ],
)
def test_opening_sizes_match_the_spec(piece, count):
    """docs/spec/season-2027.md §1.2 (PENTO_W's 272 is the backend's own test)."""
    assert len(_new(Shape[piece]).legal_moves()) == count
    if piece != "PENTO_X":
        assert len(_new(Shape[piece], SEASON_2021).legal_moves()) < 30


def test_colours_may_start_side_by_side():
    state = _new(Shape.PENTO_I)
    state.play(SetMove(Color.BLUE, Shape.PENTO_I, Rotation.RIGHT, False, 0, 0))
    yellow = SetMove(Color.YELLOW, Shape.PENTO_I, Rotation.RIGHT, False, 5, 0)  # edge to edge with BLUE
    assert state.validate(yellow) is None


def test_game_ends_at_turn_96():
    full = {c: list(SHAPES) for c in COLORS}
    late = [c for c in COLORS]
    for season, over_at in ((SEASON_2027, 96), (SEASON_2021, 100)):
        for turn in (over_at - 1, over_at):
            state = GameState.from_parts(
                start_piece=Shape.PENTO_L, turn=turn, cells=[], undeployed=full, valid_colors=late, season=season
            )
            assert state.is_over is (turn == over_at)
    assert SEASON_2027.turn_limit == 96 and SEASON_2027.round_limit == 24


def test_a_random_2027_game_never_passes_turn_96():
    rng = random.Random(5)
    state = GameState.new(SEASON_2027, Shape.PENTO_X)
    while not state.is_over:
        moves = state.legal_moves()
        state.play(moves[rng.randrange(len(moves))] if len(moves) else SkipMove(state.color))
    assert state.turn <= 96 and state.copy().season is SEASON_2027


def test_wrong_colour_text_of_2027():
    state = _new(Shape.PENTO_L)
    move = SkipMove(Color.RED)
    assert state.validate(move) is MoveMistake.WRONG_COLOR
    assert SEASON_2027.mistake_text(MoveMistake.WRONG_COLOR) == "Nur eigene Spielfiguren können gezogen werden"
    assert SEASON_2021.mistake_text(MoveMistake.WRONG_COLOR) == MoveMistake.WRONG_COLOR.german


def test_season_names():
    assert season_named("2027") is SEASON_2027 and season_named("swc_2021_blokus") is SEASON_2021
    with pytest.raises(KeyError):
        season_named("2026")


# --- states ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "docs-27-xml-s2c-memento-turn1-PENTO_X.xml",
        "player_rust-s2c-memento-turn0-PENTO_W.xml",
        "player_rust-s2c-memento-turn1-PENTO_W-flipped-at-0-16.xml",
    ],
)
def test_captured_mementos_are_read_as_2027_and_written_back_equal(name):
    raw = _text(name)
    message = parse_xml(raw)
    read = read_state(message)
    assert read.detected is SEASON_2027 and read.state.season is SEASON_2027 and not read.warnings
    written = M.to_xml(state_to_message(read.state, message.room_id), pretty=True)
    assert canonical(written) == canonical(raw)


def test_server_truth_states():
    for name in ("test-27.0.4-state-turn0-PENTO_I.xml", "test-27.0.4-state-turn70-PENTO_L-complete.xml"):
        raw = _text(name)
        read = state_from_xml(raw)
        assert read.state.season is SEASON_2027
        model = state_to_message(read.state, "r").data.state
        model.cls = None  # a bare state, as XStream writes it outside a memento
        assert canonical(M.to_xml(model)) == canonical(raw), name
    complete = state_from_xml(_text("test-27.0.4-state-turn70-PENTO_L-complete.xml")).state
    assert complete.turn == 70 and complete.last_move == SetMove(Color.BLUE, Shape.MONO, x=0, y=0)
    assert complete.last_mono == {Color.BLUE: True} and not complete.is_valid(Color.BLUE)


def test_a_2027_state_is_judged_by_2027_rules_and_first_piece_x_detects_2027():
    state = state_from_xml(_text("player_rust-s2c-memento-turn0-PENTO_W.xml")).state
    assert len(state.legal_moves()) == 272
    bare = M.State(turn=0, start_piece=Shape.PENTO_X)
    assert detect_season(bare) is SEASON_2027
    assert detect_season(M.State(turn=0, start_piece=Shape.PENTO_L)) is None
    # an explicit season overrides the form
    assert state_from_xml(_text("player_rust-s2c-memento-turn0-PENTO_W.xml"), SEASON_2021).state.season is SEASON_2021


@pytest.mark.parametrize(
    "name,move",
    [
        ("player_rust-handwritten-state-lastMove-SkipMove-GREEN.xml", SkipMove(Color.GREEN)),
        (
            "player_rust-handwritten-state-lastMove-SetMove-YELLOW-TRIO_L.xml",
            SetMove(Color.YELLOW, Shape.TRIO_L, Rotation.RIGHT, False, 3, 5),
        ),
    ],
)
def test_hand_written_partial_states(name, move):
    """Partial states (only ``turn`` and ``lastMove``): the model reads them; no position can be built."""
    from blokus.model.convert import move_from_message

    model = M.State.from_xml_tree(parse_document(_text(name)))
    assert move_from_message(model.last_move) == move and detect_season(model) is SEASON_2027
    with pytest.raises(ValueError):
        state_from_xml(_text(name))


def test_mono_entry_key_may_be_the_qualified_colour():
    raw = _text("test-27.0.4-state-turn70-PENTO_L-complete.xml").replace(
        b"<color>BLUE</color>\n      <boolean>", b"<sc.plugin2027.Color>BLUE</sc.plugin2027.Color>\n      <boolean>"
    )
    assert b"sc.plugin2027.Color" in raw
    assert state_from_xml(raw).state.last_mono == {Color.BLUE: True}


# --- moves and other messages ------------------------------------------------------------------------


def test_client_moves_are_written_as_2027():
    set_raw = _text("docs-27-xml-c2s-setmove-PENTO_U.xml")
    message = parse_xml(set_raw)
    move = SetMove(Color.BLUE, Shape.PENTO_U, Rotation.NONE, False, 0, 0)
    assert message.data.cls == "sc.plugin2027.SetMove"
    assert canonical(M.to_xml(move_to_message(move, "ROOM_ID", SEASON_2027))) == canonical(set_raw)
    skip_raw = _text("docs-27-xml-c2s-skipmove-template.xml").replace(b"TEAM_FARBE", b"BLUE")
    assert canonical(
        M.to_xml(move_to_message(SkipMove(Color.BLUE), parse_xml(skip_raw).room_id, SEASON_2027))
    ) == canonical(skip_raw)
    assert "sc.plugin2021.SetMove" in M.to_xml(move_to_message(move, "r", season=SEASON_2021))
    assert "sc.plugin2027.SetMove" in M.to_xml(move_to_message(move, "r"))  # the default season is 2027


@pytest.mark.parametrize(
    "name",
    [
        "docs-27-xml-c2s-join-gameType.xml",
        "docs-27-xml-s2c-moveRequest.xml",
        "docs-admin-c2s-prepare.xml",
        "docs-protokoll-c2s-join-any.xml",
        "docs-protokoll-c2s-joinPrepared.xml",
        "docs-protokoll-c2s-joinRoom.xml",
        "docs-protokoll-s2c-joined.xml",
        "docs-protokoll-s2c-welcomeMessage.xml",
        "test-27.0.4-sdk-join-gameType-umlaut.xml",
        "test-27.0.4-sdk-join-minimal.xml",
        "test-27.0.4-sdk-prepare-request.xml",
        "test-27.0.4-sdk-prepare-deserialize-input.xml",
        "test-27.0.4-sdk-room-moveRequest.xml",
        "test-27.0.4-sdk-room-paused.xml",
    ],
)
def test_every_protocol_fixture_is_read(name):
    message = parse_xml(_text(name).replace(b'"TEAMNUMBER"', b'"ONE"'))  # a template's placeholder
    assert not isinstance(message, M.UnknownMessage), message


def test_written_protocol_forms_equal_the_fixtures():
    from blokus.net.wire import SeasonWire

    wire = SeasonWire(SEASON_2027)
    assert canonical(wire.move_request("12345")) == canonical(_text("test-27.0.4-sdk-room-moveRequest.xml"))
    assert canonical(wire.welcome("ROOM_ID", Team.ONE)) == canonical(
        _text("docs-protokoll-s2c-welcomeMessage.xml").replace(b'"TEAMNUMBER"', b'"ONE"')
    )
    join = M.Join(game_type=SEASON_2027.game_type)
    assert canonical(M.to_xml(join)) == canonical(_text("docs-27-xml-c2s-join-gameType.xml"))
    prepare = M.Prepare(
        game_type=SEASON_2027.game_type,
        pause=False,
        slots=[
            M.Slot(display_name=s.display_name, can_timeout=s.can_timeout, reserved=s.reserved)
            for s in parse_xml(_text("test-27.0.4-sdk-prepare-request.xml")).slots
        ],
    )
    fixture = parse_xml(_text("test-27.0.4-sdk-prepare-request.xml"))
    prepare.game_type = fixture.game_type
    assert canonical(M.to_xml(prepare)) == canonical(_text("test-27.0.4-sdk-prepare-request.xml"))
    assert wire.close() == "<close/>"


def test_the_minimal_replay_layout_is_read_without_a_blokus_state():
    from blokus.model.replay import read_replay

    replay = read_replay(_text("test-27.0.4-server-minimal-replay-TestGame.xml"))
    assert replay.states == [] and replay.result is not None and replay.result.winner is Team.TWO


# --- results --------------------------------------------------------------------------------------------


def _result_data(name: str) -> M.ResultData:
    root = parse_document(_text(name))
    if root.tag == "result":  # bare sdk form: the data element under another name
        root.tag = "data"
        root.set("class", "result")
        return M.ResultData.from_xml_tree(root)
    return parse_xml(_text(name)).data


@pytest.mark.parametrize(
    "name,winner,points",
    [
        ("docs-27-xml-s2c-result-ONE-wins-137-74.xml", Team.ONE, (137, 74)),
        ("player_rust-s2c-result-ONE-wins-121-106.xml", Team.ONE, (121, 106)),
    ],
)
def test_captured_results_read_and_written_back(name, winner, points):
    result = result_from_data(_result_data(name))
    assert (result.winner, result.regular, result.cause, result.draw) == (winner, True, Cause.REGULAR, False)
    assert (result.points(Team.ONE), result.points(Team.TWO)) == points
    assert result.names == ("Spieler 1", "Spieler 2")
    assert result.fragments == SEASON_2027.result_fragments
    room = parse_xml(_text(name))
    written = M.to_xml(M.Room(room_id=room.room_id, data=result_to_data(result, SEASON_2027)), pretty=True)
    assert canonical(written) == canonical(_text(name))
    # and the server builds the same result from the same points and names
    built = regular_result(points, ("Spieler 1", "Spieler 2"), SEASON_2027)
    assert canonical(M.to_xml(M.Room(room_id=room.room_id, data=result_to_data(built, SEASON_2027)))) == canonical(
        _text(name)
    )


def test_tie_and_sdk_results():
    tie = parse_document(_text("docs-27-xml-s2c-result-tie-winner-element.xml"))
    winner = M.Winner.from_xml_tree(tie)
    assert winner.team is None and winner.regular is True
    built = regular_result((80, 80), ("", ""), SEASON_2027)
    data = result_to_data(built, SEASON_2027)
    assert canonical(M.to_xml(data.winners[0])) == canonical(_text("docs-27-xml-s2c-result-tie-winner-element.xml"))
    assert "<player team=" in M.to_xml(data) and "player name=" not in M.to_xml(data)  # blank names omitted
    violation = result_from_data(_result_data("test-27.0.4-sdk-gameresult-rule-violation-with-move-TWO.xml"))
    assert (violation.regular, violation.winner, violation.cause, violation.offender) == (
        False,
        Team.TWO,
        Cause.RULE_VIOLATION,
        Team.ONE,
    )
    assert violation.reason == "Regelverletzung von rad: kalkül bei 'TestZug'"
    no_winner = result_from_data(_result_data("test-27.0.4-sdk-gameresult-no-winner.xml"))
    assert no_winner.winner is Team.ONE and no_winner.fragments == ("winner",)  # generic sdk definition
    assert result_from_data(_result_data("test-27.0.4-sdk-gameresult-winner-ONE.xml")).reason == "rad hat gewonnän"


def test_irregular_2027_result_zeroes_the_violator():
    """DERIVED (docs/spec/season-2027.md §3.6): no 2027 capture of an irregular result exists."""
    reason = SEASON_2027.irregular_reason(Cause.SOFT_TIMEOUT, "alice")
    assert reason == "alice hat fuer die Antwort auf die Zugaufforderung laenger als 2 Sekunden gebraucht."
    result = irregular_result(Team.ONE, Cause.SOFT_TIMEOUT, reason, (40, 30), ("alice", "bob"), SEASON_2027)
    assert [p.parts for p in result.players] == [(0, 0), (2, 30)]
    again = result_from_data(result_to_data(result, SEASON_2027))
    assert (again.winner, again.regular, again.cause, again.offender, again.reason) == (
        Team.TWO,
        False,
        Cause.SOFT_TIMEOUT,
        Team.ONE,
        reason,
    )
    old = irregular_result(Team.ONE, Cause.SOFT_TIMEOUT, "x", (40, 30), ("alice", "bob"), SEASON_2021)
    assert [p.parts for p in old.players] == [(0, 40), (2, 30)]  # 2021 kept the violator's points


def test_the_compiled_engine_follows_the_season():
    from blokus.model.fast import FastState

    for piece in ("PENTO_W", "PENTO_X"):
        for season in (SEASON_2021, SEASON_2027):
            state = GameState.new(season, Shape[piece])
            assert FastState.from_state(state).legal_placements().tolist() == state.legal_placements().tolist()


def test_blokus_moves_detects_the_season_and_the_option_overrides(capsys):
    from blokus.cli.moves import main as moves_main

    path = str(fixture_path(f"{FIXTURES}/player_rust-s2c-memento-turn0-PENTO_W.xml"))
    assert moves_main([path, "--count"]) == 0
    assert capsys.readouterr().out.strip() == "272"
    assert moves_main([path, "--count", "--season", "2021"]) == 0
    assert capsys.readouterr().out.strip() == "8"
    assert moves_main([path]) == 0
    lines = capsys.readouterr().out.splitlines()
    from blokus.model.moves import parse_move

    state = state_from_xml(_text("player_rust-s2c-memento-turn0-PENTO_W.xml")).state
    assert len(lines) == 272 and all(state.validate(parse_move(line)) is None for line in lines)
    assert any(parse_move(line).y == 0 and parse_move(line).x > 3 for line in lines)  # border, no corner


@pytest.mark.parametrize("command", ["play", "replay", "bot", "serve", "arena", "moves"])
def test_every_command_names_the_season_option(command, capsys):
    import blokus

    with pytest.raises(SystemExit) as info:
        blokus.main([command, "--help"])
    assert info.value.code == 0
    assert "--season 2021|2027" in capsys.readouterr().out


def test_a_state_keeps_its_season_through_pickling():
    """Engine processes and arena workers get states by pickle: the season stays the one profile."""
    import pickle

    state = GameState.new(SEASON_2027, Shape.PENTO_X)
    again = pickle.loads(pickle.dumps(state))
    assert again.season is SEASON_2027 and len(again.legal_moves()) == 68


def test_arena_plays_2027_and_writes_its_games_as_2027_replays(tmp_path, capsys):
    from blokus.cli.arena import main as arena_main
    from blokus.model.replay import load_replay

    assert (
        arena_main(
            [
                "greedy",
                "random",
                "--games",
                "2",
                "--move-time",
                "20",
                "--season",
                "2027",
                "--quiet",
                "--save-replay",
                str(tmp_path),
                "--no-adjudication",  # played out: the replay's last state is the game's end
            ]
        )
        == 0
    )
    assert "season 2027" in capsys.readouterr().out
    paths = sorted(tmp_path.glob("*.xml"))  # (beside each, its moves' records)
    assert len(paths) == 2 and all(p.name.startswith("replay_swc_2027_blokus_") for p in paths)
    for path in paths:
        replay = load_replay(path)
        assert replay.detected is SEASON_2027 and replay.states[-1].is_over and replay.states[-1].turn <= 96
        assert replay.result.regular and not replay.warnings
        assert len(replay.moves) == len(replay.states) - 1
