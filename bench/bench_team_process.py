"""Benchmark of the process boundary of a team's player (``ai.players.team_process``; not a test): what a move costs
beyond the team's own ``calculate_move`` when the player runs in a process of its own.

A trivial team player (its first legal move) answers the same positions (2021 and 2027 games played at random
to turns 0-60) twice: in this process (``on_update`` with the API's position, ``calculate_move``: what the bot
did before) and through :class:`ai.players.team_process.TeamPlayer` (the request pickled down a pipe, the answer as
JSON, the move parsed). The boundary's cost per move is the difference, reported as the median and the 95th
percentile of wall time, and the bot's own CPU time per move (the part that competes with the team's search on
one core). Under load the wall times grow: the CPU times are the load-independent figure.

Usage: python bench/bench_team_process.py [--positions N]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import blokus.ai.players.player_api as api  # noqa: E402
from blokus.ai.players.registry import parse_player  # noqa: E402
from blokus.ai.players.team_process import TeamPlayer  # noqa: E402
from blokus.model.season import season_named  # noqa: E402
from blokus.model.state import GameState  # noqa: E402

PLAYER = """
from blokus.player import Move, Player


class First(Player):
    def calculate_move(self) -> Move:
        return self.game_state.legal_moves()[0]
"""


def positions(count: int) -> list[GameState]:
    rng = random.Random(1)
    found = []
    while len(found) < count:
        state = GameState.new(season_named(rng.choice(["2021", "2027"])), rng=rng)
        stop = rng.choice((0, 4, 12, 24, 40, 60))
        while state.turn < stop and not state.is_over:
            ids = state.legal_placements()
            if len(ids) == 0:
                break
            state.push_placement(int(ids[rng.randrange(len(ids))]))
        if not state.is_over and len(state.legal_placements()):
            found.append(state)
    return found


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def through_process(player: TeamPlayer, states: list[GameState]) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for state in states:
        cpu, wall = time.process_time(), time.perf_counter()
        await player.choose_move(state.copy(), time.monotonic() + 5.0)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return walls, cpus


def in_process(cls: type[api.Player], states: list[GameState]) -> list[float]:
    player = cls()
    walls = []
    for state in states:
        wall = time.perf_counter()
        player.answer(api.GameState(state.copy()), 5.0)
        walls.append(time.perf_counter() - wall)
    return walls


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--positions", type=int, default=300)
    args = p.parse_args()
    states = positions(args.positions)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "first.py"
        path.write_text(PLAYER)
        spec = parse_player(f"py:{path}")
        player = TeamPlayer(spec, strict=True)  # one process: the standby does not change the cost of a move
        started = time.perf_counter()
        player.start()
        await player.wait_ready()
        print(f"the team's process ready (warm start) in {time.perf_counter() - started:.2f} s")
        try:
            await through_process(player, states[:20])  # warm-up
            walls, cpus = await through_process(player, states)
        finally:
            player.close()
        from blokus.ai.players.pyplayer import load_player_class  # the benchmark's own file: imported here on purpose

        local = in_process(load_player_class(spec), states)
    print(f"{len(states)} positions (2021 and 2027, turns 0-60), ms per move:")
    extra = [w - x for w, x in zip(walls, local, strict=True)]
    for label, values in (
        ("in this process", local),
        ("through the process", walls),
        ("boundary (per move)", extra),
        ("the bot's CPU time", cpus),
    ):
        median, p95 = statistics.median(values) * 1000, percentile(values, 0.95) * 1000
        print(f"  {label:20} median {median:6.3f}   p95 {p95:6.3f}")


if __name__ == "__main__":
    asyncio.run(main())
