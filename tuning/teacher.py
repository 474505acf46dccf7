"""Fit the evaluation to a stronger program's judgement of positions ("teacher" labels).

Self-play results cannot teach the opening and middle game (equal players: the result of a game is not
predictable from a position before turn 40, RESULTS §8). Here an external MCTS engine (Pentobi's GTP
engine, built by the user outside this project) plays games and, before every move, reports its value of
the position for the colour to move (the value of its most visited move, ``move_values``); the
evaluation's weights are then fitted, per phase, to predict those values (logistic regression with soft
targets).

1. ``gen``: games of the engine against itself (the first round at random, as in the arena; a quarter of
   the later moves drawn among its most visited ones so that games differ); each game is stored as its
   start piece, its moves and the engine's value of every position from turn 4.
2. ``fit``: replays the stored games, computes the evaluation's terms (``ai.search.fasteval.team_features``)
   and fits one weight vector per phase; prints held-out log-loss against the engine's values for the
   fitted and the current weights, and writes the fitted weights as a ``Weights.as_dict()`` JSON.

   With ``--on-top TERM`` only that term's weight is fitted, added to the default weights (how the
   default's ``colour_area`` weights were found, RESULTS §11).

    P=/path/to/pentobi-gtp
    .venv/bin/python tuning/teacher.py gen --engine $P --level 6 --games 220 --jobs 2 --out /tmp/t.json.gz
    .venv/bin/python tuning/teacher.py fit tuning/teacher_pentobi6.json.gz --out /tmp/weights_teacher.json
    .venv/bin/python tuning/teacher.py fit tuning/teacher_pentobi6.json.gz --on-top colour_area
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import random
import time

import numpy as np
from texel import _logistic_fit as texel_fit  # tuning/ is the script's directory
from texel import _logloss

from blokus.ai.players.gtp import GtpError, GtpPlayer, parse_cells, placement_of_mask
from blokus.ai.search import evaluate as E
from blokus.ai.search import fasteval as FE
from blokus.ai.search.tables import TABLES
from blokus.model.fast import FastState
from blokus.model.moves import SkipMove
from blokus.model.pieces import Shape
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState, move_of_placement

OPENING_TURNS = 4


_engines: dict[tuple[str, int, int], GtpPlayer] = {}


def worker_engine(path: str, level: int, seed: int) -> GtpPlayer:
    """One engine per worker process and setting, started on first use and kept for the next jobs."""
    key = (path, level, seed)
    if key not in _engines:
        _engines[key] = GtpPlayer(path, level, seed)
    return _engines[key]


def _move_values(engine: GtpPlayer, color: int) -> list[tuple[int, float, str]]:
    """Search the position for ``color`` without playing; (visits, value, cells) of the root's moves,
    most visited first (the value is for the colour to move)."""
    engine.command(f"reg_genmove {color + 1}")
    rows = []
    for line in engine.command("move_values").splitlines():
        parts = line.split()
        if len(parts) >= 4:
            cells = parts[3].split("]")[-1]
            rows.append((int(float(parts[0])), float(parts[2]), cells))
    return rows


def play_one(args: tuple[str, int, int, float]) -> dict:
    path, level, seed, explore = args
    rng = random.Random(seed)
    state = GameState(Shape[rng.choice(SEASON_2021.start_pieces)])
    moves: list[tuple[int, int]] = []  # (colour, placement id or -1 for a skip)
    labels: list[tuple[int, int, int, float]] = []  # (index into moves, turn, colour, value for team ONE)
    engine = GtpPlayer(path, level, seed)
    failures = 0
    try:
        while not state.is_over:
            color = state.color
            ids = state.legal_placements()
            if not len(ids):
                state.push(SkipMove(color))
                moves.append((color, -1))
                continue
            if state.turn < OPENING_TURNS:
                pid = int(ids[rng.randrange(len(ids))])
            else:
                engine._sync(state)
                try:
                    rows = _move_values(engine, color)
                except GtpError:  # the engine sometimes finds no move where there are some: play at random
                    rows = []
                if not rows:
                    failures += 1
                    pid = int(ids[rng.randrange(len(ids))])
                    state.push(move_of_placement(color, pid))
                    moves.append((color, pid))
                    continue
                value = rows[0][1]
                labels.append((len(moves), state.turn, color, value if color in (0, 2) else 1.0 - value))
                pick = rows[0]
                if rng.random() < explore:
                    top = [r for r in rows[:6] if r[0] > 0] or rows[:1]
                    pick = rng.choices(top, weights=[r[0] for r in top] if top[0][0] else None)[0]
                mask = parse_cells(pick[2])
                found = placement_of_mask(mask)
                if found is None:
                    raise RuntimeError(f"not a placement: {pick[2]}")
                pid = found
            state.push(move_of_placement(color, pid))
            moves.append((color, pid))
    finally:
        engine.close()
    diff = state.points(0) + state.points(2) - state.points(1) - state.points(3)
    return {
        "start": state.start_piece.name,
        "moves": moves,
        "labels": labels,
        "diff": diff,
        "seed": seed,
        "failures": failures,
        "corners": _corners(state),
    }


def _corners(state: GameState) -> list[int]:
    """Which corner (0 top-left, 1 top-right, 2 bottom-right, 3 bottom-left) each colour started in."""
    out = []
    for color in range(4):
        b = state.boards[color]
        out.append(next((i for i, q in enumerate((0, 19, 399, 380)) if (b >> q) & 1), -1))
    return out


def gen(args: argparse.Namespace) -> None:
    work = [(args.engine, args.level, args.seed * 100_000 + i, args.explore) for i in range(args.games)]
    games = []
    t0 = time.time()
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        for i, game in enumerate(pool.imap_unordered(play_one, work)):
            games.append(game)
            if (i + 1) % 10 == 0:
                print(
                    f"{i + 1} games, {sum(len(g['labels']) for g in games)} positions, "
                    f"{sum(g['failures'] for g in games)} engine failures, "
                    f"{time.time() - t0:.0f} s",
                    flush=True,
                )
                _save(games, args.out)  # keep what we have so far
    _save(games, args.out)


def _save(games: list[dict], path: str) -> None:
    with gzip.open(path, "wt") as fh:
        json.dump(games, fh)


def _load(path: str) -> list[dict]:
    with gzip.open(path, "rt") as fh:
        return json.load(fh)


def features_of(games: list[dict], colour_steps: int = E.TUNED_WEIGHTS.colour_steps) -> tuple[np.ndarray, ...]:
    """(term differences team ONE - TWO, turn, game index, teacher value, +1/-1 for team ONE/TWO to move)
    of every labelled position; ``colour_area`` counts each colour's room within ``colour_steps``."""
    feats, turns, gids, values, movers = [], [], [], [], []
    f = np.zeros((2, FE.NF))
    for gi, game in enumerate(games):
        state = GameState(Shape[game["start"]])
        at = {i: (t, v, c) for i, t, c, v in game["labels"]}
        for i, (color, pid) in enumerate(game["moves"]):
            if i in at:
                fs = FastState.from_state(state)
                FE.team_features(TABLES, fs.b, fs.m, fs.first_cells, 3, colour_steps, True, True, f)
                feats.append(f[0] - f[1])
                turns.append(at[i][0])
                gids.append(gi)
                values.append(at[i][1])
                movers.append(1.0 if at[i][2] in (0, 2) else -1.0)
            state.push(SkipMove(color) if pid < 0 else move_of_placement(color, pid))
    return np.array(feats), np.array(turns), np.array(gids), np.clip(np.array(values), 0, 1), np.array(movers)


