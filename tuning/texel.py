"""Fit the evaluation's weights to game outcomes ("Texel tuning"), per phase of the game.

1. ``gen``: self-play games of the compiled lookahead (a short time per move, the first round at random
   so that games differ); every position is stored with the raw evaluation terms per team
   (``ai.search.fasteval.team_features``) and, at the end, the game's result.
2. ``fit``: a logistic regression of "team ONE won" on the term differences (team ONE minus team TWO),
   one set of weights per phase (turn ranges), with the points weight of the last phase fixed to 1 by
   scaling; prints the weights, the log-loss on held-out games and the evaluation scale.

    .venv/bin/python tuning/texel.py gen --games 400 --move-time 40 --jobs 2 --out /tmp/texel.npz
    .venv/bin/python tuning/texel.py fit /tmp/texel.npz
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import threading
import time

import numpy as np

from blokus.ai.search import evaluate as E
from blokus.ai.search import fasteval as FE
from blokus.ai.search.fastsearch import FastLookaheadPlayer
from blokus.ai.search.tables import TABLES
from blokus.model.fast import FastState
from blokus.model.moves import SkipMove
from blokus.model.pieces import Shape
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState, move_of_placement


def play_one(args: tuple[int, float]) -> tuple[np.ndarray, np.ndarray, float]:
    seed, move_time = args
    rng = random.Random(seed)
    state = GameState(Shape[rng.choice(SEASON_2021.start_pieces)])
    player = FastLookaheadPlayer(seed)
    f = np.zeros((2, FE.NF))
    feats, turns = [], []
    while not state.is_over:
        if state.turn >= 4:
            fs = FastState.from_state(state)
            FE.team_features(TABLES, fs.b, fs.m, fs.first_cells, 3, 3, True, True, f)
            feats.append(f[0] - f[1])
            turns.append(state.turn)
        ids = state.legal_placements()
        if not len(ids):
            state.push(SkipMove(state.color))
            continue
        if state.turn < 4:
            move = move_of_placement(state.color, int(ids[rng.randrange(len(ids))]))
        else:
            move = player.think(state.copy(), time.monotonic() + move_time, threading.Event())
        state.push(move)
    diff = state.points(0) + state.points(2) - state.points(1) - state.points(3)
    return np.array(feats), np.array(turns), float(diff)


def gen(args: argparse.Namespace) -> None:
    work = [(args.seed * 100_000 + i, args.move_time / 1000) for i in range(args.games)]
    feats, turns, game, diffs = [], [], [], []
    t0 = time.time()
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        for i, (f, t, d) in enumerate(pool.imap_unordered(play_one, work)):
            feats.append(f)
            turns.append(t)
            game.append(np.full(len(t), i))
            diffs.append(np.full(len(t), d))
            if (i + 1) % 20 == 0:
                print(f"{i + 1} games, {time.time() - t0:.0f} s", flush=True)
    np.savez(
        args.out,
        feats=np.concatenate(feats),
        turns=np.concatenate(turns),
        game=np.concatenate(game),
        diff=np.concatenate(diffs),
    )


PHASES = ((4, 20), (20, 40), (40, 60), (60, 101))


def _logistic_fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, iters: int = 50) -> np.ndarray:
    """Newton's method for the logistic regression (no intercept: the features are team differences)."""
    w = np.zeros(x.shape[1])
    for _ in range(iters):
        p = 1 / (1 + np.exp(-x @ w))
        g = x.T @ (p - y) / len(y) + l2 * w
        h = (x.T * (p * (1 - p))) @ x / len(y) + l2 * np.eye(x.shape[1])
        step = np.linalg.solve(h, g)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w


def _logloss(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    p = np.clip(1 / (1 + np.exp(-x @ w)), 1e-9, 1 - 1e-9)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def fit(args: argparse.Namespace) -> None:
    d = np.load(args.data)
    feats, turns, game, diff = d["feats"][:, : FE.NF], d["turns"], d["game"], d["diff"]
    keep = diff != 0
    feats, turns, game, diff = feats[keep], turns[keep], game[keep], diff[keep]
    y = (diff > 0).astype(float)
    names = E.FEATURES
    cols = [names.index(n) for n in args.features.split(",")]
    test = game % 5 == 0
    print(f"{len(np.unique(game))} games, {len(y)} positions, held out {test.sum()}")
    current = np.array(
        [
            {
                "points": 1.0,
                "anchors": 0.5,
                "area": 0.24,
                "overlap": -0.4,
                "awkward": 2.0,
                "centre": 0.3,
                "dead": -12.0,
            }.get(n, 0.0)
            for n in names
        ]
    )[cols]
    x_all = feats[:, cols]
    fitted: dict[tuple[int, int], np.ndarray] = {}
    # later phases first: with --bootstrap an earlier phase learns to predict the later phase's judgement of
    # the same game ``--ahead`` turns on (less noisy than the final result), as in temporal-difference learning
    index = {(g, t): i for i, (g, t) in enumerate(zip(game.tolist(), turns.tolist(), strict=True))}
    for lo, hi in reversed(PHASES):
        ph = (turns >= lo) & (turns < hi)
        target = y[ph].copy()
        if args.bootstrap and fitted:
            for k, i in enumerate(np.flatnonzero(ph)):
                t = int(turns[i]) + args.ahead
                j = index.get((int(game[i]), t))
                if j is None:
                    continue
                for (plo, phi), w in fitted.items():
                    if plo <= t < phi:
                        target[k] = 1 / (1 + np.exp(-x_all[j] @ w))
        x = x_all[ph]
        tr, te = ~test[ph], test[ph]
        w = _logistic_fit(x[tr], target[tr])
        fitted[(lo, hi)] = w
        s = _logistic_fit((x[tr] @ current)[:, None], y[ph][tr])[0]
        now = _logloss((x[te] @ current)[:, None], y[ph][te], np.array([s]))
        print(
            f"turns {lo}-{hi - 1}: {ph.sum()} positions; held-out log-loss (final result) fitted "
            f"{_logloss(x[te], y[ph][te], w):.4f} current {now:.4f} (scale 1/{1 / s:.1f})"
        )
        pts = w[cols.index(names.index("points"))] if "points" in args.features else 1.0
        print(
            "   "
            + "  ".join(f"{names[c]} {w[i] / pts:+.3f}" for i, c in enumerate(cols))
            + f"   (scale 1/{1 / pts:.1f} per point)"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--games", type=int, default=200)
    g.add_argument("--move-time", type=float, default=40.0)
    g.add_argument("--jobs", type=int, default=2)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--out", required=True)
    f = sub.add_parser("fit")
    f.add_argument("data")
    f.add_argument("--features", default="points,anchors,area,overlap,awkward,centre,dead")
    f.add_argument("--bootstrap", action="store_true")
    f.add_argument("--ahead", type=int, default=16)
    args = parser.parse_args()
    gen(args) if args.cmd == "gen" else fit(args)


if __name__ == "__main__":
    main()
