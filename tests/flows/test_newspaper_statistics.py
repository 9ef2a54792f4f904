"""The statistics flow against the sandbox: rejected rows reported, one POST per file and key, intervals."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest

from flows.newspaper_statistics import StatisticsNotDue, newspaper_statistics
from tasks.submission import SubmissionUncertain
from tests.flows.conftest import Sandbox

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "statistics.csv"
STATISTICS = "/standard/statistics"


async def test_rejected_rows_reported_and_the_rest_sent_once(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    path = tmp_path / "stats.csv"
    path.write_text(
        EXAMPLE.read_text(encoding="utf-8")
        + "104711,A,TUESDAY_EDITION,1005,101,6280,Hochdorf,2025-13-01,CITY,3\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    summary = await newspaper_statistics(path, out)
    assert (summary["input_rows"], summary["accepted_rows"], summary["rejected_rows"]) == (5, 4, 1)
    assert summary["confirmation"] == "File uploaded successfully"
    rejected = pd.read_csv(out / "rejected.csv")
    assert rejected[["row", "field"]].values.tolist() == [[5, "deliveryDate"]]
    assert sandbox.transport.count(STATISTICS) == 1

    again = await newspaper_statistics(path, out)
    assert again["resumed"] is True
    assert again["confirmation"] == "File uploaded successfully"
    assert sandbox.transport.count(STATISTICS) == 1
    assert "uploaded by an earlier run" in (out / "summary.md").read_text()


async def test_lost_answer_refuses_until_resubmit(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    sandbox.inject(api="newspaper", endpoint="*statistics", method="POST", kind="drop")
    with pytest.raises(Exception, match="RemoteProtocolError|connection"):
        await newspaper_statistics(EXAMPLE, tmp_path / "out")
    with pytest.raises(SubmissionUncertain, match="--resubmit"):
        await newspaper_statistics(EXAMPLE, tmp_path / "out")
    assert sandbox.transport.count(STATISTICS) == 1
    summary = await newspaper_statistics(EXAMPLE, tmp_path / "out", resubmit=True)
    assert summary["resumed"] is False and sandbox.transport.count(STATISTICS) == 2


async def test_interval_not_due_sends_nothing(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    calendar = [dt.date(2025, 3, 25), dt.date(2025, 3, 28), dt.date(2025, 3, 31)]
    with pytest.raises(StatisticsNotDue, match="2025-03-31"):
        await newspaper_statistics(EXAMPLE, tmp_path / "out", issue_calendar=calendar, interval="AZ")
    assert sum(sandbox.transport.calls.values()) == 0

    summary = await newspaper_statistics(
        EXAMPLE,
        tmp_path / "out",
        issue_calendar=[*calendar[:2], dt.date(2025, 4, 1)],
        interval="AZ",
        idempotency_key="q1-2025",
    )
    assert summary["closes"] == {"AZ": True, "AZA": False, "AZB": False}
    assert sandbox.transport.count(STATISTICS) == 1


async def test_service_rejection_of_statistics_is_recorded(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    path = tmp_path / "foreign.csv"
    path.write_text(EXAMPLE.read_text(encoding="utf-8").replace("104711", "109001"), encoding="utf-8")
    with pytest.raises(Exception, match="0200"):
        await newspaper_statistics(path, tmp_path / "out")
    assert sandbox.transport.count(STATISTICS) == 1
