"""Replay files of the official servers (docs/spec/protocol.md §10, docs/spec/season-2027.md §5): reading and writing.

A replay is ``<protocol>`` + one memento per state (+ in 21.4.0/27.x the in-room errors) + the result +
``</protocol>``, plain (``.xml``) or gzipped (``.xml.gz``, also detected by the magic bytes ``1f 8b``).
Moves are not stored: the game record (``model.record``) reconstructs them from consecutive states. The
season is detected from the first state's form; files are written in the form of the states' season.
"""

from __future__ import annotations

import gzip
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from lxml import etree

from blokus.model import messages as M
from blokus.model.convert import parse_message, read_state, state_to_message, to_xml
from blokus.model.files import DEFAULT_MAX_UNPACKED, FileReadError, Unpacker, file_chunks
from blokus.model.framing import END_OF_STREAM, ForbiddenDoctype, ProtocolError, StreamFramer, TruncatedStream
from blokus.model.record import ColorRemoved, GameRecord, MoveEvent, ReplayEvent, events_between
from blokus.model.result import GameResult, result_from_data, result_to_data
from blokus.model.season import DEFAULT_SEASON, Season
from blokus.model.state import GameState

log = logging.getLogger(__name__)


DEFAULT_ROOM_ID = "00000000-0000-4000-8000-000000000000"


# --- the replay --------------------------------------------------------------------------------------


__all__ = [
    "ColorRemoved",
    "GameRecord",
    "MoveEvent",
    "Replay",
    "ReplayEvent",
    "ReplayWriter",
    "UnreadableReplay",
    "dump_replay",
    "events_between",
    "load_replay",
    "new_replay_path",
    "read_game",
    "read_replay",
    "replay_file_name",
    "replay_layout",
    "write_replay",
]


@dataclass(eq=False)
class Replay(GameRecord):
    """A loaded (or recorded) game: the game record (states, events between them) and the result."""

    result_message: M.ResultData | None = None
    names: tuple[str, str] = ("", "")
    room_id: str = DEFAULT_ROOM_ID
    errors: list[tuple[int, M.ErrorData]] = field(default_factory=list)  # (states before it, error)
    truncated: bool = False  # the file ended before </protocol> (or more states than are loaded)
    unreadable_states: int = 0  # mementos that could not be read (skipped; never silently)
    first_unreadable: str | None = None  # why the first of them could not be read
    detected: Season | None = None  # the season the file's form shows (None: cannot tell)
    another_game: str | None = None  # a later state is no continuation of the game: why (not loaded)

    def __post_init__(self) -> None:
        GameRecord.__init__(self)

    @property
    def result(self) -> GameResult | None:
        """The result; player names the result does not carry are taken from the states."""
        if self.result_message is None:
            return None
        return result_from_data(self.result_message).with_names(self.names)

    def to_bytes(self) -> bytes:
        return dump_replay(self.states, self.result_message, room_id=self.room_id, names=self.names, errors=self.errors)

    def save(self, path: str | Path) -> Path:
        return write_replay(
            path, self.states, self.result_message, room_id=self.room_id, names=self.names, errors=self.errors
        )


MAX_STATES = 1000  # a game has at most 101 states; more are not loaded (a warning says so)
MAX_MESSAGES = 10_000  # messages of any kind read from one file
MAX_WARNINGS = 100  # kept in Replay.warnings; the rest are counted in the last one


