"""Loading and saving replays for the TUI, on top of ``model.replay`` (the one XML reader/writer)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from model.moves import MoveMistake
from model.pieces import Team
from model.result import GameResult, regular_result
from model.season import Season
from model.state import GameState
from model.text import printable
from tui.session import GameSession, Timeline

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
    from model.files import FileReadError
    from model.framing import ProtocolError
    from model.replay import load_replay as read_replay_file

    if not path.exists():
        raise ReplayError(f"{path}: no such file")
    if path.is_dir():
        raise ReplayError(f"{path}: is a directory, not a replay file")
    try:
        replay = read_replay_file(path, season)
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except FileReadError as exc:
        raise ReplayError(f"{path}: {exc}") from None
    except (ProtocolError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ReplayError(f"{path}: not a replay file ({first})") from None
    except Exception as exc:  # a reader bug must not become a traceback for the user
        import logging

        logging.getLogger(__name__).exception("reading %s failed", path)
        raise ReplayError(f"{path}: cannot read the replay ({type(exc).__name__}: {exc})") from None
    if not replay.states:
        if any(w.startswith("gzip data damaged") for w in replay.warnings):
            raise ReplayError(f"{path}: not a replay file (damaged gzip data)")
        what = "the file is empty" if path.stat().st_size == 0 else "no Blokus game state in the file"
        raise ReplayError(f"{path}: {what}")
    return ReplayData(Timeline.of(replay), tuple(replay.names), replay.result, list(replay.warnings),
                      replay.truncated, str(path), replay.room_id, replay.unreadable_states, replay.first_unreadable)


# --- result texts ------------------------------------------------------------------------------------


def _english_reason(reason: str) -> str:
    text = reason
    if text.startswith("Regelverletzung von ") and ": " in text:  # 2027 names the violator first
        text = text.split(": ", 1)[1]
    for mistake in MoveMistake:
        if text.startswith(mistake.value):
            rest = text[len(mistake.value):].strip()
            for german in ("bei Zug ", "bei "):  # 2021 / 2027
                if rest.startswith(german):
                    rest = "move " + rest[len(german):]
                    break
            return f"{mistake.name}: {mistake.english}" + (f" ({rest})" if rest else "")
    return reason


# Server reasons that only restate the cause (rules.md §12): shown as "Server: …", not as a reason.
PLAIN_REASONS = (
    "Der Spieler hat innerhalb von 2 Sekunden nach Aufforderung keinen Zug gesendet",
    "Der Spieler hat innerhalb von 10 Sekunden nach Aufforderung keinen Zug gesendet",
    "Der Spieler hat das Spiel verlassen",
    "Player left",
)

def cause_texts(season: Season) -> dict[str, str]:
    """What each cause of an irregular end means, in the season's time limits."""
    return {
        "LEFT": "left the game (disconnected)",
        "RULE_VIOLATION": "broke a rule",
        "SOFT_TIMEOUT": f"did not move within {season.soft_timeout_ms / 1000:g} seconds (soft timeout)",
        "HARD_TIMEOUT": f"did not move within {season.hard_timeout_ms / 1000:g} seconds (hard timeout)",
        "PROCESS_VIOLATION": "sent a move that was not asked for",
        "UNKNOWN": "ended the game for an unknown reason",
    }


def _who(result, team: Team, names: dict[Team, str]) -> str:
    """A team's name: ours (command line, replay) unless generic, else the result's."""
    mine = names.get(team, "")
    if mine and mine not in ("ONE", "TWO", "opponent", "Unknown"):
        return mine
    theirs = next((p.name for p in result.players if p.team == team and p.name), "")
    return next((n for n in (theirs, mine) if n and n != "Unknown"), "")  # the server's default name


def result_texts(result, state: GameState, names: dict[Team, str]) -> tuple[str, list[str]]:
    """Title and detail lines for a result (``model.result.GameResult``) or, without one, the board."""
    one, two = state.team_points(Team.ONE), state.team_points(Team.TWO)
    lines = [f"Score: ONE (BLUE+RED) {one} : {two} TWO (YELLOW+GREEN)"]  # lines fit 50 columns
    if result is None:
        winner, _ = state.outcome()
        if not state.is_over:
            return "Game not finished", lines + ["The file ends before the game is over."]
        title = "Game over — draw" if winner is None else \
            f"Game over — team {winner.name} ({names.get(winner) or '+'.join(c.name for c in winner.colors)}) wins"
        return title, lines + ["Regular end (no result message)."]
    if result.draw:
        title = "Game over — draw"
    elif result.winner is not None:
        w = result.winner
        who = _who(result, w, names) or "+".join(c.name for c in w.colors)
        title = f"Game over — team {w.name} ({who}) wins"
    else:
        title = "Game over"
    for p in result.players:
        if p.cause and p.cause != "REGULAR":
            team = p.team.name if p.team is not None else "?"
            who = _who(result, p.team, names) if p.team is not None else p.name or ""
            causes = cause_texts(state.season)
            cause = causes.get(p.cause, p.cause)
            if p.cause == "SOFT_TIMEOUT" and p.reason and "10 Sekunden" in p.reason:
                cause = causes["HARD_TIMEOUT"]
            if p.team is not None and not state.is_over and state.current_team == p.team:
                who = f"{who}, {state.current_color.name} to move" if who else f"{state.current_color.name} to move"
            lines.append(f"Irregular end: team {team}{f' ({who})' if who else ''} {cause}.")
            if p.reason and p.reason.strip() in PLAIN_REASONS:
                lines.append(f"Server: {p.reason}")
            elif p.reason:
                lines.append(f"Reason: {_english_reason(p.reason)}")
                if _english_reason(p.reason) != p.reason:
                    lines.append(f"Server: {p.reason}")
    if result.regular:
        lines.append("Regular end: " + ("the round limit was reached." if state.turn >= state.season.turn_limit else
                                        "no colour can place a piece." if state.is_over else
                                        "game finished."))
    win = {p.team: p.winner_part for p in result.players if p.team is not None}
    if set(win) == {Team.ONE, Team.TWO} and None not in win.values():
        lines.append(f"Win points (2 win, 1 draw): ONE {win[Team.ONE]} : {win[Team.TWO]} TWO")
    else:
        parts = [f"{p.team.name if p.team is not None else '?'} {p.parts}" for p in result.players]
        lines.append("Scores (win points, points): " + "   ".join(parts))
    return printable(title, None), [printable(line, None) for line in lines]  # names and reasons: from outside


# --- saving --------------------------------------------------------------------------------------------


def session_result(session: GameSession) -> GameResult | None:
    """A regular result for a finished local game (None while it runs)."""
    st = session.state
    if not st.is_over:
        return None
    names = (session.names.get(Team.ONE, Team.ONE.name), session.names.get(Team.TWO, Team.TWO.name))
    return regular_result(st.outcome().points, names, st.season)


def save_session(session: GameSession, directory: Path | None = None, when: datetime | None = None) -> Path:
    """Write the game (finished or not) in the official replay format under ``replays/``."""
    from model.replay import new_replay_path, write_replay

    directory = directory or REPLAY_DIR
    directory.mkdir(parents=True, exist_ok=True)
    names = (session.names.get(Team.ONE, "ONE"), session.names.get(Team.TWO, "TWO"))
    result = getattr(session, "result", None) or session_result(session)
    path = new_replay_path(directory, names, session.state.season, when)
    return write_replay(path, session.timeline.states, result, names=names)
