"""Where a simulation of the MCTS spends its time, phase by phase (not a test), beside Pentobi's.

Ours: for positions of seeded random games at the given turns (those of ``bench_mcts.py``), the default MCTS's
simulation loop (``ai.search.mcts.kernels.run``, copied here with a time-stamp counter read at each phase boundary:
the kernel itself stays as it is; the copy must grow the same tree as the kernel from the same seed, checked first)
runs ``--simulations`` simulations into a fresh tree, in one thread, after a warm-up. Phases: *start* (the root
position copied), *select* (choosing an edge, playing it, growing a node), *expand* (a node's moves generated and
given priors by the move model), *playout* (the playout policy's moves to the end), *score* (the final margin, or
the evaluation of a stopped playout) and *backup* (the counts, RAVE, clearing the played marks). The shares are of
time-stamp counter ticks, the microseconds per simulation are the thread's CPU time over the simulations (the
counter reads included: a few ticks per phase). Both sides' times are CPU time, so a busy machine changes them less
than real time would.

Pentobi (``--pentobi PATH``, its GTP engine built outside the project as the README says): the same positions,
``--repeat`` moves at ``--level`` each (the position loaded afresh for each), under ``perf record -e cpu-clock`` (a
sampling profile; perf must be installed and allowed to profile the user's processes). Its functions are put into
the phases by name (the table ``PENTOBI_PHASES``; inlined code counts with the function it was inlined into):
Pentobi keeps each colour's legal moves up to date move by move in a playout (``init_moves_with_gamma`` at its
start, ``update_moves`` after each move), both *playout*; its in-tree moves update no move lists. What matches no
phase (starting the engine, the GTP loop, page faults) is left out. Its time a simulation is the CPU time of the
samples in the phases over the simulations its log counts. Ours then searches Pentobi's mean count of simulations
at that position. ``--set expand_inc=0``: our search with another setting (``mcts:KEY=VALUE``).

Usage: python bench/bench_mcts_phases.py [--turns 8,16,24,32,40] [--simulations 4000] [--seed 3]
       [--set K=V ...] [--pentobi PATH [--level 6] [--repeat 3] [--symbols N]]
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_mcts import position  # noqa: E402

from blokus.ai import processes  # noqa: E402
from blokus.ai.players.gtp import GTP_ARGS, GtpPlayer  # noqa: E402
from blokus.ai.search.fasteval import evaluate as fast_evaluate  # noqa: E402
from blokus.ai.search.mcts import MctsParams, MctsPlayer, R, Root, prepare, seed_rng  # noqa: E402
from blokus.ai.search.mcts.buffers import NCOUNT  # noqa: E402
from blokus.ai.search.mcts.kernels import (  # noqa: E402
    _end_playout_turn,
    _expand,
    _mark,
    _new_node,
    _playout_move,
    _select,
    _start,
    _z_bonus,
    expand_root,
    run,
)
from blokus.ai.search.mcts.player import PRIOR_WEIGHTS  # noqa: E402
from blokus.ai.search.tables import TABLES  # noqa: E402
from blokus.model import fast as F  # noqa: E402
from blokus.model.fast import M_TURN, M_VALID, FastState  # noqa: E402
from blokus.model.state import GameState  # noqa: E402

PHASES = ("start", "select", "expand", "playout", "score", "backup")
START, SELECT, EXPAND, PLAYOUT, SCORE, BACKUP = range(len(PHASES))

# Pentobi's functions by phase (perf's symbol names, matched by substring; the first match wins). What matches
# none is "other" (the GTP loop, loading the position, the move's choice): left out of the per-simulation shares.
PENTOBI_PHASES = (
    ("expand", ("gen_children", "expand_node", "create_node", "PriorKnowledge", "init_moves_without_gamma")),
    ("playout", ("::playout", "gen_playout_move", "play_playout", "update_moves", "init_moves_with_gamma")),
    ("score", ("evaluate_playout", "evaluate_multicolor", "evaluate_twocolor", "evaluate_multiplayer")),
    ("backup", ("update_values", "update_rave", "update_lgr")),
    ("start", ("start_simulation",)),
    ("select", ("select_child", "play_in_tree", "search_loop", "play_expanded_child")),
)


@intrinsic
def _ticks(typingctx):  # noqa: ARG001 - numba's intrinsic signature
    """The CPU's time-stamp counter (LLVM's ``readcyclecounter``): a few cycles to read."""

    def codegen(context, builder, signature, args):  # noqa: ARG001
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(64), []), "llvm.readcyclecounter"
        )
        return builder.call(fn, [])

    return types.int64(), codegen


@njit
def _run_phases(t, sims, root, params, prior_weights, scratch, tree, ticks):
    """``ai.search.mcts.kernels.run`` with the ticks of each phase added to ``ticks[phase]``."""
    sim, playout, walk = scratch.sim, scratch.playout, scratch.walk
    first_cells, b, m, last, lcount = root.first_cells, sim.b, sim.m, sim.last, playout.lcount
    amaf, played, margins = walk.amaf, walk.played, walk.margins
    node_first, node_count, node_n, node_turn = tree.node_first, tree.node_count, tree.node_n, tree.node_turn
    edge_pid, edge_child, edge_n, edge_w = tree.edge_pid, tree.edge_child, tree.edge_n, tree.edge_w
    edge_rn, edge_rw, counters = tree.edge_rn, tree.edge_rw, tree.counters
    path_nodes = np.zeros(256, dtype=np.int32)
    path_edges = np.zeros(256, dtype=np.int32)
    path_colors = np.zeros(256, dtype=np.int32)
    score_w = params[R.score_weight]
    expand_inc = params[R.expand_inc]
    exact_turns = params[R.playout_moves] > 0
    size_w = np.zeros(6, dtype=np.float64)
    for size in range(6):
        size_w[size] = params[R.size_base] ** size
    for _ in range(sims):
        t0 = _ticks()
        _start(sim, root)
        t1 = _ticks()
        ticks[START] += t1 - t0
        n_played = np.int64(0)
        ply = np.int64(0)
        depth = 0
        node = np.int64(0)
        expanding = 0
        while not F.is_over(m):
            if node_first[node] < 0:
                e0 = _ticks()
                expanded = _expand(t, node, sim, playout, walk, first_cells, params, prior_weights, tree)
                expanding += _ticks() - e0
                if not expanded:
                    break
            if node_count[node] == 0:
                break
            e = _select(node, tree, params)
            path_nodes[depth] = node
            path_edges[depth] = e
            path_colors[depth] = m[M_TURN] & 3
            depth += 1
            mover, pid = m[M_TURN] & 3, np.int64(edge_pid[e])
            last[mover] = pid
            n_played = _mark(mover, pid, amaf, played, n_played, ply)
            ply += 1
            child = edge_child[e]
            if child >= 0:
                F.place(t, b, m, mover, pid)
                m[M_TURN] = node_turn[child, 0]
                m[M_VALID] = node_turn[child, 1]
                node = child
                continue
            if edge_n[e] >= 1.0 + expand_inc * (depth - 1) and counters[0] < node_first.shape[0] and depth < 200:
                F.play(t, b, m, pid, first_cells)
                child = _new_node(tree, e, m)
                if child >= 0:
                    node = child
                    continue
            elif exact_turns:
                F.play(t, b, m, pid, first_cells)
            else:
                _end_playout_turn(t, b, m, last, mover, pid)
            break
        if depth > counters[3]:
            counters[3] = depth
        t2 = _ticks()
        for c in range(4):
            lcount[c] = -1
        budget = 1_000_000 if params[R.playout_moves] <= 0 else np.int64(params[R.playout_moves])
        while not F.is_over(m) and n_played < played.shape[0] - 1 and budget > 0:
            budget -= 1
            color = m[M_TURN] & 3
            pid = _playout_move(t, sim, playout, color, root, params, size_w)
            _end_playout_turn(t, b, m, last, color, pid)
            if pid >= 0:
                n_played = _mark(color, pid, amaf, played, n_played, ply)
                ply += 1
        t3 = _ticks()
        if F.is_over(m) or budget > 0:
            diff = F.margin(t, m)
            win = 1.0 if diff > 0 else (0.0 if diff < 0 else 0.5)
            if params[R.score_z] > 0:
                v1 = win + params[R.score_z] * _z_bonus(margins, float(diff))
            else:
                v1 = (1.0 - score_w) * win + score_w * (0.5 + 0.5 * math.tanh(diff / 30.0))
        else:
            value = fast_evaluate(t, b, m, first_cells, params[R.weights :])
            v1 = 1.0 / (1.0 + math.exp(-value / params[R.eval_scale]))
        t4 = _ticks()
        for d in range(depth):
            node = path_nodes[d]
            e = path_edges[d]
            node_n[node, 0] += 1.0
            color = path_colors[d]
            v = v1 if (color & 1) == 0 else 1.0 - v1
            node_n[node, 1] += v
            edge_n[e] += 1.0
            edge_w[e] += v
            first = node_first[node]
            for f in range(first, first + node_count[node]):
                k = amaf[color * NCOUNT + edge_pid[f]]
                if k > d:
                    edge_rn[f] += 1.0
                    edge_rw[f] += v
        counters[2] += 1
        for i in range(n_played):
            amaf[played[i]] = 0
        t5 = _ticks()
        ticks[SELECT] += t2 - t1 - expanding  # the in-tree loop apart from the expansions
        ticks[EXPAND] += expanding
        ticks[PLAYOUT] += t3 - t2
        ticks[SCORE] += t4 - t3
        ticks[BACKUP] += t5 - t4


def _fresh_tree(tree, scratch, start, params, seed: int) -> None:
    """An empty tree with its root expanded, the generator seeded (as a search of a new position starts)."""
    tree.counters[:] = 0
    tree.counters[0] = 1
    tree.node_first[0] = -1
    tree.node_count[0] = 0
    tree.node_n[0] = 0.0
    scratch.walk.margins[:] = 0.0
    seed_rng(seed)
    expand_root(TABLES, start, params, PRIOR_WEIGHTS, scratch, tree)


def _tree_digest(tree) -> bytes:
    nodes, edges = int(tree.counters[0]), int(tree.counters[1])
    parts = [tree.counters, tree.node_first[:nodes], tree.node_count[:nodes], tree.node_n[:nodes]]
    parts += [tree.edge_pid[:edges], tree.edge_child[:edges], tree.edge_n[:edges], tree.edge_w[:edges]]
    return b"".join(np.ascontiguousarray(a).tobytes() for a in parts)


def ours(state: GameState, simulations: int, seed: int, settings: MctsParams) -> tuple[dict[str, float], float]:
    """Shares of the phases and CPU microseconds a simulation, for ``simulations`` into a fresh tree. Exits if the
    copied loop grows another tree than the kernel's (the copy has drifted from ``kernels.run``)."""
    player = MctsPlayer(1, params=settings, max_simulations=200)
    player.think(state.copy(), time.monotonic() + 600, threading.Event())  # allocates the tree, warms caches
    worker = player.workers[0]
    tree, scratch = worker.tree, worker.scratch
    start, params = Root.of(FastState.from_state(state)), settings.vector(season=state.season)
    ticks = np.zeros(len(PHASES), dtype=np.int64)
    check = max(1, min(simulations, 300))
    _fresh_tree(tree, scratch, start, params, seed)
    run(TABLES, check, start, params, PRIOR_WEIGHTS, scratch, tree)
    expected = _tree_digest(tree)
    _fresh_tree(tree, scratch, start, params, seed)
    _run_phases(TABLES, check, start, params, PRIOR_WEIGHTS, scratch, tree, ticks)
    if _tree_digest(tree) != expected:
        sys.exit("bench_mcts_phases: the timed copy of the simulation loop grows another tree than kernels.run")
    _fresh_tree(tree, scratch, start, params, seed)
    ticks[:] = 0
    cpu = time.thread_time()
    _run_phases(TABLES, simulations, start, params, PRIOR_WEIGHTS, scratch, tree, ticks)
    cpu = time.thread_time() - cpu
    total = float(ticks.sum())
    return {name: ticks[i] / total for i, name in enumerate(PHASES)}, cpu / simulations * 1e6


