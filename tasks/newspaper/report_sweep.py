"""What the run history keeps about a newspaper order (:class:`OrderJobData`: its kind, folder, delivery
note, status history, the status its reports reflect and when they were fetched) and which recorded orders a
sweep of the reports looks at again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from connectors.newspaper import OrderStatus
from fileio.newspaper.order_input import OrderKind
from history.jobs import IsoDatetime, JobData, JobSnapshot
from history.recorder import RunRecorder
from tasks.newspaper.submissions import API

ORDER_JOB = "order"
ORDERS_FOLDER = "newspaper-orders"


class OrderJobData(JobData):
    """The facts of a newspaper order job; the order's identity (:func:`identity_of`) is kept beside them
    under its own keys."""

    order_kind: str | None = None
    """``standard`` or ``gratis``."""
    output_dir: str | None = None
    """The order's output folder (absolute, so a run elsewhere finds it)."""
    delivery_note: list[str] | None = None
    """The delivery note's files, once saved."""
    status_history: list[dict[str, Any]] | None = None
    """Every status seen (:func:`status_mark` with ``recordedAt``), oldest first."""
    reports_status: dict[str, str | None] | None = None
    """The status the saved reports reflect (:func:`status_mark`)."""
    reports_fetched_at: IsoDatetime | None = None


def order_facts(job: JobSnapshot) -> OrderJobData:
    """The facts recorded with an order job."""
    return job.facts(OrderJobData)


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


def submitted_data(kind: OrderKind, identity: Mapping[str, Any]) -> OrderJobData:
    """The job data of an order as it is submitted: its kind and identity (under the identity's keys)."""
    return OrderJobData(**{"order_kind": kind, **identity})


def folder_data(folder: Path) -> OrderJobData:
    """The job data naming the order's output folder (absolute, so a run elsewhere finds it)."""
    return OrderJobData(output_dir=str(Path(folder).resolve()))


def delivery_note_data(paths: Sequence[Path]) -> OrderJobData:
    """The job data naming the delivery note's files."""
    return OrderJobData(delivery_note=[str(path) for path in paths])


def status_history_data(history: Sequence[Mapping[str, Any]]) -> OrderJobData:
    """The job data holding every status seen."""
    return OrderJobData(status_history=[dict(entry) for entry in history])


def reports_data(
    status: OrderStatus,
    *,
    history: Sequence[Mapping[str, Any]] | None = None,
    now: datetime | None = None,
) -> OrderJobData:
    """The job data saying the order's reports were fetched now, at ``status`` (with every status seen,
    when ``history`` is given)."""
    fetched = OrderJobData(reports_status=status_mark(status), reports_fetched_at=now or datetime.now(UTC))
    if history is None:
        return fetched
    return OrderJobData(**fetched.changes(), status_history=[dict(entry) for entry in history])


def reports_current(data: Mapping[str, Any], status: OrderStatus) -> bool:
    """Whether the reports recorded in an order job's ``data`` were fetched at ``status`` (same value and
    statusDate); False when they were never fetched."""
    return OrderJobData.read(data).reports_status == status_mark(status)


def order_folder(data_dir: Path, order_id: int, job: JobSnapshot | None) -> Path:
    """Where an order's files are: the folder its order run recorded on its ``job``, else
    ``<data dir>/newspaper-orders/<order id>``."""
    recorded = order_facts(job).output_dir if job is not None else None
    return Path(recorded) if recorded else data_dir / ORDERS_FOLDER / str(order_id)


def recorded_kind(job: JobSnapshot) -> OrderKind | None:
    """Standard or gratis, as the order run recorded it; None when it did not."""
    kind = order_facts(job).order_kind
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
