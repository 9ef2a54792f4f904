"""Clean-up: delete the address service's remote files that the run history records as not yet deleted.

Runs delete their own files when a job is over; this flow catches what is left behind (a killed process, a
job given up on), for the nightly schedule or by hand with ``postflows cleanup``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Annotated, Any

from prefect import flow, get_run_logger

import history
from flows.forms import form
from flows.naming import run_name
from flows.runs import recorded_run
from postflows.settings import get_settings
from postflows.wiring import address_service_client
from tasks.address_service.cleanup import delete_recorded_files

FLOW_NAME = "cleanup"
DEFAULT_AGE_HOURS = 7 * 24.0


def _age(parameters: Mapping[str, Any]) -> str:
    hours = parameters.get("older_than_hours", DEFAULT_AGE_HOURS)
    return f"older-than-{float(hours):g}h"


@flow(name=FLOW_NAME, log_prints=False, flow_run_name=run_name(FLOW_NAME, _age))
async def cleanup(
    older_than_hours: Annotated[
        float,
        form(
            "Older than (hours)",
            "Delete the recorded remote files created more than this many hours ago (168 = a week); 0 "
            "deletes every recorded file not deleted yet.",
            minimum=0,
        ),
    ] = DEFAULT_AGE_HOURS,
) -> dict[str, Any]:
    """Delete every recorded remote file created more than ``older_than_hours`` ago and not deleted yet.

    A batch job whose files go this way can no longer give a result and is recorded as DELETED, so the
    next run with its key starts a new job.

    Args:
        older_than_hours: only files older than this; 0 deletes every recorded file not deleted yet.

    Returns:
        The run summary: tokens deleted, already gone and not deleted (with the reason).
    """
    settings = get_settings()
    factory = history.session_factory(settings.effective_database_url)
    cutoff = history.utcnow() - timedelta(hours=older_than_hours)
    parameters = {"older_than_hours": older_than_hours}
    async with recorded_run(settings, flow=FLOW_NAME, idempotency_key=None, parameters=parameters) as (
        recorder,
        summary,
    ):
        async with address_service_client(settings, request_log=recorder.request_log) as client:
            report = await delete_recorded_files(client, factory, older_than=cutoff)
        for token, reason in report.failed.items():
            await recorder.message("warning", "deletefile", f"file {token} not deleted: {reason}")
        summary.update(deleted=report.deleted, already_gone=report.gone, not_deleted=report.failed)
        get_run_logger().info(
            "clean-up: %d deleted, %d already gone, %d not deleted",
            len(report.deleted),
            len(report.gone),
            len(report.failed),
        )
        return dict(summary)
