"""The history's trends by month on SQLite and PostgreSQL: months in Swiss time, address quality from the run
summaries (a run without a figure leaves that share's base instead of counting zero), work per API, every
month present, and figures summed by the database instead of loading runs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import event
from sqlalchemy.orm import Session, sessionmaker

from history import RemoteJob, Run
from history.trends import (
    AddressMonth,
    ApiMonth,
    Period,
    address_trends,
    api_trends,
    first_run_day,
    repeated_runs,
    report_months,
)

ZURICH = ZoneInfo("Europe/Zurich")
ADDRESS_FLOWS = {"address-batch", "address-query", "address-validation"}
FLOW_APIS = {
    "address-batch": "address-service",
    "address-query": "address-service",
    "newspaper-order": "newspaper",
    "address-validation": "commerce",
}
FIRST_QUARTER = Period.of_days(date(2026, 1, 1), date(2026, 3, 31), ZURICH)

Factory = sessionmaker[Session]


def _run(
    session: Session, flow: str, started: datetime, summary: dict[str, Any] | None, state: str = "COMPLETED"
) -> Run:
    run = Run(flow=flow, state=state, started_at=started, summary=summary)
    session.add(run)
    session.flush()
    return run


def _job(session: Session, run: Run, api: str, created: datetime, status: str = "SUBMITTED") -> None:
    number = session.query(RemoteJob).count()
    session.add(
        RemoteJob(
            run_id=run.id, api=api, kind="batch", remote_id=f"r-{number}", status=status, created_at=created
        )
    )


def _at(month: int, day: int, hour: int = 12, minute: int = 0) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=UTC)


@pytest.fixture
def filled(history_factory: Factory) -> Factory:
    """January: a batch with moves and a query (no corrected rows recorded), a failed and a running batch;
    February: nothing; March: a batch with corrected rows, a validation, a newspaper order."""
    with history_factory.begin() as session:
        batch = _run(
            session,
            "address-batch",
            _at(1, 10),
            {"result_rows": 100, "moves": 5, "qstat": {"1": 80, "51": 10, "4": 4, "26": 1, "27": 2, "K": 3}},
        )
        _job(session, batch, "address-service", _at(1, 10, 12, 1))
        _job(session, batch, "address-service", _at(1, 10, 12, 2))
        query = _run(session, "address-query", _at(1, 20), {"result_rows": 50, "qstat": {"51": 5, "1": 45}})
        _run(session, "address-batch", _at(1, 21), {"accepted_rows": 7}, state="FAILED")
        running = _run(session, "address-batch", _at(1, 22), None, state="RUNNING")
        _job(session, running, "address-service", _at(1, 22), status="NOT_SENT")
        _job(session, query, "address-service", _at(1, 20))
        _run(
            session,
            "address-batch",
            _at(3, 3),
            {"result_rows": 200, "moves": 0, "qstat": {"1": 190, "51": 10}, "corrected_rows": 30},
        )
        _run(session, "address-validation", _at(3, 4), {"accepted_rows": 12, "validated": 12})
        order = _run(session, "newspaper-order", _at(3, 5), {"order_id": 7})
        _job(session, order, "newspaper", _at(3, 5))
        _run(session, "cleanup", _at(3, 6), {"deleted": []})
    return history_factory


def test_months_run_from_midnight_to_midnight_in_swiss_time() -> None:
    months = report_months(date(2025, 12, 15), date(2026, 3, 2), ZURICH)
    assert [month.label for month in months] == ["2025-12", "2026-01", "2026-02", "2026-03"]
    assert months[1].start == datetime(2025, 12, 31, 23, 0, tzinfo=UTC)  # CET: UTC+1
    assert months[3].start == datetime(2026, 2, 28, 23, 0, tzinfo=UTC)
    assert months[3].end == datetime(2026, 3, 31, 22, 0, tzinfo=UTC)  # CEST from 29 March: UTC+2
    assert all(a.end == b.start for a, b in zip(months, months[1:], strict=False))
    period = Period.of_days(date(2026, 1, 15), date(2026, 1, 15), ZURICH)
    assert [m.label for m in period.months] == ["2026-01"]
    assert (period.start, period.end) == (
        datetime(2026, 1, 14, 23, tzinfo=UTC),
        datetime(2026, 1, 15, 23, tzinfo=UTC),
    )
    with pytest.raises(ValueError, match="before the first"):
        Period.of_days(date(2026, 2, 1), date(2026, 1, 31), ZURICH)


def test_address_quality_by_month_with_empty_months(filled: Factory) -> None:
    with filled() as session:
        months = address_trends(session, FIRST_QUARTER, flows=ADDRESS_FLOWS)
    assert months == [
        AddressMonth(
            "2026-01",
            runs=2,
            result_rows=150,
            qstat_rows=150,
            unknown=15,
            moved=7,
            move_notifications=5,
            move_rows=100,  # the query recorded no move notifications: not in that share's base
            corrected=0,
            correction_rows=0,
            runs_without_corrections=2,  # unknown, not zero
        ),
        AddressMonth("2026-02"),
        AddressMonth(
            "2026-03",
            runs=1,
            result_rows=200,
            qstat_rows=200,
            unknown=10,
            moved=0,
            move_notifications=0,
            move_rows=200,
            corrected=30,
            correction_rows=200,
            runs_without_corrections=0,
        ),
    ]


def test_one_flow_narrows_the_address_figures(filled: Factory) -> None:
    with filled() as session:
        months = address_trends(session, FIRST_QUARTER, flows={"address-query"})
    assert [(m.month, m.runs, m.result_rows, m.unknown) for m in months] == [
        ("2026-01", 1, 50, 5),
        ("2026-02", 0, 0, 0),
        ("2026-03", 0, 0, 0),
    ]


def test_a_run_belongs_to_its_swiss_month_and_the_days_asked(history_factory: Factory) -> None:
    with history_factory.begin() as session:
        # 23:30 UTC on 31 January is 00:30 on 1 February in Zurich.
        _run(
            session,
            "address-query",
            datetime(2026, 1, 31, 23, 30, tzinfo=UTC),
            {"result_rows": 3, "qstat": {}},
        )
        _run(
            session,
            "address-query",
            datetime(2026, 1, 31, 22, 30, tzinfo=UTC),
            {"result_rows": 4, "qstat": {}},
        )
        _run(session, "address-query", datetime(2026, 2, 10, 12, tzinfo=UTC), {"result_rows": 5, "qstat": {}})
    with history_factory() as session:
        whole = address_trends(
            session, Period.of_days(date(2026, 1, 1), date(2026, 2, 28), ZURICH), flows=ADDRESS_FLOWS
        )
        from_the_first = address_trends(
            session, Period.of_days(date(2026, 2, 1), date(2026, 2, 9), ZURICH), flows=ADDRESS_FLOWS
        )
        first = first_run_day(session, ZURICH)
    assert [(m.month, m.result_rows) for m in whole] == [("2026-01", 4), ("2026-02", 8)]
    assert [(m.month, m.result_rows) for m in from_the_first] == [("2026-02", 3)]
    assert first == date(2026, 1, 31)


def test_work_per_api_every_month_and_api(filled: Factory) -> None:
    with filled() as session:
        months = api_trends(session, FIRST_QUARTER, flow_apis=FLOW_APIS)
    by_key = {(m.month, m.api): m for m in months}
    assert [(m.month, m.api) for m in months] == [
        (month, api)
        for month in ("2026-01", "2026-02", "2026-03")
        for api in ("address-service", "newspaper", "commerce")
    ]
    # January: three jobs (the one never sent left out); four runs, the rows of the completed ones.
    assert by_key["2026-01", "address-service"] == ApiMonth(
        "2026-01", "address-service", submissions=3, runs=4, rows=150
    )
    assert by_key["2026-02", "address-service"] == ApiMonth("2026-02", "address-service")
    assert by_key["2026-03", "address-service"] == ApiMonth("2026-03", "address-service", runs=1, rows=200)
    assert by_key["2026-03", "commerce"] == ApiMonth("2026-03", "commerce", runs=1, rows=12)  # accepted rows
    assert by_key["2026-03", "newspaper"] == ApiMonth("2026-03", "newspaper", submissions=1, runs=1, rows=0)


def test_an_api_only_a_job_names_gets_its_column(filled: Factory) -> None:
    with filled() as session:
        months = api_trends(session, FIRST_QUARTER, flow_apis={"newspaper-order": "newspaper"})
    assert {m.api for m in months} == {"newspaper", "address-service"}
    assert [m.api for m in months[:2]] == ["newspaper", "address-service"]


def test_an_empty_history_gives_every_month_empty(history_factory: Factory) -> None:
    with history_factory() as session:
        assert first_run_day(session, ZURICH) is None
        address = address_trends(session, FIRST_QUARTER, flows=ADDRESS_FLOWS)
        apis = api_trends(session, FIRST_QUARTER, flow_apis=FLOW_APIS)
    assert address == [AddressMonth(label) for label in ("2026-01", "2026-02", "2026-03")]
    assert len(apis) == 9 and all(m.submissions == m.runs == m.rows == 0 for m in apis)


@pytest.fixture
def statements(history_factory: Factory) -> Iterator[list[str]]:
    """The SQL the history's engine runs while the test reads."""
    seen: list[str] = []
    engine = history_factory.kw["bind"]

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    yield seen
    event.remove(engine, "before_cursor_execute", record)


