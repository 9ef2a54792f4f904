"""Clean-up: delete the address service's remote files that the run history records as not yet deleted.

Runs delete their own files when a job is over; this flow catches what is left behind (a killed process, a
job given up on, a /deletefile not answered with Status 0), for the nightly schedule or by hand with
``postflows cleanup``. It keeps the files of a batch job whose result is still owed, until the service's
retention has passed or it is forced.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Annotated, Any

from prefect import flow, get_run_logger

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
import history
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.requests import CleanupRequest
from flows.results import RunResult
from flows.runs import begin_run, recorded_run
from history.recorder import RunRecorder
from tasks.address_service.cleanup import CleanupReport, delete_recorded_files

FLOW_NAME = "cleanup"
WEEK_OLD = CleanupRequest()
"""The nightly clean-up's request: every recorded file older than a week, owed results kept."""


def _age(parameters: Mapping[str, Any]) -> str:
    hours = _request(parameters).older_than_hours
    return f"older-than-{hours:g}h"


def _forced(parameters: Mapping[str, Any]) -> str | None:
    return "force" if _request(parameters).force else None


def _request(parameters: Mapping[str, Any]) -> CleanupRequest:
    request = parameters.get("request")
    return request if isinstance(request, CleanupRequest) else CleanupRequest.model_validate(request or {})


class CleanupResult(RunResult):
    """What a clean-up did with each remote file: deleted, already gone (past the service's retention), not
    deleted (token: the service's answer; the next clean-up asks again), kept (token: the batch job, its
    state and the reason)."""

    deleted: list[str]
    already_gone: list[str]
    not_deleted: dict[str, str]
    kept: dict[str, dict[str, str]]


@flow(
    on_failure=ON_FAILURE, name=FLOW_NAME, log_prints=False, flow_run_name=run_name(FLOW_NAME, _age, _forced)
)
async def cleanup(
    request: Annotated[
        CleanupRequest, form("Clean-up", "Which recorded remote files go, and whether owed results go too.")
    ] = WEEK_OLD,
) -> CleanupResult:
    """Delete every recorded remote file older than ``request.older_than_hours`` and not deleted yet, and,
    whatever its age, every file an earlier /deletefile did not delete (only Status 0 deletes a file).

    The files of a batch job that may still give a result (it may still run, or it ran and its result has
    not been downloaded yet) are kept, with the reason in the summary, until the job is older than the
    service's retention of uploaded files (``POSTFLOWS_ADDRESS_SERVICE_FILE_RETENTION_DAYS``, 92 days), or
    ``request.force`` is given. A batch job whose files go is recorded as DELETED, so the next run with its
    key starts a new job.

    Args:
        request: how old a file must be (0 takes every recorded file not deleted yet) and whether the files
            of batch jobs that still owe a result go too.

    Returns:
        The run's result: tokens deleted, already gone (past the service's retention), not deleted and so
        still on the service (with the answer) and kept (with the job, its state and the reason).
    """
    older_than_hours, force = request.older_than_hours, request.force
    run = begin_run(FLOW_NAME)
    settings = run.settings
    now = history.utcnow()
    cutoff = now - timedelta(hours=older_than_hours)
    retention_cutoff = now - timedelta(days=settings.address_service.file_retention_days)
    parameters = {"older_than_hours": older_than_hours, "force": force}
    async with recorded_run(run, idempotency_key=None, parameters=parameters) as (
        recorder,
        summary,
    ):
        async with run.address_service(recorder.request_log) as client:
            report = await delete_recorded_files(
                client,
                settings.effective_database_url,
                older_than=cutoff,
                retention_cutoff=retention_cutoff,
                force=force,
            )
        await _tell(recorder, report)
        return summary.result(
            CleanupResult,
            deleted=report.deleted,
            already_gone=report.gone,
            not_deleted=report.failed,
            kept={token: kept.as_dict() for token, kept in report.kept.items()},
        )


async def _tell(recorder: RunRecorder, report: CleanupReport) -> None:
    """Say what the clean-up did: the files left on the service (recorded as a warning of the run), each
    file kept and why, and the counts."""
    logger = get_run_logger()
    if (line := report.still_on_service()) is not None:
        await recorder.message("warning", "deletefile", line)
        logger.warning("%s", line)
    for token, kept in report.kept.items():
        logger.info("file %s kept: batch job %s is %s, %s", token, kept.job, kept.state, kept.reason)
    counts = (len(report.deleted), len(report.gone), len(report.failed), len(report.kept))
    logger.info("clean-up: %d deleted, %d already gone, %d not deleted, %d kept", *counts)
