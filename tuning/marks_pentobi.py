"""Do the analysis's marks agree with a stronger judge? Pentobi values the marked moves of ``blokus analyse --json``.

For every marked move (``?`` or ``??``) of the analysis files, the judge (Pentobi's GTP engine, built by the
user outside this project; GPL, never part of it) values the position after the move played and the position
after the analysis's best move, each for the team that moved (the value of the next colour's most visited
move, turned around when that colour is of the other team; a finished game is 1, 0.5 or 0). The mark agrees
when the judge, too, sees the played move lose at least ``--threshold`` (0.02) winning chance against the best
move; a second count compares the played move with the judge's own value of the position before it (its own
choice). Each (position, move) is valued once (``--cache`` keeps the values between runs).

    P=/path/to/pentobi-gtp
    .venv/bin/python tuning/marks_pentobi.py g1.json g2.json --engine $P --level 6 --cache /tmp/marks6.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # teacher.py beside this script
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from teacher import _move_values  # noqa: E402

from blokus.ai.analysis import replay_moves  # noqa: E402
from blokus.ai.players.gtp import GtpError, GtpPlayer  # noqa: E402
from blokus.model.moves import SkipMove, parse_move  # noqa: E402
from blokus.model.pieces import Team  # noqa: E402
from blokus.model.replay import load_replay  # noqa: E402
from blokus.model.state import GameState  # noqa: E402


def judge_value(engine: GtpPlayer, state: GameState, move_text: str) -> float | None:
    """The judge's winning chance, for the team that moves in ``state``, after ``move_text`` ("" = before any
    move: the value of the judge's own choice)."""
    mover = state.color
    after = state.copy()
    if move_text:
        after.push(parse_move(move_text))
    while not after.is_over and not len(after.legal_placements()):
        after.push(SkipMove(after.color))
    if after.is_over:
        one, two = after.team_points(Team.ONE), after.team_points(Team.TWO)
        margin = (one - two) if mover.team is Team.ONE else (two - one)
        return 1.0 if margin > 0 else 0.0 if margin < 0 else 0.5
    engine.load_position(after)
    color = after.color
    try:
        rows = _move_values(engine, color)
    except GtpError:
        return None
    if not rows:
        return None
    value = rows[0][1]
    return value if color % 2 == mover % 2 else 1.0 - value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="output of blokus analyse --json")
    parser.add_argument("--engine", required=True, help="path of the judge's GTP engine (pentobi-gtp)")
    parser.add_argument("--level", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threshold", type=float, default=0.02, help="winning chance the judge must see lost")
    parser.add_argument("--cache", type=Path, help="JSON file of the judge's values, kept between runs")
    args = parser.parse_args()
    cache: dict[str, float | None] = {}
    if args.cache and args.cache.exists():
        cache = json.loads(args.cache.read_text())
    engine = GtpPlayer(args.engine, args.level, args.seed)
    total_marked = total_agree = total_own = 0
    try:
        for path in args.files:
            for document in json.loads(path.read_text())["files"]:
                replay = load_replay(Path(document["file"]))
                states, moves = replay.states, replay_moves(replay)
                name = Path(document["file"]).name
                rows = []
                for p in document["positions"]:
                    if not p["mark"]:
                        continue
                    state = states[p["index"]]
                    assert str(moves[p["index"]]) == p["played"], "the analysis belongs to another game"
                    values = []
                    for text in (p["best"], p["played"], ""):
                        key = f"{name}#{p['index']}@{text}#L{args.level}s{args.seed}"
                        if key not in cache:
                            cache[key] = judge_value(engine, state, text)
                        values.append(cache[key])
                    best, played, before = values
                    loss = None if best is None or played is None else best - played
                    own = None if before is None or played is None else before - played
                    rows.append((p, loss, own))
                valued = [(p, loss, own) for p, loss, own in rows if loss is not None and own is not None]
                agree = [p for p, loss, _ in valued if loss >= args.threshold]
                agree_own = [p for p, _, own in valued if own >= args.threshold]
                total_marked += len(valued)
                total_agree += len(agree)
                total_own += len(agree_own)
                print(
                    f"{name}: {len(rows)} marked, {len(valued)} valued by the judge; lose >= {args.threshold:g} by it "
                    f"against the analysis's best move: {len(agree)} ({100 * len(agree) / max(1, len(valued)):.0f} %), "
                    f"against the judge's own: {len(agree_own)} ({100 * len(agree_own) / max(1, len(valued)):.0f} %)"
                )
                for p, loss, own in rows:
                    judged = "not valued" if loss is None or own is None else f"{loss:+.3f} (own {own:+.3f})"
                    print(f"  turn {p['turn']:>3} {p['color']:<6} {p['mark']:<2} loss {p['loss']:6.2f}  judge {judged}")
    finally:
        engine.close()
        if args.cache:
            tmp = args.cache.with_suffix(".tmp")
            tmp.write_text(json.dumps(cache))
            os.replace(tmp, args.cache)
    print(
        f"all: of {total_marked} marked moves, {total_agree} ({100 * total_agree / max(1, total_marked):.0f} %) lose "
        f">= {args.threshold:g} by the judge against the analysis's best move, {total_own} "
        f"({100 * total_own / max(1, total_marked):.0f} %) against the judge's own choice"
    )


if __name__ == "__main__":
    main()
