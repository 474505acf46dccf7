"""Results judged from what happened: a finished game, as a game process, a cluster's worker or the tournament's
journal reports it (an ``ArenaGame``), counts only if it *replays*. Its moves (``ArenaGame.moves``: placement ids,
``SKIP`` for a pass) are played by the rule engine from the game's start (its season and start piece), and
its points, score, turns and forfeit must follow from them; a game that does not is void, with the reason.

The report's form is one schema (:class:`GameReport`): every field typed and bounded (a score of 0, 0.5 or 1,
finite times, ints and texts within limits), whether it comes from a JSON line (``model_validate_json``:
nesting and numbers bounded by the parser) or from a worker's answer. ``ai.arena.match.run_jobs`` judges every
game it is handed, ``ai.arena.tournament.Journal`` every game it reads back: this module is the one check.
"""

from __future__ import annotations

import random
from dataclasses import fields, replace
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from blokus.ai.arena.adjudication import decided
from blokus.ai.arena.game import SKIP, ArenaGame, ForfeitKind, GameSpec
from blokus.model import placements as P
from blokus.model.moves import Move, SkipMove, parse_move
from blokus.model.pieces import ALL_PLACED_BONUS, MONO_LAST_BONUS, TOTAL_SQUARES, Shape, Team
from blokus.model.season import SEASONS, season_named
from blokus.model.state import GameState, move_of_placement, placement_of

MAX_TURNS = max(season.turn_limit for season in SEASONS.values())  # a game has at most this many moves
MAX_POINTS = 2 * (TOTAL_SQUARES + ALL_PLACED_BONUS + MONO_LAST_BONUS)  # a team's two colours
MAX_GAMES = 10_000_000  # game indices of a match or a tournament
MAX_SECONDS = 24 * 3600.0  # a move's time
TEXT_MAX = 2_000  # a forfeit's or a void game's line, a worker's label (characters)
PATH_MAX = 4_096
TRACEBACK_MAX = 8_000
FORFEIT_CLASSES = tuple(kind.value for kind in ForfeitKind)
_CLIPPED = {"forfeit": TEXT_MAX, "void": TEXT_MAX, "worker": TEXT_MAX, "replay": PATH_MAX, "traceback": TRACEBACK_MAX}

Count = Annotated[int, Field(ge=0, le=MAX_TURNS)]
Points = Annotated[int, Field(ge=0, le=MAX_POINTS)]
Seconds = Annotated[float, Field(ge=0.0, le=MAX_SECONDS)]
Text = Annotated[str, Field(max_length=TEXT_MAX)]
PathText = Annotated[str, Field(max_length=PATH_MAX)]
MoveCode = Annotated[int, Field(ge=SKIP, lt=P.COUNT)]


