"""Fit the evaluation to a stronger program's choice among the moves of a position (its root visits).

``teacher.py`` fits the evaluation to the teacher's value of whole positions: it learns which side stands
better, across positions. A move is chosen among the positions one move leads to, and those differ in
little; what the choice needs is the right order *within* a position. Here the teacher (Pentobi's GTP
engine, built by the user outside this project) searches positions of its own games
(``teacher_pentobi6.json.gz``) and reports how often it visited each root move; the evaluation's weights
are fitted, per phase, so that a softmax over the evaluation of every legal move's result reproduces
those visit shares (cross-entropy; every legal move is a candidate, the unvisited ones with share 0).

    P=/path/to/pentobi-gtp
    .venv/bin/python tuning/policy.py gen tuning/teacher_pentobi6.json.gz --engine $P --level 6 \\
        --positions 3000 --out /tmp/visits.json.gz
    .venv/bin/python tuning/policy.py fit /tmp/visits.json.gz --out /tmp/weights_policy.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import random

import numpy as np
from teacher import _load, _move_values, worker_engine  # tuning/ is the script's directory

from blokus.ai.players.gtp import GtpError, parse_cells, placement_of_mask
from blokus.ai.search import evaluate as E
from blokus.ai.search import fasteval as FE
from blokus.ai.search import movefeatures as MF
from blokus.ai.search.tables import TABLES
from blokus.model.fast import FastState
from blokus.model.moves import SkipMove
from blokus.model.pieces import Shape
from blokus.model.state import GameState, move_of_placement


def _replay_to(game: dict, index: int) -> GameState:
    state = GameState(Shape[game["start"]])
    for color, pid in game["moves"][:index]:
        state.push(SkipMove(color) if pid < 0 else move_of_placement(color, pid))
    return state


def _visits_one(args: tuple[dict, int, int, str, int, int]) -> dict | None:
    game, gi, index, engine_path, level, seed = args
    state = _replay_to(game, index)
    engine = worker_engine(engine_path, level, seed)
    engine.load_position(state)
    color = state.color
    try:
        found = _move_values(engine, color)
    except GtpError:
        return None
    rows = []
    for visits, value, cells in found:
        pid = placement_of_mask(parse_cells(cells))
        if pid is not None and visits > 0:
            rows.append([int(pid), visits, value])
    return {"game": gi, "index": index, "turn": state.turn, "color": color, "rows": rows} if rows else None


def gen(args: argparse.Namespace) -> None:
    games = _load(args.games)
    rng = random.Random(args.seed)
    candidates = []
    for gi, game in enumerate(games):
        for index, turn, _color, _value in game["labels"]:
            if args.first <= turn <= args.last:
                candidates.append((gi, index))
    chosen = sorted(rng.sample(candidates, min(args.positions, len(candidates))))
    jobs = [(games[gi], gi, index, args.engine, args.level, args.seed) for gi, index in chosen]
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        found = [r for r in pool.imap(_visits_one, jobs, chunksize=4) if r]
    with gzip.open(args.out, "wt") as fh:
        json.dump({"source": args.games, "level": args.level, "positions": found}, fh)
    print(f"{len(found)} positions -> {args.out}")


def move_features(data: dict) -> tuple[np.ndarray, ...]:
    """Per legal move of every position: the evaluation's term differences after it, for the side that
    moved; the teacher's visit share; the position's index, turn and game."""
    games = _load(data["source"])
    feats, shares, segment, turns, gids = [], [], [], [], []
    f = np.zeros((2, FE.NF))
    for n, pos in enumerate(data["positions"]):
        state = _replay_to(games[pos["game"]], pos["index"])
        fs = FastState.from_state(state)
        sign = 1.0 if pos["color"] % 2 == 0 else -1.0
        visits = {pid: v for pid, v, _ in pos["rows"]}
        total = sum(visits.values())
        for pid in fs.legal_placements():
            fs.push_placement(int(pid))
            FE.team_features(TABLES, fs.b, fs.m, fs.first_cells, 3, E.TUNED_WEIGHTS.colour_steps, False, False, f)
            fs.pop()
            feats.append(sign * (f[0] - f[1]))
            shares.append(visits.get(int(pid), 0) / total)
            segment.append(n)
        turns.append(pos["turn"])
        gids.append(pos["game"])
    return (np.array(feats), np.array(shares), np.array(segment), np.array(turns), np.array(gids))


def softmax_fit(x: np.ndarray, t: np.ndarray, seg: np.ndarray, n: int, l2: float = 1e-3, iters: int = 50) -> np.ndarray:
    """Weights w minimising the cross-entropy between the shares t and softmax(x @ w) within each segment
    (Newton's method)."""
    w = np.zeros(x.shape[1])
    for _ in range(iters):
        z = x @ w
        z -= np.repeat(_segment_max(z, seg, n), np.bincount(seg, minlength=n))
        e = np.exp(z)
        p = e / np.bincount(seg, weights=e, minlength=n)[seg]
        mean = np.stack([np.bincount(seg, weights=p * x[:, k], minlength=n) for k in range(x.shape[1])], axis=1)
        grad = ((p - t)[:, None] * x).sum(axis=0) + l2 * w
        hess = (x * p[:, None]).T @ x - mean.T @ mean + l2 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        # Newton's step, halved while it makes the fit worse (nearly collinear features can overshoot)
        before = cross_entropy(x, t, seg, n, w) + 0.5 * l2 * w @ w / n
        for _ in range(30):
            trial = w - step
            if cross_entropy(x, t, seg, n, trial) + 0.5 * l2 * trial @ trial / n <= before + 1e-12:
                break
            step = step / 2
        w = trial
        if np.abs(step).max() < 1e-7:
            break
    return w


def _segment_max(z: np.ndarray, seg: np.ndarray, n: int) -> np.ndarray:
    out = np.full(n, -np.inf)
    np.maximum.at(out, seg, z)
    return out


def cross_entropy(x: np.ndarray, t: np.ndarray, seg: np.ndarray, n: int, w: np.ndarray) -> float:
    z = x @ w
    z = z - np.repeat(_segment_max(z, seg, n), np.bincount(seg, minlength=n))
    log_norm = np.log(np.bincount(seg, weights=np.exp(z), minlength=n))
    return float(-(t * (z - log_norm[seg])).sum() / n)


def _phase_parts(
    x: np.ndarray, t: np.ndarray, seg: np.ndarray, turns: np.ndarray, test_pos: np.ndarray, centre: int, window: int
) -> dict[str, tuple]:
    """The moves of the positions within ``window`` turns of ``centre``, split into "train" and "test"
    (``test_pos``: held-out positions): (features, shares, renumbered position index, positions)."""
    pos = (turns >= centre - window) & (turns < centre + window)
    parts = {}
    for part, chosen in (("train", pos & ~test_pos), ("test", pos & test_pos)):
        keep = chosen[seg]
        renumber = np.cumsum(chosen) - 1
        parts[part] = (x[keep], t[keep], renumber[seg[keep]], int(chosen.sum()))
    return parts


def fit(args: argparse.Namespace) -> None:
    with gzip.open(args.data, "rt") as fh:
        data = json.load(fh)
    x, t, seg, turns, gids = move_features(data)
    names = list(E.FEATURES)
    use = [names.index(n) for n in args.features.split(",")]
    test_pos = gids % 5 == 0
    print(f"{len(turns)} positions, {len(t)} moves; held out every fifth game ({test_pos.sum()} positions)")
    phases = []
    for c in (int(v) for v in args.phases.split(",")):
        parts = _phase_parts(x[:, use], t, seg, turns, test_pos, c, args.window)
        xs, ts, ss, n = parts["train"]
        w = softmax_fit(xs, ts, ss, n)
        cur = np.array(E.TUNED_WEIGHTS.at_turn(c))[use]
        cur[[i for i, k in enumerate(use) if names[k] == "dead"]] *= -1  # Weights.dead is subtracted
        scale = softmax_fit((xs @ cur)[:, None], ts, ss, n)[0]
        xh, th, sh, nh = parts["test"]
        print(
            f"turn {c} ±{args.window}: {n}/{nh} positions; held-out cross-entropy fitted "
            f"{cross_entropy(xh, th, sh, nh, w):.4f}, current weights (best scale {scale:.3f}) "
            f"{cross_entropy(xh, th, sh, nh, cur * scale):.4f}, uniform {cross_entropy(xh, th, sh, nh, 0 * w):.4f}"
        )
        full = np.array(E.TUNED_WEIGHTS.at_turn(c), dtype=float)  # the terms not fitted keep their weights
        full[use] = w / w[use.index(names.index("points"))]  # in the evaluation's units: a square = 1
        if "dead" in args.features.split(","):
            full[names.index("dead")] *= -1
        print("   " + "  ".join(f"{names[k]} {full[k]:+.3f}" for k in use))
        phases.append((c, full))
    if args.out:
        out = E.TUNED_WEIGHTS.as_dict()
        replaced = []
        for c, full in phases:
            d = {**out, **dict(zip(names, (float(v) for v in full), strict=True)), "phases": []}
            replaced.append([c, d])
        keep = [p for p in out["phases"] if p[0] > max(c for c, _ in phases)]
        out["phases"] = replaced + keep
        with open(args.out, "w") as fh:
            json.dump(out, fh, indent=1)
        print(f"wrote {args.out}")


def prior_features(data: dict) -> tuple[np.ndarray, ...]:
    """Per legal move of every position: the move-prior features (``ai.search.movefeatures``) before it; the
    teacher's visit share; the position's index, turn and game."""
    games = _load(data["source"])
    feats, shares, segment, turns, gids = [], [], [], [], []
    for n, pos in enumerate(data["positions"]):
        game = games[pos["game"]]
        state = _replay_to(game, pos["index"])
        last = np.full(4, -1, dtype=np.int32)
        for color, pid in game["moves"][: pos["index"]]:
            if pid >= 0:
                last[color] = pid
        fs = FastState.from_state(state)
        pids = fs.legal_placements()
        visits = {pid: v for pid, v, _ in pos["rows"]}
        total = sum(visits.values())
        feats.append(MF.features_of(fs, pos["color"], last, pids))
        shares += [visits.get(int(pid), 0) / total for pid in pids]
        segment += [n] * len(pids)
        turns.append(pos["turn"])
        gids.append(pos["game"])
    return (np.concatenate(feats), np.array(shares), np.array(segment), np.array(turns), np.array(gids))


def fit_prior(args: argparse.Namespace) -> None:
    """Weights of the move prior per phase; held-out cross-entropy against a prior of piece size only."""
    with gzip.open(args.data, "rt") as fh:
        data = json.load(fh)
    x, t, seg, turns, gids = prior_features(data)
    test_pos = gids % 5 == 0
    size_only = [MF.FEATURE_NAMES.index(f"size{k}") for k in (2, 3, 4, 5)]
    print(f"{len(turns)} positions, {len(t)} moves; held out every fifth game ({test_pos.sum()} positions)")
    table = []
    for c in (int(v) for v in args.phases.split(",")):
        parts = _phase_parts(x, t, seg, turns, test_pos, c, args.window)
        xs, ts, ss, n = parts["train"]
        w = softmax_fit(xs, ts, ss, n, l2=args.l2)
        ws = softmax_fit(xs[:, size_only], ts, ss, n, l2=args.l2)
        xh, th, sh, nh = parts["test"]
        print(
            f"turn {c} ±{args.window}: {n}/{nh} positions; held-out cross-entropy "
            f"{cross_entropy(xh, th, sh, nh, w):.4f}, "
            f"size only {cross_entropy(xh[:, size_only], th, sh, nh, ws):.4f}, "
            f"uniform {cross_entropy(xh, th, sh, nh, 0 * w):.4f}"
        )
        print("   " + "  ".join(f"{name} {v:+.2f}" for name, v in zip(MF.FEATURE_NAMES, w, strict=True)))
        table.append([c, *(round(float(v), 4) for v in w)])
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"features": MF.FEATURE_NAMES, "phases": table}, fh, indent=1)
        print(f"wrote {args.out}")


