"""Benchmark of the player API (``blokus.player``) as a player's search uses it, beside ``socha`` 5.1.0 (not a test).

The same positions (2027 games played at random to turns 0-60, by seed) in both engines, per operation the
median over the positions of the best of ``--repeat`` timed loops:

* legal moves: the list of move objects (ours ``legal_moves()``, socha ``possible_moves()``);
* count: the number of legal moves (ours ``legal_move_count()``, socha ``len(possible_moves())``);
* apply + undo: ours ``push(move)`` + ``pop()``; socha has no undo: a copy (below) + ``GameRuleLogic.perform_move``;
* copy: ours ``copy()``; socha has no copy: ``GameState(...)`` from the state's parts, as a socha player writes it;
* score: both teams' points (ours ``team_points``, socha ``get_points_for_team``);
* other's moves / other's count: the moves (their number) of the next colour, not the one to move (ours
  ``legal_moves(color)`` / ``legal_move_count(color)``; before them ``to_model().legal_moves(color)``; socha: a copy
  whose turn is that colour's, then ``possible_moves()``);
* corners: the free corners of the next colour (ours ``corners(color)``; before it, numpy over ``board()`` as a team
  wrote it; socha: its rule checks ``corners_on_color`` and ``borders_on_color`` field by field, as
  ``GameRuleLogic.get_valid_fields`` raises TypeError in 5.1.0 once the colour has a piece; not timed before a
  colour's first piece, where socha's checks answer another question);
* key: a position's key for a transposition table (ours ``key()``; before it a tuple of ``board()``'s bytes, the
  pieces left and the turn, hashed; socha has none);
* equal: ``==`` of the position and a copy (ours; socha's ``GameState.__eq__``).

The column "before" times what a player wrote before the call existed (blank where the call is not new).

socha runs in its own interpreter (``--socha-python``, default ``/work/socha-venv/bin/python``: install it apart
from the project, ``python -m venv /work/socha-venv && /work/socha-venv/bin/pip install socha==5.1.0``); this
script is its worker too (``--socha-worker``, reading the positions as move lists on stdin), so it imports the
project only in the main process. Without socha the table has our column only. The move counts of both are
compared position by position (a difference is reported, not hidden). socha keeps a colour that cannot place
in the game (its only move is a skip) where the server takes it out: the replay passes for it.

Usage: python bench/bench_player_api.py [--games N] [--repeat R] [--socha-python PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

TURNS = (0, 4, 12, 24, 40, 60)  # positions taken from each game
OPERATIONS = (
    "legal moves",
    "count",
    "apply + undo",
    "copy",
    "score",
    "other's moves",
    "other's count",
    "corners",
    "key",
    "equal",
)
NEW = OPERATIONS[5:]  # the calls of issue 50: timed "before" too
DEFAULT_SOCHA = "/work/socha-venv/bin/python"


def best_of(fn: Callable[[], object], repeat: int, loops: int) -> float:
    """Seconds per call: the best of ``repeat`` timings of ``loops`` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        best = min(best, (time.perf_counter() - start) / loops)
    return best


def loops_for(fn: Callable[[], object]) -> int:
    """Enough calls for a timing of about 20 ms."""
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, min(20000, int(0.02 / once)))


# --- ours -------------------------------------------------------------------------------------------------


def our_positions(games: int, seed: int) -> tuple[list, list[dict]]:
    """Positions of ``blokus.player.GameState`` and, for socha, each as its start piece and move texts."""
    from blokus.player import GameState

    rng = random.Random(seed)
    states, specs = [], []
    for game in range(games):
        state = GameState.new(2027, seed=seed * 1000 + game)
        moves: list[tuple[str, int]] = []  # (move, the turn it was played at)
        while not state.is_over and state.turn <= TURNS[-1]:
            if state.turn in TURNS:
                states.append(state.copy())
                specs.append({"start": state.start_piece.name, "moves": list(moves)})
            move = rng.choice(state.legal_moves())
            moves.append((str(move), state.turn))
            state.push(move)
    return states, specs


def corners_by_numpy(state, color: int) -> list[tuple[int, int]]:
    """The free corners of ``color`` from ``board()`` alone, as a team computed them before ``corners()``."""
    import numpy as np

    board = state.board()
    own = board == color
    if not own.any():  # first piece: the free border fields (2027)
        free = board < 0
        ys, xs = np.nonzero(free & ~np.pad(np.ones((18, 18), dtype=bool), 1))
        return list(zip(xs.tolist(), ys.tolist(), strict=True))
    padded = np.pad(own, 1)
    edge = padded[:-2, 1:-1] | padded[2:, 1:-1] | padded[1:-1, :-2] | padded[1:-1, 2:]
    diag = padded[:-2, :-2] | padded[:-2, 2:] | padded[2:, :-2] | padded[2:, 2:]
    ys, xs = np.nonzero((board < 0) & diag & ~edge)
    return list(zip(xs.tolist(), ys.tolist(), strict=True))