class _ReplayReader:
    """Turns the messages of a replay file into a :class:`Replay` one by one, so that only one
    message's XML tree is held at a time."""

    def __init__(self, max_states: int, season: Season | None = None) -> None:
        self.replay = Replay()
        self.season = season  # chosen by the user: overrides what the states' form shows
        self.max_states = max_states
        self.messages = 0
        self.full = False  # the state or message bound is reached: stop reading
        self._names_known = False
        self._rooms_seen = False
        self.dropped_warnings = 0  # beyond MAX_WARNINGS: counted, not kept
        self.stop_reason: str | None = None  # a bound was reached

    def add(self, element: etree._Element) -> None:
        self._add(element)
        warnings = self.replay.warnings
        if len(warnings) > MAX_WARNINGS:
            self.dropped_warnings += len(warnings) - MAX_WARNINGS
            del warnings[MAX_WARNINGS:]

    def _add(self, element: etree._Element) -> None:
        replay = self.replay
        self.messages += 1
        if self.messages >= MAX_MESSAGES:
            self._stop(f"more than {MAX_MESSAGES} messages: the rest of the file is not read")
        message = parse_message(element)
        if isinstance(message, M.UnknownMessage):
            if message.data_class == M.MEMENTO_CLASS:
                self._unreadable(message.reason)
            replay.warnings.append(f"skipped: {message}")
            return
        if not isinstance(message, M.Room):
            replay.warnings.append(f"skipped unexpected <{element.tag}> message")
            return
        if not self._rooms_seen:
            replay.room_id, self._rooms_seen = message.room_id, True
        data_ = message.data
        if isinstance(data_, M.Memento):
            try:
                read = read_state(message, self.season or replay.detected)
            except (ValueError, TypeError) as exc:
                self._unreadable(str(exc))
                replay.warnings.append(f"skipped unreadable state: {exc}")
                return
            if replay.detected is None and read.detected is not None:
                replay.detected = read.detected
                for earlier in replay.states:  # states before the first telling one: the same season
                    earlier.season = self.season or read.detected
            if replay.states and (why := _another_game(replay, read.state, read.detected)) is not None:
                replay.another_game = why  # the rest is another game: not loaded (read_game refuses the file)
                self.full = True
                return
            replay.warnings.extend(f"turn {read.state.turn}: {w}" for w in read.warnings)
            if not self._names_known and any(read.names):
                replay.names, self._names_known = read.names, True
            replay.add_state(read.state)
            if len(replay.states) >= self.max_states:
                self._stop(f"more than {self.max_states} states: only the first {self.max_states} are loaded")
        elif isinstance(data_, M.ResultData):
            if replay.result_message is not None:
                replay.warnings.append("more than one result: the last one counts")
            replay.result_message = data_
        elif isinstance(data_, M.ErrorData):
            replay.errors.append((len(replay.states), data_))
        else:
            replay.warnings.append(f"skipped room message of class {data_.cls!r}")

    def _stop(self, reason: str) -> None:
        self.full = True
        self.stop_reason = reason
        self.replay.truncated = True

    def _unreadable(self, reason: str) -> None:
        replay = self.replay
        replay.unreadable_states += 1
        if replay.first_unreadable is None:
            replay.first_unreadable = " ".join(str(reason).split())[:200]


def _names_of_result(data: M.ResultData, warnings: list[str]) -> tuple[str, str]:
    """The players' names as the result gives them (team ONE, team TWO; "" where it gives none)."""
    try:
        return result_from_data(data).names
    except (ValueError, TypeError) as exc:
        warnings.append(f"the result's player names are unreadable: {exc}")
        return "", ""


def read_replay(
    data: bytes, season: Season | None = None, *, max_unpacked: int = DEFAULT_MAX_UNPACKED, max_states: int = MAX_STATES
) -> Replay:
    """Read a replay from bytes (plain or gzip); ``season`` overrides the season the states' form shows
    (else: detected from the first state that tells, else the default season). Never raises for a cut-off or partly
    damaged file: everything up to the last complete message is loaded and the problem is put in ``warnings``.
    Raises :class:`~model.framing.ProtocolError` only if nothing at all could be read (or for a
    DOCTYPE), :class:`~model.files.FileTooLarge` if the data unpacks to more than ``max_unpacked``."""
    unpacker = Unpacker(max_unpacked=max_unpacked)
    return _read_chunks(unpacker.unpack_bytes(data), unpacker, max_states, season)


def load_replay(
    path: str | Path,
    season: Season | None = None,
    *,
    max_unpacked: int = DEFAULT_MAX_UNPACKED,
    max_states: int = MAX_STATES,
) -> Replay:
    """Read a replay file (``.xml`` or ``.xml.gz``) as a stream: memory grows with the states loaded,
    not with the file. Raises ``OSError`` and :class:`~model.files.FileReadError` (not a regular file,
    too large unpacked) besides what :func:`read_replay` raises."""
    unpacker = Unpacker(max_unpacked=max_unpacked)
    return _read_chunks(file_chunks(path, unpacker), unpacker, max_states, season)


def _another_game(replay: Replay, state: GameState, season: Season | None) -> str | None:
    """Why ``state`` cannot follow the last state loaded in the same game (None: it can)."""
    before = replay.states[-1]
    if season is not None and replay.detected is not None and season is not replay.detected:
        return f"a {replay.detected.name} game is followed by a {season.name} game at state {len(replay.states) + 1}"
    if state.turn < before.turn:
        return f"turn {state.turn} follows turn {before.turn} at state {len(replay.states) + 1}"
    if any(old & ~new for old, new in zip(before.boards, state.boards, strict=True)):
        return f"fields of turn {before.turn} are gone at turn {state.turn}, state {len(replay.states) + 1}"
    return None


class UnreadableReplay(Exception):
    """A file that is no readable replay with a game in it: one line for the user (without the path)."""


