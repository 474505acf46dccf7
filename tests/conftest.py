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
