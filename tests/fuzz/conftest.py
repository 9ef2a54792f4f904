"""Fuzz tests: the hypothesis settings every one of them uses (reproducible: derandomized, no example
database, no deadline) and the count of generated cases per target, which each test checks against its
minimum and the run lists at its end."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Every example shares the test's scratch directory (each writes its file anew), so a function-scoped
# fixture is fine; generating whole files is slower than hypothesis expects of a strategy.
_QUIET = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.function_scoped_fixture,
    HealthCheck.large_base_example,
]
CASES: dict[str, int] = {}


def fuzz_settings(max_examples: int) -> settings:
    """Settings of a fuzz test: ``max_examples`` cases, the same ones on every run."""
    return settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=_QUIET,
        print_blob=False,
    )


@dataclass
class CaseCount:
    """How many generated cases reached one target; :meth:`require` checks the minimum and records it."""

    target: str
    count: int = 0

    def add(self, cases: int = 1) -> None:
        self.count += cases

    def require(self, minimum: int) -> None:
        CASES[self.target] = CASES.get(self.target, 0) + self.count
        assert self.count >= minimum, f"{self.target}: {self.count} cases, fewer than {minimum}"


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """Where a fuzz test writes its cases: memory when the machine has a tmpfs (a test writes thousands
    of small files, and a disk mounted with ``discard`` takes milliseconds for each), else ``tmp_path``."""
    shared_memory = Path("/dev/shm")
    if not (shared_memory.is_dir() and os.access(shared_memory, os.W_OK)):
        yield tmp_path
        return
    directory = Path(tempfile.mkdtemp(prefix="postflows-fuzz-", dir=shared_memory))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A fuzz test runs thousands of cases: on a loaded machine it may take minutes, which is no hang."""
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.timeout(600))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not CASES:
        return
    terminalreporter.write_line("fuzz cases per target:")
    width = max(len(target) for target in CASES)
    for target, count in CASES.items():
        terminalreporter.write_line(f"  {target:<{width}}  {count:>7,}")
