"""Adjudication: a game whose winner can no longer change ends at once (``blokus arena``'s default;
``--no-adjudication`` plays every game to its end).

The rule is exact, never a guess: points only grow, and a colour can gain at most the squares still in its hand
plus the bonuses it can still earn (``ALL_PLACED_BONUS`` for placing every piece, ``MONO_LAST_BONUS`` more if the
monomino is still in hand to be placed last); a colour that is out of the game gains nothing. When one team has
more points now than the other team can reach at best, the winner is decided, and the game is scored as it
stands (the winner's margin then is the margin at adjudication, a lower bound of the final one).
"""

from __future__ import annotations

from blokus.model.pieces import ALL_PLACED_BONUS, MONO_LAST_BONUS, SHAPES, TOTAL_SQUARES, Color, Shape, Team
from blokus.model.state import GameState

_MONO_BIT = 1 << SHAPES.index(Shape.MONO)


def most_to_gain(state: GameState, color: int) -> int:
    """The most points ``color`` can still add to its score."""
    hand = state.shapes[color]
    if not state.valid >> color & 1 or hand == 0:
        return 0
    in_hand = TOTAL_SQUARES - state.points(Color(color))  # its points are the squares placed while pieces are in hand
    return in_hand + ALL_PLACED_BONUS + (MONO_LAST_BONUS if hand & _MONO_BIT else 0)


def decided(state: GameState) -> str:
    """Why the winner of the unfinished game ``state`` can no longer change ("" while it can)."""
    if state.is_over:
        return ""
    now = {team: state.team_points(team) for team in Team}
    best = {team: now[team] + sum(most_to_gain(state, c) for c in team.colors) for team in Team}
    for team in Team:
        other = team.opponent
        if now[team] > best[other]:
            return (
                f"adjudicated at turn {state.turn}: {team.name} has {now[team]} points, {other.name} can reach "
                f"{best[other]} at most"
            )
    return ""
