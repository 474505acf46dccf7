"""The opening book (ai/search/book.py): keys up to symmetry, moves mapped between frames, reading a book file
bounded, and the MCTS player's use of it."""

from __future__ import annotations

import logging
import random
import threading
from pathlib import Path

import pytest

from blokus.ai.players.registry import mcts_settings
from blokus.ai.search import book as B
from blokus.ai.search.book import (
    INVERSE,
    SYMMETRIES,
    Book,
    BookError,
    Entry,
    canonical,
    position_key,
    read_book,
    transform_board,
    transform_move,
    verify_entry,
)
from blokus.model.moves import SetMove
from blokus.model.pieces import Shape
from blokus.model.state import GameState


def _random_position(season: int, seed: int, moves: int) -> GameState:
    rng = random.Random(seed)
    state = GameState.new(season, seed=seed)
    for _ in range(moves):
        state.play(rng.choice(state.legal_moves()))
    return state


def _image(state: GameState, k: int) -> GameState:
    """The position under symmetry ``k`` (colours, hands and turn unchanged)."""
    image = state.copy()
    image.boards = [transform_board(b, k) for b in state.boards]
    return image


@pytest.mark.parametrize("season", [2021, 2027])
def test_a_position_and_its_eight_images_share_one_key(season: int) -> None:
    for seed in range(6):
        state = _random_position(season, seed, seed % 5)
        key = position_key(state)
        for k in range(8):
            assert position_key(_image(state, k)) == key


def test_different_positions_have_different_keys() -> None:
    state = GameState.new(2021, "PENTO_L")
    keys = set()
    for move in state.legal_moves():
        after = state.copy()
        after.play(move)
        keys.add(position_key(after))
    assert 1 < len(keys) < len(state.legal_moves())  # symmetric first moves share a key, others do not


@pytest.mark.parametrize("season", [2021, 2027])
def test_a_move_transformed_and_back_has_the_same_cells(season: int) -> None:
    rng = random.Random(season)
    for seed in range(8):
        state = _random_position(season, seed, rng.randrange(6))
        move = rng.choice(state.legal_moves())
        for k in range(8):
            image = transform_move(move, k)
            assert isinstance(image, SetMove) and image.shape == move.shape and image.color == move.color
            assert image.cells == {SYMMETRIES[k](x, y) for x, y in move.cells}
            assert transform_move(image, INVERSE[k]).cells == move.cells
            assert _image(state, k).is_legal(image)  # a legal move's image is legal in the image position


def _entry_of(state: GameState, move: SetMove, path: tuple = ()) -> Entry:
    key, k = canonical(state)
    return Entry(key, transform_move(move, k), path)


def test_lookup_maps_the_book_move_to_the_real_frame_of_a_symmetric_image() -> None:
    state = _random_position(2021, 3, 1)  # YELLOW to move after a BLUE corner start
    move = state.legal_moves()[5]
    book = Book([_entry_of(state, move)])
    assert book.lookup(state) == move
    for k in range(8):
        image = _image(state, k)
        found = book.lookup(image)
        assert found is not None and image.is_legal(found)
        # the image of the book move, or one of the same cells where the position is symmetric
        assert position_key(_played(image, found)) == position_key(_played(state, move))


def _played(state: GameState, move: SetMove) -> GameState:
    after = state.copy()
    after.play(move)
    return after


def test_an_illegal_book_move_is_never_returned(caplog: pytest.LogCaptureFixture) -> None:
    state = GameState.new(2021, "PENTO_L")
    wrong_piece = SetMove(state.color, Shape.PENTO_T, x=0, y=0)  # not the start piece
    key = position_key(state)
    with caplog.at_level(logging.WARNING):
        assert Book([Entry(key, wrong_piece, ())]).lookup(state) is None
    off_corner = SetMove(state.color, state.start_piece, x=5, y=5)
    assert Book([Entry(key, off_corner, ())]).lookup(state) is None
    assert Book().lookup(state) is None


