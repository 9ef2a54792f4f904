"""The history report: trends over the recorded runs, month by month, as report.xlsx (native charts),
report.png and report.md. The figures come from the history's queries (:mod:`history.trends`), the files
from :mod:`fileio.trend_report`; this module decides which months, which tables and what they say.

Prefect-free: ``postflows report`` builds the report with :func:`build_history_report` in its own process,
and the ``history-report`` flow (:mod:`flows.history_report`) calls the same function on a worker.
Months are calendar months in Swiss time (Europe/Zurich), as the deployments' schedules are.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.swiss_time import SWISS_ZONE
from fileio.trend_report import TrendChart, TrendReport, TrendTable, write_trend_report
from flows.requests.reports import ADDRESS_FLOWS, HistoryReportRequest
from history.trends import (
    AddressMonth,
    ApiMonth,
    Period,
    address_trends,
    api_trends,
    first_run_day,
    repeated_runs,
)

if TYPE_CHECKING:
    import pandas as pd

TITLE = "Run history report"
API_NAMES = {"address-service": "address service", "newspaper": "newspaper", "commerce": "commerce"}
ADDRESS_TABLE = "Address quality"
SUBMISSIONS_TABLE = "Submissions per API"
ROWS_TABLE = "Rows per API"
MONTH = "Month"
SHARES = ("Unknown %", "Moved %", "Move notifications %", "Corrected %")
UNKNOWN_CORRECTIONS = (
    "Corrected % counts only the runs that recorded their corrected rows; a run recorded before they were "
    "counted is unknown, not zero: it is left out of the share and counted in 'Runs without corrected rows'."
)


class ReportRangeError(ValueError):
    """The days asked for hold no month (the whole months before a first day, say)."""


@dataclass(frozen=True)
class HistoryReport:
    """A report written: its files and what it counted."""

    files: TrendReport
    history: str
    """The history read, as the report names it (its URL without a password)."""
    period: Period
    address_runs: int
    api_runs: int
    submissions: int
    runs_without_corrections: int
    markdown: str
    result_rows: int = 0
    """The address runs' result rows, each piece of work counted once."""
    resumed_runs: int = 0
    """Completed address runs left out because an earlier run had completed their work."""

    @property
    def empty(self) -> bool:
        """Nothing was recorded in the report's days: every month is empty."""
        return self.address_runs == 0 and self.api_runs == 0 and self.submissions == 0

    def summary(self) -> dict[str, Any]:
        """What a run summary (and the command's JSON) says of the report."""
        return {
            "months": [month.label for month in self.period.months],
            "address_runs": self.address_runs,
            "api_runs": self.api_runs,
            "submissions": self.submissions,
            "runs_without_corrected_rows": self.runs_without_corrections,
            "result_rows": self.result_rows,
            "resumed_runs": self.resumed_runs,
            "report": [str(path.resolve()) for path in self.files.files],
        }


def report_period(request: HistoryReportRequest, *, first_recorded: dt.date | None, today: dt.date) -> Period:
    """The days and months ``request`` asks for: from ``since`` (else the first run recorded, else the last
    day) to ``until`` (else ``today``), the last day's month left out with ``whole_months``."""
    last = request.until or today
    if request.whole_months:
        last = last.replace(day=1) - dt.timedelta(days=1)
    first = request.since or min(first_recorded or last, last)
    if first > last:
        ended = " (the end of the last whole month)" if request.whole_months else ""
        raise ReportRangeError(
            f"the report would end on {last.isoformat()}{ended}, before its first day {first.isoformat()}: "
            "give an earlier first day or a later last one"
        )
    return Period.of_days(first, last, SWISS_ZONE)


def build_history_report(
    url: str,
    out_dir: Path,
    request: HistoryReportRequest,
    *,
    flow_apis: Mapping[str, str],
    today: dt.date,
) -> HistoryReport:
    """Read the trends of the history at ``url`` and write report.xlsx, report.png and report.md.

    Args:
        url: the run history's database URL.
        out_dir: where the files go (created when missing).
        request: which address flow, which days, whether the month in progress counts.
        flow_apis: which API each flow talks to (flow name → API), for the figures per API.
        today: the day (Swiss time) an open end stops at.

    Raises:
        ReportRangeError: the days asked for hold no month.
    """
    import history

    flows = [request.flow] if request.flow else list(ADDRESS_FLOWS)
    with history.session_factory(url)() as session:
        period = report_period(request, first_recorded=first_run_day(session, SWISS_ZONE), today=today)
        address = address_trends(session, period, flows=flows)
        resumed = repeated_runs(session, period, flows=flows)
        apis = api_trends(session, period, flow_apis=flow_apis)
    tables = [address_table(address), *api_tables(apis, [month.label for month in period.months])]
    name = _without_password(url)  # the report names its history, never the database's password
    files = write_trend_report(out_dir, TITLE, tables, _facts(name, period, flows, today))
    return HistoryReport(
        files=files,
        history=name,
        period=period,
        address_runs=sum(month.runs for month in address),
        api_runs=sum(month.runs for month in apis),
        submissions=sum(month.submissions for month in apis),
        runs_without_corrections=sum(month.runs_without_corrections for month in address),
        markdown=files.markdown.read_text(encoding="utf-8"),
        result_rows=sum(month.result_rows for month in address),
        resumed_runs=resumed,
    )


