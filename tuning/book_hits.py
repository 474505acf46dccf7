"""How often saved games met the opening book: the positions before each move that were in it, per colour.

    python tuning/book_hits.py [--book PATH] REPLAY_FILES...

For each colour (and its team's name in the replay) it prints the moves made, the positions before them that the
book holds, and how many of those moves were the book's (the same position after it, up to symmetry).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from blokus.ai.search.book import BOOK_PATH, position_key, read_book  # noqa: E402
from blokus.model.moves import SetMove  # noqa: E402
from blokus.model.pieces import COLORS  # noqa: E402
from blokus.model.replay import UnreadableReplay, read_game  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", type=Path, default=BOOK_PATH)
    parser.add_argument("replays", nargs="+", type=Path)
    args = parser.parse_args()
    book = read_book(args.book)
    moves: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    same: Counter[str] = Counter()
    games = 0
    for path in args.replays:
        try:
            replay = read_game(path)
        except UnreadableReplay as exc:
            print(f"{path}: {exc}", file=sys.stderr)
            continue
        games += 1
        for index, before in enumerate(replay.states[:-1]):
            if before.turn > 8:  # the book holds the first turns only
                break
            move = replay.move_before(index + 1)
            if not isinstance(move, SetMove):
                continue
            seat = f"{move.color.name} ({replay.names[move.color.team] or move.color.team.name})"
            moves[seat] += 1
            book_move = book.lookup(before)
            if book_move is None:
                continue
            hits[seat] += 1
            played, booked = before.copy(), before.copy()
            played.play(move)
            booked.play(book_move)
            same[seat] += position_key(played) == position_key(booked)
    print(f"{games} games, book {args.book} ({len(book)} entries)")
    for color in COLORS:
        for seat in sorted(s for s in moves if s.startswith(color.name + " ")):
            counts = f"moves in turns 0-8: {moves[seat]:4}  in the book: {hits[seat]:4}"
            print(f"{seat:30} {counts}  book move played: {same[seat]:4}")
    total, hit = sum(moves.values()), sum(hits.values())
    print(f"all: {hit}/{total} positions in the book ({100 * hit / max(1, total):.1f} %)")


if __name__ == "__main__":
    main()
