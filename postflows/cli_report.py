"""``postflows report``: the run history's trends by month, built in this process without Prefect (the
``history-report`` deployment builds the same report on a worker). :func:`register` adds it."""

from __future__ import annotations

from pathlib import Path

import typer

from flows.requests import HistoryReportRequest, OwnOutputOptions
from postflows.cli_common import EXIT_FAILED, EXIT_USAGE, fail, print_summary, say
from postflows.cli_requests import request_command


@request_command(HistoryReportRequest, OwnOutputOptions)
def report_command(request: HistoryReportRequest, output: OwnOutputOptions) -> None:
    """Trends over the recorded runs, month by month (Swiss time): the share of unknown addresses (QSTAT 51),
    of moves (QSTAT 4/26/27, move notifications) and of corrected rows among the address runs' result rows,
    and the remote jobs recorded and rows handled per API. Writes report.xlsx (a sheet per table, each with
    a native chart), report.png and report.md into --out; prints a summary as JSON."""
    from sqlalchemy.exc import SQLAlchemyError

    from core.locations import data_dir, history_url
    from core.swiss_time import swiss_today
    from deployments.catalog import flow_apis
    from fileio.files import keep_private
    from flows.history_trends import ReportRangeError, build_history_report
    from history.errors import HistoryError

    url = history_url()
    keep_private(data_dir())  # a report inside the data dir is its owner's alone, as every flow's files are
    out = output.folder_or(Path())  # --out is required on the command line
    try:
        report = build_history_report(url, out, request, flow_apis=flow_apis(), today=swiss_today())
    except ReportRangeError as error:
        fail("usage", error, EXIT_USAGE)
    except (HistoryError, SQLAlchemyError, OSError, ValueError) as error:
        fail("failed", error, EXIT_FAILED)
    months = report.period.months
    span = f"{months[0].label} to {months[-1].label}"
    if report.empty:
        say(f"no run recorded from {span} in {report.history}: every month of the report is empty")
    else:
        say(
            f"{len(months)} months, {span}: {report.address_runs} address runs, {report.api_runs} runs and "
            f"{report.submissions} remote jobs per API"
        )
    if report.runs_without_corrections:
        say(
            f"{report.runs_without_corrections} address runs recorded no corrected rows (run before they "
            "were counted): their corrections are unknown, not zero, and left out of Corrected %"
        )
    print_summary(report.summary())


def register(app: typer.Typer) -> None:
    """Add ``report`` to ``app``."""
    app.command("report")(report_command)
