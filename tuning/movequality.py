"""How good are a player's moves? An external engine values the positions they lead to.

A game result is one noisy bit; this measure is many values, paired by position. Positions come from saved
arena games (``blokus arena ... --save-replay DIR``, e.g. the games lost to Pentobi's level 7). For every
position of the chosen turns the player picks its move under the usual clock (``pick``); the judge
(Pentobi's GTP engine, built by the user outside this project) then values the position after that move
for the side that moved (``judge``; the value of the opponent's best reply, turned around). Two variants
are compared position by position: where both pick the same move the difference is exactly 0, so a small
gain in move quality shows in a few hundred positions, where games would need thousands.

    P=/path/to/pentobi-gtp
    .venv/bin/python tuning/movequality.py pick /tmp/r7 --out /tmp/base.json                  # 1600 ms/move
    .venv/bin/python tuning/movequality.py pick /tmp/r7 --fast-params '{"width": 10}' --out /tmp/w10.json
    .venv/bin/python tuning/movequality.py judge /tmp/base.json /tmp/w10.json --engine $P --level 7 \\
        --cache /tmp/judge7.json

A variant of the MCTS is a player name (``--player mcts:score_z=0.15``); of the lookahead, ``--fast-params`` and
``--fast-weights`` (JSON: ``FastSearchParams`` fields, ``Weights.as_dict()``). ``judge`` values each (position,
move) once (the cache file keeps them between runs) and prints each file's mean value and its paired difference
from the first file, per band of turns.
"""

from __future__ import annotations

import argparse
import glob
import json
import multiprocessing
import os
import random

import numpy as np
from teacher import _move_values, worker_engine  # tuning/ is the script's directory

from blokus.ai import compile_ahead, make_player, parse_player
from blokus.ai.interface import Engine
from blokus.ai.players.gtp import GtpError, GtpPlayer
from blokus.ai.search.evaluate import Weights
from blokus.ai.search.fastsearch import FastLookaheadPlayer, FastSearchParams
from blokus.model.moves import SkipMove
from blokus.model.pieces import Team
from blokus.model.replay import load_replay
from blokus.model.state import move_of_placement, placement_of

BANDS = ((16, 22), (22, 28), (28, 34), (34, 41))


def replay_paths(dirs: list[str]) -> dict[str, str]:
    """The replay files of the directories, by file name (the name is part of a position's key)."""
    return {
        os.path.basename(path): path
        for directory in dirs
        for path in sorted(glob.glob(os.path.join(directory, "*.xml*")))
    }


def position_keys(paths: dict[str, str], first: int, last: int) -> list[str]:
    """'file#turn' of every position of turns first..last (inclusive) with a legal placement."""
    keys = []
    for name, path in paths.items():
        for state in load_replay(path).states:
            if first <= state.turn <= last and not state.is_over and len(state.legal_placements()):
                keys.append(f"{name}#{state.turn}")
    return sorted(keys)


_worker: dict = {}


# level 7's mean thinking time a move by turn on the slow machine (RESULTS §19): what a player that thinks on
# the opponent's time (pondering) gets before its own move
LEVEL7_SECONDS = ((12, 1.41), (20, 5.09), (28, 3.98), (36, 2.60), (44, 1.72), (52, 0.99), (60, 0.45))


def ponder_seconds(ponder: str, turn: int) -> float:
    """Seconds of thinking on the opponent's move before ``turn`` ('level7': §19's table; else ms)."""
    if ponder == "level7":
        return next((s for upto, s in LEVEL7_SECONDS if turn < upto), 0.45)
    return float(ponder) / 1000


def build_player(name: str, seed: int, fast_params: str | None, fast_weights: str | None) -> Engine:
    """The player by name; the lookahead with the given parameters or weights (JSON), if any."""
    if fast_params is None and fast_weights is None:
        return make_player(name, seed)
    if name != "lookahead":
        raise SystemExit("movequality: --fast-params and --fast-weights are for --player lookahead")
    params = FastSearchParams(**json.loads(fast_params)) if fast_params else None
    weights = Weights.from_dict(json.loads(fast_weights)) if fast_weights else None
    return FastLookaheadPlayer(seed, params=params, weights=weights)


def _pick_one(args: tuple[str, str, str, float, int, str, str | None, str | None]) -> tuple[str, int, dict]:
    key, path, player_name, move_time, seed, ponder, fast_params, fast_weights = args
    if "player" not in _worker:
        compile_ahead(parse_player(player_name))
        _worker["player"] = build_player(player_name, seed, fast_params, fast_weights)
    turn = int(key.rpartition("#")[2])
    states = load_replay(path).states
    state = next(s for s in states if s.turn == turn)
    player = _worker["player"]
    if isinstance(player, GtpPlayer):  # an engine that follows one game: give it this position afresh
        player.load_position(state)
    if ponder != "0":  # think on the opponent's move first (as pondering does): its tree is kept for ours
        before = next((s for s in states if s.turn == turn - 1), None)
        if before is not None and not before.is_over and len(before.legal_placements()) > 1:
            player.choose_move_sync(before, move_time=ponder_seconds(ponder, turn))
    move = player.choose_move_sync(state, move_time=move_time)
    info = {k: v for k, v in getattr(player, "last_info", {}).items() if k in ("simulations", "kept")}
    if isinstance(move, SkipMove):
        return key, -1, info
    pid = placement_of(move)
    return key, -1 if pid is None else int(pid), info


