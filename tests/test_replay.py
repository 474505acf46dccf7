"""Replay files (docs/spec/protocol.md §10): loading, move reconstruction, gzip, writing, truncated files."""

from __future__ import annotations

import gzip
import re
from datetime import datetime
from pathlib import Path

import pytest

from blokus.model import messages as M
from blokus.model.convert import result_from_message
from blokus.model.framing import ForbiddenDoctype, MalformedXml
from blokus.model.moves import SetMove, SkipMove, parse_move
from blokus.model.pieces import Color, Rotation, Shape, Team
from blokus.model.replay import (
    ColorRemoved,
    MoveEvent,
    Replay,
    ReplayWriter,
    dump_replay,
    events_between,
    load_replay,
    new_replay_path,
    read_replay,
    replay_file_name,
    write_replay,
)
from blokus.model.season import SEASON_2021, SEASON_2027
from blokus.model.state import GameState
from tests.helpers import fixture_path

GAME1 = "sc2021/gen-21.3.3-game1-replay-regular-end.xml"
GAME2 = "sc2021/gen-21.3.3-game2-replay-round-limit-end.xml"


@pytest.fixture(scope="module")
def raw1() -> bytes:
    return fixture_path(GAME1).read_bytes()


@pytest.fixture(scope="module")
def raw2() -> bytes:
    return fixture_path(GAME2).read_bytes()


@pytest.fixture(scope="module")
def game1(raw1: bytes) -> Replay:
    return read_replay(raw1)


@pytest.fixture(scope="module")
def game2(raw2: bytes) -> Replay:
    return read_replay(raw2)


def tsv_moves(name: str) -> list[tuple[int, object]]:
    moves = []
    for line in fixture_path(name).read_text().splitlines():
        if line.startswith("#"):
            continue
        turn, _round, _color, _valid, _legal, move = line.split("\t")[:6]
        moves.append((int(turn), parse_move(move.replace(",", " "))))
    return moves


def test_game1(game1: Replay) -> None:
    assert len(game1.states) == 62 and len(game1.steps) == 61 and not game1.warnings
    assert not game1.truncated and game1.names == ("alice", "bob")
    assert game1.room_id == "00000000-0000-4000-8000-000000000000"
    turns = [s.turn for s in game1.states]
    assert turns[:59] == list(range(59)) and turns[59:] == [60, 61, 65]
    # the turn gaps are colour removals, not moves (GREEN, 63, was already gone at 61 → 65)
    assert game1.removals == [
        ColorRemoved(59, Color.GREEN),
        ColorRemoved(62, Color.RED),
        ColorRemoved(64, Color.BLUE),
        ColorRemoved(65, Color.YELLOW),
    ]
    assert game1.steps[58] == [MoveEvent(58, game1.states[59].last_move), ColorRemoved(59, Color.GREEN)]
    moves = [(e.turn, e.move) for e in game1.events if isinstance(e, MoveEvent)]
    assert moves == tsv_moves("sc2021/gen-21.3.3-game1-moves.tsv")
    assert not any(e.derived for e in game1.events if isinstance(e, MoveEvent))
    result = game1.result
    assert result is not None and result.winner is Team.ONE and result.regular
    assert [p.points for p in result.players] == [122, 105]
    assert [p.name for p in result.players] == ["alice", "bob"]
    final = game1.states[-1]
    assert final.valid_colors == () and final.is_over
    assert (final.team_points(Team.ONE), final.team_points(Team.TWO)) == (122, 105)


def test_game1_moves_replay_on_the_engine(game1: Replay) -> None:
    for before, after, step in zip(game1.states[:-1], game1.states[1:], game1.steps, strict=True):
        state = before.copy()
        state.play(next(e.move for e in step if isinstance(e, MoveEvent)))
        assert state == after


def test_game2(game2: Replay) -> None:
    assert len(game2.states) == 101 and not game2.warnings and not game2.removals
    assert [s.turn for s in game2.states] == list(range(101))
    skips = [m for m in game2.moves if isinstance(m, SkipMove)]
    assert len(skips) == 55 and len(game2.moves) == 100
    moves = [(e.turn, e.move) for e in game2.events if isinstance(e, MoveEvent)]
    assert moves == tsv_moves("sc2021/gen-21.3.3-game2-moves.tsv")
    final = game2.states[-1]
    assert (final.turn, final.round, len(final.valid_colors)) == (100, 26, 4) and final.is_over
    result = game2.result
    assert result.winner is Team.TWO and [p.points for p in result.players] == [86, 105]


