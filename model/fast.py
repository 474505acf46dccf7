"""The compiled rule engine: legal moves, apply/undo and scores in numba over flat byte arrays.

Same rules and the same placement ids as ``model.state.GameState`` (the numpy engine stays the
reference; ``tests/test_fast_engine.py`` compares both on the same positions). Used where speed
counts: ``blokus moves``, the AI's playouts and search.

A position is two arrays:

* ``b`` (uint8): per colour a "forbidden" flag for every cell (occupied, or edge-adjacent to the
  colour; one extra cell at index 400 that is never forbidden: the padding of short pieces), per
  colour an "anchor" flag (free, diagonal to the colour, not forbidden for it) and the owner of each
  cell (0 empty, colour + 1);
* ``m`` (int64): turn, valid colours, mono_done, mono_flag, start shape, turn limit and the hands.

The lookup tables (neighbours, placements, candidate lists) reach the kernels as one argument, ``TABLES``
(a flat int16 array of sections, like the position), never as global arrays: numba would copy a global
array into every kernel that reads it.

Undo is a snapshot stack (a position is 3.6 kB: copying it is cheaper than tracking changes).
The first move of a colour must cover one of the season's start cells (``first_cells``: the corners
in 2021, the border in 2027; from the state's season profile); only the start piece may be placed then.
The turn limit comes from the season profile too.
"""

from __future__ import annotations

import threading

import numpy as np
from numba import njit

from blokus.model import numba_cache  # noqa: F401  (before any kernel: where numba caches them)
from blokus.model import placements as P
from blokus.model.pieces import ALL_PLACED_BONUS, MONO_LAST_BONUS, SHAPES, TOTAL_SQUARES

N = P.N
NCELLS = P.NCELLS
NSHAPES = len(SHAPES)
ALL_SHAPES = (1 << NSHAPES) - 1

# layout of ``b``
FORB = 0  # 4 x FSTRIDE: NCELLS flags, then padding that stays 0 (the padding cell of short pieces)
FSTRIDE = (NCELLS + 1 + 7) // 8 * 8  # whole words: the attach flags (ANCH) start on one, see next_attach_point
ANCH = 4 * FSTRIDE  # 4 x NCELLS
CELL = ANCH + 4 * NCELLS  # NCELLS: 0 empty, colour + 1
BSIZE = (CELL + NCELLS + 7) // 8 * 8  # whole uint64 words: snapshots are copied word by word

# layout of ``m``
M_TURN, M_VALID, M_MONO_DONE, M_MONO_FLAG, M_START, M_LIMIT, M_HAND = 0, 1, 2, 3, 4, 5, 6
MSIZE = M_HAND + 4

# The length of every move buffer: ``gen_moves`` lists a placement at most once (its ``seen`` marks), so no
# position, reachable or not (a state file, unchecked pushes), has more legal placements than there are
# placements of all 21 shapes. Real games stay below ~1,000; a board of scattered single cells of one colour has
# over 5,000 (tests/fixtures/engine/). Buffers of this size take memory only where written.
MAX_MOVES = P.COUNT


def _tables() -> tuple[np.ndarray, ...]:
    """Neighbour tables and (cell, shape) -> placement ranges, from ``model.placements``."""
    edge = np.full((NCELLS, 4), NCELLS, dtype=np.int32)
    diag = np.full((NCELLS, 4), NCELLS, dtype=np.int32)
    for i in range(NCELLS):
        x, y = i % N, i // N
        k = j = 0
        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            if 0 <= x + dx < N and 0 <= y + dy < N:
                edge[i, k] = (y + dy) * N + x + dx
                k += 1
        for dx, dy in ((1, 1), (-1, 1), (1, -1), (-1, -1)):
            if 0 <= x + dx < N and 0 <= y + dy < N:
                diag[i, j] = (y + dy) * N + x + dx
                j += 1
    cells = P.P_CELLS.astype(np.int16)  # small tables stay in the cache: the playouts read them most
    shape = P.P_SHAPE.astype(np.int32)
    # every (cell, shape, pid) with the cell in the placement, sorted by cell, then shape, then pid
    pid_of = np.repeat(np.arange(P.COUNT, dtype=np.int32), 5)
    cell_of = cells.reshape(-1)
    keep = cell_of < NCELLS
    pid_of, cell_of = pid_of[keep], cell_of[keep]
    slot = cell_of * NSHAPES + shape[pid_of]
    order = np.lexsort((pid_of, slot))
    ids = pid_of[order].astype(np.int32)
    offsets = np.zeros(NCELLS * NSHAPES + 1, dtype=np.int32)
    offsets[1:] = np.cumsum(np.bincount(slot, minlength=NCELLS * NSHAPES))
    sizes = np.array([s.size for s in SHAPES], dtype=np.int32)
    return edge, diag, cells, shape, ids, offsets, sizes