def pick(args: argparse.Namespace) -> None:
    paths = replay_paths(args.replays)
    keys = position_keys(paths, args.first, args.last)
    if args.limit and len(keys) > args.limit:
        keys = sorted(random.Random(1).sample(keys, args.limit))
    jobs = [
        (k, paths[k.rpartition("#")[0]], args.player, args.move_time / 1000, args.seed, args.ponder)
        + (args.fast_params, args.fast_weights)
        for k in keys
    ]
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        picked = pool.map(_pick_one, jobs, chunksize=1)
    moves = {key: pid for key, pid, _ in picked}
    infos = {key: info for key, _, info in picked if info}
    meta = {
        "player": args.player,
        "move_time": args.move_time,
        "replays": args.replays,
        "ponder": args.ponder,
        "fast_params": args.fast_params,
        "fast_weights": args.fast_weights,
    }
    with open(args.out, "w") as fh:
        json.dump({"meta": meta, "moves": moves, "info": infos}, fh)
    print(f"{len(moves)} moves picked -> {args.out}")


def _judge_one(args: tuple[str, str, int, str, int, int]) -> tuple[str, float | None]:
    """The judge's value, for the side that moved, of the position after ``pid`` (None: not valued)."""
    job_key, path, pid, engine_path, level, seed = args
    key = job_key.rpartition("@")[0]
    turn = int(key.rpartition("#")[2])
    state = next(s for s in load_replay(path).states if s.turn == turn).copy()
    mover = state.color
    state.push(SkipMove(mover) if pid < 0 else move_of_placement(mover, pid))
    while not state.is_over and not len(state.legal_placements()):
        state.push(SkipMove(state.color))
    if state.is_over:
        margin = state.team_points(Team(mover % 2)) - state.team_points(Team(1 - mover % 2))
        return job_key, 0.5 + 0.5 * float(np.sign(margin))
    engine = worker_engine(engine_path, level, seed)
    engine.load_position(state)
    color = state.color
    try:
        rows = _move_values(engine, color)
    except GtpError:
        return job_key, None
    if not rows:
        return job_key, None
    value = rows[0][1]
    return job_key, value if color % 2 == mover % 2 else 1.0 - value


def judge(args: argparse.Namespace) -> None:
    runs = []
    for name in args.files:
        with open(name) as fh:
            runs.append(json.load(fh))
    cache: dict[str, float | None] = {}
    if args.cache and os.path.exists(args.cache):
        with open(args.cache) as fh:
            cache = json.load(fh)
    paths = replay_paths([directory for run in runs for directory in run["meta"]["replays"]])
    todo = sorted({f"{key}@{pid}" for run in runs for key, pid in run["moves"].items()} - set(cache))
    jobs = [
        (k, paths[k.rpartition("#")[0]], int(k.rpartition("@")[2]), args.engine, args.level, args.seed) for k in todo
    ]
    print(f"{len(todo)} positions to value ({len(cache)} cached)")
    if jobs:
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            for done, (job_key, value) in enumerate(pool.imap_unordered(_judge_one, jobs, chunksize=1)):
                cache[job_key] = value
                if args.cache and done % 50 == 49:
                    _save(args.cache, cache)
    if args.cache:
        _save(args.cache, cache)
    base = runs[0]["moves"]
    common = sorted(
        k
        for k in base
        if all(k in run["moves"] for run in runs)
        and all(cache.get(f"{k}@{run['moves'][k]}") is not None for run in runs)
    )
    print(f"{len(common)} positions valued for every file; judge level {args.level}")
    header = "".join(f"  turns {lo}-{hi - 1:<3}" for lo, hi in BANDS)
    print(f"{'file':>28} {'mean':>6} {'diff':>7} {'se':>6} {'same':>5} |{header}")
    for name, run in zip(args.files, runs, strict=True):
        values = np.array([cache[f"{k}@{run['moves'][k]}"] for k in common])
        ref = np.array([cache[f"{k}@{base[k]}"] for k in common])
        diff = values - ref
        same = np.mean([run["moves"][k] == base[k] for k in common])
        turns = np.array([int(k.rpartition("#")[2]) for k in common])
        cells = []
        for lo, hi in BANDS:
            sel = (turns >= lo) & (turns < hi)
            cells.append(f" {np.mean(diff[sel]):+.4f}({sel.sum():3d})" if sel.any() else " " * 14)
        se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else 0.0
        print(
            f"{os.path.basename(name)[-28:]:>28} {values.mean():6.3f} {diff.mean():+7.4f} {se:6.4f} "
            f"{same:5.2f} |{''.join(cells)}"
        )


def _save(path: str, cache: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(cache, fh)
    os.replace(tmp, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pick", help="the player's move in every position")
    p.add_argument("replays", nargs="+", help="directories of the arena's replay files")
    p.add_argument("--player", default="lookahead", help="a player name, e.g. mcts:score_z=0.15")
    p.add_argument("--fast-params", help="the lookahead's parameters (JSON: FastSearchParams fields)")
    p.add_argument("--fast-weights", help="the lookahead's weights (JSON: Weights.as_dict())")
    p.add_argument("--move-time", type=int, default=1600, help="ms per move")
    p.add_argument("--first", type=int, default=16, help="first turn")
    p.add_argument("--last", type=int, default=40, help="last turn")
    p.add_argument("--limit", type=int, default=0, help="at most this many positions (a fixed sample)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--ponder", default="0", help="think this many ms on the opponent's move first ('level7': its times by turn)"
    )
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--out", required=True)
    j = sub.add_parser("judge", help="value the moves of pick's files; compare them with the first")
    j.add_argument("files", nargs="+")
    j.add_argument("--engine", required=True, help="path of the judge's GTP engine (pentobi-gtp)")
    j.add_argument("--level", type=int, default=7)
    j.add_argument("--cache", help="JSON file of values kept between runs (one per level and seed)")
    j.add_argument("--seed", type=int, default=1, help="the judge's random seed")
    j.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    pick(args) if args.command == "pick" else judge(args)


if __name__ == "__main__":
    main()
