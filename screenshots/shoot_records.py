"""The screenshots of a saved arena game's per-move records in the replay viewer:

    python -m screenshots.shoot_records [--out screenshots]

Plays one arena game (``mcts:count=60,threads=1`` against ``level3``, season 2027, untimed, ``--save-replay``: the
replay and its ``.moves.json``), opens it at turn 21 (an MCTS move) and writes ``13-replay-move-records`` at
140×44 (the record under the move, the seconds and simulations beside each move in the move list) and
``14-replay-move-records-80x24`` (PNG via ``rsvg-convert``, like ``screenshots.shoot``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from blokus.ai.arena.game import GameSpec
from blokus.ai.arena.match import PlayerFactory, play_game
from blokus.ai.players.registry import parse_player
from blokus.tui.app import BlokusApp
from blokus.tui.replay_screen import ReplayScreen
from blokus.tui.replays import load_replay
from screenshots.shoot import _write

SHOTS = (("13-replay-move-records", (140, 44)), ("14-replay-move-records-80x24", (80, 24)))


def saved_game(directory: Path) -> Path:
    import blokus.ai.search.mcts as mcts

    mcts.warm_up()  # the real search (compiled once), not the lookahead it answers with while compiling
    mcts.KERNELS.ready.set()
    spec = GameSpec(0, "PENTO_X", 0, seed=5, move_time=10.0, season="2027", replay_dir=str(directory), timed=False)
    a, b = PlayerFactory(parse_player("mcts:count=60,threads=1")), PlayerFactory(parse_player("level3"))
    return Path(play_game(spec, a, b).replay)


async def shoot(out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = load_replay(saved_game(Path(tmp)))
    for name, size in SHOTS:
        app = BlokusApp(lambda: ReplayScreen(data, start_turn=21))
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await pilot.pause()
            _write(app, out, name)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m screenshots.shoot_records", description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("screenshots"))
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    asyncio.run(shoot(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
