"""A digest of the MCTS's trees at fixed simulation counts: two versions that print the same searched the same.

For seeded random positions of both seasons, ``MctsPlayer`` runs a fixed number of simulations in one thread
(``threads=1``) with the default settings and with variants that take the other paths of the kernels (the compiled
prior instead of the move model, stopped playouts judged by the evaluation, graded sizes, shape priors, the score
weight instead of the z bonus), then a second search after the move chosen and the reply searched most (the kept
subtree, its root expanded afresh). The digest covers every used node and edge of each tree and the move chosen. Run
it in two checkouts (e.g. ``PYTHONPATH=OLD python OLD/tuning/tree_digest.py``) and compare the last line.

Usage: python tuning/tree_digest.py [--simulations 300] [--verbose]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import threading
import time

import numpy as np

from blokus.ai.search.mcts import MctsParams, MctsPlayer, prepare
from blokus.model.pieces import Shape
from blokus.model.season import SEASONS
from blokus.model.state import GameState, placement_of

VARIANTS = {
    "default": {},
    "compiled prior": {"move_prior": 0.0, "root_eval": 0.0},
    "stopped playouts": {"playout_moves": 6},
    "graded, shapes": {"graded": True, "shape_prior": 0.3, "prune": 0.0},
    "score weight": {"score_z": 0.0},
}


def position(season: str, turns: int, seed: int) -> GameState:
    rng = random.Random(seed)
    first = Shape.PENTO_X if SEASONS[season].year == 2027 else Shape.PENTO_L
    state = GameState.new(SEASONS[season], first)
    while state.turn < turns and not state.is_over:
        ids = state.legal_placements()
        state.push_placement(int(ids[rng.randrange(len(ids))]))
    return state


def tree_digest(player: MctsPlayer) -> str:
    tree = player.tree
    nodes, edges = int(tree.counters[0]), int(tree.counters[1])
    h = hashlib.sha256()
    h.update(tree.counters.tobytes())
    for name in ("node_first", "node_count", "node_n"):
        h.update(np.ascontiguousarray(getattr(tree, name)[:nodes]).tobytes())
    for name in ("edge_pid", "edge_child", "edge_n", "edge_w", "edge_pn", "edge_pw", "edge_rn", "edge_rw", "edge_p"):
        h.update(np.ascontiguousarray(getattr(tree, name)[:edges]).tobytes())
    return h.hexdigest()[:16]


def think(player: MctsPlayer, state: GameState) -> tuple[str, int | None]:
    """The search's move and tree digest, and the placement of the move (None: none)."""
    move = player.think(state.copy(), time.monotonic() + 3600, threading.Event())
    return f"{move} {tree_digest(player)} {player.last_info.get('kept', 0)}", placement_of(move)


def most_searched_reply(player: MctsPlayer, pid: int) -> int | None:
    """The most visited reply to root move ``pid`` in the player's tree (None: not expanded)."""
    tree = player.tree
    first, count = int(tree.node_first[0]), int(tree.node_count[0])
    edges = [e for e in range(first, first + count) if int(tree.edge_pid[e]) == pid]
    child = int(tree.edge_child[edges[0]]) if edges else -1
    if child < 0 or tree.node_first[child] < 0 or tree.node_count[child] == 0:
        return None
    first, count = int(tree.node_first[child]), int(tree.node_count[child])
    return int(tree.edge_pid[first + int(np.argmax(tree.edge_n[first : first + count]))])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--simulations", type=int, default=300)
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args()
    prepare(None)
    total = hashlib.sha256()
    for season in SEASONS:
        for turns, seed in ((4, 1), (20, 2), (36, 3), (52, 4)):
            for name, settings in VARIANTS.items():
                state = position(season, turns, seed)
                player = MctsPlayer(seed, params=MctsParams(**settings, threads=1), max_simulations=args.simulations)
                line, pid = think(player, state)
                lines = [line]
                reply = None if pid is None else most_searched_reply(player, pid)
                if pid is not None and reply is not None:  # the next search keeps the subtree of these two moves
                    state.push_placement(pid)
                    state.push_placement(reply)
                    if not state.is_over and len(state.legal_placements()):
                        lines.append(think(player, state)[0])
                text = f"{season} turn {turns} {name}: " + " | ".join(lines)
                total.update(text.encode())
                if args.verbose:
                    print(text)
    print(f"digest {total.hexdigest()}")


if __name__ == "__main__":
    main()
