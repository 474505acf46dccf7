"""Where are games lost? An external engine judges every position of saved arena games.

For each replay written by ``blokus arena ... --save-replay DIR`` the judge (Pentobi's GTP engine, built by
the user outside this project, as in ``teacher.py``) reports its value of every position from turn 4, for
the colour to move (the value of its most visited move); the script turns it into player A's winning
chance and prints, per game and on average, how that chance develops over the turns. The change of the
value across one move, averaged per phase, shows whose moves lose ground (the judge's noise included: the
same measure over the other side's moves is the comparison).

    P=/path/to/pentobi-gtp
    .venv/bin/python -m blokus arena lookahead gtp:$P:7 --games 12 --seed 22 --jobs 2 --save-replay /tmp/r7
    .venv/bin/python tuning/judge.py /tmp/r7 --engine $P --level 6
"""

from __future__ import annotations

import argparse
import glob
import itertools
import multiprocessing
import os

import numpy as np
from teacher import _move_values  # tuning/ is the script's directory

from blokus.ai.players.gtp import GtpError, GtpPlayer
from blokus.model.pieces import Team
from blokus.model.replay import load_replay

EDGES = (4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 72, 101)
PHASES = ((4, 16), (16, 28), (28, 40), (40, 56), (56, 101))


def judge_game(args: tuple[str, str, int]) -> tuple[str, int, list[tuple[int, int, float]], int]:
    """(file, A's team, [(turn, colour to move, value for A's team)], A's final margin)."""
    path, engine_path, level = args
    a_team = 0 if "_A_B" in os.path.basename(path) else 1  # the arena names team ONE first
    record = load_replay(path)
    engine = GtpPlayer(engine_path, level, 1)
    values = []
    try:
        for state in record.states:
            if state.turn < 4 or state.is_over or not len(state.legal_placements()):
                continue
            color = state.color
            engine._sync(state)
            try:
                rows = _move_values(engine, color)
            except GtpError:  # Pentobi now and then finds no move for a colour outside its own corner
                continue
            if rows:
                value = rows[0][1]
                values.append((state.turn, color, value if color % 2 == a_team else 1.0 - value))
    finally:
        engine.close()
    last = record.states[-1]
    margin = last.team_points(Team(a_team)) - last.team_points(Team(1 - a_team))
    return path, a_team, values, margin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("replays", help="directory of the arena's replay files")
    parser.add_argument("--engine", required=True, help="path of the judge's GTP engine (pentobi-gtp)")
    parser.add_argument("--level", type=int, default=6)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    files = sorted(glob.glob(os.path.join(args.replays, "*.xml*")))
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        games = pool.map(judge_game, [(f, args.engine, args.level) for f in files], chunksize=1)
    bands = list(itertools.pairwise(EDGES))
    per_band: list[list[float]] = [[] for _ in bands]
    change = {side: {p: [] for p in PHASES} for side in "AB"}  # value change across one move of A or B
    for path, a_team, values, margin in games:
        cells = []
        for i, (lo, hi) in enumerate(bands):
            band = [v for t, _, v in values if lo <= t < hi]
            if band:
                per_band[i].append(float(np.mean(band)))
            cells.append(f"{np.mean(band):6.2f}" if band else "     -")
        print(f"{os.path.basename(path)[-16:]:>16} A's margin {margin:+4d} |{''.join(cells)}")
        for (t, color, v), (t_after, _, after) in itertools.pairwise(values):
            if t_after != t + 1:  # a position the judge could not value lies between
                continue
            side = "A" if color % 2 == a_team else "B"
            gain = (after - v) if side == "A" else (v - after)  # for the side that moved
            for lo, hi in PHASES:
                if lo <= t < hi:
                    change[side][(lo, hi)].append(gain)
    print(f"{'turns from':>38} |" + "".join(f"{lo:6d}" for lo, _ in bands))
    print(
        f"{'A: mean winning chance (judge)':>38} |" + "".join(f"{np.mean(b):6.2f}" if b else "     -" for b in per_band)
    )
    print("mean change of the judge's value across one move, for the side that moved (per phase):")
    for side in "AB":
        print(
            f"  {side}: "
            + "  ".join(
                f"turns {lo}-{hi - 1}: {np.mean(c):+.4f} (n={len(c)})" for (lo, hi), c in change[side].items() if c
            )
        )


if __name__ == "__main__":
    main()
