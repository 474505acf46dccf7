"""An external Blokus engine that speaks GTP (e.g. Pentobi's ``pentobi-gtp``) as an arena player.

``gtp:PATH:LEVEL`` in ``blokus arena`` runs ``PATH --game classic_2 --level LEVEL --threads 1 --seed S
--nobook --noresign --quiet`` (Pentobi's options; the user builds the engine, nothing of it is part of
this project). GTP colours 1..4 are BLUE, YELLOW, RED, GREEN; a move is a comma list of cells, column
letter ``a``.. from x = 0 and row number 20 - y (our (0, 0) is ``a20``).

Such an engine does not know the Software-Challenge start piece, so it cannot play round 1: the arena
plays the first round (``opening_turns``) and the engine receives that position as an SGF file
(``loadsgf``). Later moves of the other colours are told with ``play``; ``genmove`` asks for its own.
Colours removed by the SC rules simply get no more ``genmove``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable

from blokus.ai import processes
from blokus.ai.interface import Engine, StopFlag, fallback_move
from blokus.ai.search.greedy import GreedyPlayer
from blokus.model import placements as P
from blokus.model.moves import Move, SetMove, SkipMove
from blokus.model.state import GameState, move_of_placement, placement_of

GTP_ARGS = ("--game", "classic_2", "--threads", "1", "--nobook", "--noresign", "--quiet")
_CELLS_TO_PID: dict[int, int] = {}


class GtpError(RuntimeError):
    pass


def cell_name(index: int) -> str:
    x, y = index % P.N, index // P.N
    return f"{chr(ord('a') + x)}{P.N - y}"


def mask_text(mask: int) -> str:
    names = []
    while mask:
        low = mask & -mask
        names.append(cell_name(low.bit_length() - 1))
        mask ^= low
    return ",".join(names)


def parse_cells(text: str) -> int:
    mask = 0
    for name in text.split(","):
        name = name.strip().lower()
        x, y = ord(name[0]) - ord("a"), P.N - int(name[1:])
        if not (0 <= x < P.N and 0 <= y < P.N):
            raise GtpError(f"cell {name!r} is off the board")
        mask |= P.bit(x, y)
    return mask


def placement_of_mask(mask: int) -> int | None:
    if not _CELLS_TO_PID:
        _CELLS_TO_PID.update((m, pid) for pid, m in enumerate(P.MASKS))
    return _CELLS_TO_PID.get(mask)


class GtpPlayer(Engine):
    """Plays through an external GTP engine; keeps the engine's board in step with the game."""

    external = True  # its own clock: the arena does not hold it to the server's 2 s

    def __init__(
        self, path: str, level: int, seed: int | None = None, *, clock: Callable[[], float] | None = None
    ) -> None:
        super().__init__(seed, clock=clock)
        self.path = path
        self.level = level
        self.name = f"gtp:{os.path.basename(path)}:{level}"
        self.seed = seed if seed is not None else 0
        self._proc: processes.Child | None = None
        self._known: list[int] = [0, 0, 0, 0]  # cells per colour the engine has been told
        self.substitutes = 0  # moves the engine did not find (it passed with placements left)

    # --- the process --------------------------------------------------------------------------------

    def _start(self) -> None:
        cmd = [self.path, *GTP_ARGS, "--level", str(self.level), "--seed", str(self.seed % 2**31)]
        try:
            self._proc = processes.start(cmd, stdin="pipe", stdout="pipe", text=True)
        except OSError as exc:
            raise GtpError(f"cannot start {self.path}: {exc.strerror or exc}") from exc

    def command(self, line: str) -> str:
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        lines: list[str] = []
        while True:
            out = proc.stdout.readline()
            if not out:
                raise GtpError(f"the engine exited after {line!r}")
            out = out.rstrip("\n")
            if not out and lines:
                break
            if out:
                lines.append(out)
        answer = "\n".join(lines)
        if answer.startswith("?"):
            raise GtpError(f"{line!r}: {answer[1:].strip()}")
        return answer.lstrip("=").strip()

    def close(self) -> None:
        """Stop the engine (``quit``, then signals): call it when done (``with GtpPlayer(...) as p:``)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.stop(_quit, ask_grace=2.0)

    def __enter__(self) -> GtpPlayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- keeping the engine's board in step -----------------------------------------------------------

    def load_position(self, state: GameState) -> None:
        """Give the engine this whole position, whatever it followed before (for scripts that ask about
        positions of many games; in a game ``think`` keeps the engine in step by itself)."""
        if self._proc is None:
            self._start()
        self._load_opening(state)

    def _sync(self, state: GameState) -> None:
        if self._proc is None:
            self._start()
            self._load_opening(state)
            return
        # every other colour moved at most once since our last move: tell those moves in turn order
        me = state.color
        for step in range(1, 5):
            color = (me + step) % 4
            new = state.boards[color] & ~self._known[color]
            if new:
                self.command(f"play {color + 1} {mask_text(new)}")
                self._known[color] |= new

    def _load_opening(self, state: GameState) -> None:
        """The position so far as an SGF game: one move per colour and round, in turn order."""
        pieces: list[list[int]] = []  # per colour, its placements in the order they could have been played
        for color in range(4):
            pieces.append(_split_pieces(state.boards[color]))
        moves = []
        for round_index in range(max(len(p) for p in pieces)):
            for color in range(4):
                if round_index < len(pieces[color]):
                    moves.append(f";{color + 1}[{mask_text(pieces[color][round_index])}]")
        sgf = "(;GM[Blokus Two-Player]" + "".join(moves) + ")"
        with tempfile.NamedTemporaryFile("w", suffix=".sgf", delete=False) as fh:
            fh.write(sgf)
            path = fh.name
        try:
            self.command(f"loadsgf {path}")
        finally:
            os.unlink(path)
        self._known = list(state.boards)

    # --- playing ------------------------------------------------------------------------------------------

    def think(self, state: GameState, deadline: float, stop: StopFlag) -> Move:
        color = state.color
        if state.is_first_move(color) or state.is_over:  # the engine does not know the SC start piece
            return fallback_move(state, self.rng)
        self._sync(state)
        answer = self.command(f"genmove {color + 1}").strip().lower()
        if answer == "pass":
            if not state.has_legal_move(color):
                return SkipMove(color)
            # Pentobi sometimes finds no move for a colour that started in another corner than its own
            # rules give it (SC lets every colour start in any corner): a pass would hand the opponent a
            # free turn, so the greedy player's move stands in for the engine's
            self.substitutes += 1
            move = GreedyPlayer(self.seed).think(state.copy(), deadline, stop)
            pid = placement_of(move) if isinstance(move, SetMove) else None
            if pid is not None:
                mask = P.MASKS[pid]
                self.command(f"play {color + 1} {mask_text(mask)}")
                self._known[color] |= mask
            self.last_info = {"substitute": "greedy", "substitutes": self.substitutes}
            return move
        mask = parse_cells(answer)
        pid = placement_of_mask(mask)
        if pid is None:
            raise GtpError(f"genmove answered {answer!r}, not a piece")
        self._known[color] |= mask
        return move_of_placement(color, pid)


def _quit(child: processes.Child) -> None:
    assert child.stdin is not None
    child.stdin.write("quit\n")
    child.stdin.flush()
    child.stdin.close()


def _split_pieces(board: int) -> list[int]:
    """The cells of one colour, split into its pieces (edge-connected groups: pieces of one colour never
    touch along an edge). Only used for the first rounds, where the order of the pieces does not matter
    beyond the first one, which is the one in a corner."""
    groups = []
    rest = board
    while rest:
        low = rest & -rest
        group = low
        while True:
            grown = (group | P.edge_neighbours(group)) & board
            if grown == group:
                break
            group = grown
        groups.append(group)
        rest &= ~group
    groups.sort(key=lambda g: 0 if g & P.CORNERS else 1)
    return groups