def _logistic_fit(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The logistic regression of ``texel`` (Newton's method), which takes soft targets in [0, 1] too."""
    return texel_fit(x, y, l2=1e-4, iters=60)


def fit(args: argparse.Namespace) -> None:
    games: list[dict] = []
    for path in args.data:
        games += _load(path)
    feats, turns, gids, values, movers = features_of(games, args.colour_steps)
    names = list(E.FEATURES)
    use_all = [names.index(n) for n in args.features.split(",")]
    test = gids % 5 == 0
    print(f"{len(games)} games, {len(values)} positions, held out {test.sum()}")
    centres = [int(c) for c in args.phases.split(",")]
    half = args.window
    if args.on_top:
        _fit_on_top(args.on_top, centres, half, feats, turns, test, values, movers)
        return
    vectors = []
    for c in centres:
        ph = (turns >= c - half) & (turns < c + half)
        # the legal-move count costs a move generation per leaf: only from --mobility-from on
        use = [i for i in use_all if names[i] != "mobility" or c >= args.mobility_from]
        x = np.zeros((ph.sum(), FE.NF))
        x[:, use] = feats[ph][:, use]
        x[:, E.FEATURES.index("dead")] *= -1  # Weights.dead is subtracted per removed colour
        tr, te = ~test[ph], test[ph]
        y = values[ph]
        # the side to move as a nuisance term: the engine's values favour it; the evaluation has no such term
        xt = np.column_stack([x[:, use], movers[ph]])
        fw = _logistic_fit(xt[tr], y[tr])
        w = np.zeros(FE.NF)
        w[use] = fw[:-1]
        cur = np.array(E.TUNED_WEIGHTS.at_turn(c))
        cur[E.FEATURES.index("dead")] *= -1
        xc = np.column_stack([x @ cur, movers[ph]])
        cw = _logistic_fit(xc[tr], y[tr])
        xm = movers[ph][:, None]
        mw = _logistic_fit(xm[tr], y[tr])
        print(
            f"turn {c} ±{half}: {ph.sum()} positions; held-out log-loss: fitted {_logloss(xt[te], y[te], fw):.4f}"
            f" current {_logloss(xc[te], y[te], cw):.4f} side to move only {_logloss(xm[te], y[te], mw):.4f};"
            f" current scale {cw[0]:.3f}, tempo {fw[-1]:+.3f}"
        )
        vectors.append(w)
        print("   " + "  ".join(f"{n} {w[i] * args.scale:+.3f}" for i, n in enumerate(names)))
    if args.out:
        phases = []
        for c, w in zip(centres, vectors, strict=True):
            v = w * args.scale
            d = dict(zip(names, (float(a) for a in v), strict=True))
            phases.append((c, d))
        first = phases[0][1]
        out = {
            **first,
            "reach_steps": 3,
            "phase_start": phases[0][0],
            "phases": [[c, {**d, "reach_steps": 3}] for c, d in phases[1:]],
        }
        with open(args.out, "w") as fh:
            json.dump(out, fh, indent=1)
        print(f"wrote {args.out}")


def _fit_on_top(
    name: str,
    centres: list[int],
    half: int,
    feats: np.ndarray,
    turns: np.ndarray,
    test: np.ndarray,
    values: np.ndarray,
    movers: np.ndarray,
) -> None:
    """The weight of one term added to the default weights (``TUNED_WEIGHTS`` with that term's weight
    zeroed), in the evaluation's units: logit = a * evaluation + b * term + side to move; prints b / a."""
    k = E.FEATURES.index(name)
    for c in centres:
        ph = (turns >= c - half) & (turns < c + half)
        base_w = np.array(E.TUNED_WEIGHTS.at_turn(c))
        base_w[k] = 0.0
        base = feats[ph] @ base_w
        y, tr, te = values[ph], ~test[ph], test[ph]
        x1 = np.column_stack([base, movers[ph]])
        x2 = np.column_stack([base, feats[ph][:, k], movers[ph]])
        w1, w2 = _logistic_fit(x1[tr], y[tr]), _logistic_fit(x2[tr], y[tr])
        print(
            f"turn {c} ±{half}: {ph.sum()} positions; held-out log-loss without {name} "
            f"{_logloss(x1[te], y[te], w1):.4f}, with {_logloss(x2[te], y[te], w2):.4f}; "
            f"its weight {w2[1] / w2[0]:+.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--engine", required=True)
    g.add_argument("--level", type=int, default=6)
    g.add_argument("--games", type=int, default=200)
    g.add_argument("--explore", type=float, default=0.25)
    g.add_argument("--jobs", type=int, default=2)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--out", required=True)
    f = sub.add_parser("fit")
    f.add_argument("data", nargs="+")
    f.add_argument("--features", default="points,anchors,area,overlap,awkward,centre,dead,mobility,colour_area")
    f.add_argument("--phases", default="8,16,24,32,40,50,60,70")
    f.add_argument("--window", type=int, default=6)
    f.add_argument("--scale", type=float, default=2.5, help="evaluation units per logit")
    f.add_argument("--on-top", metavar="TERM", help="fit only TERM's weight, added to the default weights")
    f.add_argument("--mobility-from", type=int, default=40)
    f.add_argument(
        "--colour-steps",
        type=int,
        default=E.TUNED_WEIGHTS.colour_steps,
        help="reach of each colour's room in the colour_area term (default: the default weights')",
    )
    f.add_argument("--out")
    args = parser.parse_args()
    gen(args) if args.cmd == "gen" else fit(args)


if __name__ == "__main__":
    main()
