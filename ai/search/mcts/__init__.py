"""Monte-Carlo tree search with RAVE over the compiled engine (``model.fast``): the strongest player.

Each simulation walks down the tree from the root (the move with the best blend of its own mean result
and its RAVE value — the mean result of the simulations in which the same colour played the same
placement later — plus a small exploration term and the move model's guidance, ``ai.search.movefeatures``),
adds one node, and plays the game to its end with a cheap biased policy: among the moves that cover the
most of the opponents' newest attach points (blocking them), large pieces are preferred (weight
``size_base ** size``). A simulation counts 1 for a win of a team, 0.5 for a draw, plus a bonus for a
margin above the search's mean. The move played is the root move with the most visits. Below the root a
node keeps only the moves the model rates at least ``prune`` times the best (they would not be tried in
time anyway; the tree grows for longer).

Everything runs in compiled code; the Python side calls ``run`` in slices of a few dozen simulations
and checks the clock and the stop flag in between (``Engine.think``), so the search is anytime and
cancellable. Early in the game only pentominoes are considered (tree and playouts) while a colour still
holds several: strong players place their big pieces first, and it cuts the branching factor.

The package: ``params`` (``MctsParams``, the settings, and the indices ``R`` of the kernels' parameter vector),
``buffers`` (the tree and the work arrays, as named groups), ``kernels`` (the compiled simulation), ``player``
(``MctsPlayer``, the clock, pondering, subtree reuse, ``warm_up``).
"""

from __future__ import annotations

from blokus.ai.search.mcts.buffers import NCOUNT, Root, Scratch, Tree
from blokus.ai.search.mcts.kernels import seed_rng
from blokus.ai.search.mcts.params import MctsParams, R
from blokus.ai.search.mcts.player import (
    KERNELS,
    PONDER_LIMIT_S,
    STOP_RESERVE_S,
    MctsPlayer,
    counted_simulations,
    is_ready,
    prepare,
    warm_up,
)

__all__ = [
    "KERNELS",
    "NCOUNT",
    "PONDER_LIMIT_S",
    "R",
    "STOP_RESERVE_S",
    "MctsParams",
    "MctsPlayer",
    "Root",
    "Scratch",
    "Tree",
    "counted_simulations",
    "is_ready",
    "prepare",
    "seed_rng",
    "warm_up",
]
