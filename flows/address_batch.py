"""The address batch alignment, end to end: upload → createfile → runbatch → poll → download → results.

runbatch (billed) goes through the one submit-once protocol: a re-run with the same work resumes the recorded
job and never starts a second one on its own. Every ending closes the job in the history. Remote files are
deleted when their job is over; a job that may still run (time-out, interruption, a download that kept
failing) keeps its files so a re-run picks it up, and a resumed or resubmitted run deletes the files its
predecessors left. A result over a limit on what is read (columns, line length, rows) fails the run and is
recorded with its job: the download is kept unread, and the same command fails at once with the same
refusal until that limit is raised.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from prefect import flow, get_run_logger

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from connectors.address_service import AddressServiceClient
from fileio.address_service.profiles import AlignmentProfile
from fileio.address_service.records import AddressReading, minimum_input_mode
from fileio.address_service.wire import WireFormat
from fileio.errors import InputError, ResultFileError, ResultUnreadable
from fileio.limits import TableLimits
from fileio.writeback_policy import Policy
from flows.address_input import note_prepared_input
from flows.address_results import AddressBatchPlan, AddressBatchResult
from flows.batch_steps import BatchOrder, NewBatchJob, follow_batch, kept_download, still_refused
from flows.batch_work import FLOW_NAME, BatchWork, batch_plan
from flows.customer_files import customer_files
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.parking import poll_policy
from flows.requests import BATCH_POLLING, AddressBatchRequest, OutputOptions, PollingOptions
from flows.results import RunParked
from flows.runs import FLOW_APIS, RunSummary, begin_run, recorded_run
from history.identity import derive_key
from history.jobs import BatchJobData, JobSnapshot
from history.models import JobState
from history.recorder import RunRecorder
from runtime.run import Run
from runtime.wiring import (
    ConfigurationError,
    upload_refusal,
)
from tasks.address_service.batch import (
    API,
    DownloadLimits,
)
from tasks.address_service.batch_record import (
    batch_is_resumable,
    batch_result_missing,
    recorded_download,
    recorded_extras,
)
from tasks.address_service.cleanup import delete_key_files
from tasks.address_service.ping import ping_service
from tasks.address_service.steps import (
    AddressResults,
    PreparedInput,
    ResultOptions,
    UploadLayout,
    build_results,
    prepare_input,
)
from tasks.job_waits import JobParked
from tasks.polling import PollPolicy
from tasks.submission import SubmissionJob, SubmitContext, submit_once

APIS = FLOW_APIS[FLOW_NAME]


@flow(
    on_failure=ON_FAILURE,
    name=FLOW_NAME,
    log_prints=False,
    flow_run_name=run_name(FLOW_NAME, "request.input_path"),
)
async def address_batch(
    request: Annotated[
        AddressBatchRequest,
        form("Address batch", "The address file, how to read it, the agreed alignment and the billing."),
    ],
    output: Annotated[OutputOptions, form("Output", "Where the results go on the worker.")],
    polling: Annotated[
        PollingOptions, form("Waiting", "How long and how often to check the batch job.")
    ] = BATCH_POLLING,
) -> AddressBatchResult | AddressBatchPlan | RunParked:
    """Align an address file with the address web service's batch alignment.

    Reads the input (.csv, .xlsx, .txt), rejects rows that fail the spec's minimum input or field lengths
    (rejected.csv), uploads the rest, runs the configured alignment, waits for it, downloads and decodes the
    output into results.csv and results.xlsx, and deletes both remote files whatever happens (a file the
    service does not delete with Status 0 is named in a warning and left to ``postflows cleanup``). A re-run
    with the same work (the file sent, with the service, user, alignment key and billing fields) resumes the
    recorded job instead of starting a second one. With a profile, the upload has exactly its columns and
    layout, and results are merged by its result id; a dry run writes the upload file and plan.json and
    sends nothing.

    Args:
        request: the address file, how to read it, the alignment profile and the billing.
        polling: how long and how often to check the job.
        output: where results, the rejected-rows report, the raw download and summary.md go.

    Returns:
        The run's result: row counts, QSTAT counts and the files written; a dry run's plan; or, when a
        deployment run's wait parks, the follow-up run that continues it.
    """
    run = begin_run(FLOW_NAME)
    settings = run.settings
    input_path, output_dir = Path(request.input_path), Path(output.output_dir)
    if not input_path.is_file():
        raise InputError("input file not found", path=input_path)
    work = BatchWork.of(request, settings)
    key = request.idempotency_key or _work_key(run, work, input_path)
    parameters = {"input_path": input_path, "output_dir": output_dir, "resubmit": request.resubmit}
    async with recorded_run(run, idempotency_key=key, parameters={**parameters, **work.identity}) as (
        recorder,
        summary,
    ):
        prepared, upload = await _prepare(run, recorder, summary, work, input_path, output_dir)
        key = await _key_of_upload(run, recorder, work, upload) or key
        summary.update(idempotency_key=key)
        unmergeable = None
        if work.alignment is not None:
            summary.update(record_id_returned_in=work.alignment.result_record_id)
            unmergeable = upload_refusal(settings, work.alignment, work.batch_key, upload)
        if request.dry_run:
            return await _dry_run(recorder, summary, prepared, work, key, output_dir, problem=unmergeable)
        if unmergeable is not None:
            raise ConfigurationError(unmergeable)
        return await _align(
            run, recorder, summary, prepared, work, output_dir, poll_policy(polling, settings)
        )


def _work_key(run: Run, work: BatchWork, input_path: Path) -> str:
    """The key the run starts under: the input file with the work's identity, on the service."""
    return derive_key(
        FLOW_NAME, endpoint=run.endpoint("address-service"), files=(input_path,), parameters=work.identity
    )


