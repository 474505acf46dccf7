"""Tune the evaluation weights (ai.search.evaluate.Weights) by self-play: coordinate-wise hill climbing.

Each step changes one weight of the current best (times 0.5 / times 2, or a step for integers) and
plays a paired match (every opening from both seats, ``ai.arena.match``) of the candidate against the current
best; a candidate that scores more than ``--accept`` (default 55 %) becomes the new best. Every
match is appended to ``--log`` (one JSON line), the final weights go to ``--out``.

Usage (repeatable; the seed fixes the openings, engine seeds and the order of the steps):
    .venv/bin/python tuning/tune.py --player greedy --games 60 --jobs 2 --seed 1
    .venv/bin/python tuning/tune.py --player lookahead --move-time 100 --games 40 --jobs 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from blokus.ai.arena.match import make_specs, run_match, summary  # noqa: E402
from blokus.ai.search.evaluate import DEFAULT_WEIGHTS, Weights  # noqa: E402
from blokus.ai.search.greedy import GreedyPlayer  # noqa: E402
from blokus.ai.search.lookahead import LookaheadPlayer  # noqa: E402

FLOAT_PARAMS = ["points", "anchors", "area", "overlap", "awkward", "centre", "dead"]


def factory(player: str, w: Weights):
    return partial(GreedyPlayer if player == "greedy" else LookaheadPlayer, weights=w)


def changes() -> list[tuple[str, float]]:
    """(weight, factor) for the floats, (reach_steps, delta) for the integer."""
    return [(name, f) for name in FLOAT_PARAMS for f in (0.5, 2.0)] + [("reach_steps", -1), ("reach_steps", 1)]


def apply(best: Weights, name: str, how: float) -> Weights | None:
    if name == "reach_steps":
        value = best.reach_steps + int(how)
        return replace(best, reach_steps=value) if 1 <= value <= 6 else None
    return replace(best, **{name: round(getattr(best, name) * how, 4)})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--player", choices=["greedy", "lookahead"], default="greedy")
    ap.add_argument("--games", type=int, default=60)
    ap.add_argument("--move-time", type=int, default=100, help="ms per move (lookahead only matters)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=1, help="passes over all weights")
    ap.add_argument("--accept", type=float, default=0.55)
    ap.add_argument("--start", help="JSON file with starting weights (default: ai.search.evaluate defaults)")
    ap.add_argument("--log", default="tuning/tune_log.jsonl")
    ap.add_argument("--out", default="tuning/tuned_weights.json")
    args = ap.parse_args(argv)
    best = Weights.from_dict(json.loads(Path(args.start).read_text())) if args.start else DEFAULT_WEIGHTS
    step = 0
    for rnd in range(args.rounds):
        for name, how in changes():
            cand = apply(best, name, how)  # from the current best, including this round's changes
            if cand is None:
                continue
            step += 1
            specs = make_specs(args.games, args.seed * 1000 + step, args.move_time / 1000)
            t0 = time.monotonic()
            res = run_match(specs, factory(args.player, cand), factory(args.player, best), args.jobs)
            s = summary(res, "cand", "best")
            accepted = s.score > args.accept
            line = {
                "round": rnd,
                "step": step,
                "param": name,
                "value": getattr(cand, name),
                "old": getattr(best, name),
                "score": round(s.score, 4),
                "ci95": [round(x, 3) for x in s.ci95],
                "W": s.wins,
                "D": s.draws,
                "L": s.losses,
                "accepted": accepted,
                "player": args.player,
                "games": args.games,
                "move_time": args.move_time,
                "seconds": round(time.monotonic() - t0, 1),
            }
            print(json.dumps(line), flush=True)
            with open(args.log, "a") as fh:
                fh.write(json.dumps(line) + "\n")
            if accepted:
                best = cand
                Path(args.out).write_text(json.dumps(best.as_dict(), indent=1) + "\n")
    print("best:", json.dumps(best.as_dict()))
    Path(args.out).write_text(json.dumps(best.as_dict(), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
