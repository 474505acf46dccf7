"""The user's cache folder of blokus: ``$XDG_CACHE_HOME/blokus`` (default ``~/.cache/blokus``), one folder with
a subfolder per use:

* ``numba/`` — the compiled AI kernels (``model.numba_cache``; private, mode 0700)
* ``analysis/`` — results of ``blokus analyse`` and the TUI's analysis (``ai.analysis``)
* ``programs/`` — the output of ``cmd:`` opponents (``tui.external``)
* ``blokus.log`` — the TUI's log file (``tui.app``; ``$BLOKUS_LOG`` overrides it)

Earlier versions used ``~/.cache/blokus-numba`` and ``~/.cache/blokus-tui`` too; nothing is read from there any
more (kernels are compiled again once, analyses are made again when opened): those folders may be deleted.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

NAME = "blokus"


def cache_home() -> Path | None:
    """``$XDG_CACHE_HOME/blokus`` or ``~/.cache/blokus`` (None: no absolute ``$XDG_CACHE_HOME`` or ``$HOME``)."""
    xdg, home = os.environ.get("XDG_CACHE_HOME"), os.environ.get("HOME")
    base = Path(xdg) if xdg else Path(home) / ".cache" if home else None
    return base / NAME if base is not None and base.is_absolute() else None


def cache_folder(use: str) -> Path:
    """The subfolder ``use`` of :func:`cache_home` (without a home: ``blokus-<uid>/<use>`` in the temporary
    folder). Not created here."""
    home = cache_home()
    if home is not None:
        return home / use
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"{NAME}-{uid}" / use