def other_color(state) -> int:
    """The next colour in the game after the one to move (the one whose moves an evaluation asks for)."""
    valid = [int(c) for c in state.valid_colors]
    mover = int(state.color)
    return min(valid, key=lambda c: (c - mover - 1) % 4)


def time_ours(states: list, repeat: int) -> tuple[dict[str, list[float]], dict[str, list[float]], list[int]]:
    """Per operation the times of the API's call and (for the new calls) of the way before it."""
    from blokus.player import Color, Team

    times: dict[str, list[float]] = {op: [] for op in OPERATIONS}
    before: dict[str, list[float]] = {op: [] for op in NEW}
    counts = []
    for state in states:
        moves = state.legal_moves()
        counts.append(len(moves))
        move = moves[len(moves) // 2]
        other = Color(other_color(state))
        twin = state.copy()

        def push_pop(state=state, move=move) -> None:
            state.push(move)
            state.pop()

        def score(state=state) -> tuple[int, int]:
            return state.team_points(Team.ONE), state.team_points(Team.TWO)

        def old_key(state=state) -> int:
            return hash((state.board().tobytes(), tuple(state.pieces_left(c) for c in Color), state.turn))

        calls = (
            state.legal_moves,
            state.legal_move_count,
            push_pop,
            state.copy,
            score,
            lambda s=state, c=other: s.legal_moves(c),
            lambda s=state, c=other: s.legal_move_count(c),
            lambda s=state, c=other: s.corners(c),
            state.key,
            lambda s=state, t=twin: s == t,
        )
        olds = (
            lambda s=state, c=other: list(s.to_model().legal_moves(c)),
            lambda s=state, c=other: len(s.to_model().legal_placements(c)),
            lambda s=state, c=other: corners_by_numpy(s, c),
            old_key,
            lambda s=state, t=twin: s.to_model() == t.to_model(),
        )
        assert sorted(state.corners(other)) == sorted(corners_by_numpy(state, other))
        assert len(olds[0]()) == len(calls[5]()) == calls[6]()
        for op, fn in zip(OPERATIONS, calls, strict=True):
            times[op].append(best_of(fn, repeat, loops_for(fn)))
        for op, fn in zip(NEW, olds, strict=True):
            before[op].append(best_of(fn, repeat, loops_for(fn)))
    return times, before, counts


# --- socha (in its own interpreter) -----------------------------------------------------------------------


def socha_worker() -> None:
    """Read the positions (JSON on stdin), replay them in socha, time the operations, print JSON."""
    import socha as S

    specs = json.load(sys.stdin)
    repeat = int(os.environ.get("BENCH_REPEAT", "5"))
    colors = [S.Color.BLUE, S.Color.YELLOW, S.Color.RED, S.Color.GREEN]

    def shape_of(name: str):
        return getattr(S.PieceShape, "".join(part.capitalize() for part in name.split("_")))  # PENTO_L -> PentoL

    rotations = {r: getattr(S.Rotation, r) for r in ("NONE", "RIGHT", "MIRROR", "LEFT")}
    cells = [S.Coordinate(x, y) for y in range(20) for x in range(20)]

    def move_of(text: str):
        parts = text.split()
        color = colors[("BLUE", "YELLOW", "RED", "GREEN").index(parts[0])]
        if parts[1] == "SKIP":
            return S.Move.skip_move(color)
        piece = S.Piece(
            color,
            shape_of(parts[1]),
            rotations[parts[2]],
            parts[3] == "true",
            S.Coordinate(int(parts[4]), int(parts[5])),
        )
        return S.Move.set_move(piece)

    def copy_of(state):
        return S.GameState(
            turn=state.turn,
            last_move=state.last_move,
            board=state.board,
            start_piece=state.start_piece,
            last_move_mono=state.last_move_mono,
            blue_shapes=state.undeployed_piece_shapes(S.Color.BLUE),
            yellow_shapes=state.undeployed_piece_shapes(S.Color.YELLOW),
            red_shapes=state.undeployed_piece_shapes(S.Color.RED),
            green_shapes=state.undeployed_piece_shapes(S.Color.GREEN),
            valid_colors=[c for c in colors if state.is_valid_color(c)],
        )

    times: dict[str, list[float]] = {op: [] for op in OPERATIONS}
    counts = []
    for spec in specs:
        state = S.GameState(start_piece=shape_of(spec["start"]))
        for text, turn in spec["moves"]:
            while state.turn < turn:  # a colour we took out of the game (it cannot place): socha's passes
                S.GameRuleLogic.perform_move(state, S.Move.skip_move(state.color()))
            S.GameRuleLogic.perform_move(state, move_of(text))
        moves = state.possible_moves()
        counts.append(len(moves))
        move = moves[len(moves) // 2]

        def apply(state=state, move=move) -> None:
            S.GameRuleLogic.perform_move(copy_of(state), move)

        def score(state=state) -> tuple[int, int]:
            return state.get_points_for_team(S.TeamEnum.One), state.get_points_for_team(S.TeamEnum.Two)

        def count(state=state) -> int:
            return len(state.possible_moves())

        valid = [i for i, c in enumerate(colors) if state.is_valid_color(c)]
        mover = colors.index(state.color())
        other = min(valid, key=lambda c: (c - mover - 1) % 4)
        turn = state.turn + (other - mover) % 4

        def others_moves(state=state, turn=turn) -> list:
            as_other = copy_of(state)
            as_other.turn = turn  # the next colour to move: socha's colour to move follows the turn
            return as_other.possible_moves()

        def corners(state=state, color=colors[other]) -> list:
            # get_valid_fields raises TypeError (a set of unhashable Coordinates) once the colour has a field:
            # the rule's own two checks, field by field
            board, rules, found = state.board, S.GameRuleLogic, []
            for coordinate in cells:
                if board.get(coordinate).is_empty():
                    field = S.Field(coordinate, color)
                    if rules.corners_on_color(board, field) and not rules.borders_on_color(board, field):
                        found.append(coordinate)
            return found

        twin = copy_of(state)
        calls = {
            "legal moves": state.possible_moves,
            "count": count,
            "apply + undo": apply,
            "copy": lambda s=state: copy_of(s),
            "score": score,
            "other's moves": others_moves,
            "other's count": lambda f=others_moves: len(f()),
            "corners": corners if len(state.undeployed_piece_shapes(colors[other])) < 21 else None,
            "equal": lambda s=state, t=twin: s == t,
        }
        for op in OPERATIONS:
            fn = calls.get(op)
            times[op].append(best_of(fn, repeat, loops_for(fn)) if fn else float("nan"))
    json.dump({"times": times, "counts": counts}, sys.stdout)


def time_socha(python: str, specs: list[dict], repeat: int) -> dict | None:
    if not os.path.exists(python):
        print(f"socha: {python} not found (install socha==5.1.0 into a separate venv); our column only")
        return None
    done = subprocess.run(
        [python, os.path.abspath(__file__), "--socha-worker"],
        input=json.dumps(specs),
        capture_output=True,
        text=True,
        env={**os.environ, "BENCH_REPEAT": str(repeat), "PYTHONPATH": ""},
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"socha: the worker failed ({last}); our column only")
        return None
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--socha-python", default=DEFAULT_SOCHA)
    parser.add_argument("--socha-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.socha_worker:
        socha_worker()
        return
    from blokus.model.fast import warm_up

    warm_up()
    states, specs = our_positions(args.games, args.seed)
    ours, before, our_counts = time_ours(states, args.repeat)
    theirs = time_socha(args.socha_python, specs, args.repeat)
    print(
        f"{len(states)} positions of {args.games} games of 2027 (turns {', '.join(map(str, TURNS))}), "
        f"median per operation of the best of {args.repeat}; µs"
    )
    header = f"{'operation':<14} {'blokus.player':>14} {'before':>9} {'faster':>7}"
    if theirs:
        header += f" {'socha 5.1.0':>12} {'faster':>8}"
    print(header)
    print("-" * len(header))
    for op in OPERATIONS:
        mine = statistics.median(ours[op]) * 1e6
        line = f"{op:<14} {mine:>14.2f}"
        if op in before:
            old = statistics.median(before[op]) * 1e6
            line += f" {old:>9.2f} {old / mine:>6.1f}x"
        else:
            line += f" {'':>9} {'':>7}"
        if theirs:
            values = [v for v in theirs["times"][op] if v == v]  # NaN: socha has no such call
            if values:
                other = statistics.median(values) * 1e6
                line += f" {other:>12.2f} {other / mine:>7.1f}x"
            else:
                line += f" {'—':>12}"
        print(line)
    if theirs:
        same = sum(a == b for a, b in zip(our_counts, theirs["counts"], strict=True))
        print(
            f"legal move counts equal in {same} of {len(our_counts)} positions "
            f"(median ours {statistics.median(our_counts):.0f}, socha {statistics.median(theirs['counts']):.0f})"
        )
        for (a, b), spec in zip(zip(our_counts, theirs["counts"], strict=True), specs, strict=True):
            if a != b:
                print(f"  differs after {len(spec['moves'])} moves ({spec['start']}): ours {a}, socha {b}")


if __name__ == "__main__":
    main()
