from __future__ import annotations

from pathlib import Path

import pytest

# Data captured from the official server and clients, kept in the repository (origin and licence: SOURCES.md).
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixture_path(relative: str) -> Path:
    path = FIXTURES / relative
    if not path.is_file():
        raise FileNotFoundError(f"fixture missing from tests/fixtures: {relative}")
    return path


def pytest_unconfigure(config: pytest.Config) -> None:
    # A worker ends with about a million objects alive (bounded caches: Textual's rendering, the engine's
    # moves). pytest then collects garbage five times to find unraisable exceptions, ~1 s each, and
    # pytest-xdist interrupts a worker still busy after 5 s. Frozen objects are left out of those collections.
    import gc

    gc.freeze()
