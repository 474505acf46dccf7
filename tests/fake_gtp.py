"""A minimal GTP Blokus engine for the tests of ``ai.players.gtp`` (stands in for Pentobi's ``pentobi-gtp``).

Understands ``loadsgf``, ``play``, ``genmove``, ``quit`` (colours 1..4, cells ``a20``..). Plays the first
legal placement our own rule engine finds. Every command line is appended to the file named by the
environment variable ``FAKE_GTP_LOG``.
"""

from __future__ import annotations

import os
import re
import sys

from blokus.ai.players.gtp import mask_text, parse_cells
from blokus.model import placements as P
from blokus.model.pieces import COLORS, SHAPES
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState


def main() -> None:
    boards = [0, 0, 0, 0]
    used: list[set[int]] = [set(), set(), set(), set()]
    by_mask = {m: pid for pid, m in enumerate(P.MASKS)}
    log = os.environ.get("FAKE_GTP_LOG")

    def place(color: int, mask: int) -> None:
        boards[color] |= mask
        used[color].add(int(P.P_SHAPE[by_mask[mask]]))

    for line in sys.stdin:
        if log:
            with open(log, "a") as fh:
                fh.write(line)
        words = line.split()
        if not words:
            continue
        cmd, args = words[0], words[1:]
        answer = ""
        if cmd == "quit":
            print("=\n", flush=True)
            return
        if cmd == "loadsgf":  # a new game: the file's moves only
            boards[:] = [0, 0, 0, 0]
            for shapes in used:
                shapes.clear()
            with open(args[0]) as fh:
                for color, cells in re.findall(r";([1-4])\[([^\]]*)\]", fh.read()):
                    place(int(color) - 1, parse_cells(cells))
        elif cmd == "play":
            place(int(args[0]) - 1, parse_cells(args[1]))
        elif cmd == "genmove":
            color = int(args[0]) - 1
            state = GameState.from_parts(
                start_piece=SHAPES[9],
                turn=color,
                cells=[(i % P.N, i // P.N, COLORS[c]) for c in range(4) for i in range(P.NCELLS) if boards[c] >> i & 1],
                undeployed={c: [s for s in SHAPES if s not in used[c]] for c in COLORS},
                valid_colors=COLORS,
                season=SEASON_2021,
            )
            ids = state.legal_placements(COLORS[color])
            if len(ids) and not os.environ.get("FAKE_GTP_PASS"):  # FAKE_GTP_PASS: pass always (as a faulty engine)
                mask = P.MASKS[int(ids[0])]
                place(color, mask)
                answer = mask_text(mask)
            else:
                answer = "pass"
        print(f"= {answer}\n", flush=True)


if __name__ == "__main__":
    main()
