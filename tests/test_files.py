"""model/files.py and replay loading, bounded: gzip bombs, non-regular files, too many states, unreadable states,
for ``blokus moves``, replay loading and the viewer. Every attack file is generated here."""

from __future__ import annotations

import gzip
import os
import tracemalloc
import zlib

import pytest

from blokus.cli.moves import main as moves_main
from blokus.model.files import FileTooLarge, NotARegularFile, Unpacker, file_chunks, read_bounded
from blokus.model.pieces import Shape
from blokus.model.replay import dump_replay, load_replay, read_replay
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState

MIB = 1 << 20


def game_states(plies: int) -> list[GameState]:
    state = GameState.new(SEASON_2021, Shape.PENTO_L)
    states = [state.copy()]
    for _ in range(plies):
        state.push(state.legal_moves()[0])
        states.append(state.copy())
    return states


def gzip_bomb(unpacked_mib: int) -> bytes:
    """Many gzip members of 1 MiB of zeros each: ``unpacked_mib`` MiB from a few kB, made instantly."""
    return gzip.compress(b"\0" * MIB, compresslevel=9) * unpacked_mib


def test_gzip_bomb_stops_at_the_bound_with_small_memory(tmp_path) -> None:
    bomb = tmp_path / "bomb.xml.gz"
    bomb.write_bytes(gzip_bomb(100))
    assert bomb.stat().st_size < 200_000
    tracemalloc.start()
    try:
        with pytest.raises(FileTooLarge, match="unpacks to more than 2 MiB"):
            for _ in file_chunks(bomb, Unpacker(max_unpacked=2 * MIB)):
                pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * MIB  # streamed: never the whole unpacked size, let alone 100 MiB


def test_single_member_bomb_and_plain_files_are_bounded_too(tmp_path) -> None:
    bomb = tmp_path / "one.gz"
    bomb.write_bytes(zlib.compressobj(9, zlib.DEFLATED, 31).compress(b"\0" * (8 * MIB)) + b"")  # cut off
    with pytest.raises(FileTooLarge):
        read_bounded(bomb, max_unpacked=MIB)
    plain = tmp_path / "big.xml"
    plain.write_bytes(b" " * (2 * MIB))
    with pytest.raises(FileTooLarge, match="is more than 1 MiB"):
        read_bounded(plain, max_unpacked=MIB)


def test_concatenated_and_damaged_gzip(tmp_path) -> None:
    path = tmp_path / "two.gz"
    path.write_bytes(gzip.compress(b"<protocol>") + gzip.compress(b"</protocol>"))
    assert read_bounded(path) == (b"<protocol></protocol>", [])
    whole = gzip.compress(os.urandom(200_000))
    path.write_bytes(whole[: len(whole) // 2])
    data, warnings = read_bounded(path)
    assert 0 < len(data) < 200_000 and warnings and warnings[0].startswith("gzip data damaged or cut off")


def test_non_regular_files_are_refused_before_opening(tmp_path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opening it would block until a writer comes
    for path in (fifo, tmp_path, "/dev/zero"):
        with pytest.raises(NotARegularFile):
            read_bounded(path)
    with pytest.raises(NotARegularFile):
        load_replay(fifo)


def test_blokus_moves_refuses_bombs_devices_and_attribute_bombs(tmp_path, capsys) -> None:
    bomb = tmp_path / "state.xml.gz"
    bomb.write_bytes(gzip_bomb(50))
    attrs = tmp_path / "attrs.xml"  # 90 000 attributes in 880 KiB: used to take 15 s of CPU
    attrs.write_bytes(b"<state " + b" ".join(b'a%d="x"' % i for i in range(90_000)) + b"/>")
    for path, reason in (
        (bomb, "unpacks to more than 1 MiB"),
        ("/dev/zero", "not a regular file"),
        (attrs, "90000 attributes"),
    ):
        assert moves_main([str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and reason in err and "Traceback" not in err


def test_replay_stream_holds_one_message_at_a_time(tmp_path) -> None:
    # 8 MB of unknown messages and text between them: read message by message, memory stays small
    junk = b"<protocol>" + (b"<x>" + b"y" * 800 + b"</x>" + b"z" * 200) * 8000 + b"</protocol>"
    path = tmp_path / "junk.xml"
    path.write_bytes(junk)
    tracemalloc.start()
    try:
        replay = load_replay(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not replay.states and len(replay.warnings) <= 102
    assert peak < 4 * MIB


def test_the_number_of_states_and_messages_is_bounded(tmp_path) -> None:
    many = dump_replay(game_states(20))  # one game of 21 states (a file of several games is refused)
    replay = read_replay(many, max_states=10)
    assert len(replay.states) == 10 and replay.truncated
    assert any("only the first 10" in w for w in replay.warnings)
    assert len(read_replay(many).states) == 21
    flood = b"<protocol>" + b"<x/>" * 20_000 + b"</protocol>"
    replay = read_replay(flood)
    assert replay.truncated and any("messages" in w for w in replay.warnings)


def unreadable_replay() -> bytes:
    data = dump_replay(game_states(4)).decode()
    parts = data.split('<state class="state" turn="')
    assert len(parts) == 6
    parts[2] = "x" + parts[2]  # turn="x1": not a number
    broken = '<state class="state" turn="'.join(parts)
    return broken.replace('<state class="state" turn="3"', '<state class="other" turn="3"').encode()


def test_unreadable_states_are_counted_with_the_first_reason() -> None:
    replay = read_replay(unreadable_replay())
    assert [s.turn for s in replay.states] == [0, 2, 4]
    assert replay.unreadable_states == 2
    assert replay.first_unreadable and "turn" in replay.first_unreadable


async def test_viewer_shows_unreadable_states(tmp_path) -> None:
    from blokus.tui.app import BlokusApp
    from blokus.tui.replay_screen import ReplayScreen
    from blokus.tui.replays import load_replay as load_for_viewer

    path = tmp_path / "broken.xml"
    path.write_bytes(unreadable_replay())
    data = load_for_viewer(path)
    assert data.unreadable_states == 2
    app = BlokusApp(lambda: ReplayScreen(data))
    async with app.run_test(size=(80, 24)):
        screen = app.main_screen
        assert "2 states unreadable" in str(screen.query_one("#status").render())
        notes = [n.message for n in app._notifications]
        assert any("2 states unreadable" in m and "turn" in m for m in notes)


def test_replay_command_gives_one_line_for_a_bomb(tmp_path, capsys) -> None:
    from blokus.cli.replay import main as replay_main

    bomb = tmp_path / "bomb.xml.gz"  # well-formed: 900 kB comments between messages, 70 MB in all
    member = gzip.compress(b"<!--" + b"z" * 900_000 + b"--><x/>", compresslevel=9)
    bomb.write_bytes(gzip.compress(b"<protocol>") + member * 80)
    assert bomb.stat().st_size < 200_000
    assert replay_main([str(bomb)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unpacks to more than 64 MiB" in err
    assert replay_main(["/dev/zero"]) == 2
    assert "not a regular file" in capsys.readouterr().err
