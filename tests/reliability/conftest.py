"""The fault matrix runs its flows under the session's Prefect test harness."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def _prefect(prefect_harness: None) -> None:
    """Every flow run of the matrix reports to the session's Prefect test server."""
