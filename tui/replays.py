"""Loading and saving replays for the TUI, on top of ``model.replay`` (the one XML reader/writer)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

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


def load_replay(path: Path, season: Season | None = None) -> ReplayData:
    from blokus.model.replay import UnreadableReplay, read_game

    try:
        replay = read_game(path, season)
    except UnreadableReplay as exc:
        raise ReplayError(f"{path}: {exc}") from None
    return ReplayData(
        Timeline.of(replay),
        (replay.names[0], replay.names[1]),
        replay.result,
        list(replay.warnings),
        replay.truncated,
        str(path),
        replay.room_id,
        replay.unreadable_states,
        replay.first_unreadable,
    )


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
    from blokus.model.replay import new_replay_path, write_replay

    directory = directory or REPLAY_DIR
    directory.mkdir(parents=True, exist_ok=True)
    names = (session.names.get(Team.ONE, "ONE"), session.names.get(Team.TWO, "TWO"))
    result = session.final_result()
    path = new_replay_path(directory, names, session.state.season, when)
    return write_replay(path, session.timeline.states, result, names=names)