async def _key_of_upload(run: Run, recorder: RunRecorder, work: BatchWork, upload: Path) -> str | None:
    """The key of what is sent, once the upload is written, which the run holds from then on; None when the
    request names its own key."""
    if work.request.idempotency_key is not None:
        return None
    await recorder.rekey(work.key_of(run.endpoint("address-service"), upload))
    return recorder.idempotency_key


async def _align(
    run: Run,
    recorder: RunRecorder,
    summary: RunSummary,
    prepared: PreparedInput,
    work: BatchWork,
    output_dir: Path,
    policy: PollPolicy,
) -> AddressBatchResult | RunParked:
    """Run the batch job and report its results; a wait that parks ends the run PARKED."""
    async with run.address_service(recorder.request_log) as client:
        results = await _run_batch(run, client, recorder, prepared, work, output_dir, policy)
    if isinstance(results, JobParked):
        return await summary.park(results)  # a follow-up run continues the wait
    await _report(run, recorder, summary, prepared, results, output_dir, work.request.apply)
    get_run_logger().info("address batch done: %d rows, results in %s", results.rows, output_dir)
    return summary.result(AddressBatchResult)


async def _report(
    run: Run,
    recorder: RunRecorder,
    summary: RunSummary,
    prepared: PreparedInput,
    results: AddressResults,
    output_dir: Path,
    policy: Policy,
) -> None:
    """Record the result files, write the customer's files, count into the summary, publish summary.md."""
    await recorder.documents((path.stem, path) for path in results.files)
    summary.update(
        result_rows=results.rows,
        moves=results.moves,
        qstat=results.qstat_counts(),
        duplicates=results.duplicates,
        **results.correction_counts(rejected_rows=prepared.rejected_rows),
    )
    title = f"Address batch {prepared.records.source.name}"
    report = results.markdown(title, rejected_rows=prepared.rejected_rows)
    report += await customer_files(run, recorder, summary, prepared, results, output_dir, policy)
    await summary.publish(report, output_dir, description="QSTAT summary")


async def _prepare(
    run: Run, recorder: RunRecorder, summary: RunSummary, work: BatchWork, input_path: Path, output_dir: Path
) -> tuple[PreparedInput, Path]:
    """The "prepare input" step: read and check the rows, write the upload file as the profile (or the
    request) lays it out; fails when no row passed. Returns the input and the upload file."""
    settings, request = run.settings, work.request
    async with recorder.step("prepare input"):
        prepared = await prepare_input(
            input_path,
            output_dir,
            AddressReading(
                work.input_format,
                mode=minimum_input_mode("batch", work.batch_key),
                mapping=work.mapping,
                split_house_numbers=request.split_house_numbers,
                limits=settings.table_limits,
            ),
            upload=UploadLayout(
                WireFormat(
                    delimiter=request.upload_delimiter or "\t", encoding=request.upload_encoding or "cp1252"
                ),
                profile=work.alignment,
                profile_map=work.profile_map,
            ),
            csv_style=settings.csv_style,
        )
    await note_prepared_input(recorder, summary, prepared)
    if prepared.upload_path is None:
        raise InputError(f"no row passed the input checks; see {prepared.rejected_path}", path=input_path)
    return prepared, prepared.upload_path


async def _dry_run(
    recorder: RunRecorder,
    summary: RunSummary,
    prepared: PreparedInput,
    work: BatchWork,
    key: str,
    output_dir: Path,
    *,
    problem: str | None,
) -> AddressBatchPlan:
    """Write plan.json next to the upload file and end the run; nothing is sent."""
    logger = get_run_logger()
    if problem is not None:
        summary.update(problem=problem)
        logger.warning("%s", problem)
    plan = batch_plan(prepared, work.alignment, work.batch_key, key, output_dir, problem=problem)
    summary.update(dry_run=True, upload=str(prepared.upload_path), plan=str(plan))
    await recorder.document("plan", plan)
    await summary.publish(
        f"# Address batch {work.request.input_path.name}: dry run\n\nNothing was sent.",
        output_dir,
        description="Dry run",
    )
    logger.info("dry run: the upload file and plan are in %s; nothing was sent", output_dir)
    return summary.result(AddressBatchPlan)


