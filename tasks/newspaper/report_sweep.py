"""What the run history keeps about an order's reports (its folder, the status they reflect, when they were
fetched) and which recorded orders a sweep of the reports looks at again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from connectors.newspaper import OrderStatus
from fileio.newspaper.order_input import OrderKind
from history.jobs import JobSnapshot
from history.recorder import RunRecorder
from tasks.newspaper.submissions import API

ORDER_JOB = "order"
# Keys of an order job's data.
OUTPUT_DIR = "output_dir"
REPORTS_STATUS = "reports_status"
REPORTS_FETCHED_AT = "reports_fetched_at"
STATUS_HISTORY = "status_history"
ORDERS_FOLDER = "newspaper-orders"


def status_mark(status: OrderStatus) -> dict[str, str | None]:
    """A status as the history keeps it: ``statusValue`` and ``statusDate`` (ISO 8601)."""
    value = str(status.status_value) if status.status_value is not None else None
    date = status.status_date.isoformat() if status.status_date else None
    return {"statusValue": value, "statusDate": date}


def with_status(
    history: Sequence[Mapping[str, Any]], status: OrderStatus, *, now: datetime | None = None
) -> list[dict[str, Any]]:
    """``history`` with ``status`` appended when it differs (value or statusDate) from the last entry."""
    entries = [dict(entry) for entry in history]
    mark = status_mark(status)
    if entries and (entries[-1].get("statusValue"), entries[-1].get("statusDate")) == tuple(mark.values()):
        return entries
    recorded_at = (now or datetime.now(UTC)).isoformat()
    return [*entries, {**mark, "recordedAt": recorded_at}]


def folder_data(folder: Path) -> dict[str, str]:
    """The job data naming the order's output folder (absolute, so a run elsewhere finds it)."""
    return {OUTPUT_DIR: str(Path(folder).resolve())}


def reports_data(status: OrderStatus, *, now: datetime | None = None) -> dict[str, Any]:
    """The job data saying the order's reports were fetched now, at ``status``."""
    return {REPORTS_STATUS: status_mark(status), REPORTS_FETCHED_AT: (now or datetime.now(UTC)).isoformat()}


def reports_current(data: Mapping[str, Any], status: OrderStatus) -> bool:
    """Whether the reports recorded in an order job's ``data`` were fetched at ``status`` (same value and
    statusDate); False when they were never fetched."""
    return data.get(REPORTS_STATUS) == status_mark(status)


def order_folder(data_dir: Path, order_id: int, job: JobSnapshot | None) -> Path:
    """Where an order's files are: the folder its order run recorded on its ``job``, else
    ``<data dir>/newspaper-orders/<order id>``."""
    recorded = job.data.get(OUTPUT_DIR) if job is not None else None
    return Path(recorded) if recorded else data_dir / ORDERS_FOLDER / str(order_id)


def recorded_kind(job: JobSnapshot) -> OrderKind | None:
    """Standard or gratis, as the order run recorded it; None when it did not."""
    kind = job.data.get("order_kind")
    if kind == "standard":
        return "standard"
    if kind == "gratis":
        return "gratis"
    return None


async def recorded_orders(recorder: RunRecorder, *, since: datetime) -> list[JobSnapshot]:
    """The newspaper orders recorded since ``since`` that the service holds (a numeric order id, not the
    marker of a submission whose answer never came), oldest first."""
    jobs = await recorder.jobs_since(api=API, kind=ORDER_JOB, since=since)
    return [job for job in jobs if job.remote_id.isdigit()]


async def recorded_order(recorder: RunRecorder, order_id: int) -> JobSnapshot | None:
    """The history's job of order ``order_id``, or None when no run of ours submitted it."""
    return await recorder.job_with_remote_id(api=API, kind=ORDER_JOB, remote_id=str(order_id))
