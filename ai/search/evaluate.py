"""Position evaluation for Blokus (both seasons; four colours, two teams), on the model's Python-int bitboards.

``evaluate(state, w)`` returns a score for team ONE (negate it for team TWO). It is a weighted
difference between the teams of features known to matter in Blokus:

* ``points``   — squares placed plus the endgame bonuses (+15 all pieces, +5 mono last): the objective.
* ``anchors``  — reachable placement corners (free cells diagonal to the colour, not edge-adjacent to
  it) that have a free edge neighbour, i.e. where more than a mono fits: mobility. Blocking an
  opponent's corner lowers *its* count, so the difference rewards blocking.
* ``area``     — free cells the colour can reach within a few steps of its anchors (space); counted
  for the team as the union of both colours, so that partners crowding the same space (interference)
  gain nothing.
* ``overlap``  — anchors shared by the two colours of one team (interference; usually penalised).
* ``awkward``  — placed pieces weighted by how hard they are to fit later (large and awkward first).
* ``centre``   — own squares near the centre, faded out after the opening.
* ``exclusive`` — reach area of one team that the other team cannot reach (contested space won).
* ``dead``     — a colour that was removed from the game (no more moves) is a large loss.
* ``mobility`` — legal placements of the team's colours (late in the game).
* ``colour_area`` — the square root of each colour's room (cells it reaches within ``colour_steps``).
* ``stranded`` — squares in hand of shapes that no longer fit anywhere (late in the game: points that are
  as good as lost).

Features are cheap (a few dozen big-int operations per colour, ~40 µs per position). The module also
provides per-placement numpy tables for vectorised move ordering (``static_scores``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace

import numpy as np

from blokus.model import placements as P
from blokus.model.pieces import ALL_PLACED_BONUS, MONO_LAST_BONUS, SHAPES, TOTAL_SQUARES, Shape
from blokus.model.state import ALL_SHAPES, GameState

FULL = P.FULL
N = P.N
NCELLS = P.NCELLS
NOT_LEFT = P.NOT_LEFT
NOT_RIGHT = P.NOT_RIGHT


# the terms of the evaluation, per team; the value is sum(weight * (team ONE's term - team TWO's term))
FEATURES = (
    "points",
    "anchors",
    "area",
    "overlap",
    "awkward",
    "centre",
    "dead",
    "exclusive",
    "mobility",
    "colour_area",
    "stranded",
)


@dataclass(frozen=True)
class Weights:
    # tuned by self-play, see tuning/RESULTS.md (round 1: anchors 1.0 -> 0.5, area 0.12 -> 0.24,
    # awkward 1.0 -> 2.0)
    points: float = 1.0
    anchors: float = 0.5
    area: float = 0.24
    overlap: float = -0.4
    awkward: float = 2.0
    centre: float = 0.3
    dead: float = 12.0  # subtracted per removed colour that still holds pieces
    exclusive: float = 0.0
    mobility: float = 0.0  # legal placements of the team's colours
    # the square root of each colour's reach area (within ``colour_steps``), summed over the team's colours:
    # room is worth less to a colour that has plenty than to one that is running short (the union ``area``
    # cannot tell them apart)
    colour_area: float = 0.0
    # squares in hand of shapes that fit nowhere any more (a colour that has not started counts none; a
    # removed colour its whole hand)
    stranded: float = 0.0
    reach_steps: int = 3
    colour_steps: int = 3
    # later phases: (turn, weights) — the weights above hold up to ``phase_start``, then the value is
    # interpolated linearly between consecutive phases by turn; after the last one, its weights hold
    # (``reach_steps`` and ``colour_steps`` are always this object's)
    phase_start: int = 0
    phases: tuple[tuple[int, Weights], ...] = ()

    def vector(self) -> list[float]:
        """The weight of each of ``FEATURES`` (``dead`` as a negative weight per removed colour)."""
        return [
            self.points,
            self.anchors,
            self.area,
            self.overlap,
            self.awkward,
            self.centre,
            -self.dead,
            self.exclusive,
            self.mobility,
            self.colour_area,
            self.stranded,
        ]

    def at_turn(self, turn: int) -> list[float]:
        """The weights of ``FEATURES`` at ``turn``."""
        points = [(self.phase_start, self.vector())] + [(t, w.vector()) for t, w in self.phases]
        if turn <= points[0][0] or len(points) == 1:
            return points[0][1]
        for (t0, w0), (t1, w1) in zip(points, points[1:], strict=False):
            if turn < t1:
                f = (turn - t0) / (t1 - t0)
                return [a + f * (b - a) for a, b in zip(w0, w1, strict=True)]
        return points[-1][1]

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Weights:
        names = {f.name for f in fields(cls)} - {"phases"}
        phases = tuple((int(t), cls.from_dict(w)) for t, w in data.get("phases", ()))
        return cls(**{k: v for k, v in data.items() if k in names}, phases=phases)


DEFAULT_WEIGHTS = Weights()

# The default AI's weights: DEFAULT_WEIGHTS (tuned by self-play) in the opening; from turn 12 on the
# colour_area term on top, each colour's room within 8 steps (most between turns 20 and 40), weighted by how
# well it predicts Pentobi's values of positions (tuning/teacher.py, tuning/RESULTS.md §11-12); weights fitted
# to the results of 352 self-play games (tuning/texel.py, RESULTS §8) for turns 40-59 (at 50) and 60+ (at 66);
# late in the game the stranded squares, and the legal-move count (mobility) only after turn 58: before, it
# predicts nothing Pentobi sees and costs a move generation per evaluation (RESULTS §13).
TUNED_WEIGHTS = Weights(
    colour_steps=8,
    phase_start=12,
    phases=(
        (20, Weights(colour_area=5.5)),
        (28, Weights(colour_area=8.9)),
        (36, Weights(colour_area=6.8)),
        (
            50,
            Weights(
                points=1.0,
                anchors=-0.25,
                area=0.73,
                overlap=0.92,
                awkward=1.36,
                centre=0.0,
                dead=0.86,
                colour_area=1.5,
                stranded=-0.2,
            ),
        ),
        (
            58,
            Weights(
                points=1.0,
                anchors=-0.175,
                area=0.51,
                overlap=0.51,
                awkward=1.26,
                centre=0.0,
                dead=0.6,
                colour_area=0.7,
                stranded=-0.33,
            ),
        ),
        (
            66,
            Weights(
                points=1.0,
                anchors=-0.1,
                area=0.29,
                overlap=0.1,
                awkward=1.16,
                centre=0.0,
                dead=0.34,
                mobility=0.37,
                colour_area=1.4,
                stranded=-1.3,
            ),
        ),
    ),
)


def _points_to_come(
    anchors: float, area: float, overlap: float, awkward: float, dead: float, colour_area: float
) -> Weights:
    """The points now (weight 1) and the terms that estimate the points still to come; every other term 0."""
    return Weights(
        points=1.0,
        anchors=anchors,
        area=area,
        overlap=overlap,
        awkward=awkward,
        centre=0.0,
        dead=dead,
        colour_area=colour_area,
    )


# The analysis's yardstick (``ai.analysis``): its values are the expected final point difference, the points now
# plus a linear estimate of the points still to come, fitted per phase to the final results of 1,200 self-play
# games of both seasons (``tuning/value_scale.py``, tuning/RESULTS.md §33). Only cheap terms (no move generation:
# the yardstick is a Python search); ``exclusive`` is the same difference as ``area``, ``centre`` is left out.
VALUE_WEIGHTS = replace(
    _points_to_come(1.404, 0.2, 1.726, 1.634, 33.528, 6.324),
    phase_start=8,
    phases=(
        (20, _points_to_come(0.609, 0.152, 0.438, 2.877, 26.057, 3.719)),
        (32, _points_to_come(0.338, 0.278, 1.001, 1.769, 3.311, 3.479)),
        (44, _points_to_come(0.474, 0.295, -0.077, 1.304, -3.381, 2.575)),
        (56, _points_to_come(0.537, 0.233, 0.602, 1.057, -1.52, 1.349)),
        (68, _points_to_come(0.431, 0.162, 0.92, 0.748, 0.073, 0.677)),
        (80, _points_to_come(0.246, 0.088, -0.159, 0.504, 3.592, 0.635)),
    ),
)


# How hard a shape is to fit late in the game, beyond its size (pentominoes with few "good" shapes).
_AWK = {
    Shape.PENTO_X: 2.0,
    Shape.PENTO_W: 1.6,
    Shape.PENTO_R: 1.4,
    Shape.PENTO_Z: 1.4,
    Shape.PENTO_T: 1.2,
    Shape.PENTO_U: 1.2,
    Shape.PENTO_V: 1.2,
    Shape.PENTO_S: 1.0,
    Shape.PENTO_Y: 1.0,
    Shape.PENTO_L: 0.8,
    Shape.PENTO_P: 0.6,
    Shape.PENTO_I: 1.0,
    Shape.TETRO_T: 0.6,
    Shape.TETRO_Z: 0.6,
    Shape.TETRO_L: 0.4,
    Shape.TETRO_O: 0.5,
    Shape.TETRO_I: 0.5,
    Shape.TRIO_L: 0.2,
    Shape.TRIO_I: 0.2,
    Shape.DOMINO: 0.0,
    Shape.MONO: 0.0,
}
AWK = [_AWK[s] for s in SHAPES]
SIZE = [s.size for s in SHAPES]
_HAND_AWK_ALL = sum(AWK)
# awkwardness still in hand, by the low 11 and the high 10 bits of a hand bitmask
_AWK_LO = [sum(AWK[s] for s in range(11) if h >> s & 1) for h in range(1 << 11)]
_AWK_HI = [sum(AWK[s + 11] for s in range(len(SHAPES) - 11) if h >> s & 1) for h in range(1 << (len(SHAPES) - 11))]


# squares still in hand, likewise (points = 89 - squares in hand, or 89 + 15 (+5) with an empty hand)
_SQ_LO = [sum(SIZE[s] for s in range(11) if h >> s & 1) for h in range(1 << 11)]
_SQ_HI = [sum(SIZE[s + 11] for s in range(len(SHAPES) - 11) if h >> s & 1) for h in range(1 << (len(SHAPES) - 11))]


def points(state: GameState, c: int) -> int:
    """``state.points(c)`` through lookup tables (the search's hot path)."""
    hand = state.shapes[c]
    if hand == 0:
        return TOTAL_SQUARES + ALL_PLACED_BONUS + (MONO_LAST_BONUS if state.mono_flag >> c & 1 else 0)
    return TOTAL_SQUARES - _SQ_LO[hand & 2047] - _SQ_HI[hand >> 11]


def _ring(max_dist: float) -> int:
    c = (N - 1) / 2
    return sum(P.bit(x, y) for y in range(N) for x in range(N) if max(abs(x - c), abs(y - c)) <= max_dist)


CENTRE_IN = _ring(3.5)  # the central 8x8
CENTRE_MID = _ring(6.5)  # the central 14x14


def edge(bb: int) -> int:
    return (((bb << 1) & NOT_LEFT) | ((bb >> 1) & NOT_RIGHT) | (bb << N) | (bb >> N)) & FULL


def diag(bb: int) -> int:
    r = (bb << 1) & NOT_LEFT
    lf = (bb >> 1) & NOT_RIGHT
    return ((r << N) | (r >> N) | (lf << N) | (lf >> N)) & FULL


def colour_features(
    state: GameState, c: int, occ: int, steps: int, far_steps: int = 0
) -> tuple[int, int, int, int, int]:
    """(anchors, good anchors, reach area bitboard within ``steps``, anchor bitboard, number of cells reached
    within ``far_steps``) of colour ``c``."""
    if not state.valid >> c & 1:
        return 0, 0, 0, 0, 0
    own = state.boards[c]
    if state.shapes[c] == ALL_SHAPES:
        forb = occ
        anchors = state.season.first_move_cells & ~occ
    else:
        forb = occ | edge(own)
        anchors = diag(own) & ~forb
    free = FULL & ~forb
    good = anchors & edge(free)
    r = reach = anchors
    far = anchors.bit_count()
    for step in range(1, max(steps, far_steps) + 1):
        r = (r | (((r << 1) & NOT_LEFT) | ((r >> 1) & NOT_RIGHT) | (r << N) | (r >> N))) & free
        if step == steps:
            reach = r
        if step == far_steps:
            far = r.bit_count()
    return anchors.bit_count(), good.bit_count(), reach, anchors, far


NO_PLACEMENTS = np.zeros(0, dtype=np.int64)


def stranded_squares(state: GameState, c: int, legal: np.ndarray) -> int:
    """The squares in colour ``c``'s hand whose shapes have no placement in ``legal`` (its legal placements;
    so its whole hand once it is out of the game); none before its first piece."""
    hand = state.shapes[c]
    if hand == ALL_SHAPES or hand == 0:
        return 0
    fit = 0
    for shape in np.unique(P.P_SHAPE[legal]):
        fit |= 1 << int(shape)
    return sum(SIZE[s] for s in range(len(SHAPES)) if hand >> s & 1 and not fit >> s & 1)


def team_features(
    state: GameState, steps: int, mobility: bool, colour_steps: int = 3, stranded: bool = False
) -> list[list[float]]:
    """The terms of ``FEATURES`` for each team (mobility and stranded squares counted only if ``mobility``,
    ``stranded``: they cost a move generation)."""
    over = state.is_over  # then nobody moves again: no mobility terms, the rest stays continuous
    b = state.boards
    occ = b[0] | b[1] | b[2] | b[3]
    fade = max(0.0, 1.0 - state.turn / 40.0)
    out = []
    reach = [0, 0]
    for team, (c1, c2) in enumerate(((0, 2), (1, 3))):
        f = [0.0] * len(FEATURES)
        if not over:
            _, g1, r1, a1, n1 = colour_features(state, c1, occ, steps, colour_steps)
            _, g2, r2, a2, n2 = colour_features(state, c2, occ, steps, colour_steps)
            reach[team] = r = r1 | r2
            f[1] = g1 + g2
            f[2] = r.bit_count()
            f[3] = (a1 & a2).bit_count()
            f[9] = math.sqrt(n1) + math.sqrt(n2)
            if mobility or stranded:  # one move generation per colour serves both
                legal = [state.legal_placements(c) if state.valid >> c & 1 else NO_PLACEMENTS for c in (c1, c2)]
                if mobility:
                    f[8] = len(legal[0]) + len(legal[1])
                if stranded:
                    f[10] = stranded_squares(state, c1, legal[0]) + stranded_squares(state, c2, legal[1])
        for c in (c1, c2):
            hand = state.shapes[c]
            f[0] += (
                TOTAL_SQUARES + ALL_PLACED_BONUS + (MONO_LAST_BONUS if state.mono_flag >> c & 1 else 0)
                if hand == 0
                else TOTAL_SQUARES - _SQ_LO[hand & 2047] - _SQ_HI[hand >> 11]
            )
            f[4] += _HAND_AWK_ALL - _AWK_LO[hand & 2047] - _AWK_HI[hand >> 11]
            if fade:
                f[5] += fade * ((b[c] & CENTRE_IN).bit_count() + (b[c] & CENTRE_MID).bit_count())
            if not state.valid >> c & 1 and hand:
                f[6] += 1
        out.append(f)
    if not over:  # space only one team can reach soon
        out[0][7] = (reach[0] & ~reach[1]).bit_count()
        out[1][7] = (reach[1] & ~reach[0]).bit_count()
    return out


def evaluate(state: GameState, w: Weights = DEFAULT_WEIGHTS) -> float:
    """Heuristic value of ``state`` for team ONE (BLUE+RED); the value for team TWO is its negation."""
    weights = w.at_turn(state.turn)
    one, two = team_features(state, w.reach_steps, weights[8] != 0.0, w.colour_steps, weights[10] != 0.0)
    return sum(k * (a - b) for k, a, b in zip(weights, one, two, strict=True))


WIN = 10_000.0  # what the searches add for a won finished game (subtract for a lost one)


def decided_value(state: GameState) -> float:
    """The value of a finished game for the searches (team ONE): the point difference plus ``WIN`` for a win
    (minus for a loss), so that a certain win, however narrow, beats any evaluation of an unfinished
    position — the evaluation's terms of a finished game (awkwardness, space) mean nothing any more."""
    diff = points(state, 0) + points(state, 2) - points(state, 1) - points(state, 3)
    return diff + (WIN if diff > 0 else -WIN if diff < 0 else 0.0)


def terminal_value(state: GameState, w: Weights = DEFAULT_WEIGHTS) -> float:
    """The final score difference (team ONE minus team TWO), on the scale of the heuristic."""
    return w.points * (points(state, 0) + points(state, 2) - points(state, 1) - points(state, 3))


# --- vectorised per-placement tables for move ordering -------------------------------------------


def _words(bbs: list[int]) -> np.ndarray:
    return np.frombuffer(b"".join(m.to_bytes(P.WORDS * 8, "little") for m in bbs), dtype=np.uint64).reshape(
        len(bbs), P.WORDS
    )


def _corner_words() -> np.ndarray:
    """Per placement, the cells that would become its new corners (anchors), ignoring the rest of the board:
    diagonal neighbours that are neither its cells nor their edge neighbours. Made an orientation at a time
    (its corners relative to it, moved to each position and cut to the board) in numpy, in placement id order:
    a loop over the 30 000 placements' bitboards was ~50 ms of every process's start."""
    parts = []
    for o, xs, ys in zip(P.ORIENTATIONS, P.X_PARTS, P.Y_PARTS, strict=True):
        own = set(o.cells)
        near = own | {(x + dx, y + dy) for x, y in own for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))}
        corners = sorted({(x + dx, y + dy) for x, y in own for dx in (1, -1) for dy in (1, -1)} - near)
        cx = xs[:, None] + np.array([c[0] for c in corners])
        cy = ys[:, None] + np.array([c[1] for c in corners])
        on_board = (cx >= 0) & (cx < N) & (cy >= 0) & (cy < N)
        cells = np.full((len(xs), 8), NCELLS, dtype=np.intp)  # 8: the most corners any orientation has
        cells[:, : len(corners)] = np.where(on_board, cy * N + cx, NCELLS)
        parts.append(cells)
    cells = np.concatenate(parts)
    rows = np.broadcast_to(np.arange(P.COUNT)[:, None], cells.shape)[cells < NCELLS]
    cells = cells[cells < NCELLS]  # the padding left out
    words = np.zeros((P.COUNT, P.WORDS), dtype=np.uint64)
    np.bitwise_or.at(words, (rows, cells >> 6), np.left_shift(np.uint64(1), (cells & 63).astype(np.uint64)))
    return words


