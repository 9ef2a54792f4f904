"""Clean-up: delete the address service's remote files that the run history records as not yet deleted.

Runs delete their own files when a job is over; this flow catches what is left behind (a killed process, a
job given up on), for the nightly schedule or by hand with ``postflows cleanup``. It keeps the files of a
batch job whose result is still owed, until the service's retention has passed or it is forced.
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


def _forced(parameters: Mapping[str, Any]) -> str | None:
    return "force" if parameters.get("force") else None


@flow(name=FLOW_NAME, log_prints=False, flow_run_name=run_name(FLOW_NAME, _age, _forced))
async def cleanup(
    older_than_hours: Annotated[
        float,
        form(
            "Older than (hours)",
            "Delete the recorded remote files created more than this many hours ago (168 = a week); 0 "
            "takes every recorded file not deleted yet, whatever its age.",
            minimum=0,
        ),
    ] = DEFAULT_AGE_HOURS,
    force: Annotated[
        bool,
        form(
            "Delete owed results too",
            "Also delete the files of batch jobs whose result has not been downloaded yet or that may still "
            "run; their results are lost.",
        ),
    ] = False,
) -> dict[str, Any]:
    """Delete every recorded remote file created more than ``older_than_hours`` ago and not deleted yet.

    The files of a batch job that may still give a result (it may still run, or it ran and its result has
    not been downloaded yet) are kept, with the reason in the summary, until the job is older than the
    service's retention of uploaded files (``POSTFLOWS_ADDRESS_SERVICE_FILE_RETENTION_DAYS``, 92 days), or
    ``force`` is given. A batch job whose files go is recorded as DELETED, so the next run with its key
    starts a new job.

    Args:
        older_than_hours: only files older than this; 0 takes every recorded file not deleted yet.
        force: delete the files of batch jobs that still owe a result too.

    Returns:
        The run summary: tokens deleted, already gone, not deleted (with the reason) and kept (with the
        job, its state and the reason).
    """
    settings = get_settings()
    now = history.utcnow()
    cutoff = now - timedelta(hours=older_than_hours)
    retention_cutoff = now - timedelta(days=settings.address_service.file_retention_days)
    parameters = {"older_than_hours": older_than_hours, "force": force}
    async with recorded_run(settings, flow=FLOW_NAME, idempotency_key=None, parameters=parameters) as (
        recorder,
        summary,
    ):
        async with address_service_client(settings, request_log=recorder.request_log) as client:
            report = await delete_recorded_files(
                client,
                settings.effective_database_url,
                older_than=cutoff,
                retention_cutoff=retention_cutoff,
                force=force,
            )
        logger = get_run_logger()
        for token, reason in report.failed.items():
            await recorder.message("warning", "deletefile", f"file {token} not deleted: {reason}")
        for token, kept in report.kept.items():
            logger.info("file %s kept: batch job %s is %s, %s", token, kept.job, kept.state, kept.reason)
        summary.update(
            deleted=report.deleted,
            already_gone=report.gone,
            not_deleted=report.failed,
            kept={token: kept.as_dict() for token, kept in report.kept.items()},
        )
        logger.info(
            "clean-up: %d deleted, %d already gone, %d not deleted, %d kept",
            len(report.deleted),
            len(report.gone),
            len(report.failed),
            len(report.kept),
        )
        return dict(summary)
