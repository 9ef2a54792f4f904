"""Trends over the run history, month by month: the quality of the address runs' results (unknown addresses,
moves, corrections, from the run summaries) and the work per API (remote jobs recorded, rows in summaries).

Every figure is summed by the database: a query selects the few summary values it needs (JSON paths, never
the whole summary or an ORM object), puts each run into its month with a ``CASE`` over the months' bounds
(computed here in the report's time zone, so SQLite and PostgreSQL agree) and groups by month, so a query
returns one row per month (and API) whatever the number of runs.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any

from sqlalchemy import ColumnElement, Select, String, case, func, literal, literal_column, select
from sqlalchemy.orm import Session

from history.models import JobState, RemoteJob, Run, RunState

UNKNOWN_QSTAT = ("51",)
"""QSTAT of an address the service does not know."""
MOVED_QSTAT = ("4", "26", "27")
"""QSTAT of a person who moved: relocation hit (new address given), international move, address unknown."""


@dataclass(frozen=True)
class Month:
    """One calendar month of the report in its time zone: its label and its bounds as UTC instants."""

    label: str
    start: datetime
    end: datetime


def report_months(first: date, last: date, zone: tzinfo) -> list[Month]:
    """Every month from ``first``'s to ``last``'s (both included), bounded at midnight in ``zone``."""
    months: list[Month] = []
    year, month = first.year, first.month
    while (year, month) <= (last.year, last.month):
        following = (year + month // 12, month % 12 + 1)
        months.append(
            Month(
                f"{year:04d}-{month:02d}",
                _midnight(date(year, month, 1), zone),
                _midnight(date(*following, 1), zone),
            )
        )
        year, month = following
    return months


def _midnight(day: date, zone: tzinfo) -> datetime:
    return datetime.combine(day, time(), tzinfo=zone).astimezone(UTC)


@dataclass(frozen=True)
class Period:
    """What a report covers: its months, and the instants runs are counted between (from the start of the
    first day asked to the end of the last; the first and last months may be partly outside)."""

    months: tuple[Month, ...]
    start: datetime
    end: datetime

    @classmethod
    def of_days(cls, first: date, last: date, zone: tzinfo) -> Period:
        """From midnight of ``first`` to the midnight after ``last`` in ``zone``."""
        if last < first:
            raise ValueError(f"the last day {last.isoformat()} comes before the first {first.isoformat()}")
        months = report_months(first, last, zone)
        return cls(tuple(months), _midnight(first, zone), _midnight(last + timedelta(days=1), zone))


def first_run_day(session: Session, zone: tzinfo) -> date | None:
    """The day (in ``zone``) the oldest recorded run started, or None for an empty history."""
    started = session.scalar(select(func.min(Run.started_at)))
    return None if started is None else started.astimezone(zone).date()


@dataclass(frozen=True)
class AddressMonth:
    """The completed address runs of one month that recorded their result rows, summed.

    Each share has its own base: the result rows of the runs that recorded the figure it divides (a run
    recording no QSTAT counts, no move notifications or no corrected rows leaves the share's base, never
    counting as zero).
    """

    month: str
    runs: int = 0
    result_rows: int = 0
    qstat_rows: int = 0
    """Result rows of the runs that recorded their QSTAT counts."""
    unknown: int = 0
    """Rows with QSTAT 51 (address unknown)."""
    moved: int = 0
    """Rows with QSTAT 4, 26 or 27 (moved)."""
    move_notifications: int = 0
    move_rows: int = 0
    """Result rows of the runs that recorded their move notifications."""
    corrected: int = 0
    correction_rows: int = 0
    """Result rows of the runs that recorded their corrected rows."""
    runs_without_corrections: int = 0
    """Runs that did not record their corrected rows (recorded before it was counted)."""


@dataclass(frozen=True)
class ApiMonth:
    """One API's work in one month: remote jobs recorded, runs of its flows and the rows they handled."""

    month: str
    api: str
    submissions: int = 0
    runs: int = 0
    rows: int = 0
    """Rows of its completed runs: their result rows, else their accepted input rows."""


def _number(*path: str) -> ColumnElement[Any]:
    """A whole number of the run summary at ``path`` (NULL when the summary has none)."""
    number: ColumnElement[Any] = Run.summary[path if len(path) > 1 else path[0]].as_integer()
    return number


def _month_index(column: Any, months: Sequence[Month]) -> ColumnElement[Any]:
    """The position of ``column``'s month among ``months`` (the instant must lie before the last's end)."""
    return case(*[(column < month.end, literal_column(str(index))) for index, month in enumerate(months)])


def _when(condition: ColumnElement[Any], value: Any) -> ColumnElement[Any]:
    return case((condition, value))


def _total(value: ColumnElement[Any]) -> ColumnElement[Any]:
    return func.coalesce(func.sum(value), 0)


def _completions(flows: Collection[str]) -> Select[Any]:
    """Every completed run of ``flows`` that recorded its result rows, with ``n``: 1 for the first
    completion of its work (its flow and idempotency key), 2 and more for the runs that took the same work up
    again (a resumed wait, the same file run again) and read the same results once more."""
    work = func.coalesce(Run.idempotency_key, func.cast(Run.id, String))
    order = func.row_number().over(partition_by=(Run.flow, work), order_by=(Run.started_at, Run.id))
    return select(Run.id, Run.started_at, order.label("n")).where(
        Run.flow.in_(sorted(flows)),
        Run.state == RunState.COMPLETED.value,
        _number("result_rows").is_not(None),
    )


