"""Does the analysis value one position the same way twice? The hand-over gap of ``blokus analyse --json``.

The position after move *i* is valued twice by the analysis: as ``value_played`` of position *i* (the move
that was played) and as ``value`` of position *i + 1* (that position with its best move). Both are team ONE
minus team TWO in points, so they should agree up to what the best move found at *i + 1* misses. This script
prints, per file, the hand-over gaps |value_played[i] - value[i + 1]|: their median over the game and over the
first round (positions of turns 0-3), their signed mean by the colour that moved (a gap whose sign follows the
side to move is a yardstick that depends on who is to move), and the value of the start position.

    .venv/bin/python -m blokus analyse --json --no-cache -q tests/fixtures/sc2021/gen-21.3.3-game1-*.xml > g1.json
    .venv/bin/python tuning/handover_gap.py g1.json g2.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

COLOURS = ("BLUE", "YELLOW", "RED", "GREEN")


def gaps(positions: list[dict]) -> list[tuple[dict, float]]:
    """(position i, value_played[i] - value[i + 1]) for each analysed position followed by an analysed one."""
    by_index = {p["index"]: p for p in positions}
    return [(p, p["value_played"] - by_index[p["index"] + 1]["value"]) for p in positions if p["index"] + 1 in by_index]


def summary(document: dict) -> dict:
    pairs = gaps(document["positions"])
    first = [abs(g) for p, g in pairs if p["turn"] < 4]
    signed = {c: [g for p, g in pairs if p["color"] == c] for c in COLOURS}
    start = next((p for p in document["positions"] if p["index"] == 0), None)
    return {
        "file": Path(document["file"]).name,
        "pairs": len(pairs),
        "median_gap": statistics.median(abs(g) for _, g in pairs) if pairs else None,
        "mean_gap": statistics.fmean(abs(g) for _, g in pairs) if pairs else None,
        "first_round_median_gap": statistics.median(first) if first else None,
        "first_round_gaps": [round(g, 2) for p, g in pairs if p["turn"] < 4],
        "signed_mean_by_mover": {c: round(statistics.fmean(v), 2) for c, v in signed.items() if v},
        "start_value": start["value"] if start else None,
        "marked": sum(1 for p in document["positions"] if p["mark"]),
        "seconds_per_position": round(document["seconds"] / max(1, len(document["positions"])), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="output of blokus analyse --json")
    args = parser.parse_args()
    for path in args.files:
        for document in json.loads(path.read_text())["files"]:
            s = summary(document)
            print(
                f"{s['file']}: {s['pairs']} hand-overs, median gap {s['median_gap']:.2f} (mean {s['mean_gap']:.2f}), "
                f"first round median {s['first_round_median_gap']:.2f} {s['first_round_gaps']}; "
                f"start value {s['start_value']:+.2f}; {s['marked']} marked; "
                f"{s['seconds_per_position']:.3f} s per position"
            )
            print(
                "  signed mean gap by the colour that moved: "
                + ", ".join(f"{c} {v:+.2f}" for c, v in s["signed_mean_by_mover"].items())
            )


if __name__ == "__main__":
    main()