class ProfiledPentobi(GtpPlayer):
    """Pentobi's GTP engine under ``perf record``, with its search log kept to read the simulations."""

    def __init__(self, path: str, level: int, seed: int, perf_data: Path) -> None:
        self.perf_data = perf_data
        self.log_path = perf_data.with_suffix(".log")
        super().__init__(path, level, seed)

    def _start(self) -> None:
        args = [a for a in GTP_ARGS if a != "--quiet"]
        cmd = ["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-o", str(self.perf_data), "--",
               self.path, *args, "--level", str(self.level), "--seed", str(self.seed)]  # fmt: skip
        self._proc = processes.start(cmd, stdin="pipe", stdout="pipe", stderr=self.log_path, text=True)

    def search(self, state: GameState) -> tuple[float, float]:
        """Pentobi's simulations for a move at ``state`` and their rate (from its log; the rate in real time)."""
        self.load_position(state)
        at = self.log_path.stat().st_size
        self.command(f"genmove {state.color + 1}")
        with self.log_path.open() as log:
            log.seek(at)
            text = log.read()
        sims = re.search(r"\bSim ([0-9.]+)", text)
        rate = re.search(r"\bSim/s ([0-9.]+)", text)
        return (float(sims.group(1)) if sims else 0.0), (float(rate.group(1)) if rate else 0.0)


