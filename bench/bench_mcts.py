"""Benchmark of the MCTS's speed (not a test): simulations per second of CPU time.

For positions of seeded random games at the given turns, the default MCTS runs a fixed number of
simulations (after a warm-up search of the same size) and the thread's CPU time is measured, so a busy
machine changes the figures less than wall-clock time would. The tree statistics (nodes, edges, depth)
depend only on the code and the seed: two versions that print the same ones searched the same tree.
With ``--playouts N`` it times N bare playouts (the policy alone, no tree) per position instead: CPU
microseconds per playout move, the part of a simulation that takes most of its time.
With ``--threads 1,2`` it runs a timed search of ``--seconds`` per position with each number of threads
(``mcts:threads=N``, root-parallel) instead: simulations per second of real time (what the threads gain: this
depends on the machine's load, say it), per second of the process's CPU time (all threads: what a thread costs)
and the ratio to the first number of threads; with ``--shared`` each number of threads above one is also run
tree-parallel (``mcts:shared_tree=1``: one tree the threads share), with the tree's depth.
Usage: python bench/bench_mcts.py [--turns 8,16,24,32,40] [--simulations 4000] [--seed 3] [--playouts N]
       [--threads 1,2 [--seconds 1.5] [--shared]]
"""

from __future__ import annotations

import argparse
import random
import threading
import time

import numpy as np
from numba import njit

from blokus.ai.search.mcts import MctsParams, MctsPlayer, R, Root, Scratch, prepare, seed_rng
from blokus.ai.search.mcts.kernels import _end_playout_turn, _playout_move
from blokus.ai.search.tables import TABLES
from blokus.model import fast as F
from blokus.model.fast import M_TURN, FastState
from blokus.model.pieces import Shape
from blokus.model.state import GameState


def position(turns: int, seed: int) -> GameState:
    rng = random.Random(seed)
    state = GameState(Shape.PENTO_L)
    while state.turn < turns and not state.is_over:
        ids = state.legal_placements()
        state.push_placement(int(ids[rng.randrange(len(ids))]))
    return state


@njit
def _playouts(t, count, root, params, sim, playout):
    """``count`` playouts by the search's policy from the root; returns the placements made."""
    size_w = np.zeros(6)
    for size in range(6):
        size_w[size] = params[R.size_base] ** size
    placed = 0
    for _ in range(count):
        F._copy(sim.b, root.b)
        sim.m[:] = root.m
        sim.last[:] = -1
        playout.lcount[:] = -1
        b, m, last = sim.b, sim.m, sim.last
        while not F.is_over(m):  # as ``run`` plays them
            color = m[M_TURN] & 3
            pid = _playout_move(t, sim, playout, color, root, params, size_w)
            _end_playout_turn(t, b, m, last, color, pid)
            if pid >= 0:
                placed += 1
    return placed


def bare_playouts(turns: list[int], count: int, seed: int) -> None:
    print(f"{'turn':>4} {'us/move':>8} {'moves/playout':>13}")
    scratch, params = Scratch.allocate(), MctsParams().vector()
    for turn in turns:
        root = Root.of(FastState.from_state(position(turn, seed)))
        seed_rng(seed)
        _playouts(TABLES, max(1, count // 10), root, params, scratch.sim, scratch.playout)  # warm-up
        seed_rng(seed)
        start = time.thread_time()
        placed = _playouts(TABLES, count, root, params, scratch.sim, scratch.playout)
        spent = time.thread_time() - start
        print(f"{turn:>4} {spent / placed * 1e6:>8.2f} {placed / count:>13.1f}")


def threaded(turns: list[int], threads: list[int], seconds: float, seed: int, shared: bool) -> None:
    print(
        f"{'turn':>4} {'threads':>7} {'tree':>6} {'sims':>7} {'sims/s':>7} {'sims/cpu-s':>10} {'cpu/real':>8} "
        f"{'ratio':>5} {'depth':>5}"
    )
    modes = [(n, False) for n in threads] + [(n, True) for n in threads if shared and n > 1]
    for turn in turns:
        state = position(turn, seed)
        first = 0.0
        for n, one_tree in modes:
            params = MctsParams(threads=n, shared_tree=one_tree)
            MctsPlayer(1, params=params, max_simulations=200).think(  # warm-up: threads, caches
                state.copy(), time.monotonic() + 600, threading.Event()
            )
            player = MctsPlayer(1, params=params)
            cpu, start = time.process_time(), time.monotonic()
            player.think(state.copy(), start + seconds, threading.Event())
            real, cpu = time.monotonic() - start, time.process_time() - cpu
            sims = player.last_info["simulations"]
            first = first or sims / real
            kind = "shared" if one_tree else ("one" if n == 1 else "each")
            print(
                f"{state.turn:>4} {n:>7} {kind:>6} {sims:>7} {sims / real:>7.0f} {sims / cpu:>10.0f} "
                f"{cpu / real:>8.2f} {sims / real / first:>5.2f} {player.last_info['depth']:>5}"
            )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--turns", default="8,16,24,32,40")
    p.add_argument("--simulations", type=int, default=4000)
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--playouts", type=int, default=0, help="time this many bare playouts per position instead")
    p.add_argument("--threads", default="", help="timed searches with these numbers of threads instead (1,2)")
    p.add_argument("--seconds", type=float, default=1.5, help="real time a timed search (--threads)")
    p.add_argument("--shared", action="store_true", help="also tree-parallel: the threads share one tree (--threads)")
    args = p.parse_args()
    prepare(None)
    turns = [int(t) for t in args.turns.split(",")]
    if args.threads:
        threaded(turns, [int(n) for n in args.threads.split(",")], args.seconds, args.seed, args.shared)
        return
    if args.playouts:
        bare_playouts([int(t) for t in args.turns.split(",")], args.playouts, args.seed)
        return
    print(f"{'turn':>4} {'moves':>5} {'sims/cpu-s':>10} {'nodes':>6} {'edges':>8} {'depth':>5}")
    for turns in (int(t) for t in args.turns.split(",")):
        state = position(turns, args.seed)
        # warm-up (caches, compiled code) by another player: a player would keep its tree for the same position
        one = MctsParams(threads=1)  # the CPU time of this thread is the search's
        MctsPlayer(1, params=one, max_simulations=args.simulations).think(
            state.copy(), time.monotonic() + 600, threading.Event()
        )
        player = MctsPlayer(1, params=one, max_simulations=args.simulations)
        start = time.thread_time()
        player.think(state.copy(), time.monotonic() + 600, threading.Event())
        spent = time.thread_time() - start
        nodes, edges, sims, depth = player.tree.counters.tolist()
        moves = len(state.legal_placements())
        print(f"{state.turn:>4} {moves:>5} {sims / spent:>10.0f} {nodes:>6} {edges:>8} {depth:>5}")


if __name__ == "__main__":
    main()
