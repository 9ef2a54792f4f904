"""Shared fixtures: an isolated data dir and environment for every test, and the in-process sandbox; the
counts the run ends with (the secret watch's, the fuzz cases'), added up over xdist's worker processes."""

from __future__ import annotations

import gc
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
# The test servers run without CSRF protection (Prefect's default): no client needs to ask them for a token.
os.environ.setdefault("PREFECT_CLIENT_CSRF_SUPPORT_ENABLED", "false")

from tests import guess_watch, secret_watch  # noqa: E402 - after the environment above

# Every sandbox of the suite, in this process or one it starts, logs the guesses its answers play.
os.environ.update(guess_watch.environment())

# Every request of the suite is checked: a client secret only ever travels in a form body.
secret_watch.install()

# The fuzz suite's profile with a tenth of its cases (tests/fuzz/conftest.py), registered here so that
# `--hypothesis-profile=fuzz-fast` on the command line finds it.
settings.register_profile("fuzz-fast")


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    """One temporary Prefect server for the whole session (it costs ~10 s to start): flow tests and the
    fault matrix both report to it.

    Its event persister is off: no test reads events back from the server's database, while writing every
    event of every run there took a tenth of the suite's CPU and held SQLite's write lock against the runs'
    own requests. Events still reach the server's other services (the automations' triggers act on them)."""
    import prefect.client.orchestration as orchestration
    from prefect.settings import PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    with (
        pytest.MonkeyPatch.context() as patch,
        temporary_settings(updates={PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED: False}),
        prefect_test_harness(server_startup_timeout=180),
    ):
        patch.setattr(orchestration, "ssl", _SharedVerifyingContexts(orchestration.ssl))
        yield


class _SharedVerifyingContexts:
    """The ``ssl`` module as Prefect's API clients see it, but for one thing: every client Prefect makes
    (several per flow run) builds a context that verifies against a CA file, reading and parsing the whole
    bundle again (~20 ms of CPU), although the test server speaks plain HTTP. Here the clients share one
    context per CA file; any other context is built as usual."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self._verifying: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def create_default_context(self, *args: Any, **kwargs: Any) -> Any:
        if args or set(kwargs) != {"cafile"}:
            return self._real.create_default_context(*args, **kwargs)
        cafile = kwargs["cafile"]
        if cafile not in self._verifying:
            self._verifying[cafile] = self._real.create_default_context(cafile=cafile)
        return self._verifying[cafile]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist, each test marked ``long`` heads the share of the list one worker is handed first
    (``--dist worksteal`` splits the list into a contiguous share per worker, as done here, and a worker
    that runs dry takes tests from the end of another's share): no test of minutes starts late and keeps
    the run going after the other workers are done."""
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    long = [item for item in items if item.get_closest_marker("long") is not None]
    if workers < 2 or not long:
        return
    rest = iter([item for item in items if item.get_closest_marker("long") is None])
    ordered: list[pytest.Item] = []
    remaining = len(items)
    for worker in range(workers):
        share = remaining // (workers - worker)
        heads = long[worker::workers]
        ordered += heads + [next(rest) for _ in range(share - len(heads))]
        remaining -= share
    items[:] = ordered


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collecting imported (Prefect, pandas, the test modules: a million objects that live as long as
    the run) moves out of the cyclic collector's sight: a full collection then walks only what the tests
    made since, not that whole heap again (the fuzz suite's worksheets: a third less CPU)."""
    gc.collect()
    gc.freeze()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """An xdist worker hands its counts to the controller, which adds them up."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        from tests.fuzz.conftest import CASES

        workeroutput["secret_watch"] = dict(secret_watch.seen)
        workeroutput["fuzz_cases"] = dict(CASES)
        workeroutput["guesses_played"] = dict(guess_watch.played())
    elif guess_watch.unregistered(_guesses_played()):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """On xdist's controller: a worker's counts (:func:`pytest_sessionfinish`) added to this process's."""
    from tests.fuzz.conftest import CASES

    output = getattr(node, "workeroutput", {})
    for name, count in output.get("secret_watch", {}).items():
        secret_watch.seen[name] += count
    for target, count in output.get("fuzz_cases", {}).items():
        CASES[target] = CASES.get(target, 0) + count
    _WORKER_GUESSES.update(output.get("guesses_played", {}))


_WORKER_GUESSES: Counter[str] = Counter()


def _guesses_played() -> Counter[str]:
    """The guess ids the sandboxes of this run played: this process's and its xdist workers'."""
    return guess_watch.played() + _WORKER_GUESSES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from tests.fuzz.conftest import CASES

    seen = secret_watch.seen
    terminalreporter.write_line(
        f"secret watch: {seen['requests']} HTTP requests of the test processes checked; the "
        f"{seen['with_secret']} that carried a client secret carried it in a form body only; "
        f"{seen['tokens']} issued tokens and every password seen travelled only where their kind belongs"
    )
    played = _guesses_played()
    unknown = guess_watch.unregistered(played)
    terminalreporter.write_line(
        f"guess watch: the sandbox played {len(played)} guesses in {played.total()} answers"
        + (f"; NOT IN THE REGISTER (connectors/guesses.py): {', '.join(unknown)}" if unknown else "")
    )
    if CASES:
        terminalreporter.write_line("fuzz cases per target:")
        width = max(len(target) for target in CASES)
        for target, count in CASES.items():
            terminalreporter.write_line(f"  {target:<{width}}  {count:>7,}")


@pytest.fixture(autouse=True)
def _isolated_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[None]:
    """No POSTFLOWS_* variable or .env of the developer leaks into a test."""
    for name in list(os.environ):
        if name.startswith("POSTFLOWS_") and name != "POSTFLOWS_TEST_POSTGRES_URL":
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("POSTFLOWS_DATA_DIR", str(tmp_path / "data"))
    for name, value in guess_watch.environment().items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        secret_watch, "exempt", request.node.get_closest_marker("misplaced_secret") is not None
    )
    monkeypatch.setattr(secret_watch, "issued", secret_watch.IssuedTokens())
    # One test's secrets and data dirs are not the next one's: the scrubber and the file writer forget them.
    from core.redaction import SCRUBBER
    from fileio import files

    saved = SCRUBBER.snapshot()
    monkeypatch.setattr(files, "_private_roots", set())
    monkeypatch.setattr(files, "_secured_roots", set())
    yield
    SCRUBBER.restore(saved)
