"""Loading and saving replays for the TUI, on top of ``model.replay`` (the one XML reader/writer)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from blokus.model.moverecords import MoveRecord, write_records
from blokus.model.pieces import Team
from blokus.model.result import GameResult, colour_points, end_texts, state_result
from blokus.model.season import Season
from blokus.model.state import GameState
from blokus.tui.session import GameSession, Timeline

REPLAY_DIR = Path("replays")


class ReplayError(Exception):
    """A replay that cannot be shown (missing, unreadable, no states): one line for the user."""


@dataclass
class ReplayData:
    timeline: Timeline
    names: tuple[str, str] = ("", "")
    result: GameResult | None = None
    warnings: list[str] = field(default_factory=list)
    truncated: bool = False
    source: str = ""
    room_id: str = "00000000-0000-4000-8000-000000000000"
    unreadable_states: int = 0  # skipped mementos (model.replay.Replay): shown, never dropped silently
    first_unreadable: str | None = None
    live: bool = False  # a game being watched (blokus watch): it grows while it is shown
    records: dict[int, MoveRecord] = field(default_factory=dict)  # each move's time and engine report, by turn
    records_error: str | None = None  # the records file beside the replay could not be used: why (one line)


def load_replay(path: Path, season: Season | None = None) -> ReplayData:
    from blokus.model.moverecords import UnreadableRecords, read_records, records_path
    from blokus.model.replay import UnreadableReplay, read_game

    try:
        replay = read_game(path, season)
    except UnreadableReplay as exc:
        raise ReplayError(f"{path}: {exc}") from None
    records: dict[int, MoveRecord] = {}
    records_error = None
    try:  # the per-move records beside the file, if it has them: the game is shown without them if they are bad
        found = read_records(path)
    except UnreadableRecords as exc:
        records_error = f"{records_path(path).name}: {exc}"
    else:
        records = found.by_turn() if found is not None else {}
    data = ReplayData(
        Timeline.of(replay),
        (replay.names[0], replay.names[1]),
        replay.result,
        list(replay.warnings),
        replay.truncated,
        str(path),
        replay.room_id,
        replay.unreadable_states,
        replay.first_unreadable,
        records=records,
        records_error=records_error,
    )
    if records_error is not None:
        data.warnings.append(f"move records not shown: {records_error}")
    return data


# --- per-move records ---------------------------------------------------------------------------------

# what an engine reports, in the order it is shown; other entries follow in the file's order
_INFO_FIRST = ("simulations", "nodes", "value", "depth", "width", "kept", "pondered", "fallback", "substitute")
_INFO_NAMES = {"simulations": "sims", "cpu_share": "cpu share", "moves": "legal moves"}


def _number(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}".replace(",", " ")
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def record_parts(record: MoveRecord) -> list[str]:
    """The figures of one move's record for the viewer: the time, who moved if not the engine, then what the
    engine reported (its best-known entries first). Texts from the file are made printable."""
    from blokus.model.text import printable

    parts = [f"{record.seconds:.2f} s"]
    if record.source != "engine":
        parts.append(printable(record.source, 24))
    keys = [k for k in _INFO_FIRST if k in record.info] + [k for k in record.info if k not in _INFO_FIRST]
    for key in keys:
        value = record.info[key]
        name = _INFO_NAMES.get(key, key.replace("_", " "))
        if key == "simulations" or key == "nodes":
            parts.append(f"{_number(value)} {name}")
        else:
            parts.append(f"{name} {printable(_number(value), 60)}")
    return parts


def record_note(record: MoveRecord) -> str:
    """The short form beside a move in the move list: the seconds and the simulations (or nodes)."""
    note = f"{record.seconds:.1f}s" if record.seconds < 10 else f"{record.seconds:.0f}s"
    count = record.info.get("simulations", record.info.get("nodes"))
    if isinstance(count, int) and not isinstance(count, bool):
        note += f" {_short_count(count)}"
    return note


def _short_count(n: int) -> str:
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.0f}k" if n >= 10_000 else f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


# --- result texts ------------------------------------------------------------------------------------


def result_texts(
    result: GameResult | None, state: GameState, names: dict[Team, str], short: bool = False
) -> tuple[str, list[str]]:
    """Title and detail lines of a replay's end (``model.result.end_texts``); without a result message the
    board tells. ``short``: for a narrow column, the status line's title and no points per colour (the status
    line above shows them)."""
    if result is None and not state.is_over:
        return "Game not finished", ["The file ends before the game is over."]
    texts = end_texts(result or state_result(state), state, names)
    lines = [line for line in texts.lines if not (short and line == colour_points(state))]
    if result is None:
        lines.append("(The file has no result message.)")
    return (texts.short if short else texts.title), lines


# --- saving --------------------------------------------------------------------------------------------


def save_session(session: GameSession, directory: Path | None = None, when: datetime | None = None) -> Path:
    """Write the game (finished or not) in the official replay format under ``replays/``."""
    from blokus.model.replay import MoveEvent, new_replay_path, write_replay

    directory = directory or REPLAY_DIR
    directory.mkdir(parents=True, exist_ok=True)
    names = (session.names.get(Team.ONE, "ONE"), session.names.get(Team.TWO, "TWO"))
    result = session.final_result()
    path = new_replay_path(directory, names, session.state.season, when)
    write_replay(path, session.timeline.states, result, names=names)
    # the records of the moves the timeline holds (an undone move's record is left out, a replayed turn's is new)
    turns = [e.turn for e in session.timeline.events if isinstance(e, MoveEvent)]
    made = session.timeline.move_records
    if records := [made[t] for t in turns if t in made]:
        write_records(path, records)
    return path
