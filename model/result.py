"""The one game result of the project: read from and written to both seasons' result forms.

A :class:`GameResult` holds per team the victory points (2 win / 1 draw / 0 loss) and the Blokus points,
the optional player names, the winner team (or none), whether the game ended regularly, the cause of the
end (:class:`Cause`) and the reason text. The server builds it (:func:`regular_result`,
:func:`irregular_result`), the client reads it (:func:`result_from_data`), replays store it, the TUI
shows it, and :func:`result_to_data` writes it in the form of a season:

* 2021 (protocol.md §4.5): fragments ``Gewinner`` / ``∅ Punkte``; one ``<score cause reason>`` per player
  in team order; ``<winner displayName><color class="team">…`` per winner (none or both on a draw).
* 2027 (season-2027.md §3.6): fragments ``Siegpunkte`` / ``Punkte``; ``<scores><entry><player name? team/>
  <score><part/>…``; one ``<winner team? regular reason/>``; a violator scores 0 in every part.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from model import messages as M
from model.pieces import Team
from model.season import DEFAULT_SEASON, Season


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


# 2027 reason texts (sdk Violation.kt): how the cause of an irregular end is recognised
_REASON_CAUSES = (
    ("Regelverletzung von", Cause.RULE_VIOLATION),
    ("laenger als", Cause.SOFT_TIMEOUT),
    ("keinen Zug gesendet", Cause.HARD_TIMEOUT),
    ("hat das Spiel verlassen", Cause.LEFT),
    ("Missachtung des Spielablaufs", Cause.PROCESS_VIOLATION),
)


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
    players: tuple[PlayerResult, ...]  # team ONE first
    winner: Team | None  # None: draw or unknown
    draw: bool
    regular: bool
    reason: str = ""
    fragments: tuple[str, ...] = ()
    winner_names: tuple[str, ...] = ()  # display names of 2021's <winner> elements
    cause: Cause = Cause.REGULAR
    offender: Team | None = None  # who ended the game irregularly
    winners: tuple[Team, ...] = ()  # teams named by 2021's <winner> elements (21.3.3 rules, rules.md §12)

    @property
    def scores(self) -> tuple[PlayerResult, ...]:
        return self.players

    @property
    def names(self) -> tuple[str, str]:
        return (self.name_of(Team.ONE), self.name_of(Team.TWO))

    def player(self, team: Team) -> PlayerResult | None:
        return next((p for p in self.players if p.team == team), None)

    def name_of(self, team: Team) -> str:
        p = self.player(team)
        return p.name if p is not None and p.name else ""

    def points(self, team: Team) -> int | None:
        p = self.player(team)
        return None if p is None else p.points

    def with_names(self, names: tuple[str, str]) -> GameResult:
        """Fill in names the result does not carry (2021 results name only winners)."""
        players = tuple(replace(p, name=names[p.team]) if not p.name and p.team is not None and names[p.team]
                        else p for p in self.players)
        return replace(self, players=players)


# --- building (the server) ---------------------------------------------------------------------------


def regular_result(points: tuple[int, int], names: tuple[str, str], season: Season = DEFAULT_SEASON) -> GameResult:
    """The result of a game that ended by the rules: more points wins, equal is a draw."""
    if points[0] == points[1]:
        winner, victory, winners = None, (1, 1), (Team.ONE, Team.TWO)
    else:
        winner = Team.ONE if points[0] > points[1] else Team.TWO
        victory = (2, 0) if winner is Team.ONE else (0, 2)
        winners = (winner,)
    players = tuple(PlayerResult(t, names[t], (victory[t], points[t]), Cause.REGULAR, "") for t in Team)
    reason = season.win_reason(None if winner is None else (names[winner] or winner.name))
    return GameResult(players, winner, winner is None, True, reason, season.result_fragments, (),
                      Cause.REGULAR, None, winners)


def irregular_result(offender: Team, cause: Cause, reason: str, points: tuple[int, int], names: tuple[str, str],
                     season: Season = DEFAULT_SEASON) -> GameResult:
    """``offender`` lost by ``cause`` (victory points 0, the other team 2). 2021 keeps the offender's
    Blokus points and names winners as 21.3.3 does; 2027 gives the offender 0 in every part."""
    innocent = offender.opponent
    players = []
    for team in Team:
        if team is offender:
            parts = (0, points[team] if season.violator_keeps_points else 0)
            players.append(PlayerResult(team, names[team], parts, cause, reason))
        else:
            players.append(PlayerResult(team, names[team], (2, points[team]), Cause.REGULAR, ""))
    if cause is Cause.RULE_VIOLATION or points[0] != points[1]:  # 21.3.3 excludes only rule violators
        winners = (innocent,) if cause is Cause.RULE_VIOLATION else (
            (Team.ONE,) if points[0] > points[1] else (Team.TWO,))
    else:
        winners = (Team.ONE, Team.TWO)
    return GameResult(tuple(players), innocent, False, False, reason, season.result_fragments, (), cause,
                      offender, winners)


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
    fragments = tuple(f.name for f in data.definition.fragments) if data.definition else ()
    players: list[PlayerResult] = []
    if data.score_entries is not None:
        for index, entry in enumerate(data.score_entries.entries):
            score = entry.score or M.Score()
            team = _parse_team(entry.player.team) if entry.player else None
            if team is None and index < 2:
                team = Team(index)
            players.append(PlayerResult(team, entry.player.name or None if entry.player else None,
                                        tuple(score.parts), Cause.parse(score.cause), score.reason))
    else:
        for index, score in enumerate(data.scores):
            players.append(PlayerResult(Team(index) if index < 2 else None, None, tuple(score.parts),
                                        Cause.parse(score.cause), score.reason))
    winner_names = tuple(w.display_name for w in data.winners if w.display_name is not None)
    # names of the 2021 form are only known from <winner>
    players = [
        p if p.name is not None else replace(
            p, name=next((w.display_name for w in data.winners if w.team == p.team and w.display_name), None))
        for p in players
    ]
    irregular = [p for p in players if p.cause not in (None, Cause.REGULAR)]
    regular = not irregular
    reason = next((p.reason for p in irregular if p.reason), "")
    cause = irregular[0].cause if irregular else Cause.REGULAR
    offender = irregular[0].team if irregular else None

    new_winner = next((w for w in data.winners if w.regular is not None or w.team_attr is not None), None)
    if data.score_entries is not None and new_winner is not None:
        winner = new_winner.team
        draw = winner is None
        if new_winner.regular is not None:
            regular = new_winner.regular and regular
        reason = new_winner.reason or reason
        if not regular and offender is None:
            cause = next((c for text, c in _REASON_CAUSES if text in reason), Cause.UNKNOWN)
            offender = None if winner is None else winner.opponent
            players = [replace(p, cause=cause, reason=reason) if p.team is not None and p.team == offender
                       else replace(p, cause=Cause.REGULAR) for p in players]
        elif regular:
            players = [p if p.cause is not None else replace(p, cause=Cause.REGULAR) for p in players]
        winners = () if winner is None else (winner,)
    else:
        winner, draw = _outcome_from_parts(players)
        if winner is None and not draw and data.winners:
            teams = {w.team for w in data.winners}
            if len(teams) == 1:
                winner = teams.pop()
            elif len(teams) == 2 and None not in teams:
                draw = True
        winners = tuple(w.team for w in data.winners if w.team is not None)
    return GameResult(tuple(players), winner, draw, regular, reason, fragments, winner_names, cause, offender,
                      winners)


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
    victory, points = season.result_fragments
    return M.Definition(fragments=[
        M.Fragment(name=victory, aggregation="SUM", relevant_for_ranking=True),
        M.Fragment(name=points, aggregation="AVERAGE", relevant_for_ranking=True),
    ])


def result_to_data(result: GameResult, season: Season = DEFAULT_SEASON) -> M.ResultData:
    """The result in ``season``'s form (see the module docstring)."""
    players = sorted(result.players, key=lambda p: 99 if p.team is None else int(p.team))
    if not season.result_entries:
        scores = [M.Score(cause=(p.cause or Cause.REGULAR).value, reason=p.reason or "", parts=list(p.parts))
                  for p in players]
        teams = result.winners or ((Team.ONE, Team.TWO) if result.draw else
                                   () if result.winner is None else (result.winner,))
        winners = [M.Winner(display_name=result.name_of(t), color=M.TeamRef.of(t)) for t in teams]
        return M.ResultData(definition=_definition(season), scores=scores, winners=winners)
    entries = [
        M.ScoreEntry(player=M.ScorePlayer(name=p.name or None, team=None if p.team is None else p.team.name),
                     score=M.Score(parts=list(p.parts)))
        for p in players
    ]
    winner = M.Winner(team_attr=None if result.winner is None else result.winner.name, regular=result.regular,
                      reason=result.reason)
    return M.ResultData(definition=_definition(season), score_entries=M.Scores(entries=entries), winners=[winner])


def result_to_message(result: GameResult, room_id: str, season: Season = DEFAULT_SEASON) -> M.Room:
    return M.Room(room_id=room_id, data=result_to_data(result, season))