def _share(part: int, base: int) -> float | None:
    return round(100.0 * part / base, 2) if base else None


def address_table(months: Sequence[AddressMonth]) -> TrendTable:
    """The address runs' quality per month: counts, and each share of the result rows it can be told of."""
    import pandas as pd

    rows = [
        {
            MONTH: month.month,
            "Runs": month.runs,
            "Result rows": month.result_rows,
            "Unknown (QSTAT 51)": month.unknown,
            "Unknown %": _share(month.unknown, month.qstat_rows),
            "Moved (QSTAT 4/26/27)": month.moved,
            "Moved %": _share(month.moved, month.qstat_rows),
            "Move notifications": month.move_notifications,
            "Move notifications %": _share(month.move_notifications, month.move_rows),
            "Corrected rows": month.corrected,
            "Corrected %": _share(month.corrected, month.correction_rows),
            "Runs without corrected rows": month.runs_without_corrections,
        }
        for month in months
    ]
    frame = pd.DataFrame(rows, columns=_ADDRESS_COLUMNS).astype({share: "float64" for share in SHARES})
    return TrendTable(
        ADDRESS_TABLE,
        frame,
        TrendChart("line", "Unknown addresses, moves and corrections", SHARES, "% of result rows"),
        notes=(
            "Completed runs that recorded their result rows. Unknown % and Moved %: of the result rows of "
            "the runs that recorded QSTAT counts; Move notifications %: of those that recorded their move "
            "notifications (address-batch).",
            UNKNOWN_CORRECTIONS,
        ),
    )


_ADDRESS_COLUMNS = [
    MONTH, "Runs", "Result rows", "Unknown (QSTAT 51)", "Unknown %", "Moved (QSTAT 4/26/27)", "Moved %",
    "Move notifications", "Move notifications %", "Corrected rows", "Corrected %",
    "Runs without corrected rows",
]  # fmt: skip


def api_tables(months: Sequence[ApiMonth], labels: Sequence[str]) -> list[TrendTable]:
    """Submissions and rows per month (every one of ``labels``), a column per API."""
    return [
        TrendTable(
            SUBMISSIONS_TABLE,
            _per_api(months, labels, "submissions"),
            TrendChart("column", "Remote jobs recorded per API", _apis(months), "remote jobs"),
            notes=("Every remote job recorded (uploads, batches, orders …) but those certainly never sent.",),
        ),
        TrendTable(
            ROWS_TABLE,
            _per_api(months, labels, "rows"),
            TrendChart("column", "Rows handled per API", _apis(months), "rows"),
            notes=("Rows of the completed runs: their result rows, else their accepted input rows.",),
        ),
    ]


def _apis(months: Sequence[ApiMonth]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(API_NAMES.get(month.api, month.api) for month in months))


def _per_api(months: Sequence[ApiMonth], labels: Sequence[str], figure: str) -> pd.DataFrame:
    import pandas as pd

    apis = _apis(months)
    by_month: dict[str, dict[str, Any]] = {
        label: {MONTH: label, **dict.fromkeys(apis, 0)} for label in labels
    }
    for month in months:
        by_month[month.month][API_NAMES.get(month.api, month.api)] = getattr(month, figure)
    return pd.DataFrame(list(by_month.values()), columns=[MONTH, *apis])


def _facts(name: str, period: Period, flows: Sequence[str], today: dt.date) -> list[tuple[str, str]]:
    first, last = period.months[0].label, period.months[-1].label
    start = period.start.astimezone(SWISS_ZONE).date().isoformat()
    end = (period.end.astimezone(SWISS_ZONE).date() - dt.timedelta(days=1)).isoformat()
    return [
        ("History", name),
        ("Months", f"{first} to {last} ({len(period.months)}), Swiss time (Europe/Zurich)"),
        ("Runs counted", f"started from {start} to {end}, both included"),
        ("Address flows", ", ".join(flows)),
        ("Made on", today.isoformat()),
    ]


def _without_password(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