EDGE_NB, DIAG_NB, P_CELLS, P_SHAPE, CS_IDS, CS_OFFSETS, SIZES = _tables()


def _pattern_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidate lists per (anchor cell, shape, pattern): the pattern says which of the anchor's four edge
    neighbours are forbidden (bit d: direction d of ``EDGE_DIR``); a listed placement covers none of them.
    A placement that covers a forbidden neighbour can never be legal, so the short list is enough.
    Returns (EDGE_DIR, the lists' placement ids, their offsets): the lists of patterns 4h to 4h + 3 start at
    offset h x OFF_QUARTER (then by cell, shape and pattern: ``candidates``)."""
    edge_dir = np.full((NCELLS, 4), NCELLS, dtype=np.int32)  # by direction; NCELLS: off the board
    for i in range(NCELLS):
        x, y = i % N, i // N
        for d, (dx, dy) in enumerate(((1, 0), (-1, 0), (0, 1), (0, -1))):
            if 0 <= x + dx < N and 0 <= y + dy < N:
                edge_dir[i, d] = (y + dy) * N + x + dx
    slot = np.repeat(np.arange(NCELLS * NSHAPES, dtype=np.int64), np.diff(CS_OFFSETS))
    anchor = slot // NSHAPES
    pids = CS_IDS
    # uses[r]: the anchor's edge neighbours that placement r covers, as 4 bits
    covered = (P_CELLS[pids][:, None, :] == edge_dir[anchor][:, :, None]).any(axis=2)
    uses = (covered * (1 << np.arange(4))).sum(axis=1)
    all_ids: list[np.ndarray] = []
    all_offsets: list[np.ndarray] = []
    start = 0
    for high in (0, 4, 8, 12):
        keys, ids = [], []
        for pattern in range(4):
            keep = (uses & (pattern + high)) == 0
            keys.append(slot[keep] * 4 + pattern)
            ids.append(pids[keep])
        key = np.concatenate(keys)
        order = np.argsort(key, kind="stable")
        offsets = np.zeros(OFF_QUARTER, dtype=np.int64)
        offsets[1:] = np.cumsum(np.bincount(key, minlength=NCELLS * NSHAPES * 4))
        all_ids.append(np.concatenate(ids)[order])
        all_offsets.append(offsets + start)
        start += len(key)
    return edge_dir, np.concatenate(all_ids).astype(np.int16), np.concatenate(all_offsets).astype(np.int32)


assert P.COUNT < 2**15 and NCELLS < 2**15  # every table but the lists' offsets fits int16
OFF_QUARTER = NCELLS * NSHAPES * 4 + 1
EDGE_DIR, CSP_IDS, CSP_OFF = _pattern_tables()


def _ring_tables() -> tuple[np.ndarray, np.ndarray]:
    """Per placement: its edge neighbours (cells next to it, not in it) and its corners (cells diagonal to
    it, neither in it nor next to it), padded with NCELLS (the AI's move features and static scores)."""
    n = P.COUNT
    rows = np.arange(n)[:, None]
    inside = np.zeros((n, NCELLS + 1), dtype=bool)
    inside[rows, P_CELLS] = True
    edge = np.zeros_like(inside)
    diag = np.zeros_like(inside)
    for j in range(5):
        real = P_CELLS[:, j] < NCELLS
        cell = np.where(real, P_CELLS[:, j], 0)
        for k in range(4):
            e = np.where(real, EDGE_NB[cell, k], NCELLS)
            d = np.where(real, DIAG_NB[cell, k], NCELLS)
            edge[np.arange(n), e] = True
            diag[np.arange(n), d] = True
    edge[:, NCELLS] = False
    diag[:, NCELLS] = False
    edge &= ~inside
    diag &= ~inside & ~edge

    def padded(grid: np.ndarray) -> np.ndarray:
        counts = grid.sum(axis=1)
        out = np.full((n, int(counts.max())), NCELLS, dtype=np.int16)
        r, c = np.nonzero(grid)  # row by row, so a cell's slot is its index minus where its row starts
        out[r, np.arange(len(r)) - np.repeat(np.cumsum(counts) - counts, counts)] = c
        return out

    return padded(edge), padded(diag)


P_ADJ, P_CORNERS = _ring_tables()
ADJ_W, CORNERS_W = P_ADJ.shape[1], P_CORNERS.shape[1]


# --- the tables as the kernels read them -------------------------------------------------------------
# numba freezes a global array into the machine code of every kernel that reads it, once per compiled
# variant (hundreds of MB of cache, minutes of compiling): the kernels take their tables as an argument
# instead, ``t``, one flat int16 array of sections (as a position is one byte array), typed at a call as
# fast as any array. ``T_*`` are the sections' offsets, in units of the section's own type: int16, except the
# AI's float64 ones, read through ``tf = t.view(np.float64)`` made once per position, not per move (a view is a
# new array, and numba counts references to it). ``extend_tables`` appends sections (the AI's).


def extend_tables(base: np.ndarray, *parts: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """``base`` (int16) followed by ``parts`` (int16, int32 or float64, flattened; each aligned to its type),
    read-only, and each part's offset in units of its own type (read it through ``t.view(part.dtype)``)."""
    chunks, offsets, size = [base], [], len(base)
    for part in parts:
        step = part.itemsize // 2
        pad = -size % max(step, 4)  # every section starts on a whole word
        chunks.append(np.zeros(pad, dtype=np.int16))
        size += pad
        offsets.append(size // step)
        flat = np.ascontiguousarray(part).reshape(-1).view(np.int16)
        chunks.append(flat)
        size += len(flat)
    chunks.append(np.zeros(-size % 4, dtype=np.int16))
    out = np.concatenate(chunks)
    out.setflags(write=False)  # shared by every kernel call: nothing may change it
    return out, offsets


def _kernel_tables() -> tuple[np.ndarray, list[int]]:
    # the lists' offsets (int32) as pairs of int16: low half, high half (``list_offset``)
    halves = np.stack([CSP_OFF & 0xFFFF, CSP_OFF >> 16], axis=1).astype(np.uint16).view(np.int16)
    parts = (EDGE_NB, DIAG_NB, EDGE_DIR, P_CELLS, P_SHAPE, SIZES, SIZES[P_SHAPE], P_ADJ, P_CORNERS, CSP_IDS, halves)
    return extend_tables(np.zeros(0, dtype=np.int16), *(p.astype(np.int16) for p in parts))


# T_PSIZE: squares per placement
TABLES, (T_EDGE, T_DIAG, T_DIR, T_CELLS, T_SHAPE, T_SIZE, T_PSIZE, T_ADJ, T_CORNERS, T_IDS, T_OFF) = _kernel_tables()


# --- the compiled core ------------------------------------------------------------------------------
# Every kernel takes the tables ``t`` (``TABLES``, or an extension of it) first. In the hottest loops (fits,
# the candidate lists) array indices are cast to unsigned integers: with a signed index numba checks for a
# negative one (Python's a[-1]) on every access, and skipping that makes the search's playouts about a
# quarter faster (bench/bench_mcts.py --playouts).


@njit(cache=True)
def list_offset(t, i):
    """Offset ``i`` of the candidate lists (int32), from its two int16 halves. Not an int32 section read through
    ``t.view(np.int32)``: a view is a new array, and numba counts references to it (~25% of ``gen_moves``)."""
    j = np.uint64(T_OFF + 2 * i)
    return (np.int64(t[j + np.uint64(1)]) << 16) | (np.int64(t[j]) & 0xFFFF)


@njit(cache=True)
def candidates(t, b, fbase, a):
    """Where the candidate list of anchor ``a`` for the colour whose forbidden flags start at ``fbase`` begins
    among the lists' offsets: placements of shape s are ``t[T_IDS + k]`` for k from ``list_offset(t, base + 4 s)``
    to ``list_offset(t, base + 4 s + 1)``."""
    u = np.uint64(fbase)
    nb = T_DIR + 4 * a
    low = b[u + np.uint64(t[np.uint64(nb)])] | (b[u + np.uint64(t[np.uint64(nb + 1)])] << 1)
    high = b[u + np.uint64(t[np.uint64(nb + 2)])] | (b[u + np.uint64(t[np.uint64(nb + 3)])] << 1)
    return high * OFF_QUARTER + a * NSHAPES * 4 + low


@njit(cache=True)
def fits(t, b, fbase, pid):
    """Whether placement ``pid`` covers no field forbidden to the colour whose flags start at ``fbase``."""
    u = np.uint64(fbase)
    row = T_CELLS + 5 * pid
    return (
        b[u + np.uint64(t[np.uint64(row)])]
        | b[u + np.uint64(t[np.uint64(row + 1)])]
        | b[u + np.uint64(t[np.uint64(row + 2)])]
        | b[u + np.uint64(t[np.uint64(row + 3)])]
        | b[u + np.uint64(t[np.uint64(row + 4)])]
    ) == 0


@njit(cache=True)
def add_anchor_moves(t, b, fbase, a, avail, out, n, seen, stamp):
    """Append to ``out[n:]`` the placements through anchor ``a`` of the shapes in the bit set ``avail``
    that fit and are not marked ``stamp`` in ``seen`` yet (marking them); return the new count."""
    base = candidates(t, b, fbase, a)
    for s in range(NSHAPES):
        if not (avail >> s) & 1:
            continue
        for k in range(list_offset(t, base + s * 4), list_offset(t, base + s * 4 + 1)):
            pid = np.int64(t[np.uint64(T_IDS + k)])
            if seen[np.uint64(pid)] == stamp:
                continue
            seen[np.uint64(pid)] = stamp
            if fits(t, b, fbase, pid):
                out[np.uint64(n)] = pid
                n += 1
    return n


@njit(cache=True)
def shapes_to_place(m, color):
    """(first move?, bit set of the shapes ``color`` may place now): before its first piece only the start
    piece, later its whole hand."""
    hand = m[M_HAND + color]
    first = hand == ALL_SHAPES
    return first, (1 << m[M_START]) if first else hand


@njit(cache=True)
def is_attach_point(b, abase, first, first_cells, a):
    """Whether the colour's next piece may touch cell ``a`` by a corner: before its first piece, a free
    cell of the first-move rule (``first_cells``); later one of its attach points (flags from ``abase``)."""
    if first:
        return first_cells[a] != 0 and b[CELL + a] == 0
    return b[np.uint64(abase) + np.uint64(a)] != 0


@njit(cache=True)
def next_attach_point(b, abase, first, first_cells, a):
    """The first cell from ``a`` on that ``is_attach_point``, or NCELLS if none. After the colour's first piece
    the flags are read a word (8 cells) at a time where a word begins: most words hold none, and a cell by cell
    scan of the board was most of the time of ``has_move``."""
    if first:
        while a < NCELLS and not is_attach_point(b, abase, first, first_cells, a):
            a += 1
        return a
    words = b.view(np.uint64)
    base = np.int64(abase)
    while a < NCELLS:
        if a & 7 == 0 and words[np.uint64((base + a) >> 3)] == 0:
            a += 8
            continue
        if b[np.uint64(base + a)] != 0:
            return a
        a += 1
    return NCELLS


@njit(cache=True)
def gen_moves(t, b, m, color, first_cells, out, seen, stamp):
    """Write the legal placement ids of ``color`` into ``out`` (unsorted, distinct); return how many.

    ``seen`` (int32 per placement) must hold no value >= ``stamp`` (a fresh number per call; taken as an int32,
    as ``add_anchor_moves`` is called with one).
    """
    first, avail = shapes_to_place(m, color)
    if avail == 0:
        return 0
    fbase = FORB + color * FSTRIDE
    abase = np.int64(ANCH + color * NCELLS)
    n = np.int64(0)  # not a literal 0: numba would compile a variant of the callee for it
    mark = np.int32(stamp)
    a = next_attach_point(b, abase, first, first_cells, np.int64(0))
    while a < NCELLS:
        n = add_anchor_moves(t, b, fbase, a, avail, out, n, seen, mark)
        a = next_attach_point(b, abase, first, first_cells, a + 1)
    return n


@njit(cache=True)
def count_moves(t, b, m, color, first_cells, limit):
    """The number of legal placements of ``color``, counting stops at ``limit`` (1: whether it has any).

    Without a move list: each placement is counted at the lowest anchor (or first-move cell) it covers.
    """
    first, avail = shapes_to_place(m, color)
    if avail == 0:
        return 0
    fbase = FORB + color * FSTRIDE
    abase = np.int64(ANCH + color * NCELLS)
    n = 0
    a = next_attach_point(b, abase, first, first_cells, np.int64(0))
    while a < NCELLS:
        base = candidates(t, b, fbase, a)
        for s in range(NSHAPES):
            if not (avail >> s) & 1:
                continue
            for k in range(list_offset(t, base + s * 4), list_offset(t, base + s * 4 + 1)):
                pid = np.int64(t[T_IDS + k])
                if not fits(t, b, fbase, pid):
                    continue
                if limit > 1:  # counted once: at its lowest anchor
                    lowest = NCELLS
                    for j in range(5):
                        q = np.int64(t[T_CELLS + 5 * pid + j])
                        if q >= NCELLS:
                            break
                        if q < lowest and is_attach_point(b, abase, first, first_cells, q):
                            lowest = q
                    if lowest != a:
                        continue
                n += 1
                if n >= limit:
                    return n
        a = next_attach_point(b, abase, first, first_cells, a + 1)
    return n


@njit(cache=True)
def placeable_shapes(t, b, m, color, first_cells):
    """The bit set of the shapes ``color`` could place now (at least one legal placement each); stops
    searching as soon as every shape it may place has been found."""
    first, avail = shapes_to_place(m, color)
    found = 0
    if avail == 0:
        return found
    fbase = FORB + color * FSTRIDE
    abase = np.int64(ANCH + color * NCELLS)
    a = next_attach_point(b, abase, first, first_cells, np.int64(0))
    while a < NCELLS:
        base = candidates(t, b, fbase, a)
        for s in range(NSHAPES):
            if not (avail >> s) & 1 or (found >> s) & 1:
                continue
            for k in range(list_offset(t, base + s * 4), list_offset(t, base + s * 4 + 1)):
                if fits(t, b, fbase, np.int64(t[T_IDS + k])):
                    found |= 1 << s
                    break
        if found == avail:
            break
        a = next_attach_point(b, abase, first, first_cells, a + 1)
    return found


@njit(cache=True)
def has_move(t, b, m, color, first_cells):
    """Whether ``color`` can place any piece: ``count_moves(..., 1) > 0``, stopping at the first that fits (a loop
    of its own: ``count_moves`` with its limit an argument was ~40% slower here, and every move asks this)."""
    first, avail = shapes_to_place(m, color)
    if avail == 0:
        return False
    fbase = FORB + color * FSTRIDE
    abase = np.int64(ANCH + color * NCELLS)
    a = next_attach_point(b, abase, first, first_cells, np.int64(0))
    while a < NCELLS:
        base = candidates(t, b, fbase, a)
        for s in range(NSHAPES):
            if (avail >> s) & 1:
                for k in range(list_offset(t, base + s * 4), list_offset(t, base + s * 4 + 1)):
                    if fits(t, b, fbase, np.int64(t[np.uint64(T_IDS + k)])):
                        return True
        a = next_attach_point(b, abase, first, first_cells, a + 1)
    return False


@njit(cache=True)
def cells_marked(t, pid, marks, mark):
    """How many cells of placement ``pid`` carry ``mark`` in the per-cell array ``marks`` (NCELLS + 1
    entries; the last one, the padding of short pieces, is never marked). Branch-free: it runs for every
    legal placement of every playout move, and a loop with an early exit was three times slower."""
    row = T_CELLS + 5 * pid
    return (
        (marks[np.uint64(t[np.uint64(row)])] == mark)
        + np.int64(marks[np.uint64(t[np.uint64(row + 1)])] == mark)
        + np.int64(marks[np.uint64(t[np.uint64(row + 2)])] == mark)
        + np.int64(marks[np.uint64(t[np.uint64(row + 3)])] == mark)
        + np.int64(marks[np.uint64(t[np.uint64(row + 4)])] == mark)
    )


@njit(cache=True)
def place(t, b, m, color, pid):
    """Put placement ``pid`` of ``color`` on the board (cells, forbidden and anchor flags, hand)."""
    abase = ANCH + color * NCELLS
    fbase = FORB + color * FSTRIDE
    row = T_CELLS + 5 * pid
    for j in range(5):
        q = t[row + j]
        if q >= NCELLS:
            break
        b[CELL + q] = color + 1
        for c in range(4):
            b[FORB + c * FSTRIDE + q] = 1
            b[ANCH + c * NCELLS + q] = 0
    for j in range(5):
        q = t[row + j]
        if q >= NCELLS:
            break
        for k in range(4):
            e = t[T_EDGE + 4 * q + k]
            if e >= NCELLS:
                break
            b[fbase + e] = 1
            b[abase + e] = 0
    for j in range(5):
        q = t[row + j]
        if q >= NCELLS:
            break
        for k in range(4):
            d = t[T_DIAG + 4 * q + k]
            if d >= NCELLS:
                break
            if b[fbase + d] == 0:
                b[abase + d] = 1
    shape = t[T_SHAPE + pid]
    hand = m[M_HAND + color] & ~(1 << shape)
    m[M_HAND + color] = hand
    if hand == 0:
        m[M_MONO_DONE] |= 1 << color
        if shape == 0:
            m[M_MONO_FLAG] |= 1 << color


@njit(cache=True)
def next_turn(m):
    """Pass the turn to the next colour still in the game *without* checking that it can place (playouts:
    a colour found without a placement at its turn leaves the game there, which uses up that turn just as
    ``advance``'s check does, so turns and scores come out the same)."""
    if m[M_VALID] == 0:
        return
    m[M_TURN] += 1
    while not (m[M_VALID] >> (m[M_TURN] & 3)) & 1:
        m[M_TURN] += 1


@njit(cache=True)
def advance(t, b, m, first_cells):
    """Next turn; colours that cannot place are removed (each removal consumes a turn), as the server does."""
    while True:
        if m[M_VALID] == 0:
            return
        next_turn(m)
        color = m[M_TURN] & 3
        if has_move(t, b, m, color, first_cells):
            return
        m[M_VALID] &= ~(1 << color)


@njit(cache=True)
def play(t, b, m, pid, first_cells):
    """Apply legal placement ``pid`` (``pid < 0``: a skip) for the colour to move and advance."""
    if pid >= 0:
        place(t, b, m, m[M_TURN] & 3, pid)
    advance(t, b, m, first_cells)


@njit(cache=True)
def push(t, b, m, stack_b, stack_m, depth, pid, first_cells):
    """Save the position at ``depth`` of the stack, then ``play`` ``pid``."""
    _copy(stack_b[depth], b)
    stack_m[depth, :] = m
    play(t, b, m, pid, first_cells)


@njit(cache=True)
def restore(b, m, stack_b, stack_m, depth):
    _copy(b, stack_b[depth])
    for i in range(MSIZE):
        m[i] = stack_m[depth, i]


@njit(cache=True)
def _copy(dst, src):
    """``dst[:] = src`` for byte arrays of whole words (a word loop: ~20x faster than numba's byte copy)."""
    d = dst.view(np.uint64)
    s = src.view(np.uint64)
    for i in range(d.shape[0]):
        d[i] = s[i]


@njit(cache=True)
def derive_flags(t, b):
    """Fill the forbidden and anchor flags from the cell owners."""
    for q in range(NCELLS):
        owner = b[CELL + q]
        if owner == 0:
            continue
        c = owner - 1
        for k in range(4):
            b[FORB + k * FSTRIDE + q] = 1
        for k in range(4):
            e = t[T_EDGE + 4 * q + k]
            if e < NCELLS:
                b[FORB + c * FSTRIDE + e] = 1
    for q in range(NCELLS):
        owner = b[CELL + q]
        if owner == 0:
            continue
        c = owner - 1
        for k in range(4):
            d = t[T_DIAG + 4 * q + k]
            if d < NCELLS and b[FORB + c * FSTRIDE + d] == 0:
                b[ANCH + c * NCELLS + d] = 1


@njit(cache=True)
def is_over(m):
    return m[M_VALID] == 0 or m[M_TURN] >= m[M_LIMIT]


@njit(cache=True)
def points(t, m, color):
    hand = m[M_HAND + color]
    if hand == 0:
        return TOTAL_SQUARES + ALL_PLACED_BONUS + (MONO_LAST_BONUS if (m[M_MONO_FLAG] >> color) & 1 else 0)
    left = 0
    for s in range(NSHAPES):
        if (hand >> s) & 1:
            left += t[T_SIZE + s]
    return TOTAL_SQUARES - left


@njit(cache=True)
def margin(t, m):
    """Points of team ONE (BLUE + RED) minus team TWO's."""
    diff = 0
    for color in range(4):
        diff += points(t, m, color) if color % 2 == 0 else -points(t, m, color)
    return diff


# --- the Python face ---------------------------------------------------------------------------------

_FIRST_CELLS: dict[int, np.ndarray] = {}


def first_cells_of(state) -> np.ndarray:
    """The cells a colour's first piece must cover one of, in ``state``'s season (corners, or the border)."""
    bits = state.season.first_move_cells
    cells = _FIRST_CELLS.get(bits)
    if cells is None:
        cells = np.unpackbits(P.to_words(bits).view(np.uint8), bitorder="little")[:NCELLS].copy()
        _FIRST_CELLS[bits] = cells
    return cells


class _Direct:
    """``push`` and ``restore`` as FastState calls them, without numba's dispatch once compiled: the dispatcher
    checks the type of each of the eight arrays on every call (about a microsecond, a third of a push and pop
    from Python); with its one compiled variant found, that variant's entry point is called directly. The
    dispatchers are used until then, and whenever there is not exactly one variant."""

    def __init__(self) -> None:
        self.push = self._resolve("push", push)
        self.restore = self._resolve("restore", restore)

    def _resolve(self, name: str, dispatcher):
        def first_call(*args):
            result = dispatcher(*args)
            overloads = list(dispatcher.overloads.values())
            if len(overloads) == 1:
                setattr(self, name, overloads[0].entry_point)
            return result

        return first_call


_KERNELS = _Direct()


class _Scratch(threading.local):
    """The move list's work arrays, one set per thread and shared by every position (a copy allocates none):
    ``gen_moves`` writes into ``out`` and marks placements in ``seen`` with a fresh ``stamp`` per call."""

    def __init__(self) -> None:
        self.out = np.empty(MAX_MOVES, dtype=np.int32)
        self.seen = np.zeros(P.COUNT, dtype=np.int32)
        self.stamp = 0


_SCRATCH = _Scratch()
_NO_STACK_B = np.empty((0, BSIZE), dtype=np.uint8)  # the undo stack before the first push (never written)
_NO_STACK_M = np.empty((0, MSIZE), dtype=np.int64)


class FastState:
    """A position of the compiled engine, built from a ``GameState``; push/pop like the model."""

    __slots__ = ("b", "m", "first_cells", "_stack_b", "_stack_m", "_depth")

    def __init__(self, b: np.ndarray, m: np.ndarray, first_cells: np.ndarray) -> None:
        self.b = b
        self.m = m
        self.first_cells = first_cells
        # the undo stack is made by the first push: a copy that is only read (a search's leaf) costs two arrays
        self._stack_b = _NO_STACK_B
        self._stack_m = _NO_STACK_M
        self._depth = 0

    @classmethod
    def from_state(cls, state) -> FastState:
        b = np.zeros(BSIZE, dtype=np.uint8)
        m = np.zeros(MSIZE, dtype=np.int64)
        m[M_TURN] = state.turn
        m[M_VALID] = state.valid
        m[M_MONO_DONE] = state.mono_done
        m[M_MONO_FLAG] = state.mono_flag
        m[M_START] = int(state.start_piece)
        m[M_LIMIT] = state.season.turn_limit
        m[M_HAND : M_HAND + 4] = state.shapes
        for color in range(4):
            own = np.unpackbits(P.to_words(state.boards[color]).view(np.uint8), bitorder="little")[:NCELLS]
            b[CELL : CELL + NCELLS] |= own * np.uint8(color + 1)
        derive_flags(TABLES, b)
        return cls(b, m, first_cells_of(state))

    @property
    def turn(self) -> int:
        return int(self.m[M_TURN])

    @property
    def valid(self) -> int:
        return int(self.m[M_VALID])

    @property
    def color(self) -> int:
        return int(self.m[M_TURN]) & 3

    @property
    def is_over(self) -> bool:
        return bool(is_over(self.m))

    def legal_placements(self, color: int | None = None) -> np.ndarray:
        """Sorted placement ids, as ``GameState.legal_placements``."""
        color = self.color if color is None else int(color)  # a Color would compile another variant
        if not 0 <= color < 4:
            raise ValueError(f"no colour {color}")
        scratch = _SCRATCH
        scratch.stamp += 1
        if scratch.stamp >= 2**31 - 1:
            scratch.seen[:] = 0
            scratch.stamp = 1
        n = gen_moves(TABLES, self.b, self.m, color, self.first_cells, scratch.out, scratch.seen, scratch.stamp)
        return np.sort(scratch.out[:n])

    def legal_move_count(self, color: int) -> int:
        """``len(legal_placements(color))``, neither sorted nor copied (a search's mobility term)."""
        scratch = _SCRATCH
        scratch.stamp += 1
        if scratch.stamp >= 2**31 - 1:
            scratch.seen[:] = 0
            scratch.stamp = 1
        return int(gen_moves(TABLES, self.b, self.m, color, self.first_cells, scratch.out, scratch.seen, scratch.stamp))

    def corners(self, color: int) -> np.ndarray:
        """The cells (indices, ascending) where the next piece of ``color`` may touch it by a corner: its attach
        flags, or before its first piece the free cells of the first-move rule; none once it has no piece left."""
        hand = self.m[M_HAND + color]
        if hand == 0:
            return np.empty(0, dtype=np.intp)
        if hand == ALL_SHAPES:
            return np.flatnonzero(self.first_cells & (self.b[CELL : CELL + NCELLS] == 0))
        return np.flatnonzero(self.b[ANCH + color * NCELLS : ANCH + (color + 1) * NCELLS])

    def push_placement(self, pid: int) -> None:
        """Apply placement ``pid`` of the colour to move (``-1``: a skip). Its legality is not checked (the callers
        list their moves with ``legal_placements``): an illegal one gives a position no game reaches, still within
        the arrays (any position's moves fit ``MAX_MOVES``); an id that is no placement is refused."""
        if not -1 <= pid < P.COUNT:
            raise ValueError(f"no placement {pid}")
        d = self._depth
        if d == len(self._stack_b):
            size = max(16, 2 * d)
            self._stack_b = np.concatenate([self._stack_b, np.empty((size - d, BSIZE), dtype=np.uint8)])
            self._stack_m = np.concatenate([self._stack_m, np.empty((size - d, MSIZE), dtype=np.int64)])
        _KERNELS.push(TABLES, self.b, self.m, self._stack_b, self._stack_m, d, pid, self.first_cells)
        self._depth = d + 1

    def push_skip(self) -> None:
        self.push_placement(-1)

    def copy(self) -> FastState:
        """An independent position equal to this one (its undo stack starts empty)."""
        return FastState(self.b.copy(), self.m.copy(), self.first_cells)

    def pop(self) -> None:
        if self._depth == 0:
            raise IndexError("pop from a position without pushed moves")
        self._depth -= 1
        _KERNELS.restore(self.b, self.m, self._stack_b, self._stack_m, self._depth)

    def points(self, color: int) -> int:
        if not 0 <= color < 4:
            raise ValueError(f"no colour {color}")
        return int(points(TABLES, self.m, color))

    def shapes(self) -> list[int]:
        return [int(h) for h in self.m[M_HAND : M_HAND + 4]]

    def boards(self) -> list[int]:
        """Bitboards per colour, as ``GameState.boards``."""
        owner = self.b[CELL : CELL + NCELLS]
        out = []
        for color in range(4):
            bits = np.packbits(owner == color + 1, bitorder="little").tobytes()
            out.append(int.from_bytes(bits, "little"))
        return out

    def fields(self) -> tuple:
        """The position's fields as ``fields_of`` a ``GameState`` gives them (the engines' comparison; the start piece
        and the season are the GameState's)."""
        m = self.m
        return (
            int(m[M_TURN]),
            int(m[M_VALID]),
            tuple(self.boards()),
            tuple(self.shapes()),
            int(m[M_MONO_DONE]),
            int(m[M_MONO_FLAG]),
        )


def fields_of(state) -> tuple:
    """``FastState.fields()`` of a ``model.state.GameState``: equal when both engines hold the same position."""
    return (state.turn, state.valid, tuple(state.boards), tuple(state.shapes), state.mono_done, state.mono_flag)


def warm_up(play: bool = True) -> None:
    """Compile (or load from numba's cache) every kernel: call before the first timed move. ``play=False``:
    only those that list moves (``blokus moves``; apply/undo is most of the compile)."""
    from types import SimpleNamespace

    from blokus.model.pieces import Shape
    from blokus.model.season import DEFAULT_SEASON

    # a new game's fields (not a model.state.GameState: that module builds this one, imports point one way)
    new = SimpleNamespace(turn=0, valid=15, mono_done=0, mono_flag=0, start_piece=Shape.PENTO_L, season=DEFAULT_SEASON)
    new.shapes, new.boards = [ALL_SHAPES] * 4, [0] * 4
    fs = FastState.from_state(new)
    ids = fs.legal_placements()
    if not play:
        return
    fs.push_placement(int(ids[0]))
    fs.push_skip()
    fs.pop()
    fs.pop()
    fs.points(0)
    fs.is_over  # noqa: B018 - a kernel too (the player API asks it before every move list)


@njit(cache=True)
def push_pop_loop(t, b, m, stack_b, stack_m, pid, first_cells, reps):
    """``reps`` times apply ``pid`` and undo it, inside compiled code (for ``bench/bench_movegen.py``)."""
    for _ in range(reps):
        push(t, b, m, stack_b, stack_m, np.int64(0), pid, first_cells)
        restore(b, m, stack_b, stack_m, np.int64(0))


LOADED = True  # the module is whole: ``model.state``'s positions use this engine from now on
