"""Fuzz tests: the hypothesis settings every one of them uses (reproducible: derandomized, no example
database, no deadline) and the count of generated cases per target, which each test checks against its
minimum and the run lists at its end (tests/conftest.py adds up the counts of parallel test processes).

Every test generates all its cases unless the hypothesis profile ``fuzz-fast`` is loaded
(``--hypothesis-profile=fuzz-fast``, as ``make test-fast`` does): then most generate 10 % of them and check
9 % of their minimums (the first cases hypothesis generates are the simplest and smallest, so a share of the
cases reaches a little less than that share of a minimum of rows or kinds). ``make test`` and CI run every
case.
"""

from __future__ import annotations

import math
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
# The share of each test's cases a run generates, by hypothesis profile (registered in tests/conftest.py,
# where the command line can load it); any other profile generates every case.
FAST_PROFILE = "fuzz-fast"
SHARES = {FAST_PROFILE: 0.10}
# The share of each minimum a run checks, by hypothesis profile.
MINIMUM_SHARES = {FAST_PROFILE: 0.09}


def _loaded_share(count: int, shares: dict[str, float]) -> int:
    return math.ceil(count * shares.get(settings.get_current_profile_name(), 1.0))


def share_of(cases: int) -> int:
    """How many of ``cases`` the loaded hypothesis profile generates."""
    return _loaded_share(cases, SHARES)


def minimum_share_of(minimum: int) -> int:
    """How much of ``minimum`` the loaded hypothesis profile requires."""
    return _loaded_share(minimum, MINIMUM_SHARES)


def fuzz_settings(max_examples: int, *, every_case: bool = False) -> settings:
    """Settings of a fuzz test: ``max_examples`` cases, the same ones on every run; under ``fuzz-fast`` a
    share of them, unless ``every_case`` (a test that checks how its cases spread over kinds: the first
    cases hypothesis generates are the simplest, so a share of them spreads differently)."""
    return settings(
        max_examples=max_examples if every_case else share_of(max_examples),
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=_QUIET,
        print_blob=False,
    )


@dataclass
class CaseCount:
    """How many generated cases reached one target; :meth:`require` checks the minimum (the loaded profile's
    share of it) and records it."""

    target: str
    count: int = 0

    def add(self, cases: int = 1) -> None:
        self.count += cases

    def require(self, minimum: int) -> None:
        CASES[self.target] = CASES.get(self.target, 0) + self.count
        required = minimum_share_of(minimum)
        assert self.count >= required, f"{self.target}: {self.count} cases, fewer than {required}"


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
