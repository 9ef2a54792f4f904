"""Shared fixtures: an isolated data dir and environment for every test, and the in-process sandbox."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No POSTFLOWS_* variable or .env of the developer leaks into a test."""
    for name in list(os.environ):
        if name.startswith("POSTFLOWS_") and name != "POSTFLOWS_TEST_POSTGRES_URL":
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("POSTFLOWS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    yield
