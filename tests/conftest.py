from __future__ import annotations

from pathlib import Path

import pytest

# CI clones the repository with a copy of shared/ beside it: <repo>/../shared/fixtures
FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"


def fixture_path(relative: str) -> Path:
    path = FIXTURES / relative
    if not path.exists():
        pytest.skip(f"fixture not available: {path}")
    return path


def pytest_unconfigure(config: pytest.Config) -> None:
    # A worker ends with about a million objects alive (bounded caches: Textual's rendering, the engine's
    # moves). pytest then collects garbage five times to find unraisable exceptions, ~1 s each, and
    # pytest-xdist interrupts a worker still busy after 5 s. Frozen objects are left out of those collections.
    import gc

    gc.freeze()