def test_stepping(game1: Replay) -> None:
    assert game1.state_at_turn(0) is game1.states[0]
    assert game1.state_at_turn(59).turn == 60
    assert game1.state_at_turn(62).turn == 65 and game1.state_at_turn(500).turn == 65


def test_writer_reproduces_the_official_files(game1: Replay, game2: Replay, raw1: bytes, raw2: bytes) -> None:
    assert game1.to_bytes() == raw1
    assert game2.to_bytes() == raw2
    text = raw1.decode()
    assert text.startswith("<protocol>\n<room ") and text.endswith("</room>\n</protocol>")
    assert all(line.startswith(("<room", "</room", "  ")) for line in text.splitlines()[1:-1])


def test_write_then_read_gives_the_same_states(game1: Replay, tmp_path: Path) -> None:
    for name in ("game.xml", "game.xml.gz"):
        path = write_replay(tmp_path / name, game1.states, game1.result_message, room_id="r-1", names=("A B", "C"))
        again = load_replay(path)
        assert again.states == game1.states and again.names == ("A B", "C") and again.room_id == "r-1"
        assert again.result_message == game1.result_message and again.moves == game1.moves
    # a result built from the model is written in the 2021 form
    data = dump_replay(game1.states[:3], game1.result)
    again = read_replay(data)
    assert again.states == game1.states[:3] and again.result.winner is Team.ONE


