"""How much thinking a Pentobi level does per move, against ours at 1.6 s (not a test).

Pentobi's levels fix a number of simulations (growing with the pieces on the board), not a time. For
positions of games at the given turns, this asks Pentobi's GTP engine (``pentobi-gtp``, built by you:
see the README's "Measuring against Pentobi") for a move at LEVEL, reads from its log how many
simulations it ran and how fast, and then lets our default player think ``--move-time`` on the same
position. Each position is loaded afresh, so Pentobi reuses no tree from an earlier move (in a game it
keeps the part of its last tree that the moves since then lead to).
Positions: games of the greedy player (seeded), or with ``--replays DIR`` the games saved there (for
example by ``blokus arena ... --save-replay DIR``).
Usage: python bench/bench_pentobi_effort.py PENTOBI_GTP [--level 7] [--turns 8,16,24,32,40]
       [--games 4] [--replays DIR] [--move-time 1600] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

from blokus.ai import make_player, processes
from blokus.ai.players.gtp import GTP_ARGS, GtpPlayer
from blokus.ai.search.mcts import prepare
from blokus.model.pieces import Shape
from blokus.model.replay import load_replay
from blokus.model.state import GameState

NUMBER = r"([0-9.]+)"


class VerbosePentobi(GtpPlayer):
    """The GTP player with Pentobi's search log (stderr) kept in a file, to read its statistics."""

    def _start(self) -> None:
        self.log_path = Path(tempfile.mkdtemp(prefix="pentobi-log-")) / "stderr.log"
        args = [a for a in GTP_ARGS if a != "--quiet"]
        cmd = [self.path, *args, "--level", str(self.level), "--seed", str(self.seed)]
        self._proc = processes.start(cmd, stdin="pipe", stdout="pipe", stderr=self.log_path, text=True)

    def close(self) -> None:
        super().close()
        if hasattr(self, "log_path"):
            shutil.rmtree(self.log_path.parent, ignore_errors=True)

    def search_stats(self, state: GameState) -> dict[str, float]:
        """Load ``state``, let Pentobi pick a move for the colour to move; its count, simulations, time."""
        self.load_position(state)
        start_at = self.log_path.stat().st_size
        started = time.perf_counter()
        self.command(f"genmove {state.color + 1}")
        seconds = time.perf_counter() - started
        with self.log_path.open() as log:
            log.seek(start_at)
            text = log.read()
        max_count = re.search(r"MaxCnt " + NUMBER, text)
        sims = re.search(r"\bSim " + NUMBER, text)
        return {
            "max_count": float(max_count.group(1)) if max_count else 0.0,
            "simulations": float(sims.group(1)) if sims else 0.0,
            "seconds": seconds,
        }


def greedy_games(games: int, seed: int) -> list[list[GameState]]:
    rng = random.Random(seed)
    out = []
    for g in range(games):
        state = GameState(Shape.PENTO_L)
        player = make_player("greedy", seed + g)
        states = [state.copy()]
        while not state.is_over:
            # greedy's move, one in five at random (the games differ, the positions stay plausible)
            ids = state.legal_placements()
            if len(ids) and rng.random() < 0.2:
                state.push_placement(int(ids[rng.randrange(len(ids))]))
            else:
                state.play(player.choose_move_sync(state, move_time=0.5))
            states.append(state.copy())
        out.append(states)
    return out


def replay_games(directory: Path) -> list[list[GameState]]:
    return [list(load_replay(path).states) for path in sorted(directory.glob("*.xml"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pentobi", help="path of pentobi-gtp")
    parser.add_argument("--level", type=int, default=7)
    parser.add_argument("--turns", default="8,16,24,32,40")
    parser.add_argument(
        "--games", type=int, default=4, help="games of the greedy player, or the first games of --replays"
    )
    parser.add_argument("--replays", type=Path, help="positions from the replay files in this folder")
    parser.add_argument("--move-time", type=float, default=1600, help="our time per move in ms")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    turns = [int(t) for t in args.turns.split(",")]
    games = replay_games(args.replays)[: args.games] if args.replays else greedy_games(args.games, args.seed)
    prepare(wait=None)
    pentobi = VerbosePentobi(args.pentobi, args.level, args.seed)
    ours = make_player("mcts", args.seed)
    rows = {t: [] for t in turns}
    try:
        for states in games:
            for state in states:
                if state.turn not in rows or state.is_over or not len(state.legal_placements()):
                    continue
                p = pentobi.search_stats(state)
                ours.think(state.copy(), time.monotonic() + args.move_time / 1000, threading.Event())
                info = ours.last_info
                rows[state.turn].append((len(state.legal_placements()), p, info))
    finally:
        pentobi.close()
    print(
        f"Pentobi level {args.level} (its log) against ours at {args.move_time:.0f} ms, "
        f"{len(games)} games, medians per turn"
    )
    print(
        f"{'turn':>4} {'moves':>5} | {'P count':>8} {'P sims':>8} {'P time s':>8} {'P sims/s':>8} | "
        f"{'our sims':>8} {'time s':>6} {'sims/s':>7} | {'P/our sims':>10}"
    )
    for t in turns:
        if not rows[t]:
            continue
        med = statistics.median
        moves = med(r[0] for r in rows[t])
        p_count = med(r[1]["max_count"] for r in rows[t])
        p_sims = med(r[1]["simulations"] for r in rows[t])
        p_time = med(r[1]["seconds"] for r in rows[t])
        p_rate = med(r[1]["simulations"] / max(r[1]["seconds"], 1e-9) for r in rows[t])
        o_sims = med(r[2].get("simulations", 0) for r in rows[t])
        o_time = med(r[2].get("time", 0.0) for r in rows[t])
        o_rate = med(r[2].get("simulations", 0) / max(r[2].get("time", 0.0), 1e-9) for r in rows[t])
        print(
            f"{t:>4} {moves:>5.0f} | {p_count:>8.0f} {p_sims:>8.0f} {p_time:>8.2f} {p_rate:>8.0f} | "
            f"{o_sims:>8.0f} {o_time:>6.2f} {o_rate:>7.0f} | {p_sims / max(o_sims, 1):>10.1f}"
        )


if __name__ == "__main__":
    main()
