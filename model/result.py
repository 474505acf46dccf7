"""The one game result of the project: read from and written to both seasons' result forms.

A :class:`GameResult` holds per team the victory points (2 win / 1 draw / 0 loss) and the Blokus points,
the optional player names, the winner team (or none), whether the game ended regularly, the cause of the
end (:class:`Cause`) and the reason text. The server builds it (:func:`regular_result`,
:func:`irregular_result`), the client reads it (:func:`result_from_data`), replays store it, the TUI
shows it, and :func:`result_to_data` writes it in the form of a season:

* 2021 (docs/spec/protocol.md §4.5): fragments ``Gewinner`` / ``∅ Punkte``; one ``<score cause reason>`` per player
  in team order; ``<winner displayName><color class="team">…`` per winner (none or both on a draw).
* 2027 (docs/spec/season-2027.md §3.6): fragments ``Siegpunkte`` / ``Punkte``; ``<scores><entry><player name? team/>
  <score><part/>…``; one ``<winner team? regular reason/>``; a violator scores 0 in every part.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from blokus.model import server_texts
from blokus.model.pieces import Color, Team
from blokus.model.season import DEFAULT_SEASON, SEASONS, Season
from blokus.model.text import printable

if TYPE_CHECKING:
    from blokus.model import messages as M  # imported where used: building the models is ~0.2 s of a start
    from blokus.model.state import GameState


class Cause(StrEnum):
    """Why a game ended (2021's ``score@cause``; 2027 says it only in the reason text)."""

    REGULAR = "REGULAR"
    LEFT = "LEFT"
    RULE_VIOLATION = "RULE_VIOLATION"
    SOFT_TIMEOUT = "SOFT_TIMEOUT"
    HARD_TIMEOUT = "HARD_TIMEOUT"
    PROCESS_VIOLATION = "PROCESS_VIOLATION"
    UNKNOWN = "UNKNOWN"

    @classmethod
    def parse(cls, text: str | None) -> Cause | None:
        if text is None:
            return None
        try:
            return cls(text.strip().upper())
        except ValueError:
            return cls.UNKNOWN


def _reason_pattern(template: str) -> re.Pattern[str]:
    """A season's reason template as a pattern: the player and the detail are any text, the seconds a number."""
    parts = re.split(r"(\{\w+\})", template)
    return re.compile(
        "".join(
            r"\d+" if p in ("{soft_s}", "{hard_s}") else ".*?" if p.startswith("{") else re.escape(p)
            for p in parts
            if p
        )
    )


# the reasons of the seasons that say the cause only in the text (2027, sdk Violation.kt), most specific first
_REASON_CAUSES = tuple(
    (_reason_pattern(template), Cause(cause))
    for season in SEASONS.values()
    if season.result_entries
    for cause, template in season.irregular_reasons
)


def cause_of_reason(reason: str) -> Cause:
    """The cause an irregular end's reason text names (a form that has no cause attribute)."""
    return next((cause for pattern, cause in _REASON_CAUSES if pattern.search(reason)), Cause.UNKNOWN)


@dataclass(frozen=True)
class PlayerResult:
    """One team's line of the result."""

    team: Team | None
    name: str | None
    parts: tuple[int, ...]  # (victory points, Blokus points) as written; other games may have more
    cause: Cause | None = None  # 2021 per player; 2027: set on the offender of an irregular end
    reason: str | None = None

    @property
    def victory_points(self) -> int | None:
        """2 win, 1 draw, 0 loss (``Gewinner`` / ``Siegpunkte``)."""
        return self.parts[0] if self.parts else None

    winner_part = victory_points

    @property
    def points(self) -> int | None:
        """The team's Blokus points (0 for a 2027 violator)."""
        return self.parts[1] if len(self.parts) > 1 else None


@dataclass(frozen=True)
class GameResult:
    """A game's result: ``winner`` (a Team, None on a draw), ``points(team)``, ``regular``, ``reason``, ``cause``."""

    players: tuple[PlayerResult, ...]  # team ONE first
    winner: Team | None  # None: draw or unknown
    draw: bool
    regular: bool
    reason: str = ""
    fragments: tuple[str, ...] = ()
    winner_names: tuple[str, ...] = ()  # display names of 2021's <winner> elements
    cause: Cause = Cause.REGULAR
    offender: Team | None = None  # who ended the game irregularly
    winners: tuple[Team, ...] = ()  # teams named by 2021's <winner> elements (21.3.3 rules, docs/spec/rules.md §12)

    @property
    def scores(self) -> tuple[PlayerResult, ...]:
        """Per team (ONE first): name, victory points and Blokus points."""
        return self.players

    @property
    def names(self) -> tuple[str, str]:
        """The teams' display names (empty where the server sent none)."""
        return (self.name_of(Team.ONE), self.name_of(Team.TWO))

    def player(self, team: Team) -> PlayerResult | None:
        """The result entry of ``team``."""
        return next((p for p in self.players if p.team == team), None)

    def name_of(self, team: Team) -> str:
        """The display name of ``team`` (empty if unknown)."""
        p = self.player(team)
        return p.name if p is not None and p.name else ""

    def points(self, team: Team) -> int | None:
        """The Blokus points of ``team`` (None if the result does not say)."""
        p = self.player(team)
        return None if p is None else p.points

    def with_names(self, names: tuple[str, str]) -> GameResult:
        """Fill in names the result does not carry (2021 results name only winners)."""
        players = tuple(
            replace(p, name=names[p.team]) if not p.name and p.team is not None and names[p.team] else p
            for p in self.players
        )
        return replace(self, players=players)


# --- building (the server) ---------------------------------------------------------------------------


def regular_result(points: tuple[int, int], names: tuple[str, str], season: Season = DEFAULT_SEASON) -> GameResult:
    """The result of a game that ended by the rules: more points wins, equal is a draw."""
    winners: tuple[Team, ...]
    if points[0] == points[1]:
        winner, victory, winners = None, (1, 1), (Team.ONE, Team.TWO)
    else:
        winner = Team.ONE if points[0] > points[1] else Team.TWO
        victory = (2, 0) if winner is Team.ONE else (0, 2)
        winners = (winner,)
    players = tuple(PlayerResult(t, names[t], (victory[t], points[t]), Cause.REGULAR, "") for t in Team)
    reason = season.win_reason(None if winner is None else (names[winner] or winner.name))
    return GameResult(
        players, winner, winner is None, True, reason, season.result_fragments, (), Cause.REGULAR, None, winners
    )


def irregular_result(
    offender: Team,
    cause: Cause,
    reason: str,
    points: tuple[int, int],
    names: tuple[str, str],
    season: Season = DEFAULT_SEASON,
) -> GameResult:
    """``offender`` lost by ``cause`` (victory points 0, the other team 2). 2021 keeps the offender's
    Blokus points and names winners as 21.3.3 does; 2027 gives the offender 0 in every part."""
    innocent = offender.opponent
    winners: tuple[Team, ...]
    players = []
    for team in Team:
        if team is offender:
            parts = (0, points[team] if season.violator_keeps_points else 0)
            players.append(PlayerResult(team, names[team], parts, cause, reason))
        else:
            players.append(PlayerResult(team, names[team], (2, points[team]), Cause.REGULAR, ""))
    if cause is Cause.RULE_VIOLATION or points[0] != points[1]:  # 21.3.3 excludes only rule violators
        winners = (
            (innocent,) if cause is Cause.RULE_VIOLATION else ((Team.ONE,) if points[0] > points[1] else (Team.TWO,))
        )
    else:
        winners = (Team.ONE, Team.TWO)
    return GameResult(
        tuple(players), innocent, False, False, reason, season.result_fragments, (), cause, offender, winners
    )


# --- reading -----------------------------------------------------------------------------------------


def _parse_team(text: str | None) -> Team | None:
    if text is None:
        return None
    try:
        return Team.parse(text)
    except KeyError:
        return None


def result_from_data(data: M.ResultData) -> GameResult:
    """Interpret a result in the 2021, intermediate or 2027 form.

    2021: one ``<score>`` per player, team ONE first; the first part (2 win / 1 draw / 0 loss) is
    authoritative, ``<winner>`` only for display. 2027: ``<scores><entry>`` with player name and team;
    the ``<winner team regular reason/>`` element decides (no ``team`` = draw); without it the first
    score parts decide.
    """
    from blokus.model import messages as M

    fragments = tuple(f.name for f in data.definition.fragments) if data.definition else ()
    players: list[PlayerResult] = []
    if data.score_entries is not None:
        for index, entry in enumerate(data.score_entries.entries):
            score = entry.score or M.Score()
            team = _parse_team(entry.player.team) if entry.player else None
            if team is None and index < 2:
                team = Team(index)
            players.append(
                PlayerResult(
                    team,
                    entry.player.name or None if entry.player else None,
                    tuple(score.parts),
                    Cause.parse(score.cause),
                    score.reason,
                )
            )
    else:
        for index, score in enumerate(data.scores):
            players.append(
                PlayerResult(
                    Team(index) if index < 2 else None, None, tuple(score.parts), Cause.parse(score.cause), score.reason
                )
            )
    winner_names = tuple(w.display_name for w in data.winners if w.display_name is not None)
    # names of the 2021 form are only known from <winner>
    players = [
        p
        if p.name is not None
        else replace(p, name=next((w.display_name for w in data.winners if w.team == p.team and w.display_name), None))
        for p in players
    ]
    irregular = [p for p in players if p.cause not in (None, Cause.REGULAR)]
    regular = not irregular
    reason = next((p.reason for p in irregular if p.reason), "")
    cause = irregular[0].cause or Cause.UNKNOWN if irregular else Cause.REGULAR
    offender = irregular[0].team if irregular else None

    new_winner = next((w for w in data.winners if w.regular is not None or w.team_attr is not None), None)
    if data.score_entries is not None and new_winner is not None:
        winner = new_winner.team
        draw = winner is None
        if new_winner.regular is not None:
            regular = new_winner.regular and regular
        reason = new_winner.reason or reason
        if not regular and offender is None:
            cause = cause_of_reason(reason)
            offender = None if winner is None else winner.opponent
            players = [
                replace(p, cause=cause, reason=reason)
                if p.team is not None and p.team == offender
                else replace(p, cause=Cause.REGULAR)
                for p in players
            ]
        elif regular:
            players = [p if p.cause is not None else replace(p, cause=Cause.REGULAR) for p in players]
        winners: tuple[Team, ...] = () if winner is None else (winner,)
    else:
        winner, draw = _outcome_from_parts(players)
        if winner is None and not draw and data.winners:
            teams = {w.team for w in data.winners}
            if len(teams) == 1:
                winner = teams.pop()
            elif len(teams) == 2 and None not in teams:
                draw = True
        winners = tuple(w.team for w in data.winners if w.team is not None)
    return GameResult(tuple(players), winner, draw, regular, reason, fragments, winner_names, cause, offender, winners)


def _outcome_from_parts(players: list[PlayerResult]) -> tuple[Team | None, bool]:
    firsts = [(p.victory_points, p.team) for p in players if p.victory_points is not None]
    if len(firsts) < 2:
        return None, False
    best = max(v for v, _ in firsts)
    leaders = [t for v, t in firsts if v == best]
    if len(leaders) == 1:
        return leaders[0], False
    return None, True


# --- writing -----------------------------------------------------------------------------------------


def _definition(season: Season) -> M.Definition:
    from blokus.model import messages as M

    victory, points = season.result_fragments
    return M.Definition(
        fragments=[
            M.Fragment(name=victory, aggregation="SUM", relevant_for_ranking=True),
            M.Fragment(name=points, aggregation="AVERAGE", relevant_for_ranking=True),
        ]
    )


def result_to_data(result: GameResult, season: Season = DEFAULT_SEASON) -> M.ResultData:
    """The result in ``season``'s form (see the module docstring)."""
    from blokus.model import messages as M

    players = sorted(result.players, key=lambda p: 99 if p.team is None else int(p.team))
    if not season.result_entries:
        scores = [
            M.Score(cause=(p.cause or Cause.REGULAR).value, reason=p.reason or "", parts=list(p.parts)) for p in players
        ]
        teams = result.winners or (
            (Team.ONE, Team.TWO) if result.draw else () if result.winner is None else (result.winner,)
        )
        winners = [M.Winner(display_name=result.name_of(t), color=M.TeamRef.of(t)) for t in teams]
        return M.ResultData(definition=_definition(season), scores=scores, winners=winners)
    entries = [
        M.ScoreEntry(
            player=M.ScorePlayer(name=p.name or None, team=None if p.team is None else p.team.name),
            score=M.Score(parts=list(p.parts)),
        )
        for p in players
    ]
    winner = M.Winner(
        team_attr=None if result.winner is None else result.winner.name, regular=result.regular, reason=result.reason
    )
    return M.ResultData(definition=_definition(season), score_entries=M.Scores(entries=entries), winners=[winner])


def result_to_message(result: GameResult, room_id: str, season: Season = DEFAULT_SEASON) -> M.Room:
    from blokus.model import messages as M

    return M.Room(room_id=room_id, data=result_to_data(result, season))


def state_result(state: GameState, names: tuple[str, str] = ("", "")) -> GameResult:
    """The regular result of a game that is over on the board (a local game, a replay without a result)."""
    return regular_result(state.outcome().points, names, state.season)


# --- telling (every end text of the project) ---------------------------------------------------------

GAME_OVER = "Game over"
GENERIC_NAMES = ("ONE", "TWO", "opponent", "Unknown")  # no name worth showing ("Unknown": 21.3.3's default)


def colour_points(state: GameState) -> str:
    """'BLUE 57   YELLOW 57   RED 29   GREEN 48' (a line of the end texts)."""
    return "   ".join(f"{c.name} {state.points(c)}" for c in Color)


@dataclass(frozen=True)
class EndTexts:
    """How a game ended, for every place that tells it."""

    title: str  # 'Game over — team ONE (BLUE+RED, alice) wins 61 : 58' (the end dialog, a replay's end)
    short: str  # 'Game over — ONE wins 61 : 58' (the status line)
    lines: tuple[str, ...]  # the score, why the game ended, the win points (the dialog's details)
    summary: str  # 'ONE (alice) [us] 61 : TWO (bob) 58, winner ONE (we won), cause REGULAR' (blokus bot, watch)


def _season_of(result: GameResult, state: GameState | None) -> Season:
    if state is not None:
        return state.season
    return next((s for s in SEASONS.values() if s.result_fragments == result.fragments[:2]), DEFAULT_SEASON)


_TIMEOUTS = (Cause.SOFT_TIMEOUT.value, Cause.HARD_TIMEOUT.value)


def _cause_text(cause: Cause, season: Season) -> str:
    return {
        Cause.LEFT: "left the game (disconnected)",
        Cause.RULE_VIOLATION: "broke a rule",
        Cause.SOFT_TIMEOUT: f"did not move within {season.soft_timeout_ms / 1000:g} seconds (soft timeout)",
        Cause.HARD_TIMEOUT: f"did not move within {season.hard_timeout_ms / 1000:g} seconds (hard timeout)",
        Cause.PROCESS_VIOLATION: "sent a move that was not asked for",
    }.get(cause, "ended the game for an unknown reason")


def end_texts(
    result: GameResult,
    state: GameState | None = None,
    names: Mapping[Team, str] | Sequence[str] = ("", ""),
    me: Team | None = None,
) -> EndTexts:
    """Every end text of ``result``: ``state`` is the final board (its points, whose turn it was, the season),
    ``names`` ours (command line, replay file; the result's where ours are generic), ``me`` the team we played."""
    ours = [names.get(t, "") for t in Team] if isinstance(names, Mapping) else [*names, "", ""][:2]
    season = _season_of(result, state)

    def who(team: Team) -> str:
        mine, theirs = ours[team], result.name_of(team)
        return next((n for n in (mine, theirs) if n and n not in GENERIC_NAMES), "")

    def colors(team: Team) -> str:
        return "+".join(c.name for c in team.colors)

    board = None if state is None else (state.team_points(Team.ONE), state.team_points(Team.TWO))
    told = (result.points(Team.ONE), result.points(Team.TWO))
    one, two = told if None not in told or board is None else board  # the result's points, else the board's
    score = f"{'?' if one is None else one} : {'?' if two is None else two}"
    if result.draw:
        title, short = f"{GAME_OVER} — draw, {score}", f"{GAME_OVER} — draw {score}"
    elif result.winner is not None:
        w = result.winner
        label = ", ".join(x for x in (colors(w), who(w)) if x)
        title, short = f"{GAME_OVER} — team {w.name} ({label}) wins {score}", f"{GAME_OVER} — {w.name} wins {score}"
    else:
        title = short = f"{GAME_OVER} — {score}"

    lines = [f"Score: ONE (BLUE+RED) {score} TWO (YELLOW+GREEN)"]  # lines fit 50 columns
    if state is not None:
        lines.append(colour_points(state))
    for p in result.players:
        if p.cause is None or p.cause is Cause.REGULAR:
            continue
        name = (who(p.team) if p.team is not None else p.name) or ""
        cause = p.cause
        if cause is Cause.SOFT_TIMEOUT and p.reason == season.irregular_reason(Cause.HARD_TIMEOUT, ""):
            cause = Cause.HARD_TIMEOUT  # a 21.x server that labelled a hard timeout soft
        if p.team is not None and state is not None and not state.is_over and state.team == p.team:
            name = ", ".join(x for x in (name, f"{state.color.name} to move") if x)
        team = p.team.name if p.team is not None else "?"
        lines.append(f"Irregular end: team {team}{f' ({name})' if name else ''} {_cause_text(cause, season)}.")
        reason = (p.reason or "").strip()
        plain = {
            season.irregular_reason(c, result.name_of(p.team) if p.team is not None else "")
            for c in (Cause.SOFT_TIMEOUT, Cause.HARD_TIMEOUT, Cause.LEFT)
        } | {"Player left"}
        restates = reason in plain or (
            server_texts.reason_cause(reason) in _TIMEOUTS and cause in (Cause.SOFT_TIMEOUT, Cause.HARD_TIMEOUT)
        )
        if reason and not restates:  # a reason that only restates the cause is said once (docs/spec/rules.md §12)
            lines.append(f"Reason: {server_texts.shown(reason, season)}")  # the original: in the XML pane, the log
    if result.regular:
        lines.append(
            "Regular end: "
            + (
                "game finished."
                if state is None
                else f"the round limit ({season.round_limit} rounds) was reached."
                if state.turn >= season.turn_limit
                else "no colour can place a piece."
                if state.is_over
                else "game finished."
            )
        )
    win = {p.team: p.victory_points for p in result.players if p.team is not None}
    if set(win) == {Team.ONE, Team.TWO} and None not in win.values():
        lines.append(f"Win points (2 win, 1 draw): ONE {win[Team.ONE]} : {win[Team.TWO]} TWO")
    else:
        parts = [f"{p.team.name if p.team is not None else '?'} {p.parts}" for p in result.players]
        lines.append("Scores (win points, points): " + "   ".join(parts))
    # names and reasons come from outside (server, file): escaped once here for every place that shows them
    return EndTexts(
        printable(title, None),
        printable(short, None),
        tuple(printable(line, None) for line in lines),
        printable(_summary(result, who, me, season), None),
    )


def _summary(result: GameResult, who, me: Team | None, season: Season) -> str:
    parts = []
    for team in Team:
        points = result.points(team)
        name = who(team)
        parts.append(
            f"{team.name}{f' ({name})' if name else ''}{' [us]' if me is team else ''} "
            f"{'?' if points is None else points}"
        )
    if result.winner is not None:
        outcome = f"winner {result.winner.name}"
        if me is not None:
            outcome += " (we won)" if result.winner is me else " (we lost)"
    else:
        outcome = "draw" if result.draw else "no winner"
    irregular = next((p for p in result.players if p.cause not in (None, Cause.REGULAR)), None)
    if irregular is None:
        cause = "REGULAR"
    else:
        by = irregular.team.name if irregular.team is not None else "?"
        told = server_texts.shown(irregular.reason, season) if irregular.reason else ""
        cause = f"{irregular.cause} by {by}: {told}".rstrip(": ")
    return f"{parts[0]} : {parts[1]}, {outcome}, cause {cause}"
