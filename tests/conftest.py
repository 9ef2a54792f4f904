"""Shared fixtures: an isolated data dir and environment for every test, and the in-process sandbox."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")

from tests import secret_watch  # noqa: E402 - after the environment above

# Every request of the suite is checked: a client secret only ever travels in a form body.
secret_watch.install()


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    """One temporary Prefect server for the whole session (it costs ~10 s to start): flow tests and the
    fault matrix both report to it."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    seen = secret_watch.seen
    terminalreporter.write_line(
        f"secret watch: {seen['requests']} HTTP requests of this process checked; the "
        f"{seen['with_secret']} that carried a client secret carried it in a form body only; "
        f"{seen['tokens']} issued tokens and every password seen travelled only where their kind belongs"
    )


@pytest.fixture(autouse=True)
def _isolated_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[None]:
    """No POSTFLOWS_* variable or .env of the developer leaks into a test."""
    for name in list(os.environ):
        if name.startswith("POSTFLOWS_") and name != "POSTFLOWS_TEST_POSTGRES_URL":
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("POSTFLOWS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        secret_watch, "exempt", request.node.get_closest_marker("misplaced_secret") is not None
    )
    monkeypatch.setattr(secret_watch, "issued", secret_watch.IssuedTokens())
    # One test's secrets and data dirs are not the next one's: the scrubber and the file writer forget them.
    from connectors.redaction import SCRUBBER
    from fileio import files

    saved = SCRUBBER.snapshot()
    monkeypatch.setattr(files, "_private_roots", set())
    monkeypatch.setattr(files, "_secured_roots", set())
    yield
    SCRUBBER.restore(saved)