def test_gzip(raw1: bytes, game1: Replay, tmp_path: Path) -> None:
    packed = gzip.compress(raw1)
    assert read_replay(packed).states == game1.states
    path = tmp_path / "replay.xml"  # gzip detected by the magic bytes, not the name
    path.write_bytes(packed)
    assert load_replay(path).states == game1.states
    cut = read_replay(packed[: len(packed) // 2])
    assert cut.truncated and cut.warnings and 0 < len(cut.states) < 62


def test_truncated_files(raw1: bytes, game1: Replay) -> None:
    without_end = read_replay(raw1[: raw1.rindex(b"</protocol>")])
    assert without_end.truncated and len(without_end.states) == 62 and without_end.result is not None
    assert any("</protocol>" in w for w in without_end.warnings)
    cut = raw1[: len(raw1) // 3]
    complete = cut.count(b"</room>")
    partial = read_replay(cut)
    assert partial.truncated and len(partial.states) == complete and partial.result is None
    assert partial.states == game1.states[:complete]
    garbage = read_replay(raw1[:20000] + b"</oops>")
    assert garbage.truncated and garbage.states == game1.states[: raw1[:20000].count(b"</room>")]
    with pytest.raises(MalformedXml):
        read_replay(b"<protocol><room></x>")
    with pytest.raises(ForbiddenDoctype):
        read_replay(b"<!DOCTYPE x><protocol>")


def test_unknown_state_classes_are_skipped() -> None:
    replay = load_replay(fixture_path("sc2021/test-21.4.0-server-minimal-replay-TestGame.xml"))
    assert replay.states == [] and replay.result is not None
    assert any("TestGameState" in w for w in replay.warnings)
    replay = load_replay(fixture_path("sc2027/test-27.0.4-server-minimal-replay-TestGame.xml"))
    assert replay.states == [] and replay.result.winner is Team.TWO


def test_errors_are_kept_in_place(game1: Replay) -> None:
    error = M.ErrorData(
        message="Ungueltiger Zug", original_request=M.OriginalRequest(cls=M.SKIP_MOVE_CLASS, color=Color.BLUE)
    )
    data = dump_replay(game1.states[:4], errors=[(2, error)])
    text = data.decode()
    assert text.index('class="error"') < text.index('turn="2"') and text.index('turn="1"') < text.index('class="error"')
    replay = read_replay(data)
    assert replay.errors == [(2, error)] and len(replay.states) == 4 and replay.to_bytes() == data


def test_replay_writer(game1: Replay, tmp_path: Path) -> None:
    path = tmp_path / "live.xml"
    with ReplayWriter(path, names=game1.names) as writer:
        for state in game1.states:
            writer.add_state(state)
        writer.add_result(game1.result_message)
    assert path.read_bytes() == game1.to_bytes()
    crashed = ReplayWriter(tmp_path / "crash.xml.gz")
    crashed.add_state(game1.states[0])
    crashed.add_state(game1.states[1])
    crashed._file.close()  # the process dies: no </protocol>
    replay = load_replay(tmp_path / "crash.xml.gz")
    assert replay.truncated and replay.states == game1.states[:2]
    with pytest.raises(ValueError):
        writer.add_state(game1.states[0])


def test_file_names() -> None:
    when = datetime(2021, 3, 4, 5, 6, 7)
    assert (
        replay_file_name("alice", "bob smith", when, season=SEASON_2021)
        == "replay_swc_2021_blokus_2021-03-04_05-06-07_alice_bob_smith.xml"
    )
    assert replay_file_name("a/b", "c", when, gz=True, season=SEASON_2021).endswith("_a_b_c.xml.gz")
    assert re.fullmatch(
        r"replay_swc_2021_blokus_\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d_x_y\.xml",
        replay_file_name("x", "y", season=SEASON_2021),
    )
    # no brackets or spaces; runs of them become one "_"; the season's game type; a number for arena games
    assert (
        replay_file_name("AI mcts (level 3)", "Jürgen  [team]", when, season=SEASON_2027, number=7)
        == "replay_swc_2027_blokus_2021-03-04_05-06-07_AI_mcts_level_3_Jürgen_team_007.xml"
    )
    # a missing name, or the server's placeholder, is the team; a known name is kept
    assert replay_file_name("", "Unknown", when, season=SEASON_2021).endswith("_ONE_TWO.xml")
    assert replay_file_name("Unknown", "bob", when, season=SEASON_2021).endswith("_ONE_bob.xml")
    assert len(replay_file_name("x" * 5000, "../../etc", when, season=SEASON_2021)) < 120
    assert "/" not in replay_file_name("x", "../../etc", when, season=SEASON_2021)


def test_new_replay_path_never_overwrites(tmp_path) -> None:
    when = datetime(2021, 3, 4, 5, 6, 7)
    first = new_replay_path(tmp_path, ("a", "b"), when=when, season=SEASON_2021)
    first.write_text("")
    second = new_replay_path(tmp_path, ("a", "b"), when=when, season=SEASON_2021)
    assert first.name == "replay_swc_2021_blokus_2021-03-04_05-06-07_a_b.xml"
    assert second.name == "replay_swc_2021_blokus_2021-03-04_05-06-07_a_b_2.xml"
    assert new_replay_path(tmp_path, ("a", "b"), when=when, gz=True, season=SEASON_2021).name.endswith("_a_b.xml.gz")


# --- reconstruction from boards ------------------------------------------------------------------------


def test_set_move_is_derived_when_last_move_disagrees() -> None:
    before = GameState.new(SEASON_2021, Shape.PENTO_L)
    move = SetMove(Color.BLUE, Shape.PENTO_L, Rotation.NONE, True, 0, 16)
    after = before.copy()
    after.play(move)
    after.last_move = SkipMove(Color.RED)  # wrong (older servers repeated moves)
    events, warnings = events_between(before, after)
    assert events == [MoveEvent(0, move, derived=True)] and warnings
    assert events[0].move.cells == move.cells and events[0].move.shape is Shape.PENTO_L
    after.last_move = None
    assert events_between(before, after)[0] == [MoveEvent(0, move, derived=True)]


def test_skip_is_derived_when_the_board_is_unchanged(game1: Replay) -> None:
    before = game1.states[10]
    after = before.copy()
    after.turn += 1
    after.last_move = before.last_move  # the previous move repeated instead of the skip
    events, _ = events_between(before, after)
    assert events == [MoveEvent(10, SkipMove(Color.RED), derived=True)]


def test_round_limit_emptying_of_old_servers() -> None:
    before = GameState.from_parts(
        start_piece=Shape.PENTO_L,
        turn=99,
        cells=[],
        undeployed={},
        valid_colors=[Color.GREEN, Color.BLUE],
        season=SEASON_2021,
    )
    after = GameState.from_parts(
        start_piece=Shape.PENTO_L, turn=100, cells=[], undeployed={}, valid_colors=[], season=SEASON_2021
    )
    events, _ = events_between(before, after)
    assert events[0] == MoveEvent(99, SkipMove(Color.GREEN), derived=True)
    assert set(events[1:]) == {ColorRemoved(100, Color.BLUE), ColorRemoved(100, Color.GREEN)}


def test_result_message_of_a_replay(game1: Replay) -> None:
    assert result_from_message(game1.result_message).winner is Team.ONE
