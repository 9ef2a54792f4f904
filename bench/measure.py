"""Side-by-side timing: a candidate and its baseline run alternately, so drift on a noisy machine hits both;
medians of each, their ratio, and whether it meets the target.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Comparison = Literal["at_most", "at_least"]


@dataclass
class Timings:
    """Seconds per repeat of the candidate and of the baseline, measured in alternation."""

    candidate: list[float] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)


def alternate(
    candidate: Callable[[], object],
    baseline: Callable[[], object],
    repeats: int,
    *,
    between: Callable[[], object] | None = None,
) -> Timings:
    """Time ``repeats`` rounds; odd rounds run the baseline first, so neither always runs on a warm cache.

    ``between`` (untimed) runs before every measured call, e.g. to remove an output file.
    """
    timings = Timings()
    for round_number in range(repeats):
        order = [("candidate", candidate), ("baseline", baseline)]
        if round_number % 2:
            order.reverse()
        for which, function in order:
            if between is not None:
                between()
            started = time.perf_counter()
            function()
            getattr(timings, which).append(time.perf_counter() - started)
    return timings


def alternate_reported(
    candidate: Callable[[], float],
    baseline: Callable[[], float],
    repeats: int,
) -> Timings:
    """:func:`alternate` for callables that measure themselves (e.g. in a subprocess) and return seconds."""
    timings = Timings()
    for round_number in range(repeats):
        order = [("candidate", candidate), ("baseline", baseline)]
        if round_number % 2:
            order.reverse()
        for which, function in order:
            getattr(timings, which).append(function())
    return timings


async def alternate_async(
    candidate: Callable[[], Awaitable[object]],
    baseline: Callable[[], Awaitable[object]],
    repeats: int,
) -> Timings:
    """:func:`alternate` for coroutines, awaited one at a time on the running loop."""
    timings = Timings()
    for round_number in range(repeats):
        order = [("candidate", candidate), ("baseline", baseline)]
        if round_number % 2:
            order.reverse()
        for which, function in order:
            started = time.perf_counter()
            await function()
            getattr(timings, which).append(time.perf_counter() - started)
    return timings


@dataclass
class BenchResult:
    """One benchmark's outcome.

    ``ratio`` is candidate/baseline for "at_most" targets (lower is better) and baseline/candidate (a
    speed-up) for "at_least" targets; ``value`` is what is compared with ``target``.
    """

    name: str
    description: str
    size: dict[str, Any]
    repeats: int
    target: float
    comparison: Comparison
    value: float
    value_label: str
    candidate_s: list[float] = field(default_factory=list)
    baseline_s: list[float] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    unmet: list[str] = field(default_factory=list)
    """Further bounds of the row that were missed (the row fails; they are listed in ``info``)."""

    @property
    def passed(self) -> bool:
        if self.unmet:
            return False
        if self.comparison == "at_most":
            return self.value <= self.target
        return self.value >= self.target

    def require(self, met: bool, bound: str) -> None:
        """A further bound of the row besides ``target``: when not ``met``, the row fails naming it."""
        if not met:
            self.unmet.append(bound)
            self.info["unmet_bounds"] = list(self.unmet)

    @property
    def candidate_median_s(self) -> float | None:
        return statistics.median(self.candidate_s) if self.candidate_s else None

    @property
    def baseline_median_s(self) -> float | None:
        return statistics.median(self.baseline_s) if self.baseline_s else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form written to ``results.json``."""
        return {
            "name": self.name,
            "description": self.description,
            "size": self.size,
            "repeats": self.repeats,
            "candidate_median_s": _rounded(self.candidate_median_s),
            "baseline_median_s": _rounded(self.baseline_median_s),
            "value": round(self.value, 4),
            "value_label": self.value_label,
            "target": self.target,
            "comparison": self.comparison,
            "passed": self.passed,
            "candidate_s": [round(s, 4) for s in self.candidate_s],
            "baseline_s": [round(s, 4) for s in self.baseline_s],
            "info": self.info,
        }


def ratio_result(
    name: str,
    description: str,
    timings: Timings,
    *,
    size: dict[str, Any],
    target: float,
    comparison: Comparison,
    info: dict[str, Any] | None = None,
) -> BenchResult:
    """A :class:`BenchResult` comparing the medians of ``timings`` against ``target``."""
    candidate = statistics.median(timings.candidate)
    baseline = statistics.median(timings.baseline)
    if comparison == "at_most":
        value, label = candidate / baseline, "candidate/baseline"
    else:
        value, label = baseline / candidate, "speed-up baseline/candidate"
    return BenchResult(
        name=name,
        description=description,
        size=size,
        repeats=len(timings.candidate),
        target=target,
        comparison=comparison,
        value=value,
        value_label=label,
        candidate_s=timings.candidate,
        baseline_s=timings.baseline,
        info=info or {},
    )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
