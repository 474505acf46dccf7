"""docs/protocol.md is true: every XML example parses with our models into what the text says, the shape
table and the transform table are ``model.pieces``', and the pictures are drawn from it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from blokus.model import convert
from blokus.model import messages as M
from blokus.model.convert import UnknownMessage
from blokus.model.framing import parse_stream
from blokus.model.moves import SetMove, SkipMove, parse_move
from blokus.model.pieces import Rotation, Shape, Team, transform
from blokus.model.season import SEASON_2021
from tests.helpers import RawClient, is_room, start_server
from tests.protocol_doc import orientations_picture, shapes_picture

DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"
TEXT = DOC.read_text(encoding="utf-8")
XML_BLOCKS = re.findall(r"```xml\n(.*?)```", TEXT, re.S)
TEXT_BLOCKS = re.findall(r"```text\n(.*?)```", TEXT, re.S)
CELL = re.compile(r"\((\d+),(\d+)\)")


def cells(text: str) -> set[tuple[int, int]]:
    return {(int(x), int(y)) for x, y in CELL.findall(text)}


def test_the_page_is_linked_from_the_readme() -> None:
    readme = (DOC.parent.parent / "README.md").read_text(encoding="utf-8")
    assert "docs/protocol.md" in readme and "docs/player-api.md" in readme


def test_every_xml_example_is_a_message_our_models_read() -> None:
    assert len(XML_BLOCKS) == 16
    for block in XML_BLOCKS:
        message = convert.parse_xml(block)
        assert not isinstance(message, UnknownMessage), (message, block[:80])


def test_whitespace_between_messages_is_no_message() -> None:
    """The stream of the page's picture, and every example in one stream indented and on lines of its own."""
    (start,) = [b for b in TEXT_BLOCKS if b.startswith("<protocol>\n  <joined")]
    messages = parse_stream(start.encode(), strict=False).messages
    assert [m.tag for m in messages] == ["joined", "room"]
    stream = "<protocol>\n" + "\n".join("  " + b.replace("\n", "\n  ") for b in XML_BLOCKS) + "\n</protocol>\n"
    assert len(parse_stream(stream.encode()).messages) == len(XML_BLOCKS)


def test_the_errors_repeat_the_move_under_the_season_s_name() -> None:
    errors = [convert.parse_xml(b) for b in XML_BLOCKS if 'class="error"' in b]
    assert [type(e.data.original_request).__name__ for e in errors] == ["OriginalRequest", "NoneType"]
    assert [type(e.data.original_message).__name__ for e in errors] == ["NoneType", "OriginalRequest"]
    moves = [str(convert.move_from_message(e.data.original)) for e in errors]
    assert moves == ["RED PENTO_I NONE false 19 17"] * 2
    assert [e.data.original.cls for e in errors] == ["sc.plugin2021.SetMove", "sc.plugin2027.SetMove"]


def test_the_close_elements_are_the_seasons() -> None:
    closes = [convert.parse_xml(b) for b in XML_BLOCKS if "Close" in b or b.strip() == "<close/>"]
    assert [type(c) for c in closes] == [M.CloseConnection, M.CloseShort]  # <close/> as read
    assert M.to_xml(M.Close()) == "<close/>"  # as a 2027 client writes it
    assert "<sc.protocol.responses.CloseConnection/></protocol>" in TEXT and "<close/></protocol>" in TEXT


async def test_a_plain_join_plays_on_a_2021_server() -> None:
    server = await start_server(season=SEASON_2021)
    clients = [await RawClient().connect(server.port) for _ in range(2)]
    try:
        for client in clients:
            await client.write("<protocol>\n  <join/>\n")
        for client in clients:
            assert isinstance(await client.read_until(lambda m: isinstance(m, M.Joined)), M.Joined)
            assert await client.read_until(is_room(M.WelcomeMessage)) is not None
    finally:
        for client in clients:
            await client.close()
        await server.close()


def _rooms(data_class: str) -> list[M.Room]:
    rooms = []
    for block in XML_BLOCKS:
        message = convert.parse_xml(block)
        if isinstance(message, M.Room) and f'class="{data_class}' in block.split("\n", 2)[1]:
            rooms.append(message)
    return rooms


def test_the_states_read_as_the_text_says() -> None:
    states = {}
    for block in XML_BLOCKS:
        if 'class="memento"' in block:
            state = convert.state_from_message(convert.parse_xml(block))
            states[state.season.year] = state
    s27, s21 = states[2027], states[2021]
    assert (s27.turn, s27.start_piece, s27.color.name) == (1, Shape.PENTO_X, "YELLOW")
    assert {(x, y) for x, y, _ in s27.cells()} == {(7, 17), (6, 18), (7, 18), (8, 18), (7, 19)}
    assert str(s27.last_move) == "BLUE PENTO_X NONE false 6 17"
    assert (s21.turn, s21.round, s21.color.name) == (70, 18, "RED")
    assert isinstance(s21.last_move, SkipMove) and s21.last_mono == {0: True}


def test_the_moves_read_as_the_text_says() -> None:
    moves = [
        convert.move_from_message(convert.parse_xml(b))
        for b in XML_BLOCKS
        if "SetMove" in b.split("\n", 2)[1] or "SkipMove" in b.split("\n", 2)[1]
    ]
    assert [str(m) for m in moves] == ["BLUE PENTO_U NONE false 0 0", "BLUE SKIP"]
    assert parse_move("BLUE PENTO_U NONE false 0 0") == moves[0]


def test_the_results_read_as_the_text_says() -> None:
    results = [convert.result_from_message(convert.parse_xml(b)) for b in XML_BLOCKS if 'class="result"' in b]
    assert [(r.winner, r.points(Team.ONE), r.points(Team.TWO), r.regular) for r in results] == [
        (Team.ONE, 137, 74, True),
        (Team.ONE, 64, 51, True),
    ]


def test_the_shape_table_is_the_server_s() -> None:
    rows = re.findall(r"^\| (\d+) \| ([A-Z_]+) \| ([()\d, ]+) \|$", TEXT, re.M)
    assert [(int(i), name) for i, name, _ in rows] == [(s.value, s.name) for s in Shape]
    for _, name, text in rows:
        assert cells(text) == set(Shape[name].base_cells), name
    assert shapes_picture() in TEXT


@pytest.mark.parametrize("flipped", [False, True])
def test_the_transform_table_and_pictures_are_the_server_s(flipped: bool) -> None:
    rows = re.findall(r"^\| (NONE|RIGHT|MIRROR|LEFT) \| (true|false) \| ([()\d, ]+) \|$", TEXT, re.M)
    assert len(rows) == 8
    for rotation, flip, text in rows:
        if (flip == "true") == flipped:
            assert cells(text) == set(transform(Shape.PENTO_L, Rotation[rotation], flipped)), (rotation, flip)
    assert orientations_picture() in TEXT
    example = re.search(r"`BLUE PENTO_L RIGHT false` at position \((\d+), (\d+)\) covers ([()\d, ]+)\.", TEXT)
    assert example is not None
    x, y = int(example.group(1)), int(example.group(2))
    assert SetMove(parse_move("BLUE SKIP").color, Shape.PENTO_L, Rotation.RIGHT, False, x, y).cells == cells(
        example.group(3)
    )