def _cells_in(region: int) -> np.ndarray:
    """Per placement, how many of its cells are in ``region`` (a bitboard)."""
    inside = np.array([region >> q & 1 for q in range(NCELLS)] + [0], dtype=np.int64)  # the padding: outside
    return inside[P.P_CELLS].sum(axis=1)


CORNER_WORDS = _corner_words()
P_SIZE = np.array([SIZE[s] for s in P.P_SHAPE_LIST], dtype=np.float64)
P_AWK = np.array([AWK[s] for s in P.P_SHAPE_LIST], dtype=np.float64)
P_CENTRE = (_cells_in(CENTRE_IN) + _cells_in(CENTRE_MID)).astype(np.float64)  # central 8x8 plus central 14x14


def _popcount_rows(words: np.ndarray) -> np.ndarray:
    return np.bitwise_count(words).sum(axis=1)


def static_scores(state: GameState, pids: np.ndarray, color: int) -> np.ndarray:
    """Cheap ordering scores for placements ``pids`` of ``color`` (no move is applied)."""
    b = state.boards
    occ = b[0] | b[1] | b[2] | b[3]
    own = b[color]
    free_own = FULL & ~(occ | edge(own))
    opp_anchors = 0
    for c in (1, 3) if color % 2 == 0 else (0, 2):
        if state.valid >> c & 1 and state.shapes[c] != ALL_SHAPES:
            opp_anchors |= diag(b[c]) & ~edge(b[c])
    opp_anchors &= ~occ
    masks = P.MASK_WORDS[pids]
    new_corners = _popcount_rows(CORNER_WORDS[pids] & P.to_words(free_own))
    blocked = _popcount_rows(masks & P.to_words(opp_anchors))
    fade = max(0.0, 1.0 - state.turn / 40.0)
    return 1.6 * P_SIZE[pids] + P_AWK[pids] + 0.7 * new_corners + 1.2 * blocked + 0.3 * fade * P_CENTRE[pids]