class GameReport(BaseModel):
    """The fields of an ``ArenaGame`` as they travel (a journal line's ``game``, a worker's answer): its
    ``result`` stays behind (None), everything else bounded."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)

    index: Annotated[int, Field(ge=0, le=MAX_GAMES)]
    start_piece: Annotated[str, Field(max_length=16)]
    a_team: Literal[0, 1]
    a_points: Points
    b_points: Points
    score: float
    turns: Count
    a_times: Annotated[list[Seconds], Field(max_length=MAX_TURNS)] = []
    b_times: Annotated[list[Seconds], Field(max_length=MAX_TURNS)] = []
    forfeit: Text = ""
    result: None = None
    substitutes: Count = 0
    forfeit_side: Literal["", "A", "B"] = ""
    forfeit_class: Literal["", *FORFEIT_CLASSES] = ""  # type: ignore[valid-type]
    replay: PathText = ""
    logs: Annotated[list[PathText], Field(max_length=8)] = []
    void: Text = ""
    worker: Text = ""
    traceback: Annotated[str, Field(max_length=TRACEBACK_MAX)] = ""
    moves: Annotated[list[MoveCode], Field(max_length=MAX_TURNS)] = []
    a_cores: Annotated[list[Annotated[int, Field(ge=0, le=4095)]], Field(max_length=256)] = []
    b_cores: Annotated[list[Annotated[int, Field(ge=0, le=4095)]], Field(max_length=256)] = []
    adjudicated: Text = ""

    @field_validator("score")
    @classmethod
    def _a_score(cls, score: float) -> float:
        if score not in (0.0, 0.5, 1.0):
            raise ValueError(f"a score is 0, 0.5 or 1, not {score:g}")
        return score

    @field_validator("start_piece")
    @classmethod
    def _a_shape(cls, name: str) -> str:
        if name not in Shape.__members__:
            raise ValueError(f"{name!r} is no piece")
        return name

    def game(self) -> ArenaGame:
        return ArenaGame(**{**self.model_dump(), "result": None})


def first_error(exc: ValidationError) -> str:
    """A validation error in one line: where, and what is wrong (never the input, which may be large)."""
    error = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {message}{more}" if where else message + more


def report_of(game: ArenaGame) -> dict[str, Any]:
    """The report of a game (for JSON: the journal, ``--json``): its fields, ``result`` None, texts cut to their
    limits (a program's long stderr line in a forfeit, say) so that the report always reads back."""
    data = {f.name: getattr(game, f.name) for f in fields(game)}
    data["result"] = None
    for name, limit in _CLIPPED.items():
        text = data[name]
        if isinstance(text, str) and len(text) > limit:
            data[name] = text[: limit - 1] + "…"
    return data


def replay_fault(spec: GameSpec, game: ArenaGame) -> str:
    """Why ``game`` (reported for ``spec``) does not follow from its moves; "" when it does."""
    if (game.index, game.start_piece, game.a_team) != (spec.index, spec.start_piece, spec.a_team):
        return (
            f"it is not the game asked for (game {game.index}, {game.start_piece}, A as team {game.a_team + 1}; "
            f"asked: game {spec.index}, {spec.start_piece}, A as team {spec.a_team + 1})"
        )
    season = season_named(spec.season)
    state = GameState.new(season, Shape[spec.start_piece])
    opening = random.Random(spec.seed)  # the arena's opening turns (as ``match._play`` draws them)
    for number, code in enumerate(game.moves, start=1):
        if state.is_over:
            return f"move {number} comes after the end of the game (turn {state.turn})"
        move: Move = SkipMove(state.color) if code == SKIP else move_of_placement(state.color, code)
        if number <= len(spec.opening):  # the pair's opening from its file
            asked = parse_move(spec.opening[number - 1])
            if code != (SKIP if isinstance(asked, SkipMove) else placement_of(asked)):
                return f"move {number} ({move}) is not the opening's move {number} ({asked})"
        elif spec.arena_moves(state.turn, state.color % 2 == spec.a_team):
            ids = state.legal_placements()
            drawn = move_of_placement(state.color, int(ids[opening.randrange(len(ids))]))
            if move != drawn:
                return f"move {number} ({move}) is not the arena's opening move at turn {state.turn} ({drawn})"
        mistake = state.validate(move)
        if mistake is not None:
            return f"move {number} at turn {state.turn} is illegal: {move} ({state.refusal_text(move, mistake)})"
        state.push(move)
    return _outcome_fault(spec, game, state)


def _outcome_fault(spec: GameSpec, game: ArenaGame, state: GameState) -> str:
    a_team = Team(spec.a_team)
    made = (state.team_points(a_team), state.team_points(a_team.opponent))
    if game.turns != state.turn:
        return f"it says {game.turns} turns, its moves make {state.turn}"
    said = (game.a_points, game.b_points)
    if not (game.forfeit or game.forfeit_side or game.forfeit_class):
        if game.adjudicated and game.adjudicated != decided(state):  # the rule, with the points it names
            return f"it says {game.adjudicated!r}, its moves make {decided(state) or 'no decided game'!r}"
        if not state.is_over and not game.adjudicated:
            return f"it ends at turn {state.turn} without a forfeit, but the game was not over"
        if said != made:
            return f"it says {said[0]}:{said[1]} points, its moves make {made[0]}:{made[1]}"
        score = 1.0 if made[0] > made[1] else 0.0 if made[0] < made[1] else 0.5
        if game.score != score:
            return f"it says a score of {game.score:g} for A, its points {made[0]}:{made[1]} make {score:g}"
        return ""
    side = game.forfeit_side
    if side not in ("A", "B") or not game.forfeit_class or not game.forfeit.startswith(f"{side} "):
        return "its forfeit does not say whose and which it is"
    if state.is_over:
        return f"a forfeit ({game.forfeit_class}) after the end of the game at turn {state.turn}"
    offender = a_team if side == "A" else a_team.opponent
    if game.forfeit_class in (ForfeitKind.ILLEGAL_MOVE, ForfeitKind.TIMEOUT) and state.team is not offender:
        return f"{side} forfeited by {game.forfeit_class} at turn {state.turn}, when the other side was to move"
    # the offender keeps its points (2021) or scores 0 (2027's result: ``irregular_result``)
    kept = season_named(spec.season).violator_keeps_points
    for index, name in ((0, "A"), (1, "B")):
        allowed = {made[index]} if name != side or kept else {made[index], 0}
        if said[index] not in allowed:
            return f"it says {said[0]}:{said[1]} points, its moves make {made[0]}:{made[1]}"
    if game.score != (0.0 if side == "A" else 1.0):
        return f"{side} forfeited, yet it says a score of {game.score:g} for A"
    return ""


def judged(spec: GameSpec, game: object) -> ArenaGame:
    """``game`` as it counts: as reported when its form is sound and it replays (or it is void already), else
    void with the reason (a game process's, a worker's or a journal's report alike)."""
    if not isinstance(game, ArenaGame):
        return _void(spec, f"the report is no game ({type(game).__name__})")
    try:
        GameReport.model_validate(report_of(game))
    except ValidationError as exc:
        return _void(spec, f"its report is malformed: {first_error(exc)}")
    if game.void:
        return game
    fault = replay_fault(spec, game)
    return replace(game, void=f"it does not replay: {fault}") if fault else game


def _void(spec: GameSpec, why: str) -> ArenaGame:
    return ArenaGame(spec.index, spec.start_piece, spec.a_team, 0, 0, 0.5, 0, void=why)
