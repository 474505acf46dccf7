"""The compiled AI's lookup tables: ``model.fast.TABLES`` extended by the evaluation's numbers.

Every compiled AI kernel (``ai.search.fasteval``, ``ai.search.movefeatures``, ``ai.search.fastsearch``,
``ai.search.mcts``) takes ``TABLES`` as its first argument ``t`` and hands it to the engine's kernels, which read
their own sections of it (it begins with ``model.fast.TABLES``). Tables reach compiled code only this way: numba
would copy a global array into every kernel that reads it. ``T_*``: the sections' offsets, in units of their type
(float64 sections are read through ``tf = t.view(np.float64)``, made once per position: a view is a new array, and
numba counts references to it).
"""

from __future__ import annotations

import numpy as np

from blokus.ai.search import evaluate as E
from blokus.model import fast as F
from blokus.model.fast import NCELLS, N

# per cell: 1 in the central 14x14, 2 in the central 8x8 (the evaluation's centre term)
CENTRE_CELLS = np.array([((E.CENTRE_IN >> q) & 1) + ((E.CENTRE_MID >> q) & 1) for q in range(NCELLS)], dtype=np.int16)
# distance of each cell to the board's centre (at least 2: the four middle cells and their ring are alike)
_xy = np.arange(NCELLS)
CENTRE_DIST = np.maximum(np.hypot(_xy % N - (N - 1) / 2, _xy // N - (N - 1) / 2), 2.0)

TABLES, (T_AWK, T_P_AWK, T_CENTRE_CELLS, T_P_CENTRE, T_CENTRE_DIST) = F.extend_tables(
    F.TABLES,
    np.array(E.AWK, dtype=np.float64),  # per shape: how hard it is to fit late
    np.array(E.P_AWK, dtype=np.float64),  # the same per placement
    CENTRE_CELLS,
    np.array(E.P_CENTRE, dtype=np.int16),  # per placement: cells in the central 8x8 plus in the central 14x14
    CENTRE_DIST,
)