def fit_mlp(args: argparse.Namespace) -> None:
    """A small non-linear move model (one hidden layer of tanh units beside the linear terms) fitted by Adam
    to the visit shares of several visits files; held out every fifth game of the last file. Prints the
    held-out cross-entropy and how often the teacher's most visited move is among the model's k best."""
    parts = []
    for path in args.data:
        with gzip.open(path, "rt") as fh:
            x, t, seg, turns, gids = prior_features(json.load(fh))
        parts.append((x.astype(np.float32), t.astype(np.float32), seg, turns, gids))

    def select(part: tuple, chosen: np.ndarray, off: int) -> tuple:
        x, t, seg, turns, _ = part
        keep = chosen[seg]
        return x[keep], t[keep], (np.cumsum(chosen) - 1)[seg[keep]] + off, turns[chosen], int(chosen.sum())

    train, off = [], 0
    for part in parts:
        train.append(select(part, part[4] % 5 != 0, off))
        off += train[-1][4]
    x, t, seg = (np.concatenate([p[k] for p in train]) for k in range(3))
    turns, n = np.concatenate([p[3] for p in train]), off
    xh, th, segh, turnsh, nh = select(parts[-1], parts[-1][4] % 5 == 0, 0)
    mu, sd = x.mean(0), x.std(0) + 1e-6

    def inputs(x: np.ndarray, seg: np.ndarray, turns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s = ((turns[seg] - 28) / 16).astype(np.float32)[:, None]  # the phase, -1 at turn 12, +1 at 44
        xn = (x - mu) / sd
        return np.hstack([xn, xn * s, xn * s * s]), np.hstack([xn, s])

    (u, v), (uh, vh) = inputs(x, seg, turns), inputs(xh, segh, turnsh)
    rng = np.random.default_rng(args.seed)
    hidden = args.hidden
    w = {
        "a": np.zeros(u.shape[1], np.float32),
        "W": (rng.standard_normal((v.shape[1], hidden)) * 0.3).astype(np.float32),
        "b1": np.zeros(hidden, np.float32),
        "w2": np.zeros(hidden, np.float32),
    }

    def forward(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        h = np.tanh(v @ w["W"] + w["b1"])
        return u @ w["a"] + h @ w["w2"], h

    def loss(z: np.ndarray, t: np.ndarray, seg: np.ndarray, n: int) -> tuple[float, np.ndarray]:
        z = z - np.repeat(_segment_max(z, seg, n), np.bincount(seg, minlength=n)).astype(np.float32)
        e = np.exp(z)
        norm = np.bincount(seg, weights=e, minlength=n)
        return float(-(t * (z - np.log(norm)[seg])).sum() / n), (e / norm[seg]).astype(np.float32)

    m1 = {k: np.zeros_like(a) for k, a in w.items()}
    m2 = {k: np.zeros_like(a) for k, a in w.items()}
    for it in range(1, args.iters + 1):
        z, h = forward(u, v)
        train_ce, p = loss(z, t, seg, n)
        g = (p - t) / n
        gh = np.outer(g, w["w2"]) * (1 - h * h)
        grads = {"a": u.T @ g, "w2": h.T @ g, "W": v.T @ gh, "b1": gh.sum(0)}
        lr = args.lr * min(1.0, it / 20) * (0.1 + 0.45 * (1 + np.cos(np.pi * it / args.iters)))  # warm-up, cosine
        for k, grad in grads.items():
            grad = grad + args.l2 * w[k]
            m1[k] = 0.9 * m1[k] + 0.1 * grad
            m2[k] = 0.999 * m2[k] + 0.001 * grad * grad
            w[k] -= lr * (m1[k] / (1 - 0.9**it)) / (np.sqrt(m2[k] / (1 - 0.999**it)) + 1e-8)
        if it % 50 == 0 or it == args.iters:
            held_out = loss(forward(uh, vh)[0], th, segh, nh)[0]
            print(f"iteration {it}: cross-entropy {train_ce:.4f}, held out {held_out:.4f}", flush=True)
    zh = forward(uh, vh)[0]
    starts = np.searchsorted(segh, np.arange(nh))
    ranks = np.array(
        [
            int((zh[a:b] > zh[a + np.argmax(th[a:b])]).sum())
            for a, b in zip(starts, np.append(starts[1:], len(segh)), strict=True)
        ]
    )
    print(
        "held out: the teacher's move among the model's "
        + ", ".join(f"{k} best {np.mean(ranks < k):.3f}" for k in (1, 5, 14, 20))
    )
    if args.out:
        np.savez(args.out, mu=mu, sd=sd, **w)
        print(f"wrote {args.out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("gen", help="the teacher's root visits in positions of its games")
    g.add_argument("games", help="teacher games (teacher.py gen)")
    g.add_argument("--engine", required=True)
    g.add_argument("--level", type=int, default=6)
    g.add_argument("--positions", type=int, default=3000)
    g.add_argument("--first", type=int, default=12)
    g.add_argument("--last", type=int, default=44)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--jobs", type=int, default=2)
    g.add_argument("--out", required=True)
    f = sub.add_parser("fit", help="weights per phase from the visit shares")
    f.add_argument("data")
    f.add_argument("--features", default="points,anchors,area,overlap,awkward,centre,colour_area")
    f.add_argument("--phases", default="16,20,24,28,32,36,40")
    f.add_argument("--window", type=int, default=4)
    f.add_argument("--out")
    q = sub.add_parser("prior", help="weights of the move prior (ai.search.movefeatures) per phase")
    q.add_argument("data")
    q.add_argument("--phases", default="12,16,20,24,28,32,36,40,44")
    q.add_argument("--window", type=int, default=3)
    q.add_argument("--l2", type=float, default=1e-2)
    q.add_argument("--out")
    h = sub.add_parser("mlp", help="a move model with a hidden layer (numpy Adam); held out: the last file's")
    h.add_argument("data", nargs="+", help="visits files (gen); every fifth game of the last one is held out")
    h.add_argument("--hidden", type=int, default=16)
    h.add_argument("--iters", type=int, default=600)
    h.add_argument("--lr", type=float, default=0.02)
    h.add_argument("--l2", type=float, default=1e-4)
    h.add_argument("--seed", type=int, default=1)
    h.add_argument("--out", help=".npz of the weights")
    args = parser.parse_args()
    {"gen": gen, "fit": fit, "prior": fit_prior, "mlp": fit_mlp}[args.command](args)


if __name__ == "__main__":
    main()
