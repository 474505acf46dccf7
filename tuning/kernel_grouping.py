"""How should compiled kernels take ~30 arrays? Positional arguments, named tuples, a structref or a jitclass.

A synthetic stand-in for the MCTS's ``run`` (RESULTS §32): 30 arrays in two groups (a "tree" of 13, a "scratch"
of 17), an outer kernel called from Python in slices that calls a small inner kernel many times; the inner
kernel reads four arrays of one group and writes one of the other. Each variant is written to its own module in
a temporary folder and run in fresh processes with an empty numba cache:

* ``cold``: import and first call (compile and save to the cache), wall seconds;
* ``cached``: the same in a new process (loaded from the cache; ``hits`` says whether it was);
* ``call``: Python-to-kernel call with no work, microseconds (typing the arguments, unboxing);
* ``inner``: nanoseconds per inner call inside compiled code (passing the group on).

Usage: python tuning/kernel_grouping.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

TREE = [f"tree_{i}" for i in range(13)]
SCRATCH = [f"scratch_{i}" for i in range(17)]

COMMON = """
import time
import numpy as np
from numba import njit

N = 4096


def new_arrays(names):
    return [np.zeros(N, dtype=np.int32 if i % 3 else np.float32) for i, _ in enumerate(names)]
"""

# one inner kernel, one outer kernel; ``{sig}``: how the outer kernel names its arguments, ``{get}``: how an
# array is read from them
BODY = """
@njit(cache=True)
def inner({inner_args}, i):
    k = i & (N - 1)
    {tree}.tree_1[k] += 1
    {scratch}.scratch_4[k] = {tree}.tree_2[k] + {scratch}.scratch_5[k]
    return {tree}.tree_1[k] + {scratch}.scratch_7[k]


@njit(cache=True, nogil=True)
def outer({outer_args}, calls):
    total = 0.0
    for i in range(calls):
        total += inner({inner_pass}, i)
    return total
