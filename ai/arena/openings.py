"""A balanced opening suite (``blokus openings FILE``): openings our engine judges even.

Each opening starts from a start piece of the season's pool (in turn, so every piece is used about as often)
and plays ``plies`` moves, each drawn at random from the few best placements by the search's cheap move
ordering (``static_scores``: plausible moves, not random ones). The position is then valued by the
evaluation in points (``VALUE_WEIGHTS``: the points now plus the points still to come, team ONE's minus team
TWO's); an opening counts only if that value is within ``max_value`` points, and no two openings reach the
same position. Both games of a pair are played from it with the seats swapped, so what remains of an
advantage cancels out within the pair.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from blokus.ai.search.evaluate import VALUE_WEIGHTS, evaluate, static_scores
from blokus.model.moves import Move, SkipMove
from blokus.model.openings import Opening
from blokus.model.pieces import Color, Shape
from blokus.model.season import Season
from blokus.model.state import GameState, move_of_placement

TOP_MOVES = 6  # a move is drawn from this many of the best by the move ordering
ATTEMPTS_PER_OPENING = 40  # positions tried from one start piece before the next piece takes its place


@dataclass(frozen=True)
class SuiteSettings:
    count: int = 50
    plies: int = 8
    max_value: float = 6.0  # points: how uneven an opening may be, as the evaluation judges it
    seed: int = 1


@dataclass(frozen=True)
class JudgedOpening:
    opening: Opening
    value: float  # the evaluation of its position for team ONE, in points


def _plausible_move(state: GameState, rng: random.Random) -> Move:
    ids = state.legal_placements()
    if len(ids) == 0:
        return SkipMove(Color(state.color))
    scores = static_scores(state, ids, state.color)
    best = ids[np.argsort(-scores, kind="stable")[:TOP_MOVES]]
    return move_of_placement(Color(state.color), int(best[rng.randrange(len(best))]))


def balanced_suite(season: Season, settings: SuiteSettings) -> list[JudgedOpening]:
    """Up to ``settings.count`` openings of ``settings.plies`` moves, each judged even (fewer if not found)."""
    rng = random.Random(settings.seed)
    pieces = [Shape[name] for name in season.start_pieces]
    suite: list[JudgedOpening] = []
    seen: set[int] = set()
    for slot in range(settings.count):  # the start pieces in turn, one a slot
        piece = pieces[slot % len(pieces)]
        for _ in range(ATTEMPTS_PER_OPENING):
            state = GameState.new(season, piece)
            moves: list[Move] = []
            while len(moves) < settings.plies and not state.is_over:
                move = _plausible_move(state, rng)
                state.play(move)
                moves.append(move)
            if state.is_over or state.key() in seen:
                continue
            value = evaluate(state, VALUE_WEIGHTS)
            if abs(value) <= settings.max_value:
                seen.add(state.key())
                suite.append(JudgedOpening(Opening(season, piece, tuple(moves)), value))
                break
    return suite