def repeated_runs(session: Session, period: Period, *, flows: Collection[str]) -> int:
    """The completed runs of ``flows`` in ``period`` whose work an earlier run had completed already: left out
    of :func:`address_trends`, so each piece of work counts once however often it was resumed."""
    completions = _completions(flows).subquery()
    return int(
        session.scalar(
            select(func.count()).where(
                completions.c.n > 1,
                completions.c.started_at >= period.start,
                completions.c.started_at < period.end,
            )
        )
        or 0
    )


def address_trends(session: Session, period: Period, *, flows: Collection[str]) -> list[AddressMonth]:
    """The address runs of ``flows`` in ``period`` month by month (every month, empty ones with zeros): the
    completed runs whose summary holds ``result_rows``, with their QSTAT 51 and QSTAT 4/26/27 rows, move
    notifications (``moves``) and corrected rows (``corrected_rows``). A piece of work counts once, in the
    month of its first completion (:func:`repeated_runs` counts the runs left out)."""
    result_rows = _number("result_rows")
    completions = _completions(flows).subquery()
    first = select(completions.c.id).where(completions.c.n == 1)
    inner = (
        select(
            _month_index(Run.started_at, period.months).label("month"),
            result_rows.label("result_rows"),
            Run.summary["qstat"].as_string().label("qstat"),
            _qstat_sum(UNKNOWN_QSTAT).label("unknown"),
            _qstat_sum(MOVED_QSTAT).label("moved"),
            _number("moves").label("moves"),
            _number("corrected_rows").label("corrected"),
        )
        .where(
            Run.id.in_(first),
            Run.started_at >= period.start,
            Run.started_at < period.end,
        )
        .subquery()
    )
    rows = inner.c.result_rows
    statement = select(
        inner.c.month,
        func.count(),
        _total(rows),
        _total(_when(inner.c.qstat.is_not(None), rows)),
        _total(inner.c.unknown),
        _total(inner.c.moved),
        _total(inner.c.moves),
        _total(_when(inner.c.moves.is_not(None), rows)),
        _total(inner.c.corrected),
        _total(_when(inner.c.corrected.is_not(None), rows)),
        _total(_when(inner.c.corrected.is_(None), 1)),
    ).group_by(inner.c.month)
    found = {int(row[0]): [int(value) for value in row[1:]] for row in session.execute(statement)}
    return [AddressMonth(month.label, *found.get(index, ())) for index, month in enumerate(period.months)]


def _qstat_sum(codes: Sequence[str]) -> ColumnElement[Any]:
    """The rows of the run with any of the QSTAT ``codes`` (a code the run did not see counts 0)."""
    first, *others = [func.coalesce(_number("qstat", code), 0) for code in codes]
    total: ColumnElement[Any] = first
    for count in others:
        total = total + count
    return total


def api_trends(session: Session, period: Period, *, flow_apis: Mapping[str, str]) -> list[ApiMonth]:
    """The work of each API in ``period`` month by month: the remote jobs recorded with it (those certainly
    never sent left out), the runs of its flows (``flow_apis``: flow name → API) and the rows of the
    completed ones (``result_rows``, else ``accepted_rows``). Every month appears with every API of
    ``flow_apis`` (in the order first named there) and every other API a job was recorded with."""
    found: dict[tuple[int, str], dict[str, int]] = {}
    for index, api, submissions in session.execute(_submissions(period)):
        found.setdefault((int(index), str(api)), {})["submissions"] = int(submissions)
    if flow_apis:
        for index, api, runs, rows in session.execute(_runs_per_api(period, flow_apis)):
            found.setdefault((int(index), str(api)), {}).update(runs=int(runs), rows=int(rows))
    apis = list(dict.fromkeys(flow_apis.values()))
    apis += sorted({api for _, api in found} - set(apis))
    return [
        ApiMonth(month.label, api, **found.get((index, api), {}))
        for index, month in enumerate(period.months)
        for api in apis
    ]


def _submissions(period: Period) -> Select[Any]:
    inner = (
        select(_month_index(RemoteJob.created_at, period.months).label("month"), RemoteJob.api)
        .where(
            RemoteJob.created_at >= period.start,
            RemoteJob.created_at < period.end,
            RemoteJob.status.is_distinct_from(JobState.NOT_SENT.value),
        )
        .subquery()
    )
    return select(inner.c.month, inner.c.api, func.count()).group_by(inner.c.month, inner.c.api)


def _runs_per_api(period: Period, flow_apis: Mapping[str, str]) -> Select[Any]:
    rows = func.coalesce(_number("result_rows"), _number("accepted_rows"))
    api = case(*[(Run.flow == flow, literal(name, String())) for flow, name in flow_apis.items()])
    inner = (
        select(
            _month_index(Run.started_at, period.months).label("month"),
            api.label("api"),
            _when(Run.state == RunState.COMPLETED.value, rows).label("rows"),
        )
        .where(Run.flow.in_(sorted(flow_apis)), Run.started_at >= period.start, Run.started_at < period.end)
        .subquery()
    )
    return select(inner.c.month, inner.c.api, func.count(), _total(inner.c.rows)).group_by(
        inner.c.month, inner.c.api
    )
