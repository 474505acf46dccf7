"""How much the first round of a series' games favours team ONE, by our engine and optionally by Pentobi.

Reads an arena ``--json`` (its games carry the start piece and every move), takes each pair's first round (the
four first moves, the same for both games of a pair), and values the position at turn 4 (BLUE to move):

* ``mcts`` (one thread, no book, ``--sims`` simulations): its root value, team ONE's expected result;
* with ``--pentobi PATH``: Pentobi's ``get_value`` after ``genmove`` for BLUE (the same viewpoint).

It prints one line a pair (the winners of both games: the seat that won), then the means. Used in
tuning/RESULTS.md §46 to show that the seat gap against Pentobi follows the openings' first-mover edge:

    python tuning/opening_edge.py season2021_l7.json --season 2021 --sims 3000
    python tuning/opening_edge.py season2021_l7.json --season 2021 --pentobi $P --level 6
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from pathlib import Path

import numpy as np

from blokus.ai.players.gtp import GtpPlayer
from blokus.ai.search.mcts import MctsParams, MctsPlayer, prepare
from blokus.model.moves import SkipMove
from blokus.model.season import SEASONS
from blokus.model.state import GameState, move_of_placement


def winner(game: dict) -> str:
    if game["score"] == 0.5:
        return "draw"
    return "ONE" if (game["score"] == 1.0) == (game["a_team"] == 0) else "TWO"


def first_round(game: dict, season: object) -> GameState:
    state = GameState.new(season, game["start_piece"])
    for code in game["moves"][:4]:
        state.play(SkipMove(state.color) if code < 0 else move_of_placement(state.color, code))
    return state


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("series", help="an arena --json of pairs (openings alternating seats)")
    ap.add_argument("--season", default="2021", choices=sorted(SEASONS))
    ap.add_argument("--sims", type=int, default=3000, help="simulations of our engine a position")
    ap.add_argument("--pentobi", help="pentobi-gtp: value the positions with it instead")
    ap.add_argument("--level", type=int, default=6, help="Pentobi's level")
    args = ap.parse_args()
    season = SEASONS[args.season]
    games = sorted(json.loads(Path(args.series).read_text())["games"], key=lambda g: g["index"])
    if not args.pentobi:
        prepare(None)
    values, seats = [], []
    for i in range(0, len(games) - 1, 2):
        a, b = games[i], games[i + 1]
        state = first_round(a, season)
        if args.pentobi:
            with GtpPlayer(args.pentobi, args.level, seed=i) as engine:
                engine.load_position(state)
                engine.command("genmove 1")
                value = float(engine.command("get_value"))
        else:
            player = MctsPlayer(1, params=MctsParams(threads=1, book=False), max_simulations=args.sims)
            player.think(state.copy(), time.monotonic() + 600, threading.Event())
            value = float(player.last_info["value"])
        values.append(value)
        seats.append((winner(a), winner(b)))
        print(
            f"pair {i // 2:2d} {a['start_piece']:8s} team ONE's value at turn 4: {value:.3f}"
            f"  won by {winner(a)}, {winner(b)}"
        )
    v = np.array(values)
    print(f"mean {v.mean():.3f}, median {np.median(v):.3f}; favouring ONE in {int((v > 0.5).sum())} of {len(v)}")
    both = {k: sum(1 for s in seats if s == (k, k)) for k in ("ONE", "TWO")}
    print(f"pairs won by the same seat twice: ONE {both['ONE']}, TWO {both['TWO']}")


if __name__ == "__main__":
    main()
