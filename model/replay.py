"""Replay files of the official servers (protocol.md §10, season-2027.md §5): reading and writing.

A replay is ``<protocol>`` + one memento per state (+ in 21.4.0/27.x the in-room errors) + the result +
``</protocol>``, plain (``.xml``) or gzipped (``.xml.gz``, also detected by the magic bytes ``1f 8b``).
Moves are not stored: the game record (``model.record``) reconstructs them from consecutive states. The
season is detected from the first state's form; files are written in the form of the states' season.
"""

from __future__ import annotations

import gzip
import io
import logging
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from model import messages as M
from model.convert import parse_message, read_state, state_to_message, to_xml
from model.framing import END_OF_STREAM, ForbiddenDoctype, ProtocolError, StreamFramer, TruncatedStream
from model.record import ColorRemoved, GameRecord, MoveEvent, ReplayEvent, events_between
from model.result import GameResult, result_from_data, result_to_data
from model.season import DEFAULT_SEASON, Season
from model.state import GameState

log = logging.getLogger(__name__)

GZIP_MAGIC = b"\x1f\x8b"
DEFAULT_ROOM_ID = "00000000-0000-4000-8000-000000000000"
_READ_CHUNK = 64 * 1024


# --- the replay --------------------------------------------------------------------------------------


__all__ = ["ColorRemoved", "GameRecord", "MoveEvent", "Replay", "ReplayEvent", "ReplayWriter", "dump_replay",
           "events_between", "load_replay", "read_replay", "replay_file_name", "write_replay"]


@dataclass(eq=False)
class Replay(GameRecord):
    """A loaded (or recorded) game: the game record (states, events between them) and the result."""

    result_message: M.ResultData | None = None
    names: tuple[str, str] = ("", "")
    room_id: str = DEFAULT_ROOM_ID
    errors: list[tuple[int, M.ErrorData]] = field(default_factory=list)  # (states before it, error)
    truncated: bool = False  # the file ended before </protocol>
    detected: Season | None = None  # the season the file's form shows (None: cannot tell)

    def __post_init__(self) -> None:
        GameRecord.__init__(self)

    @property
    def result(self) -> GameResult | None:
        """The result; player names the result does not carry are taken from the states."""
        if self.result_message is None:
            return None
        return result_from_data(self.result_message).with_names(self.names)

    def to_bytes(self) -> bytes:
        return dump_replay(self.states, self.result_message, room_id=self.room_id, names=self.names,
                           errors=self.errors)

    def save(self, path: str | Path) -> Path:
        return write_replay(path, self.states, self.result_message, room_id=self.room_id, names=self.names,
                            errors=self.errors)


def _decompress(raw: bytes, warnings: list[str]) -> bytes:
    try:
        return gzip.decompress(raw)
    except (EOFError, OSError, zlib.error) as exc:
        warnings.append(f"gzip data damaged or cut off ({exc}): using what could be decompressed")
        try:
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw)
        except zlib.error:
            return b""


def read_replay(data: bytes, season: Season | None = None) -> Replay:
    """Read a replay from bytes (plain or gzip); ``season`` overrides the season the states' form shows
    (else: detected from the first state that tells, else 2021). Never raises for a cut-off or partly
    damaged file:
    everything up to the last complete message is loaded and the problem is put in ``warnings``.
    Raises :class:`~model.framing.ProtocolError` only if nothing at all could be read (or for a
    DOCTYPE)."""
    replay = Replay()
    if data[:2] == GZIP_MAGIC:
        data = _decompress(data, replay.warnings)
    framer = StreamFramer()
    elements = []
    try:
        for start in range(0, len(data), _READ_CHUNK):
            elements.extend(f for f in framer.feed(data[start : start + _READ_CHUNK]) if f is not END_OF_STREAM)
        framer.close()
    except TruncatedStream as exc:
        replay.truncated = True
        replay.warnings.append(f"the file ends without </protocol> ({exc}): loaded up to the last complete "
                               f"message")
    except ProtocolError as exc:
        elements.extend(f for f in exc.frames if f is not END_OF_STREAM)
        if not elements or isinstance(exc, ForbiddenDoctype):
            raise
        replay.truncated = True
        replay.warnings.append(f"unreadable data after message {len(elements)} ({exc}): loaded up to there")

    names_known = rooms_seen = False
    for element in elements:
        message = parse_message(element)
        if isinstance(message, M.UnknownMessage):
            replay.warnings.append(f"skipped: {message}")
            continue
        if not isinstance(message, M.Room):
            replay.warnings.append(f"skipped unexpected <{element.tag}> message")
            continue
        if not rooms_seen:
            replay.room_id, rooms_seen = message.room_id, True
        data_ = message.data
        if isinstance(data_, M.Memento):
            try:
                read = read_state(message, season or replay.detected)
            except (ValueError, TypeError) as exc:
                replay.warnings.append(f"skipped unreadable state: {exc}")
                continue
            if replay.detected is None and read.detected is not None:
                replay.detected = read.detected
                for earlier in replay.states:  # states before the first telling one: same season
                    earlier.season = season or read.detected
            replay.warnings.extend(f"turn {read.state.turn}: {w}" for w in read.warnings)
            if not names_known and any(read.names):
                replay.names, names_known = read.names, True
            replay.add_state(read.state)
        elif isinstance(data_, M.ResultData):
            if replay.result_message is not None:
                replay.warnings.append("more than one result: the last one counts")
            replay.result_message = data_
        elif isinstance(data_, M.ErrorData):
            replay.errors.append((len(replay.states), data_))
        else:
            replay.warnings.append(f"skipped room message of class {data_.cls!r}")
    if not replay.states:
        replay.warnings.append("no Blokus state in the file")
    for warning in replay.warnings:
        log.warning("replay: %s", warning)
    return replay


