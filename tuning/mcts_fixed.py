"""Fixed-budget MCTS matches (no clock: reproducible, load-independent), with the arena's pairing.

    python tuning/mcts_fixed.py A_JSON B_JSON GAMES SEED [OPENING_TURNS]

A player is ``{"sims": N, "params": {...MctsParams fields...}}`` or ``{"player": "greedy"}`` (any name).
Example: python tuning/mcts_fixed.py '{"sims": 500, "params": {"explore": 0.0}}' '{"sims": 500}' 12 5
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from blokus.ai import make_player  # noqa: E402
from blokus.ai.arena.match import format_table, make_specs, play_game, summary  # noqa: E402
from blokus.ai.search.mcts import MctsParams, MctsPlayer, prepare  # noqa: E402


def factory(text: str):
    cfg = json.loads(text)

    def make(seed: int):
        if cfg.get("player", "mcts") != "mcts":
            return make_player(cfg["player"], seed)
        return MctsPlayer(seed, params=MctsParams(**cfg.get("params", {})), max_simulations=cfg.get("sims"))

    return make


def main() -> None:
    a, b, games, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    opening = int(sys.argv[5]) if len(sys.argv) > 5 else 4
    prepare(None)
    results = []
    started = time.time()
    for spec in make_specs(games, seed, 60.0, opening_turns=opening):
        results.append(play_game(spec, factory(a), factory(b)))
        r = results[-1]
        print(spec.index, r.score, r.a_points, r.b_points, flush=True)
    print(format_table(summary(results, a, b)))
    print(f"elapsed {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
