"""Compare the MCTS's speed of two commits as a user's install runs them (not a test).

numba keeps compiled kernels in a cache next to the sources, and how the cache was filled changes the speed
of the same source: a kernel compiled while its helpers are loaded from the cache cannot inline them, one
compiled together with them can (tuning/RESULTS.md §22). A developer's tree, where one changed module is
recompiled against the cached rest, may show a gain that an install never sees. So this script checks out
each commit into a temporary worktree, removes every cached kernel, compiles as a first start does
(``ai.compile_ahead``) and then runs each tree's ``bench/bench_mcts.py`` in turn, alternating, and prints the
median simulations per CPU second of each and their ratio. It also says whether both searched the same trees
(same nodes, edges and depths: a pure speed-up).

Usage: python bench/bench_compare.py OLD NEW [--runs 3] [--turns 8,16,24,32,40] [--simulations 3000]
(OLD and NEW are commits, e.g. HEAD~1 HEAD; run it on an otherwise idle machine.)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout


def run_in(tree: Path, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(tree))
    done = subprocess.run([sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench_compare: {' '.join(args)} failed in {tree}:\n{done.stderr.strip()[-2000:]}")
    return done.stdout


def fresh_compile(tree: Path) -> None:
    for pattern in ("*.nbi", "*.nbc", "*.numba-sources"):
        for path in tree.rglob(pattern):
            path.unlink()
    run_in(tree, "-c", "from blokus.ai import compile_ahead, parse_player; compile_ahead(parse_player('mcts'))")


def bench(tree: Path, turns: str, simulations: int) -> dict[int, tuple[float, tuple[int, ...]]]:
    """turn -> (simulations per CPU second, (nodes, edges, depth))."""
    rows = {}
    for line in run_in(tree, "bench/bench_mcts.py", "--turns", turns, "--simulations", str(simulations)).splitlines():
        parts = line.split()
        if len(parts) == 6 and parts[0].isdigit():
            rows[int(parts[0])] = (float(parts[2]), tuple(int(p) for p in parts[3:]))
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--turns", default="8,16,24,32,40")
    p.add_argument("--simulations", type=int, default=3000)
    args = p.parse_args()
    revs = {name: git("rev-parse", "--short", rev).strip() for name, rev in (("old", args.old), ("new", args.new))}
    with tempfile.TemporaryDirectory(prefix="bench_compare_") as tmp:
        trees = {name: Path(tmp) / name for name in revs}
        for name, tree in trees.items():
            git("worktree", "add", "--detach", str(tree), revs[name])
        try:
            print(f"compiling {revs['old']} and {revs['new']} from empty caches ...", flush=True)
            with ThreadPoolExecutor(2) as pool:
                list(pool.map(fresh_compile, trees.values()))
            results: dict[str, list[dict]] = {"old": [], "new": []}
            for _ in range(args.runs):
                for name, tree in trees.items():
                    results[name].append(bench(tree, args.turns, args.simulations))
        finally:
            for tree in trees.values():
                git("worktree", "remove", "--force", str(tree))
    print(f"simulations per CPU second, median of {args.runs} alternating runs")
    print(f"{'turn':>4} {revs['old']:>10} {revs['new']:>10} {'ratio':>6}  same tree")
    for turn in sorted(results["old"][0]):
        old = statistics.median(r[turn][0] for r in results["old"])
        new = statistics.median(r[turn][0] for r in results["new"])
        same = {r[turn][1] for r in results["old"] + results["new"]}
        print(f"{turn:>4} {old:>10.0f} {new:>10.0f} {new / old:>6.2f}  {'yes' if len(same) == 1 else 'no'}")


if __name__ == "__main__":
    main()