def test_a_book_file_round_trips_and_its_entries_verify(tmp_path: Path) -> None:
    state = GameState.new(2027, "PENTO_X")
    move = state.legal_moves()[0]
    after = _played(state, move)
    reply = after.legal_moves()[3]
    entries = [_entry_of(state, move, ()), _entry_of(after, reply, (move,))]
    path = tmp_path / "book.txt"
    path.write_text(B.format_header("test") + "".join(e.text() + "  # n=1\n" for e in entries))
    book = read_book(path)
    assert len(book) == 2
    assert all(verify_entry(e) is None for e in book.entries.values())
    assert book.lookup(after) is not None


@pytest.mark.parametrize(
    "text, message",
    [
        ("garbage line\n", ":2: expected KEY<TAB>MOVE<TAB>PATH"),
        ("2021:PENTO_L:0:f:0:x:-\tBLUE NOPE NONE false 0 0\t-\n", ":2: not a move"),
        ("a:b\tBLUE SKIP\t-\n", ":2: not a book key"),
        ("x" * (B.MAX_LINE + 1) + "\n", ":2: a line of"),
    ],
)
def test_a_malformed_book_is_a_typed_error_naming_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(B.HEADER + "\n" + text)
    with pytest.raises(BookError, match=f"bad.txt{message}"):
        read_book(path)


def test_an_oversized_or_missing_book_is_a_typed_error(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes(b"#" * (B.MAX_BOOK_BYTES + 10))
    with pytest.raises(BookError, match="big.txt"):
        read_book(big)
    with pytest.raises(BookError, match="nothing.txt"):
        read_book(tmp_path / "nothing.txt")


def test_an_unreadable_shipped_book_is_said_once_and_the_player_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    bad = tmp_path / "book.txt"
    bad.write_text("not a book\n")
    monkeypatch.setattr(B, "BOOK_PATH", bad)
    monkeypatch.setattr(B, "_DEFAULT", None)
    monkeypatch.setattr(B, "_DEFAULT_FAILED", False)
    with caplog.at_level(logging.WARNING, logger="blokus.ai.search.book"):
        assert B.default_book() is None
        assert B.default_book() is None
    assert len([r for r in caplog.records if "opening book not used" in r.message]) == 1


def test_the_shipped_book_parses_and_every_entry_replays_legal() -> None:
    book = read_book(B.BOOK_PATH)
    assert len(book) >= 23  # at least the first move of every start piece of both seasons
    for entry in book.entries.values():
        assert verify_entry(entry) is None, (entry.line, entry.key)
    for season in (2021, 2027):
        for piece in GameState.new(season).season.start_pieces:
            state = GameState.new(season, piece)
            move = book.lookup(state)
            assert move is not None and state.is_legal(move)


def test_the_setting_book_is_a_typed_player_setting() -> None:
    assert mcts_settings("book=0") == (("book", False),)
    with pytest.raises(ValueError, match="book needs 0 or 1"):
        mcts_settings("book=maybe")


def test_the_player_plays_the_book_move_at_once_and_book_0_searches(monkeypatch: pytest.MonkeyPatch) -> None:
    import blokus.ai.search.mcts.player as mcts_player
    from blokus.ai.search.compiled import Kernels
    from blokus.ai.search.mcts import MctsParams, MctsPlayer

    # no compiled search in this test: without the book the player answers by its Python search
    monkeypatch.setattr(mcts_player, "KERNELS", Kernels("blokus.ai.search.mcts"))
    monkeypatch.setattr(mcts_player, "prepare", lambda wait=0.0: False)

    state = _random_position(2021, 1, 1)
    move = state.legal_moves()[2]
    player = MctsPlayer(0, params=MctsParams(threads=1), max_simulations=50)
    player.book = Book([_entry_of(state, move)])
    assert player.think(state.copy(), player.clock() + 60.0, threading.Event()) == move
    assert player.last_info.get("book") is True
    off = MctsPlayer(0, params=MctsParams(threads=1, book=False), max_simulations=50)
    assert off.book is None
    chosen = off.think(state.copy(), off.clock() + 0.5, threading.Event())
    assert state.is_legal(chosen) and "book" not in off.last_info
    assert off.last_info.get("fallback") == "lookahead (compiling)"  # it searched
