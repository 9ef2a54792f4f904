"""The statistics flow against the sandbox: rejected rows reported, one POST per file and key, intervals."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from flows.newspaper_statistics import InboxNotSent, StatisticsInboxResult, newspaper_statistics
from tasks.submission import SubmissionUncertain
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "statistics.csv"
STATISTICS = "/standard/statistics"


async def test_rejected_rows_reported_and_the_rest_sent_once(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    path = tmp_path / "stats.csv"
    path.write_text(
        EXAMPLE.read_text(encoding="utf-8")
        + "104711,A,TUESDAY_EDITION,1005,101,6280,Hochdorf,2025-13-01,CITY,3\n"
        + "104712,A,TUESDAY_EDITION,1006,101,6280,Hochdorf,2025-03-25,CITY,-3\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    summary = await call(newspaper_statistics, path, out)
    assert (summary.input_rows, summary.accepted_rows, summary.rejected_rows) == (6, 4, 2)
    assert summary.confirmation == "File uploaded successfully"
    rejected = read_output_csv(out / "rejected.csv", dtype=str)
    assert rejected.columns.tolist() == ["newspaperId", "line", "row", "problems", "values"]
    assert rejected.values.tolist() == [
        ["104711", "6", "5", "deliveryDate: month must be in 1..12", "deliveryDate: 2025-13-01"],
        # The reason is ours: never guarded, though it starts with the value.
        ["104712", "7", "6", "count: -3 is not a positive integer", "count: -3"],
    ]
    assert sandbox.transport.count(STATISTICS) == 1

    again = await call(newspaper_statistics, path, out)
    assert again.resumed is True
    assert again.confirmation == "File uploaded successfully"
    assert sandbox.transport.count(STATISTICS) == 1
    assert "uploaded by an earlier run" in (out / "summary.md").read_text()


async def test_lost_answer_refuses_until_resubmit(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    sandbox.inject(api="newspaper", endpoint="*statistics", method="POST", kind="drop")
    with pytest.raises(Exception, match="RemoteProtocolError|connection"):
        await call(newspaper_statistics, EXAMPLE, tmp_path / "out")
    with pytest.raises(SubmissionUncertain, match="--resubmit"):
        await call(newspaper_statistics, EXAMPLE, tmp_path / "out")
    assert sandbox.transport.count(STATISTICS) == 1
    summary = await call(newspaper_statistics, EXAMPLE, tmp_path / "out", resubmit=True)
    assert summary.resumed is False and sandbox.transport.count(STATISTICS) == 2


async def test_interval_not_due_sends_nothing(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    calendar = [dt.date(2025, 3, 25), dt.date(2025, 3, 28), dt.date(2025, 3, 31)]
    early = await call(
        newspaper_statistics, EXAMPLE, tmp_path / "out", issue_calendar=calendar, interval="AZ"
    )
    assert early.sent is False and early.due_on == "2025-03-31"
    assert "not due" in early.not_due and "2025-03-31" in early.not_due
    assert sum(sandbox.transport.calls.values()) == 0
    assert "not due" in (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")

    summary = await call(
        newspaper_statistics,
        EXAMPLE,
        tmp_path / "out",
        issue_calendar=[*calendar[:2], dt.date(2025, 4, 1)],
        interval="AZ",
        idempotency_key="q1-2025",
    )
    assert summary.closes == {"AZ": True, "AZA": False, "AZB": False}
    assert sandbox.transport.count(STATISTICS) == 1


async def test_service_rejection_of_statistics_is_recorded(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    path = tmp_path / "foreign.csv"
    path.write_text(EXAMPLE.read_text(encoding="utf-8").replace("104711", "109001"), encoding="utf-8")
    with pytest.raises(Exception, match="0200"):
        await call(newspaper_statistics, path, tmp_path / "out")
    assert sandbox.transport.count(STATISTICS) == 1


async def test_the_inbox_sends_each_file_once_and_keeps_what_is_not_due(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    inbox = flow_env / "inbox" / "newspaper-statistics" / "AZ"
    empty = await call(newspaper_statistics, interval="AZ")
    assert empty == StatisticsInboxResult(inbox=str(inbox), sent={}, not_due={}, failed={})
    assert empty.summary() == {"inbox": str(inbox), "sent": {}, "not_due": {}, "failed": {}}
    assert inbox.is_dir() and sum(sandbox.transport.calls.values()) == 0

    march = EXAMPLE.read_text(encoding="utf-8")
    (inbox / "q1.csv").write_text(march, encoding="utf-8")
    # A file whose latest submission is followed by another issue in its quarter is not due yet.
    (inbox / "q2-early.csv").write_text(march.replace("2025-03-28", "2025-05-02"), encoding="utf-8")
    (inbox / "calendar.csv").write_text("date\n2025-03-25\n2025-03-28\n2025-05-02\n2025-06-27\n")
    summary = await call(newspaper_statistics, interval="AZ")
    assert list(summary.sent) == ["q1.csv"] and list(summary.not_due) == ["q2-early.csv"]
    assert "2025-06-27" in summary.not_due["q2-early.csv"]
    assert sandbox.transport.count(STATISTICS) == 1
    assert (inbox / "sent" / "q1.csv").is_file() and not (inbox / "q1.csv").exists()
    assert (inbox / "q2-early.csv").is_file() and (inbox / "calendar.csv").is_file()
    assert (flow_env / "statistics" / "q1" / "summary.md").is_file()

    again = await call(newspaper_statistics, interval="AZ")
    assert again.sent == {} and list(again.not_due) == ["q2-early.csv"]
    assert sandbox.transport.count(STATISTICS) == 1


async def test_a_failing_inbox_file_stays_and_fails_the_run(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    inbox = tmp_path / "drop"
    inbox.mkdir()
    (inbox / "bad.csv").write_text("newspaperId,count\nx,1\n", encoding="utf-8")
    (inbox / "good.csv").write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(InboxNotSent, match="1 of 2 statistics files .* failed: bad.csv"):
        await call(newspaper_statistics, inbox, tmp_path / "out")
    assert (inbox / "bad.csv").is_file() and (inbox / "sent" / "good.csv").is_file()
    assert (tmp_path / "out" / "good" / "summary.md").is_file()
    assert sandbox.transport.count(STATISTICS) == 1
