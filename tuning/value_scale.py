"""The analysis's values as points: fit the yardstick's weights to the final point difference (issue 50, item 5).

``blokus analyse`` values a position by a search that ends at the end of a round (``ai.analysis``); its leaves
were valued by the evaluation's default weights, tuned for choosing moves, whose terms besides the points
(awkwardness of the pieces placed, space, corners) are on no scale of points: late in a game the value was
−98.5 where the game ended −39. Here the leaves' value becomes what the README says it is, the expected final
point difference: the points now plus a linear estimate of the points still to come, per phase of the game.

1. ``gen``: games of the compiled lookahead against itself (a short time per move, the first round at random so
   that games differ), both seasons; the first position of every round (where the yardstick's searches end:
   BLUE to move, ``ai.analysis.horizon_turn``) is stored with its terms (``ai.search.fasteval.team_features``, team ONE
   minus team TWO), and, at the end, the game's final point difference.
2. ``fit``: per phase (turns ``PHASES``), a least-squares fit (ridge) of "final difference − difference now" on
   the terms other than the points, whose weight stays 1. Held out: every fifth game. Prints the error of the
   final difference predicted by the points alone, by the default weights and by the fit, and the fitted
   weights as ``ai.search.evaluate.Weights`` phases (``ai.analysis.VALUE_WEIGHTS``).

3. ``check``: are the losses of ``blokus analyse --json`` points? For marked and unmarked moves of the files, the
   game is played on to its end from the position after the best move and after the move played, by the same
   compiled lookahead against itself (``--rollouts`` times each, a short time per move), and the mean difference
   of the final point differences (the rollouts' loss) is set beside the analysis's loss: the slope of a
   least-squares line through zero (1 = the same scale), the correlation and the mean of both.

    .venv/bin/python tuning/value_scale.py gen --games 300 --move-time 40 --jobs 2 --out /tmp/value.npz
    .venv/bin/python tuning/value_scale.py gen --games 900 --seed 2 --move-time 40 --jobs 2 --out /tmp/value2.npz
    .venv/bin/python tuning/value_scale.py fit /tmp/value.npz /tmp/value2.npz
    .venv/bin/python tuning/value_scale.py check before.json after.json --positions 40 --rollouts 4
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
from blokus.ai.search.tables import TABLES
from blokus.model.fast import FastState
from blokus.model.moves import SkipMove
from blokus.model.pieces import Shape, Team
from blokus.model.season import season_named
from blokus.model.state import GameState, move_of_placement

# the turns of each phase's positions, and the turn its weights are placed at (between two, they are
# interpolated by ``Weights.at_turn``)
PHASES = ((4, 16, 8), (16, 28, 20), (28, 40, 32), (40, 52, 44), (52, 64, 56), (64, 76, 68), (76, 88, 80), (88, 101, 92))
# the terms that cost a move generation per leaf (the yardstick is a Python search): fitted with --full only
MOVE_TERMS = ("mobility", "stranded")
# not fitted: ``exclusive`` is the same difference as ``area`` (|reach1 \ reach2| - |reach2 \ reach1| =
# |reach1| - |reach2|), ``centre`` fades out by turn 40 and predicts nothing the space terms do not
LEFT_OUT = ("exclusive", "centre")


def play_one(args: tuple[int, float, str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, str]:
    """One game: (terms ONE − TWO, turns, point differences now) of the first position of every round, the
    final point difference and the season."""
    from blokus.ai.players.registry import compile_ahead, parse_player
    from blokus.ai.search.fastsearch import FastLookaheadPlayer

    compile_ahead(parse_player("lookahead"))
    seed, move_time, season_name = args
    season = season_named(season_name)
    rng = random.Random(seed)
    state = GameState(Shape[rng.choice(season.start_pieces)], season)
    player = FastLookaheadPlayer(seed)
    f = np.zeros((2, FE.NF))
    feats, turns, diffs = [], [], []
    next_round = 4
    while not state.is_over:
        if state.turn >= next_round:
            next_round = (state.turn // 4 + 1) * 4
            fs = FastState.from_state(state)
            FE.team_features(TABLES, fs.b, fs.m, fs.first_cells, 3, 3, True, True, f)
            feats.append(f[0] - f[1])
            turns.append(state.turn)
            diffs.append(f[0, 0] - f[1, 0])
        ids = state.legal_placements()
        if not len(ids):
            state.push(SkipMove(state.color))
            continue
        if state.turn < 4:
            move = move_of_placement(state.color, int(ids[rng.randrange(len(ids))]))
        else:
            move = player.think(state.copy(), time.monotonic() + move_time, threading.Event())
        state.push(move)
    final = state.team_points(Team.ONE) - state.team_points(Team.TWO)
    return np.array(feats), np.array(turns), np.array(diffs), float(final), season.name


def gen(args: argparse.Namespace) -> None:
    seasons = args.seasons.split(",")
    work = [(args.seed * 100_000 + i, args.move_time / 1000, seasons[i % len(seasons)]) for i in range(args.games)]
    feats, turns, game, diffs, finals, season = [], [], [], [], [], []
    t0 = time.time()
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        for i, (f, t, d, final, name) in enumerate(pool.imap_unordered(play_one, work)):
            feats.append(f)
            turns.append(t)
            diffs.append(d)
            game.append(np.full(len(t), i))
            finals.append(np.full(len(t), final))
            season.append(np.full(len(t), int(name)))
            if (i + 1) % 20 == 0:
                print(f"{i + 1} games, {time.time() - t0:.0f} s", flush=True)
    np.savez(
        args.out,
        feats=np.concatenate(feats),
        turns=np.concatenate(turns),
        diffs=np.concatenate(diffs),
        game=np.concatenate(game),
        final=np.concatenate(finals),
        season=np.concatenate(season),
    )


def _ridge(x: np.ndarray, y: np.ndarray, l2: float) -> np.ndarray:
    """Least squares with a penalty ``l2`` per position on the weights (the terms are scaled to unit variance
    first, so that the penalty treats them alike)."""
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    z = x / scale
    w = np.linalg.solve(z.T @ z + l2 * len(y) * np.eye(x.shape[1]), z.T @ y)
    return w / scale


def _rmse(error: np.ndarray) -> float:
    return float(np.sqrt(np.mean(error**2)))


def fit(args: argparse.Namespace) -> None:
    parts = [np.load(path) for path in args.data]
    offsets = np.cumsum([0] + [int(d["game"].max()) + 1 for d in parts[:-1]])
    feats, turns, diffs, final = (np.concatenate([d[k] for d in parts]) for k in ("feats", "turns", "diffs", "final"))
    game = np.concatenate([d["game"] + off for d, off in zip(parts, offsets, strict=True)])
    names = list(E.FEATURES)
    left_out = LEFT_OUT + tuple(args.without.split(",") if args.without else ())
    terms = [n for n in names if n != "points" and n not in left_out and (args.full or n not in MOVE_TERMS)]
    cols = [names.index(n) for n in terms]
    test = game % 5 == 0
    default = np.array(E.DEFAULT_WEIGHTS.vector())
    print(f"{len(np.unique(game))} games, {len(turns)} positions (held out: every fifth game, {test.sum()})")
    print(f"terms: {', '.join(terms)}; held-out error of the final point difference (RMSE, mean):")
    phases = []
    for lo, hi, at in PHASES:
        ph = (turns >= lo) & (turns < hi)
        tr, te = ph & ~test, ph & test
        if tr.sum() < 50 or te.sum() < 10:
            print(f"turns {lo:>2}-{hi - 1:<3} {tr.sum():>5} positions: too few, the phase before holds")
            continue
        w = _ridge(feats[tr][:, cols], final[tr] - diffs[tr], args.l2)
        predicted = diffs[te] + feats[te][:, cols] @ w
        by_default = feats[te] @ default
        print(
            f"turns {lo:>2}-{hi - 1:<3} {tr.sum():>5} positions: points now {_rmse(final[te] - diffs[te]):5.1f} "
            f"({np.mean(final[te] - diffs[te]):+5.1f}), default weights {_rmse(final[te] - by_default):5.1f} "
            f"({np.mean(final[te] - by_default):+5.1f}), fitted {_rmse(final[te] - predicted):5.1f} "
            f"({np.mean(final[te] - predicted):+5.1f})"
        )
        # ``Weights.dead`` is subtracted per removed colour (``Weights.vector``): the fitted term's negation
        fitted = {n: round(float(-v if n == "dead" else v), 3) for n, v in zip(terms, w, strict=True)}
        phases.append((at, fitted))
    print("\nai/evaluate.py:\n")
    print(weights_code(phases))


def weights_code(phases: list[tuple[int, dict[str, float]]]) -> str:
    """``VALUE_WEIGHTS`` as Python: the first phase's weights up to its turn, then one phase per fit, each by
    ``_points_to_come`` (the fitted terms; every other term 0, not ``Weights``' default)."""
    terms = list(phases[0][1])

    def call(fitted: dict[str, float]) -> str:
        return f"_points_to_come({', '.join(str(fitted[n]) for n in terms)})"

    (first_turn, first), rest = phases[0], phases[1:]
    lines = [f"# _points_to_come({', '.join(terms)})", f"VALUE_WEIGHTS = replace(\n    {call(first)},"]
    lines += [f"    phase_start={first_turn},", "    phases=("]
    lines += [f"        ({turn}, {call(fitted)})," for turn, fitted in rest]
    return "\n".join(lines) + "\n    ),\n)"


def rollout(args: tuple[str, int, str, int, float]) -> float:
    """The final point difference (team ONE minus TWO) of the game ``path`` from its state ``index`` after
    ``move``, played on by the compiled lookahead against itself (``seed``, ``move_time`` seconds a move)."""
    from blokus.ai.players.registry import compile_ahead, parse_player
    from blokus.ai.search.fastsearch import FastLookaheadPlayer
    from blokus.model.moves import parse_move
    from blokus.model.replay import load_replay

    compile_ahead(parse_player("lookahead"))
    path, index, move, seed, move_time = args
    state = load_replay(path).states[index].copy()
    state.play(parse_move(move))
    player = FastLookaheadPlayer(seed)
    while not state.is_over:
        if not len(state.legal_placements()):
            state.push(SkipMove(state.color))
            continue
        state.push(player.think(state.copy(), time.monotonic() + move_time, threading.Event()))
    return float(state.team_points(Team.ONE) - state.team_points(Team.TWO))


def check(args: argparse.Namespace) -> None:
    import json

    rng = random.Random(args.seed)
    for name in args.files:
        document = json.loads(open(name).read())
        analyses, ours, theirs = [], [], []
        for game in document["files"]:
            moves = [p for p in game["positions"] if p["best"] != p["played"] and not p["forced"]]
            for p in rng.sample(moves, min(args.positions, len(moves))):
                analyses.append((game["file"], p))
        work = []
        for path, p in analyses:
            for k in range(args.rollouts):
                for move in (p["best"], p["played"]):
                    work.append((path, p["index"], move, k, args.move_time / 1000))
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            finals = pool.map(rollout, work)
        per = 2 * args.rollouts
        for i, (_, p) in enumerate(analyses):
            chunk = finals[i * per : (i + 1) * per]
            best, played = np.mean(chunk[0::2]), np.mean(chunk[1::2])
            sign = 1.0 if p["color"] in ("BLUE", "RED") else -1.0
            ours.append(p["loss"])
            theirs.append(sign * (best - played))
        x, y = np.array(ours), np.array(theirs)
        slope = float(x @ y / (x @ x)) if x @ x else float("nan")
        corr = float(np.corrcoef(x, y)[0, 1]) if len(x) > 2 else float("nan")
        print(
            f"{name}: {len(x)} moves, {args.rollouts} rollouts each way: rollouts' loss = {slope:.2f} x the "
            f"analysis's loss (correlation {corr:.2f}); mean loss: analysis {x.mean():.1f}, rollouts {y.mean():.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--games", type=int, default=300)
    g.add_argument("--move-time", type=float, default=40.0, help="ms per move")
    g.add_argument("--jobs", type=int, default=2)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--seasons", default="2021,2027")
    g.add_argument("--out", required=True)
    f = sub.add_parser("fit")
    f.add_argument("data", nargs="+", help="the files of gen (their games together)")
    f.add_argument("--l2", type=float, default=1e-3)
    f.add_argument("--full", action="store_true", help="also the terms that need a move generation")
    f.add_argument("--without", default="", help="terms not to fit either (comma-separated)")
    c = sub.add_parser("check")
    c.add_argument("files", nargs="+", help="blokus analyse --json output")
    c.add_argument("--positions", type=int, default=40, help="moves per game (not the best move found)")
    c.add_argument("--rollouts", type=int, default=4)
    c.add_argument("--move-time", type=float, default=30.0, help="ms per move of the rollouts")
    c.add_argument("--jobs", type=int, default=2)
    c.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    {"gen": gen, "fit": fit, "check": check}[args.cmd](args)


if __name__ == "__main__":
    main()
