"""Per-move records of a saved game: the time each move took and what the engine reported (simulations,
value, depth …), kept beside the replay in a file of their own.

A replay stays exactly the official format (docs/spec/protocol.md §10: extra information goes into separate
files), so the records of ``replay_….xml`` (or ``.xml.gz``) are in ``replay_….moves.json``: JSON of
:class:`MoveRecords`, versioned (``format``, ``version``) and bounded, since a saved game is an untrusted
file like any other. A replay without that file has no records; a file that cannot be read is refused with one
line (:class:`UnreadableRecords`) and the game is shown without them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Final

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, ValidationError, field_validator

from blokus.model.files import FileReadError, read_bounded

FORMAT: Final = "blokus-tui move records"
VERSION: Final = 1
SUFFIX: Final = ".moves.json"

MAX_RECORDS: Final = 400  # a game has at most 100 turns; a file with more is no game of ours
MAX_INFO: Final = 16  # entries of what the engine reported, per move
MAX_KEY: Final = 24  # characters of an entry's name
MAX_TEXT: Final = 120  # characters of a text entry (a fallback's reason)
MAX_SOURCE: Final = 24
MAX_SECONDS: Final = 24 * 3600.0
MAX_TURN: Final = 10_000
MAX_FILE: Final = 1 << 20  # bytes of the file, unpacked; 400 full records are about 100 KiB

_KEY = re.compile(r"[a-z][a-z0-9_]*\Z")

Scalar = StrictBool | StrictInt | StrictFloat | Annotated[str, Field(max_length=MAX_TEXT)]


class UnreadableRecords(ValueError):
    """A records file that cannot be used: one line for the user (without the path)."""


class MoveRecord(BaseModel):
    """One move: its ``turn``, the seconds it took, who made it (``source``: "engine", "forced", "opening",
    "fallback-…", "human") and what the engine reported about its search (``info``; empty if nothing)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn: Annotated[int, Field(ge=0, le=MAX_TURN, strict=True)]
    seconds: Annotated[float, Field(ge=0.0, le=MAX_SECONDS, allow_inf_nan=False)]
    source: Annotated[str, Field(max_length=MAX_SOURCE)] = "engine"
    info: Annotated[dict[str, Scalar], Field(max_length=MAX_INFO)] = Field(default_factory=dict)

    @field_validator("info")
    @classmethod
    def _names_and_numbers(cls, info: dict[str, object]) -> dict[str, object]:
        for key, value in info.items():
            if len(key) > MAX_KEY or not _KEY.match(key):
                raise ValueError(f"entry name {key[:MAX_KEY]!r} is not a short lower-case name")
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"entry {key!r} is not a finite number")
        return info


class MoveRecords(BaseModel):
    """The file: its format and version, and the records of the moves in the order they were made."""

    model_config = ConfigDict(extra="forbid")

    format: str = FORMAT
    version: int = VERSION
    records: Annotated[list[MoveRecord], Field(max_length=MAX_RECORDS)] = Field(default_factory=list)

    def by_turn(self) -> dict[int, MoveRecord]:
        """The record of each turn (the last one where a turn appears twice)."""
        return {record.turn: record for record in self.records}


def engine_report(info: Mapping[str, object]) -> dict[str, bool | int | float | str]:
    """What of an engine's ``last_info`` a record keeps: at most ``MAX_INFO`` entries with short names and plain
    values (numbers rounded to 4 significant digits, texts cut), so that any engine's report fits the bounds."""
    out: dict[str, bool | int | float | str] = {}
    for key, value in info.items():
        if len(out) >= MAX_INFO:
            break
        if not isinstance(key, str) or len(key) > MAX_KEY or not _KEY.match(key):
            continue
        if isinstance(value, bool | int | str):
            out[key] = value if not isinstance(value, str) else value[:MAX_TEXT]
        elif isinstance(value, float) and math.isfinite(value):
            out[key] = float(f"{value:.4g}")
        elif hasattr(value, "item"):  # a numpy scalar
            item = value.item()
            if isinstance(item, bool | int) or (isinstance(item, float) and math.isfinite(item)):
                out[key] = item if not isinstance(item, float) else float(f"{item:.4g}")
    return out


def measured_records(kept_turns: Iterable[int], timings: Iterable[tuple[int, float, str]]) -> list[MoveRecord]:
    """Records of the moves a game kept (``kept_turns``: its moves' turns; a refused move made no turn) from times
    measured outside the player (``timings``: turn, seconds, source): the first timing of each kept turn, at most
    :data:`MAX_RECORDS`, the seconds within the bounds."""
    kept = set(kept_turns)
    records: dict[int, MoveRecord] = {}
    for turn, seconds, source in timings:
        if turn in kept and turn not in records and len(records) < MAX_RECORDS:
            records[turn] = MoveRecord(turn=turn, seconds=round(min(max(seconds, 0.0), MAX_SECONDS), 6), source=source)
    return list(records.values())


def records_path(replay: str | Path) -> Path:
    """The records file of a replay file: ``x.xml`` / ``x.xml.gz`` → ``x.moves.json``."""
    replay = Path(replay)
    name = replay.name
    for ending in (".xml.gz", ".xml", ".gz"):
        if name.endswith(ending):
            name = name[: -len(ending)]
            break
    return replay.with_name(name + SUFFIX)


def dump_records(records: Sequence[MoveRecord]) -> str:
    return MoveRecords(records=list(records)).model_dump_json(indent=1) + "\n"


def write_records(replay: str | Path, records: Sequence[MoveRecord]) -> Path:
    """Write the records of the game saved as ``replay`` beside it; returns the records file."""
    path = records_path(replay)
    path.write_text(dump_records(records), encoding="utf-8")
    return path


def parse_records(data: bytes) -> MoveRecords:
    """Records from the bytes of a records file; :class:`UnreadableRecords` with one line if they are none."""
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise UnreadableRecords(f"not JSON ({_first_line(exc)})") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise UnreadableRecords(f"not a file of {FORMAT}")
    version = raw.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise UnreadableRecords(f"version {str(version)[:20]!r} is no version")
    if version > VERSION:
        raise UnreadableRecords(f"version {version} is newer than this program reads ({VERSION})")
    try:
        return MoveRecords.model_validate(raw)
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        where = ".".join(str(part) for part in first["loc"]) or "the file"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise UnreadableRecords(f"{where}: {_first_line(first['msg'])}{more}") from None


def read_records(replay: str | Path) -> MoveRecords | None:
    """The records beside the replay file ``replay`` (None: it has none); :class:`UnreadableRecords` with one line
    for a file that is too large, unreadable or malformed."""
    path = records_path(replay)
    if not path.exists():
        return None
    try:
        data, _warnings = read_bounded(path, max_unpacked=MAX_FILE)
    except FileReadError as exc:
        raise UnreadableRecords(str(exc).replace("a Blokus state or replay file", "move records")) from None
    except OSError as exc:
        raise UnreadableRecords(f"cannot read ({exc.strerror or exc})") from None
    return parse_records(data)


def _first_line(text: object) -> str:
    lines = str(text).splitlines()
    return " ".join(lines[0].split())[:160] if lines else ""
