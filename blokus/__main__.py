"""``python -m blokus``: the same as the ``blokus`` command."""

import sys

from blokus import run

sys.exit(run())