def load_replay(path: str | Path, season: Season | None = None) -> Replay:
    """Read a replay file (``.xml`` or ``.xml.gz``)."""
    return read_replay(Path(path).read_bytes(), season)


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


def dump_replay(
    states: Iterable[GameState],
    result: M.ResultData | M.Room | GameResult | None = None,
    *,
    room_id: str = DEFAULT_ROOM_ID,
    names: tuple[str, str] = ("", ""),
    errors: Sequence[tuple[int, M.ErrorData]] = (),
) -> bytes:
    """The replay file content (protocol.md §10): ``<protocol>``, newline, every memento (and in-room
    error, after the given number of states) pretty-printed with a newline, the result, ``</protocol>``.
    Mementos are written in their states' season; a :class:`GameResult` in the first state's season."""
    states = list(states)
    season = states[0].season if states else DEFAULT_SEASON
    out = io.StringIO()
    out.write(M.PROTOCOL_OPEN + "\n")
    pending = sorted(errors, key=lambda e: e[0])
    written = 0
    for state in states:
        while pending and pending[0][0] <= written:
            out.write(format_message(M.Room(room_id=room_id, data=pending.pop(0)[1])))
        out.write(format_message(state_to_message(state, room_id, names)))
        written += 1
    for _, error in pending:
        out.write(format_message(M.Room(room_id=room_id, data=error)))
    data = _result_data(result, season)
    if data is not None:
        out.write(format_message(M.Room(room_id=room_id, data=data)))
    out.write(M.PROTOCOL_CLOSE)
    return out.getvalue().encode("utf-8")


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


def _name_part(name: str) -> str:
    return re.sub(r"[\s/\\]", "_", name)


def replay_file_name(name1: str, name2: str, when: datetime | None = None, *, gz: bool = False,
                     season: Season = DEFAULT_SEASON) -> str:
    """The 21.4.0/27.x writer's file name: ``replay_<gameType>_<yyyy-MM-dd_HH-mm-ss>_<name1>_<name2>.xml``
    (spaces in names become ``_``; so do path separators here)."""
    when = when or datetime.now()
    name = f"replay_{season.game_type}_{when:%Y-%m-%d_%H-%M-%S}_{_name_part(name1)}_{_name_part(name2)}.xml"
    return name + ".gz" if gz else name


class ReplayWriter:
    """Writes a replay while the game runs, so that a crash leaves a readable (truncated) file."""

    def __init__(self, path: str | Path, *, room_id: str = DEFAULT_ROOM_ID,
                 names: tuple[str, str] = ("", "")) -> None:
        self.path = Path(path)
        self.room_id = room_id
        self.names = names
        self._file = gzip.open(self.path, "wt", encoding="utf-8") if self.path.name.endswith(".gz") \
            else open(self.path, "w", encoding="utf-8", newline="\n")
        self._file.write(M.PROTOCOL_OPEN + "\n")
        self._closed = False

    def _write(self, message: M.XmlModel) -> None:
        if self._closed:
            raise ValueError("replay writer is closed")
        self._file.write(format_message(message))
        self._file.flush()

    def add_state(self, state: GameState) -> None:
        self._write(state_to_message(state, self.room_id, self.names))

    def add_error(self, error: M.ErrorData) -> None:
        self._write(M.Room(room_id=self.room_id, data=error))

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