"""


def positional_source() -> str:
    # the arrays one by one: the inner kernel takes only the five it needs, as the MCTS's helpers do
    body = BODY.replace("{tree}.", "").replace("{scratch}.", "")
    inner = "tree_1, tree_2, scratch_4, scratch_5, scratch_7"
    return (
        COMMON
        + body.format(inner_args=inner, outer_args=", ".join(TREE + SCRATCH), inner_pass=inner)
        + textwrap.dedent(f"""
        def make():
            return new_arrays({TREE + SCRATCH!r})


        def call(groups, calls):
            return outer(*groups, calls)
        """)
    )


def namedtuple_source() -> str:
    fields = "\n".join(f"    {n}: np.ndarray" for n in TREE)
    sfields = "\n".join(f"    {n}: np.ndarray" for n in SCRATCH)
    return (
        COMMON
        + "from typing import NamedTuple\n\n\nclass Tree(NamedTuple):\n"
        + fields
        + "\n\n\nclass Scratch(NamedTuple):\n"
        + sfields
        + "\n"
        + BODY.format(
            inner_args="tree, scratch", outer_args="tree, scratch", inner_pass="tree, scratch", tree="tree", scratch="s"
        ).replace("s.scratch", "scratch.scratch")
        + textwrap.dedent(f"""
        def make():
            return Tree(*new_arrays({TREE!r})), Scratch(*new_arrays({SCRATCH!r}))


        def call(groups, calls):
            return outer(*groups, calls)
        """)
    )


def structref_source() -> str:
    lines = [COMMON, "from numba.core import types", "from numba.experimental import structref", ""]
    for cls, names in (("Tree", TREE), ("Scratch", SCRATCH)):
        lines.append(
            textwrap.dedent(f"""
            @structref.register
            class {cls}Type(types.StructRef):
                def preprocess_fields(self, fields):
                    return tuple((name, types.unliteral(typ)) for name, typ in fields)


            class {cls}(structref.StructRefProxy):
                pass


            structref.define_proxy({cls}, {cls}Type, {names!r})
            """)
        )
    lines.append(
        BODY.format(
            inner_args="tree, scratch", outer_args="tree, scratch", inner_pass="tree, scratch", tree="tree", scratch="s"
        ).replace("s.scratch", "scratch.scratch")
    )
    lines.append(
        textwrap.dedent(f"""
        def make():
            return Tree(*new_arrays({TREE!r})), Scratch(*new_arrays({SCRATCH!r}))


        def call(groups, calls):
            return outer(*groups, calls)
        """)
    )
    return "\n".join(lines)


def jitclass_source() -> str:
    lines = [COMMON, "from numba import float32, int32", "from numba.experimental import jitclass", ""]
    for cls, names in (("Tree", TREE), ("Scratch", SCRATCH)):
        spec = [(n, "float32[:]" if i % 3 == 0 else "int32[:]") for i, n in enumerate(names)]
        spec_text = "[" + ", ".join(f"({n!r}, {t})" for n, t in spec) + "]"
        args = ", ".join(names)
        sets = "\n".join(f"        self.{n} = {n}" for n in names)
        lines.append(f"\n\n@jitclass({spec_text})\nclass {cls}:\n    def __init__(self, {args}):\n{sets}\n")
    lines.append(
        BODY.format(
            inner_args="tree, scratch", outer_args="tree, scratch", inner_pass="tree, scratch", tree="tree", scratch="s"
        ).replace("s.scratch", "scratch.scratch")
    )
    lines.append(
        textwrap.dedent(f"""
        def make():
            return Tree(*new_arrays({TREE!r})), Scratch(*new_arrays({SCRATCH!r}))


        def call(groups, calls):
            return outer(*groups, calls)
        """)
    )
    return "\n".join(lines)


VARIANTS = {
    "positional": positional_source,
    "namedtuple": namedtuple_source,
    "structref": structref_source,
    "jitclass": jitclass_source,
}

# run in the child: import, first call, then the timings (printed as JSON)
CHILD = """
import json, sys, time
start = time.perf_counter()
import {module} as k
groups = k.make()
k.call(groups, 1)
first = time.perf_counter() - start
calls = 20000
t0 = time.perf_counter()
for _ in range(calls):
    k.call(groups, 0)
call_us = (time.perf_counter() - t0) / calls * 1e6
inner = 20_000_000
t0 = time.perf_counter()
k.call(groups, inner)
inner_ns = (time.perf_counter() - t0) / inner * 1e9
hits = sum(sum(f.stats.cache_hits.values()) for f in (k.outer, k.inner))
print(json.dumps({{"first": first, "call_us": call_us, "inner_ns": inner_ns, "hits": hits}}))
"""


def child(folder: Path, module: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(folder / "cache"), PYTHONPATH=str(folder))
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(module=module)], env=env, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1]}
    return json.loads(out.stdout)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    rows: dict[str, list[tuple[dict, dict]]] = {name: [] for name in VARIANTS}
    for _ in range(args.repeat):
        for name, source in VARIANTS.items():  # alternating: a noisy machine changes all variants alike
            with tempfile.TemporaryDirectory(prefix="grouping_") as tmp:
                folder = Path(tmp)
                (folder / f"g_{name}.py").write_text(source())
                rows[name].append((child(folder, f"g_{name}"), child(folder, f"g_{name}")))
    print(f"{'variant':<11} {'cold s':>7} {'cached s':>8} {'hits':>4} {'call us':>8} {'inner ns':>8}")
    for name, runs in rows.items():
        if any("error" in r for pair in runs for r in pair):
            error = next(r["error"] for pair in runs for r in pair if "error" in r)
            print(f"{name:<11} failed: {error}")
            continue

        def median(key: str, which: int, runs=runs) -> float:
            return statistics.median(pair[which][key] for pair in runs)

        print(
            f"{name:<11} {median('first', 0):>7.2f} {median('first', 1):>8.2f} {runs[-1][1]['hits']:>4}"
            f" {median('call_us', 1):>8.2f} {median('inner_ns', 1):>8.2f}"
        )


if __name__ == "__main__":
    main()
