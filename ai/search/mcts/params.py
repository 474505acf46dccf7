"""The MCTS's settings: one list (``MctsParams``'s fields), from which the kernels' parameter vector and the
indices they read it by (``R``) are derived."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass, field, fields, replace

import numpy as np

from blokus.ai.search.cores import MAX_THREADS
from blokus.ai.search.evaluate import DEFAULT_WEIGHTS
from blokus.ai.search.fasteval import weight_vector
from blokus.model.season import DEFAULT_SEASON, Season

# a field marked so is a setting of the player, not an input of the compiled search (not in the vector)
PLAYER_ONLY = {"player_only": True}


@dataclass(frozen=True)
class OpeningRules:
    """A season's values of the two opening rules (``MctsParams.centre_cut``, ``partner_pieces``)."""

    centre_cut: float
    partner_pieces: int


@dataclass
class MctsParams:
    explore: float = 0.15  # UCT exploration constant (on top of RAVE)
    rave_bias: float = 0.002  # smaller: RAVE counts for longer
    prior_n: float = 4.0  # virtual visits of the move-ordering prior
    size_base: float = 5.0  # playout weight of a piece: size_base ** size
    score_weight: float = 0.1  # share of the score margin in a simulation's value
    early_rounds: int = 8  # pentominoes only before this round ...
    early_pentos: int = 3  # ... while the colour holds at least this many
    root_eval: float = 0.03  # > 0: root moves get their prior from ``ai.search.evaluate`` (value drop per point)
    graded: bool = False  # instead: the smallest size considered falls with the pieces placed (5, 4, 3, all)
    shape_prior: float = 0.0  # > 0: node priors also count awkward shapes and (early) the centre
    playout_moves: int = 0  # > 0: a playout stops after this many moves and the evaluation judges it
    eval_scale: float = 12.0  # evaluation points per unit of the logistic value of a stopped playout
    move_prior: float = 0.4  # > 0: node priors from the fitted move model (``ai.search.movefeatures``): exploration
    #                          constant of its probabilities (c P sqrt(N) log(N + 1) / n) ...
    prior_value: float = 0.5  # ... and a move's start value below the node's mean: this x (1 - sqrt(P / P_max))
    score_z: float = 0.3  # > 0: instead of score_weight, a bonus of up to this for a margin above the search's
    #                       mean margin (in standard deviations; "quality-based rewards", as Pentobi does)
    prune: float = 0.01  # > 0: below the root, keep only the moves the model rates at least this x the best
    # a node is added (and expanded) at the visit of its move after 1 + expand_inc x (its depth - 1) earlier ones:
    # 0 adds every node at its second visit; Pentobi waits longer deeper (0.5: its expansion_threshold_inc). 0.5
    # takes 13-18 % less time a simulation at turns 24-40 for the same strength against level 6 (RESULTS §38)
    expand_inc: float = 0.5
    # in a tree the threads share (shared_tree): the visits a simulation counts as losses on its way down, until
    # its result is known (a "virtual loss": the other threads go elsewhere meanwhile); not used by one thread
    virtual_loss: float = 1.0
    # > 0: in the opening (at most centre_pieces pieces on the board), a node keeps only the moves of a colour past
    # its first piece whose cell nearest the board's centre is at most this much farther from it than the nearest
    # of all its moves (distances at least 2; Pentobi prunes its opening moves so, by 0.3 up to 12 pieces).
    # 0 turns it off; None (the default): the season's value (``SEASON_DEFAULTS``)
    centre_cut: float | None = None
    centre_pieces: int = 12
    # > 0: while the board holds fewer than this many pieces, a node of a colour past its first piece keeps only
    # its moves that touch its partner colour along an edge, if it has any (Pentobi's classic_2 rule: 14); 0: off;
    # None (the default): the season's value
    partner_pieces: int | None = None
    # keep the subtree of the position reached since the last search
    reuse: bool = field(default=True, metadata=PLAYER_ONLY)
    # > 0: a count of simulations a move (the clock still stops it), to measure per simulation: this x 0.7 e^(0.1 k)
    # for a colour that placed k pieces (x 0.2, 0.2, 0.3 for k = 0, 1, 2), the schedule of Pentobi's levels
    # (count=5028: level 6's budget, 69809: level 7's)
    count: int = field(default=0, metadata=PLAYER_ONLY)
    # search threads; 0: the cores this process may use (``ai.search.cores.available_cores``)
    threads: int = field(default=0, metadata=PLAYER_ONLY)
    # the threads grow one tree (tree-parallel: atomic node and edge allocation, atomic counts, virtual loss; 74.5 %
    # against level 6 in 96 games where a tree each scored 68 % in 48, RESULTS §36-37); 0: a tree each, root
    # statistics merged (root-parallel). A fixed budget (``count``, a player's max_simulations) is always searched a
    # tree a thread: the same move every time
    shared_tree: bool = field(default=True, metadata=PLAYER_ONLY)
    # play the move of our opening book (``ai.search.book``) at once while the position is in it; 0: always search
    book: bool = field(default=True, metadata=PLAYER_ONLY)

    def __post_init__(self) -> None:
        if not 0 <= self.threads <= MAX_THREADS:
            raise ValueError(f"threads needs 0 (all cores) to {MAX_THREADS}, not {self.threads}")
        if not 0 <= self.virtual_loss <= 100:
            raise ValueError(f"virtual_loss needs 0 to 100, not {self.virtual_loss}")

    def for_season(self, season: Season | int) -> MctsParams:
        """These settings with every field left to the season (None) set to ``season``'s value."""
        if self.centre_cut is not None and self.partner_pieces is not None:
            return self
        rules = SEASON_DEFAULTS[int(season)]
        return replace(
            self,
            centre_cut=rules.centre_cut if self.centre_cut is None else self.centre_cut,
            partner_pieces=rules.partner_pieces if self.partner_pieces is None else self.partner_pieces,
        )

    def vector(self, shared_tree: bool = False, season: Season | int = DEFAULT_SEASON) -> np.ndarray:
        """The compiled search's parameters in ``season``: the search inputs in field order (``R``), then the
        evaluation's weights (from ``R.weights`` on). ``virtual_loss`` is 0 unless the threads share the tree
        (``shared_tree``), ``shared`` 1 where they do (their counts are added atomically)."""
        settings = self.for_season(season)
        values = {name: float(getattr(settings, name)) for name in SEARCH_INPUTS if name != "shared"}
        values["shared"] = 1.0 if shared_tree else 0.0
        if not shared_tree:
            values["virtual_loss"] = 0.0
        head = np.array([values[name] for name in SEARCH_INPUTS], dtype=np.float64)
        return np.concatenate([head, weight_vector(DEFAULT_WEIGHTS)])


# The opening rules' values where a player leaves them to the season. 2021 (the classic corner starts): both on,
# as Pentobi plays its Classic openings, 70.8 % against level 6 at one thread where neither scored 63.5 % (48
# games each, +7.3 % paired, s.e. 8.3). 2027 (border starts): both off, they lost 22.9 % paired there in 24 games
# (s.e. 9.5). RESULTS §41-42
SEASON_DEFAULTS: dict[int, OpeningRules] = {
    2021: OpeningRules(centre_cut=0.3, partner_pieces=14),
    2027: OpeningRules(centre_cut=0.0, partner_pieces=0),
}

# the fields that are search inputs, and whether the threads share the tree (from the player's ``shared_tree``)
SEARCH_INPUTS = (*(f.name for f in fields(MctsParams) if not f.metadata.get("player_only")), "shared")
ParamIndex = namedtuple("ParamIndex", [*SEARCH_INPUTS, "weights"])  # type: ignore[misc]  # (names from a list)
# the position of each search input in ``MctsParams.vector()``; the kernels read ``params[R.explore]`` (numba
# takes a global named tuple as a constant)
R = ParamIndex(*range(len(SEARCH_INPUTS) + 1))
