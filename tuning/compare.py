"""Match two configured engines (weights and search parameters as JSON) with the arena's pairing.

    .venv/bin/python tuning/compare.py --a '{"params": {"width": 8}}' --b '{}' --games 40 --move-time 200

A spec is ``{"player": "lookahead"|"greedy", "weights": {...}, "weights_file": "...", "params": {...}}``;
missing entries take the defaults of ``ai.search.evaluate.Weights`` and ``ai.search.lookahead.SearchParams``. The result
line (JSON) is printed and appended to ``--log``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from blokus.ai.arena.match import format_table, make_specs, run_match, summary  # noqa: E402
from blokus.ai.search.evaluate import DEFAULT_WEIGHTS, Weights  # noqa: E402
from blokus.ai.search.greedy import GreedyPlayer  # noqa: E402
from blokus.ai.search.lookahead import LookaheadPlayer, SearchParams  # noqa: E402


def build(spec: dict):
    w = DEFAULT_WEIGHTS
    if "weights_file" in spec:
        w = Weights.from_dict(json.loads(Path(spec["weights_file"]).read_text()))
    w = replace(w, **spec.get("weights", {}))
    if spec.get("player", "lookahead") == "greedy":
        return partial(GreedyPlayer, weights=w)
    return partial(LookaheadPlayer, weights=w, params=replace(SearchParams(), **spec.get("params", {})))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", default="{}")
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--move-time", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--log", default="tuning/compare_log.jsonl")
    args = ap.parse_args(argv)
    a, b = json.loads(args.a), json.loads(args.b)
    t0 = time.monotonic()
    res = run_match(make_specs(args.games, args.seed, args.move_time / 1000), build(a), build(b), args.jobs)
    s = summary(res, "A", "B")
    print(format_table(s))
    line = {
        "a": a,
        "b": b,
        "games": args.games,
        "move_time": args.move_time,
        "seed": args.seed,
        "score": round(s.score, 4),
        "ci95": [round(x, 3) for x in s.ci95],
        "W": s.wins,
        "D": s.draws,
        "L": s.losses,
        "a_pts": s.a_mean_points,
        "b_pts": s.b_mean_points,
        "a_max_ms": round(s.a_max_ms),
        "seconds": round(time.monotonic() - t0),
        "defaults": {"weights": DEFAULT_WEIGHTS.as_dict(), "params": asdict(SearchParams())},
    }
    print(json.dumps(line))
    with open(args.log, "a") as fh:
        fh.write(json.dumps(line) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