async def _run_batch(
    run: Run,
    client: AddressServiceClient,
    recorder: RunRecorder,
    prepared: PreparedInput,
    work: BatchWork,
    output_dir: Path,
    policy: PollPolicy,
) -> AddressResults | JobParked:
    """Start (or resume) the job, wait for it, download; delete remote files whose job is over. A wait that
    parks returns the parked job."""
    settings = run.settings
    await ping_service(client)  # before anything is uploaded or resumed
    assert prepared.upload_path is not None
    order = BatchOrder.of(work, prepared.upload_path)
    limits = DownloadLimits(settings.download_max_bytes, settings.zip_max_ratio, settings.table_limits)
    try:
        job = await _submit(client, recorder, order)
        if job.state is not JobState.COMPLETED:
            followed = await follow_batch(client, recorder, job, output_dir, policy=policy, limits=limits)
            if isinstance(followed, JobParked):
                return followed
            job = followed
        return await _results(run, recorder, prepared, job, output_dir, limits=limits, profile=work.alignment)
    finally:
        left = (await delete_key_files(client, recorder)).still_on_service()
        if left is not None:
            get_run_logger().warning("%s", left)


async def _results(
    run: Run,
    recorder: RunRecorder,
    prepared: PreparedInput,
    job: JobSnapshot,
    output_dir: Path,
    *,
    limits: DownloadLimits,
    profile: AlignmentProfile | None,
) -> AddressResults:
    """Read the completed job's download (and the alignment's extra outputs) into the result files; a
    download found over a limit that has not been raised since is refused again at once."""
    csv_style = run.settings.csv_style
    download = _download_to_read(job, output_dir, limits.tables)
    refused = job.facts(BatchJobData).unreadable
    extras = recorded_extras(job)
    try:
        results = await build_results(
            prepared,
            download,
            output_dir,
            limits=limits,
            options=ResultOptions(
                csv_style=csv_style,
                profile=profile,
                correction_marks=run.settings.address_service.correction_marks,
                sandbox=recorder.outputs.sandbox,
            ),
            moves_file=extras.get(profile.moves) if profile and profile.moves else None,
        )
    except ResultUnreadable as error:
        # The job ended with its result downloaded (COMPLETED, so its files are deleted below); what
        # the download holds is kept as it is, and the same command says so at once until the limit
        # is raised.
        await recorder.update_job(job, data=BatchJobData(unreadable=error.record()))
        raise ResultUnreadable(
            f"{error.problem}; {kept_download(download, error.setting)}",
            path=error.path,
            setting=error.setting,
            limit=error.limit,
        ) from error
    if refused:
        await recorder.update_job(job, data=BatchJobData(unreadable=None))
    results.files.extend(extras.values())
    return results


def _download_to_read(job: JobSnapshot, output_dir: Path, limits: TableLimits) -> Path:
    """The completed job's download as it was recorded; a download found over a limit that has not been
    raised since is refused at once."""
    facts = job.facts(BatchJobData)
    download = recorded_download(job)
    if download is None:
        raise ResultFileError(
            f"batch job {job.remote_id} completed and its result was downloaded by run {job.run_id} to "
            f"{facts.download}, which is no longer there as it was (its remote files are "
            "deleted): put it back, or run the same command with --resubmit to run a new batch",
            path=str(facts.download or output_dir),
        )
    refused = facts.unreadable
    if refused and still_refused(refused, limits):
        raise ResultUnreadable.recorded(
            refused,
            note=f" (found by run {job.run_id}); {kept_download(download, str(refused['setting']))}",
        )
    return download


RUNBATCH_HINT = (
    "ask the service's support whether a batch ran on the uploaded file recorded in `postflows history`; its "
    "files are deleted by `postflows cleanup --force` or by the --resubmit run"
)
"""What a user checks before ``--resubmit`` when a runbatch's outcome is unknown."""


async def _submit(client: AddressServiceClient, recorder: RunRecorder, order: BatchOrder) -> JobSnapshot:
    """The batch job for this work: the recorded one, or a new one (upload, createfile for the output and
    each extra output of the alignment, runbatch once). A recorded job whose result never arrived is
    replaced only with ``resubmit``."""
    new_job = NewBatchJob(client, recorder, order)
    submission = await submit_once(
        SubmitContext(recorder, API, resubmit=order.resubmit),
        SubmissionJob(
            "batch",
            "address batch",
            hint=RUNBATCH_HINT,
            fingerprint=order.upload_sha256,
            resumable=batch_is_resumable,
            replaceable=batch_result_missing,
            answer_data=lambda started: BatchJobData(settlement_id=started.settlement_id),
        ),
        new_job.run_batch,
        lambda started: started.batch_token,
        prepare=new_job.upload_and_create,
    )
    logger = get_run_logger()
    job = submission.job
    if submission.resumed:
        logger.info("resuming recorded batch job %s (%s)", job.remote_id, job.remote_status or job.status)
        await recorder.abandon_stale_runs()
    elif submission.replaced is not None:
        earlier = submission.replaced
        logger.warning(
            "started batch job %s for this work, replacing batch job %s (%s, run %s)",
            job.remote_id,
            earlier.remote_id,
            earlier.status,
            earlier.run_id,
        )
    return job