def pentobi_phase_of(symbol: str) -> str:
    for phase, needles in PENTOBI_PHASES:
        if any(n in symbol for n in needles):
            return phase
    return "other"


def pentobi(
    path: str, level: int, state: GameState, seed: int, repeat: int
) -> tuple[dict[str, float], float, float, Counter]:
    """Shares of Pentobi's phases (of its search's samples), its CPU microseconds a simulation (the samples of the
    phases over its log's simulations), its
    mean simulations a move (``repeat`` moves, the position loaded afresh for each), and the symbols."""
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "perf.data"
        engine = ProfiledPentobi(path, level, seed, data)
        runs = []
        try:
            for _ in range(repeat):
                runs.append(engine.search(state))
        finally:
            engine.close()
        for _ in range(100):  # perf writes its file after the engine exits
            if data.exists() and data.stat().st_size > 0:
                break
            time.sleep(0.05)
        command = ["perf", "report", "-i", str(data), "--stdio", "--no-children", "--sort", "symbol"]
        report = subprocess.run([*command, "-F", "overhead,sym"], capture_output=True, text=True, check=False)
    total = re.search(r"Event count \(approx\.\): ([0-9]+)", report.stdout)  # cpu-clock: CPU nanoseconds
    symbols: Counter = Counter()
    for line in report.stdout.splitlines():
        match = re.match(r"\s*([0-9.]+)%\s+\[[.k]\]\s+(.*)", line)
        if match:
            symbols[match.group(2).strip()] += float(match.group(1))
    phases: Counter = Counter()
    for symbol, share in symbols.items():
        phases[pentobi_phase_of(symbol)] += share
    searched = sum(v for k, v in phases.items() if k != "other") or 1.0
    sims = sum(n for n, _ in runs)
    cpu_ns = int(total.group(1)) * searched / 100 if total else 0  # the CPU time of the phases' samples
    micro = cpu_ns / 1e3 / sims if sims and cpu_ns else math.nan
    return {name: phases[name] / searched for name in PHASES}, micro, sims / max(1, len(runs)), symbols


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--turns", default="8,16,24,32,40")
    p.add_argument("--simulations", type=int, default=4000)
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--pentobi", help="path of pentobi-gtp (profiled with perf)")
    p.add_argument("--level", type=int, default=6)
    p.add_argument("--set", action="append", default=[], metavar="K=V", help="an MCTS setting, e.g. expand_inc=0")
    p.add_argument("--repeat", type=int, default=3, help="Pentobi's moves per position")
    p.add_argument("--symbols", type=int, default=0, help="print Pentobi's top N symbols per position")
    args = p.parse_args()
    if args.pentobi and not shutil.which("perf"):
        sys.exit("bench_mcts_phases: perf is not installed: Pentobi's phases need it")
    prepare(None)
    settings = MctsParams(threads=1)
    for item in args.set:
        key, _, value = item.partition("=")
        setattr(settings, key, type(getattr(settings, key))(value))
    head = " ".join(f"{n:>7}" for n in PHASES)
    print("shares of a simulation's time; sims = simulations a search (Pentobi's mean at --level, else --simulations);")
    print(
        "us = CPU microseconds a simulation (ours: the thread's CPU time; Pentobi: its profile's samples in the phases)"
    )
    print(f"{'turn':>4} {'who':>8} {'sims':>6} {'us':>7} {head}")
    for turn in (int(t) for t in args.turns.split(",")):
        state = position(turn, args.seed)
        count = args.simulations
        if args.pentobi:
            p_shares, p_micro, p_sims, symbols = pentobi(args.pentobi, args.level, state, args.seed, args.repeat)
            count = max(1, round(p_sims))
        shares, micro = ours(state, count, args.seed, settings)
        print(f"{state.turn:>4} {'ours':>8} {count:>6} {micro:>7.1f} " + " ".join(f"{shares[n]:>7.1%}" for n in PHASES))
        if args.pentobi:
            print(
                f"{state.turn:>4} {'pentobi':>8} {count:>6} {p_micro:>7.1f} "
                + " ".join(f"{p_shares[n]:>7.1%}" for n in PHASES)
                + f"   ours/pentobi x{micro / p_micro:.2f}"
            )
            for symbol, share in symbols.most_common(args.symbols):
                short = re.sub(r"<[^<>]*>", "", re.sub(r"<[^<>]*>", "", symbol))  # without template arguments
                print(f"{'':>14}{share:>6.2f}%  {pentobi_phase_of(symbol):>8}  {short[:100]}")
    if os.environ.get("NUMBA_DISABLE_JIT"):
        print("(NUMBA_DISABLE_JIT is set: these are the interpreter's times)")


if __name__ == "__main__":
    main()
