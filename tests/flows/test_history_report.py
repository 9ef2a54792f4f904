"""The history-report flow on a test history: the same report as ``postflows report``, recorded as a run with
its files, the markdown artifact of the tables, and by default a folder of its own under the data dir."""

from __future__ import annotations

import datetime as dt
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

import history
from core.swiss_time import swiss_today
from flows.history_report import history_report
from flows.requests import HistoryReportRequest, OwnOutputOptions
from runtime.settings import get_settings
from tests.flows.calls import call
from tests.flows.test_run_names import STAMP, name_of


@pytest.fixture
def recorded(flow_env: Path) -> str:
    """A batch in January and a query in March 2026, each with a remote job; the history's URL."""
    url = get_settings().effective_database_url
    with history.session_factory(url).begin() as session:
        for number, (flow, month, summary) in enumerate(
            [
                ("address-batch", 1, {"result_rows": 100, "moves": 3, "qstat": {"1": 90, "51": 10}}),
                ("address-query", 3, {"result_rows": 40, "qstat": {"51": 2, "27": 2}, "corrected_rows": 4}),
            ]
        ):
            started = datetime(2026, month, 10, 8, tzinfo=UTC)
            run = history.Run(flow=flow, state="COMPLETED", started_at=started, summary=summary)
            session.add(run)
            session.flush()
            session.add(
                history.RemoteJob(
                    run_id=run.id,
                    api="address-service",
                    kind="batch",
                    remote_id=f"b-{number}",
                    created_at=started,
                )
            )
    return url


async def test_the_flow_writes_and_records_the_report(recorded: str, tmp_path: Path) -> None:
    out = tmp_path / "report"
    summary = await call(history_report, since="2026-01-01", until="2026-03-31", output_dir=out)
    assert summary.months == ["2026-01", "2026-02", "2026-03"]
    assert (summary.address_runs, summary.api_runs, summary.submissions) == (2, 2, 2)
    assert summary.runs_without_corrected_rows == 1
    assert summary.report == [
        str((out / name).resolve()) for name in ("report.xlsx", "report.png", "report.md")
    ]
    assert all(Path(path).stat().st_size > 0 for path in summary.report)
    assert summary.files[-1] == str((out / "summary.md").resolve())
    text = (out / "summary.md").read_text(encoding="utf-8")
    assert text.startswith("# Run history report") and "## Address quality" in text
    assert "| 2026-01 | 1 | 100 | 10 | 10 |" in text

    with history.session_factory(recorded)() as session:
        (run,) = [run for run in history.list_runs(session, limit=10) if run.flow == "history-report"]
        run = history.get_run(session, run.id)
        assert run is not None and run.state == "COMPLETED"
        assert run.parameters["since"] == "2026-01-01" and run.parameters["flow"] == "all"
        assert {document.kind for document in run.documents} >= {"report.xlsx", "report.png", "report.md"}
        assert [step.name for step in run.steps if step.outcome == "ok"] == ["build report"]
        assert run.summary is not None and run.summary["months"] == summary.months

    async with get_client() as client:
        artifacts = await client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["history-report-summary"]))
        )
    latest = max(artifacts, key=lambda artifact: artifact.created)
    assert "## Submissions per API" in str(latest.data) and "report.png" in str(latest.data)


async def test_by_default_the_report_goes_to_a_folder_of_its_own(recorded: str, flow_env: Path) -> None:
    # ``flow`` is the request's own field (call's first parameter has that name too).
    summary = await history_report(request=HistoryReportRequest(flow="address-batch", whole_months=True))
    folder = flow_env / "reports" / f"history-{swiss_today().isoformat()}"
    assert summary.report[0] == str((folder / "report.xlsx").resolve())
    assert summary.months[0] == "2026-01" and summary.address_runs == 1
    assert "Address flows: address-batch" in (folder / "report.md").read_text(encoding="utf-8")


async def test_a_run_is_named_by_its_address_flow(recorded: str, tmp_path: Path) -> None:
    request = HistoryReportRequest(
        flow="address-query", since=dt.date(2026, 3, 1), until=dt.date(2026, 3, 31)
    )
    state = await history_report(
        request=request, output=OwnOutputOptions(output_dir=tmp_path), return_state=True
    )
    assert state.is_completed()
    assert re.fullmatch(rf"history-report-address-query-{STAMP}", await name_of(state))
    every = await history_report(output=OwnOutputOptions(output_dir=tmp_path / "all"), return_state=True)
    assert re.fullmatch(rf"history-report-{STAMP}", await name_of(every))
