"""Build the MCTS player's opening book (``ai/search/book.py``) offline by long searches of our own MctsPlayer.

    python tuning/build_book.py [--seconds 8] [--phases a,b,c] [--book PATH] [--limit N]

Phases, in the order given: a: turn 0 (BLUE's first move) for every start piece of both seasons; b: 2021 turn 1
(YELLOW after every BLUE first move, up to symmetry); c: 2021 turn 2 (RED after BLUE's book move and every YELLOW
reply, YELLOW's book move first, the pieces taken in turn); d: 2027 turn 1 (after every BLUE first move).
Resumable: entries are appended to the file as they are found and keys already in it are skipped, so the build can
be stopped and run again. One search thread, ``--seconds`` a position.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from blokus.ai.search.book import BOOK_PATH, Book, Entry, canonical, format_header, read_book, transform_move  # noqa: E402
from blokus.ai.search.mcts import MctsParams, MctsPlayer, prepare  # noqa: E402
from blokus.model.moves import Move  # noqa: E402
from blokus.model.season import SEASON_2021, SEASON_2027, Season  # noqa: E402
from blokus.model.state import GameState  # noqa: E402

Job = tuple[str, GameState, tuple[Move, ...]]  # (key, position, path)


def _job(state: GameState, path: tuple[Move, ...]) -> Job:
    return canonical(state)[0], state, path


def _after(season: Season, piece: str, path: tuple[Move, ...]) -> GameState:
    state = GameState.new(season, piece)
    for move in path:
        state.play(move)
    return state


def _replies(season: Season, piece: str, path: tuple[Move, ...]) -> Iterator[Job]:
    """The positions after each legal move from ``path``'s position, once per key."""
    state = _after(season, piece, path)
    seen: set[str] = set()
    for move in state.legal_moves():
        job = _job(_after(season, piece, (*path, move)), (*path, move))
        if job[0] not in seen:
            seen.add(job[0])
            yield job


def _book_move(book: Book, season: Season, piece: str, path: tuple[Move, ...]) -> Move | None:
    return book.lookup(_after(season, piece, path))


def jobs(phase: str, book: Book) -> Iterator[Job]:
    if phase == "a":
        for season in (SEASON_2021, SEASON_2027):
            for piece in season.start_pieces:
                yield _job(GameState.new(season, piece), ())
    elif phase in ("b", "d"):
        season = SEASON_2021 if phase == "b" else SEASON_2027
        groups = [list(_replies(season, piece, ())) for piece in season.start_pieces]
        for group in itertools.zip_longest(*groups):  # a position of each piece in turn: a cut build covers all
            yield from (job for job in group if job is not None)
    elif phase == "c":  # RED after our BLUE's book move: the positions our player meets
        per_piece = []
        for piece in SEASON_2021.start_pieces:
            blue = _book_move(book, SEASON_2021, piece, ())
            if blue is None:
                continue
            yellow = _book_move(book, SEASON_2021, piece, (blue,))
            replies = list(_replies(SEASON_2021, piece, (blue,)))
            replies.sort(key=lambda job: job[2][-1] != yellow)  # YELLOW's book reply first
            per_piece.append(replies)  # each: BLUE's book move, a YELLOW reply; RED to move
        for group in itertools.zip_longest(*per_piece):  # a position of each piece in turn
            yield from (job for job in group if job is not None)


def search(player: MctsPlayer, state: GameState, seconds: float) -> tuple[Move, str]:
    move = player.choose_move_sync(state, move_time=seconds)
    _, visits, values = player.root_statistics()
    info = player.last_info
    share = float(visits.max() / max(1.0, visits.sum())) if len(visits) else 0.0
    comment = f"sims={info.get('simulations', 0)} share={share:.2f} value={info.get('value', '')} t={seconds:g}s"
    return move, comment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--phases", default="a,b,c")
    parser.add_argument("--book", type=Path, default=BOOK_PATH)
    parser.add_argument("--limit", type=int, default=0, help="at most this many new positions a phase (0: all)")
    parser.add_argument("--count", action="store_true", help="only count the positions of each phase")
    args = parser.parse_args()
    if not args.book.exists():
        args.book.parent.mkdir(parents=True, exist_ok=True)
        args.book.write_text(format_header(f"built by tuning/build_book.py --seconds {args.seconds:g}"))
    prepare(None)
    player = MctsPlayer(1, params=MctsParams(threads=1, book=False, reuse=False))
    for phase in args.phases.split(","):
        book = read_book(args.book)  # the phases before this one's moves (c follows the book's BLUE and YELLOW)
        phase_jobs = list(jobs(phase, book))
        counts = Counter(f"{job[1].season.name} turn {job[1].turn}" for job in phase_jobs)
        todo = [job for job in phase_jobs if job[0] not in book]
        print(f"phase {phase}: {dict(counts)}, {len(todo)} not in the book yet", flush=True)
        if args.count:
            continue
        if args.limit:
            todo = todo[: args.limit]
        started = time.time()
        for index, (key, state, path) in enumerate(todo, 1):
            move, comment = search(player, state, args.seconds)
            k = canonical(state)[1]
            entry = Entry(key, transform_move(move, k), path, comment)
            with args.book.open("a", encoding="utf-8") as out:
                out.write(entry.text() + "\n")
            print(f"{phase} {index}/{len(todo)} {state.season.name} t{state.turn} {move} {comment}", flush=True)
        print(f"phase {phase} done: {len(todo)} positions in {time.time() - started:.0f} s", flush=True)
    final = read_book(args.book)
    totals = Counter(":".join(key.split(":")[0:3:2]) for key in final.entries)
    print("book:", len(final), "entries;", ", ".join(f"{k} {v}" for k, v in sorted(totals.items())), flush=True)


if __name__ == "__main__":
    main()
