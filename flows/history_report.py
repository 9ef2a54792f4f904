"""The history report as a flow: trends over the recorded runs by month (:mod:`flows.history_trends`) for
the monthly schedule or a run from the Prefect UI; ``postflows report`` builds the same report without
Prefect.

It reads the run history only (no API is called), records itself as a run like every flow, and publishes
report.md's tables as its markdown artifact.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Annotated, Any

from prefect import flow, get_run_logger

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from core.swiss_time import swiss_today
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.history_trends import build_history_report
from flows.naming import run_name
from flows.requests import HistoryReportRequest, OwnOutputOptions
from flows.results import RunResult
from flows.runs import begin_run, flow_apis, recorded_run

FLOW_NAME = "history-report"
REPORTS_FOLDER = "reports"


class HistoryReportResult(RunResult):
    """What the history report counted: its months (``YYYY-MM``), the address runs, the runs and the remote
    jobs recorded per API (``api_runs``, ``submissions``), the address runs that recorded no corrected rows,
    the address runs' result rows (each piece of work once) and the runs left out as ``resumed_runs`` (their
    work completed by an earlier run), and its files (report.xlsx, report.png, report.md)."""

    months: list[str]
    address_runs: int
    api_runs: int
    submissions: int
    runs_without_corrected_rows: int
    report: list[str]
    result_rows: int = 0
    resumed_runs: int = 0


def _flow(parameters: Mapping[str, Any]) -> str | None:
    request = parameters.get("request")
    if isinstance(request, HistoryReportRequest):
        return request.flow
    return HistoryReportRequest.model_validate(request or {}).flow


@flow(on_failure=ON_FAILURE, name=FLOW_NAME, log_prints=False, flow_run_name=run_name(FLOW_NAME, _flow))
async def history_report(
    request: Annotated[
        HistoryReportRequest, form("Report", "Which address runs and which days the report covers.")
    ] = HistoryReportRequest(),  # noqa: B008 - an immutable part, the form's default
    output: Annotated[
        OwnOutputOptions, form("Output", "Where report.xlsx, report.png and report.md go on the worker.")
    ] = OwnOutputOptions(),  # noqa: B008
) -> HistoryReportResult:
    """Report the run history's trends by month: address quality, and submissions and rows per API.

    The address runs' unknown addresses (QSTAT 51), moves (QSTAT 4/26/27 and move notifications) and
    corrected rows as shares of their result rows; per API the remote jobs recorded and the rows handled.
    Writes report.xlsx (a sheet per table, each with a native Excel chart), report.png and report.md into
    the output folder, by default ``<data dir>/reports/history-<day>``.

    Args:
        request: the address flow (default: every one), the first and last day (default: from the first
            run recorded to today, Swiss time), and whether only whole months count.
        output: where the files go.

    Returns:
        The run's result: the months, the runs and remote jobs counted, and the files written.
    """
    run = begin_run(FLOW_NAME)
    settings = run.settings
    today = swiss_today()
    output_dir = output.folder_or(settings.data_dir / REPORTS_FOLDER / f"history-{today.isoformat()}")
    parameters = {**request.model_dump(mode="json"), "output_dir": output_dir}
    async with recorded_run(run, idempotency_key=None, parameters=parameters) as (
        recorder,
        summary,
    ):
        async with recorder.step("build report"):
            report = await asyncio.to_thread(
                build_history_report,
                settings.effective_database_url,
                output_dir,
                request,
                flow_apis=flow_apis(),
                today=today,
            )
        await recorder.documents((path.name, path) for path in report.files.files)
        summary.update(report.summary())
        await summary.publish(report.markdown, output_dir, description="Run history report")
        get_run_logger().info(
            "history report: %d months, %d address runs, %d runs and %d remote jobs per API, in %s",
            len(report.period.months),
            report.address_runs,
            report.api_runs,
            report.submissions,
            output_dir,
        )
        return summary.result(HistoryReportResult)