def test_the_database_sums_and_answers_one_row_per_month(filled: Factory, statements: list[str]) -> None:
    with filled() as session:
        address_trends(session, FIRST_QUARTER, flows=ADDRESS_FLOWS)
        api_trends(session, FIRST_QUARTER, flow_apis=FLOW_APIS)
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 3  # address figures, remote jobs, runs per API
    for statement in selects:
        assert "GROUP BY" in statement
        # Never the whole summary or every column of a run: only the JSON paths the figures need.
        assert "runs.parameters" not in statement and "runs.error" not in statement
        assert "runs.summary" not in re.sub(
            r"JSON_EXTRACT\(runs\.summary,|runs\.summary (->>|#>>)", "", statement
        )


def test_work_taken_up_again_counts_once_in_the_month_it_was_first_completed(
    history_factory: Factory,
) -> None:
    """A batch completed in January, resumed in February and run again in March (same key: the same job's
    results read again), and a run without a key: the batch's rows count once, in January."""
    with history_factory.begin() as session:
        for month in (1, 2, 3):
            run = _run(session, "address-batch", _at(month, 10), {"result_rows": 100, "resumed": month > 1})
            run.idempotency_key = "address-batch:k1"
        _run(session, "address-batch", _at(2, 1), {"result_rows": 10}, state="FAILED").idempotency_key = "k2"
        _run(session, "address-batch", _at(2, 12), {"result_rows": 10}).idempotency_key = "k2"
        _run(session, "address-query", _at(3, 1), {"result_rows": 7})
    with history_factory() as session:
        months = address_trends(session, FIRST_QUARTER, flows=ADDRESS_FLOWS)
        resumed = repeated_runs(session, FIRST_QUARTER, flows=ADDRESS_FLOWS)
        february = repeated_runs(
            session, Period.of_days(date(2026, 2, 1), date(2026, 2, 28), ZURICH), flows=ADDRESS_FLOWS
        )
    assert [(month.runs, month.result_rows) for month in months] == [(1, 100), (1, 10), (1, 7)]
    assert resumed == 2 and february == 1