def read_game(path: str | Path, season: Season | None = None, *, max_unpacked: int = DEFAULT_MAX_UNPACKED) -> Replay:
    """:func:`load_replay` for a user's file: every failure, and a file without a game state, is one
    :class:`UnreadableReplay` line (the one mapping of read errors for every command)."""
    path = Path(path)
    try:
        if path.is_dir():
            raise UnreadableReplay("is a directory, not a replay file")
        if path.is_file() and path.stat().st_size == 0:
            raise UnreadableReplay("the file is empty")
        replay = load_replay(path, season, max_unpacked=max_unpacked)
    except UnreadableReplay:
        raise
    except FileNotFoundError:
        raise UnreadableReplay("no such file") from None
    except FileReadError as exc:
        raise UnreadableReplay(str(exc)) from None
    except OSError as exc:
        raise UnreadableReplay(f"cannot read ({exc.strerror or exc})") from None
    except (ProtocolError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UnreadableReplay(f"not a replay file ({first})") from None
    except Exception as exc:  # a reader bug must not become a traceback for the user
        log.exception("reading %s failed", path)
        raise UnreadableReplay(f"cannot read the replay ({type(exc).__name__}: {exc})") from None
    if replay.another_game is not None:
        raise UnreadableReplay(f"holds more than one game: {replay.another_game}")
    if not replay.states:
        if any(w.startswith("gzip data damaged") for w in replay.warnings):
            raise UnreadableReplay("not a replay file (damaged gzip data)")
        raise UnreadableReplay("no Blokus game state in the file")
    return replay


def _read_chunks(chunks: Iterable[bytes], unpacker: Unpacker, max_states: int, season: Season | None = None) -> Replay:
    reader = _ReplayReader(max_states, season)
    replay = reader.replay
    framer = StreamFramer()
    try:
        for chunk in chunks:
            for frame in framer.feed(chunk):
                if frame is not END_OF_STREAM and not reader.full:
                    reader.add(frame)
            if reader.full:
                break
        else:
            framer.close()
    except TruncatedStream as exc:
        replay.truncated = True
        replay.warnings.append(f"the file ends without </protocol> ({exc}): loaded up to the last complete message")
    except ProtocolError as exc:
        for frame in exc.frames:
            if frame is not END_OF_STREAM and not reader.full:
                reader.add(frame)
        if not reader.messages or isinstance(exc, ForbiddenDoctype):
            raise
        replay.truncated = True
        replay.warnings.append(f"unreadable data after message {reader.messages} ({exc}): loaded up to there")
    replay.warnings[:0] = unpacker.warnings
    if not replay.states:
        replay.warnings.append("no Blokus state in the file")
    if not any(replay.names) and replay.result_message is not None:  # 2027 states carry no names; the result does
        replay.names = _names_of_result(replay.result_message, replay.warnings)
    if reader.dropped_warnings:
        replay.warnings.append(f"... and {reader.dropped_warnings} more warnings")
    if reader.stop_reason is not None:
        replay.warnings.append(reader.stop_reason)
    for warning in replay.warnings:
        log.warning("replay: %s", warning)
    return replay


# --- writing -----------------------------------------------------------------------------------------


def _result_data(result: M.ResultData | M.Room | GameResult | None, season: Season) -> M.ResultData | None:
    if result is None or isinstance(result, M.ResultData):
        return result
    if isinstance(result, GameResult):
        return result_to_data(result, season)
    if isinstance(result.data, M.ResultData):
        return result.data
    raise TypeError("not a result message")


def format_message(message: M.XmlModel) -> str:
    """One message as the replay writer lays it out: pretty-printed, starting at column 0, newline."""
    return to_xml(message, pretty=True) + "\n"


def replay_layout(messages: Iterable[str]) -> bytes:
    """The replay file (docs/spec/protocol.md §10): ``<protocol>``, newline, every message pretty-printed
    (:func:`format_message`, or as a server sent it) with a newline, ``</protocol>``."""
    body = "".join(m if m.endswith("\n") else m + "\n" for m in messages)
    return (M.PROTOCOL_OPEN + "\n" + body + M.PROTOCOL_CLOSE).encode("utf-8")


def dump_replay(
    states: Iterable[GameState],
    result: M.ResultData | M.Room | GameResult | None = None,
    *,
    room_id: str = DEFAULT_ROOM_ID,
    names: tuple[str, str] = ("", ""),
    errors: Sequence[tuple[int, M.ErrorData]] = (),
) -> bytes:
    """The replay file content (docs/spec/protocol.md §10): ``<protocol>``, newline, every memento (and in-room
    error, after the given number of states) pretty-printed with a newline, the result, ``</protocol>``.
    Mementos are written in their states' season; a :class:`GameResult` in the first state's season."""
    states = list(states)
    season = states[0].season if states else DEFAULT_SEASON
    out: list[str] = []
    pending = sorted(errors, key=lambda e: e[0])
    written = 0
    for state in states:
        while pending and pending[0][0] <= written:
            out.append(format_message(M.Room(room_id=room_id, data=pending.pop(0)[1])))
        out.append(format_message(state_to_message(state, room_id, names)))
        written += 1
    for _, error in pending:
        out.append(format_message(M.Room(room_id=room_id, data=error)))
    data = _result_data(result, season)
    if data is not None:
        out.append(format_message(M.Room(room_id=room_id, data=data)))
    return replay_layout(out)


def write_replay(
    path: str | Path,
    states: Iterable[GameState],
    result: M.ResultData | M.Room | GameResult | None = None,
    *,
    room_id: str = DEFAULT_ROOM_ID,
    names: tuple[str, str] = ("", ""),
    errors: Sequence[tuple[int, M.ErrorData]] = (),
) -> Path:
    """Write a replay file; gzip-compressed if the name ends with ``.gz``."""
    path = Path(path)
    data = dump_replay(states, result, room_id=room_id, names=names, errors=errors)
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    path.write_bytes(data)
    return path


_UNSAFE_IN_NAME = re.compile(r"[^\w.-]+")  # anything but letters, digits, "_", "." and "-"
NAME_PART_MAX = 40  # characters of one player's name in a file name (names come from the network)


def _name_part(name: str, team: str) -> str:
    """A player's name as part of a file name: runs of spaces, brackets, slashes … become one ``_``;
    no name (or the server's placeholder "Unknown") gives the team's name."""
    part = _UNSAFE_IN_NAME.sub("_", name).strip("_.")[:NAME_PART_MAX].rstrip("_.")
    return part if part and part != "Unknown" else team


def replay_file_name(
    name1: str,
    name2: str,
    when: datetime | None = None,
    *,
    gz: bool = False,
    season: Season = DEFAULT_SEASON,
    number: int | None = None,
) -> str:
    """The one name of a replay file, for every writer (TUI, watch, bot, arena, server): the 21.4.0/27.x
    pattern ``replay_<gameType>_<yyyy-MM-dd_HH-mm-ss>_<name1>_<name2>[_<number>].xml``, names without
    spaces or brackets, a missing name given as ONE / TWO."""
    when = when or datetime.now()
    name = f"replay_{season.game_type}_{when:%Y-%m-%d_%H-%M-%S}_{_name_part(name1, 'ONE')}_{_name_part(name2, 'TWO')}"
    if number is not None:
        name += f"_{number:03d}"
    return name + (".xml.gz" if gz else ".xml")


def new_replay_path(
    directory: str | Path,
    names: tuple[str, str],
    season: Season = DEFAULT_SEASON,
    when: datetime | None = None,
    *,
    gz: bool = False,
    number: int | None = None,
) -> Path:
    """``directory`` / :func:`replay_file_name`, with ``_2``, ``_3`` … added if that file exists already
    (two games saved in one second)."""
    base = replay_file_name(*names, when, gz=gz, season=season, number=number)
    path = Path(directory) / base
    stem, ext = (base[: -len(".xml.gz")], ".xml.gz") if gz else (base[: -len(".xml")], ".xml")
    n = 1
    while path.exists():
        n += 1
        path = Path(directory) / f"{stem}_{n}{ext}"
    return path


class ReplayWriter:
    """Writes a replay while the game runs, so that a crash leaves a readable (truncated) file."""

    def __init__(self, path: str | Path, *, room_id: str = DEFAULT_ROOM_ID, names: tuple[str, str] = ("", "")) -> None:
        self.path = Path(path)
        self.room_id = room_id
        self.names = names
        self._file = (
            gzip.open(self.path, "wt", encoding="utf-8")
            if self.path.name.endswith(".gz")
            else open(self.path, "w", encoding="utf-8", newline="\n")
        )
        self._file.write(M.PROTOCOL_OPEN + "\n")
        self._closed = False

    def _write(self, message: M.XmlModel) -> None:
        if self._closed:
            raise ValueError("replay writer is closed")
        self._file.write(format_message(message))
        self._file.flush()

    def add_state(self, state: GameState) -> None:
        self._write(state_to_message(state, self.room_id, self.names))

    def add_result(self, result: M.ResultData | M.Room | GameResult, season: Season = DEFAULT_SEASON) -> None:
        data = _result_data(result, season)
        assert data is not None
        self._write(M.Room(room_id=self.room_id, data=data))

    def close(self) -> None:
        if not self._closed:
            self._file.write(M.PROTOCOL_CLOSE)
            self._file.close()
            self._closed = True

    def __enter__(self) -> ReplayWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
