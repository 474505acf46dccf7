"""The official server's texts in English: the one place that renders them (issue 45).

The server writes German (and some English) texts into results and error messages: the reasons of an
irregular end (``Violation.kt``, docs/spec/rules.md §12), the rule a move broke with the move in German
(``MoveMistake.kt``: ``Setze PENTO_I(Farbe Rot)[19,17]``), the win reasons of 2027, the in-room and lobby
error messages of both seasons. :func:`english` renders the cases we know in our own words, with every
field of the original (player, rule, move, seconds); :func:`shown` is what a screen or a summary prints:
the English text, or an unknown text verbatim as ``server says: …``. The originals stay where the raw
protocol is shown (the XML pane, the log files). Pure: no I/O, no UI.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from blokus.model.moves import MoveMistake, SetMove, SkipMove, describe_move
from blokus.model.pieces import Color, Rotation, Shape
from blokus.model.season import SEASONS, Season

UNKNOWN_PREFIX = "server says: "

# the detail of a 2027 LEFT reason (``Violation.kt``: the reason the connection ended)
_LEFT_DETAILS = {
    "LOST_CONNECTION": "the connection was lost",
    "PROTOCOL_ERROR": "it sent a message the server could not read",
    "NOT_CONNECTED": "it was not connected",
}

# texts a server writes in English; rendered in the same words as their German counterparts
_FIXED = {
    "Player left": "the player left the game",
    "Game terminated": "the game was terminated",
    "Game ended regularly": "the game ended regularly",
    "Beide Spieler sind gleichauf": "both players have the same points",
    "We didn't request a move from you yet.": "a move was sent that the server had not asked for",
    "Couldn't find a reservation for the provided token.": "the server knows no reservation with this code",
}

_EXCEPTION_CLASS = re.compile(r"^(?:[a-z]\w*\.)+\w*Exception: ")  # sc.server.gaming.UnknownReservationException:
_GERMAN_COLORS = {c.german: c for c in Color}
_MOVE = re.compile(
    r"Setze (?P<shape>\w+)\(Farbe (?P<color>\w+)(?:, gedreht um (?P<degrees>\d+)°)?(?P<flip>, gespiegelt)?\)"
    r"\[(?P<x>-?\d+),(?P<y>-?\d+)\]"
)
_SKIP = re.compile(r"Farbe (?P<color>\w+) setzt aus")
_IN_ROOM_ERROR = re.compile(r"Ungueltiger Zug von '(?P<player>.*?)'\.\s*(?P<body>.*)", re.S)
_INVALID_MOVE = re.compile(r"InvalidMoveException\(mistake=(?P<mistake>.*), move=(?P<move>.*)\)", re.S)
_NOT_YOUR_TURN = "It's not your turn yet"
_SKIP_FIRST = re.compile(r"Can't Skip on first round; move was (?P<color>[A-Z]+) skipped")
_WIN = re.compile(r"(?P<player>.+) hat am meisten Punkte erzielt\.")


def english_move(text: str) -> str | None:
    """``Setze PENTO_I(Farbe Rot, gedreht um 90°, gespiegelt)[19,17]`` → ``RED PENTO_I 90° flipped @ (19,17)``;
    ``Farbe Rot setzt aus`` → ``RED passed``; None for another text."""
    text = text.strip().strip("'")
    if (m := _SKIP.fullmatch(text)) and m["color"] in _GERMAN_COLORS:
        return describe_move(SkipMove(_GERMAN_COLORS[m["color"]]))
    m = _MOVE.fullmatch(text)
    if m is None or m["color"] not in _GERMAN_COLORS or m["shape"] not in Shape.__members__:
        return None
    degrees = int(m["degrees"] or 0)
    if degrees % 90 or degrees >= 360:
        return None
    color, shape = _GERMAN_COLORS[m["color"]], Shape[m["shape"]]
    return describe_move(SetMove(color, shape, Rotation(degrees // 90), bool(m["flip"]), int(m["x"]), int(m["y"])))


def english_violation(text: str, season: Season | None = None) -> str | None:
    """A rule violation as the server writes it (the mistake's German message, maybe `` bei Zug '…'``)
    → ``NO_SHARED_CORNER: the piece must touch … (move YELLOW MONO @ (10,10))``; None for another text."""
    for one in _seasons(season):
        for mistake in MoveMistake:
            german = one.mistake_text(mistake)
            if not text.startswith(german):
                continue
            rest = text[len(german) :].strip()
            for prefix in (one.violation_move_prefix, *(s.violation_move_prefix for s in SEASONS.values())):
                if rest.startswith(prefix + " "):
                    rest = rest[len(prefix) + 1 :]
                    break
            return _rule(mistake, rest)
    return None


def _rule(mistake: MoveMistake, move_text: str) -> str | None:
    """``RULE: the rule (move …)``; None when the move is there but cannot be read."""
    move_text = move_text.strip()
    if move_text in ("", "null"):
        return f"{mistake.name}: {mistake.english}"
    move = english_move(move_text)
    return None if move is None else f"{mistake.name}: {mistake.english} (move {move})"


def _seasons(season: Season | None) -> list[Season]:
    """``season`` first, then the others (a text may come from a server of either season)."""
    others = [s for s in SEASONS.values() if s is not season]
    return [season, *others] if season is not None else others


@cache
def _reason_patterns() -> tuple[tuple[re.Pattern[str], str, Season], ...]:
    """Every season's irregular-end reason templates as patterns with named fields."""
    out = []
    for season in SEASONS.values():
        for cause, template in season.irregular_reasons:
            parts = re.split(r"(\{\w+\})", template)
            pattern = "".join(
                (
                    rf"(?P<{p[1:-1]}>\d+)"
                    if p in ("{soft_s}", "{hard_s}")
                    else "(?P<detail>.*)"
                    if p == "{detail}"
                    else "(?P<player>.*?)"
                    if p == "{player}"
                    else re.escape(p)
                )
                for p in parts
                if p
            )
            out.append((re.compile(pattern, re.S), cause, season))
    return tuple(out)


def reason_cause(text: str) -> str | None:
    """The cause (a Cause value) whose result reason ``text`` is, of either season and naming any player; None for
    another text. A reason that only restates its end's cause is told once (2027's hard timeout names the soft
    limit: "… within 2 seconds …" after 10 s)."""
    return next((cause for pattern, cause, _ in _reason_patterns() if pattern.fullmatch(text)), None)


def _reason(text: str) -> str | None:
    """An irregular end's reason (both seasons' templates) in English; None for another text."""
    for pattern, cause, season in _reason_patterns():
        m = pattern.fullmatch(text)
        if m is None:
            continue
        fields = m.groupdict()
        who = fields.get("player") or "the player"
        seconds = fields.get("soft_s") or fields.get("hard_s") or ""
        detail = (fields.get("detail") or "").strip()
        if cause == "SOFT_TIMEOUT" and season.result_entries:
            return f"{who} took longer than {seconds} seconds to answer the move request"
        if cause in ("SOFT_TIMEOUT", "HARD_TIMEOUT"):
            return f"{who} sent no move within {seconds} seconds of the request"
        if cause == "LEFT":
            return f"{who} left the game" + (f": {_LEFT_DETAILS.get(detail, detail)}" if detail else "")
        if cause == "RULE_VIOLATION":
            rule = english_violation(detail, season)
            return None if rule is None else f"rule violation by {who}: {rule}"
        if cause == "PROCESS_VIOLATION":
            told = english(detail, season) if detail else None
            return f"{who} broke the order of play" + (f": {told}" if told else f": {detail}" if detail else "")
    return None


def _in_room_error(text: str, season: Season | None) -> str | None:
    """``Ungueltiger Zug von 'alice'.\\nInvalidMoveException(mistake=…, move=…)`` and its kin."""
    m = _IN_ROOM_ERROR.fullmatch(text.strip())
    if m is None:
        return None
    who, body = m["player"], m["body"].strip()
    if (inv := _INVALID_MOVE.fullmatch(body)) is not None:
        for one in _seasons(season):
            mistake = next((k for k in MoveMistake if one.mistake_text(k) == inv["mistake"].strip()), None)
            if mistake is not None:
                rule = _rule(mistake, inv["move"])
                return None if rule is None else f"invalid move by {who}: {rule}"
        return None
    if (skip := _SKIP_FIRST.fullmatch(body)) is not None and skip["color"] in Color.__members__:
        mistake = MoveMistake.SKIP_FIRST_TURN
        move = describe_move(SkipMove(Color[skip["color"]]))
        return f"invalid move by {who}: {mistake.name}: {mistake.english} (move {move})"
    told = english(body, season)
    return None if told is None else f"invalid move by {who}: {told}"


_RENDERERS: tuple[Callable[[str, Season | None], str | None], ...] = (
    lambda text, season: _FIXED.get(text),
    lambda text, season: text if text.startswith(_NOT_YOUR_TURN) else None,  # English, with its fields
    lambda text, season: f"{m['player']} scored the most points" if (m := _WIN.fullmatch(text)) else None,
    lambda text, season: _reason(text),
    lambda text, season: english_violation(text, season),
    _in_room_error,
)


def english(text: str, season: Season | None = None) -> str | None:
    """A server text (result reason, rule violation, error message) in English, or None if we do not know
    it. ``season``: the game's season, tried first (the texts of both seasons are known)."""
    text = text.strip()
    if not text:
        return None
    if (m := _EXCEPTION_CLASS.match(text)) is not None:  # 2027's lobby errors name the exception first
        text = text[m.end() :]
    return next((told for render in _RENDERERS if (told := render(text, season)) is not None), None)


def shown(text: str, season: Season | None = None) -> str:
    """What we show of a server text: its English rendering, else ``server says: …`` with the text verbatim."""
    told = english(text, season)
    return told if told is not None else f"{UNKNOWN_PREFIX}{text.strip()}"
