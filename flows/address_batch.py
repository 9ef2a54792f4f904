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

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger

from connectors.address_service import AddressServiceClient, BatchJob, BatchStatus
from fileio.address_service.profiles import AlignmentProfile
from fileio.address_service.records import AddressReading, minimum_input_mode
from fileio.address_service.wire import WireFormat
from fileio.errors import InputError, ResultFileError, ResultUnreadable
from fileio.files import own_folder
from fileio.limits import TableLimits
from fileio.reports import CsvStyle
from fileio.writeback_policy import Policy
from flows.address_input import note_prepared_input
from flows.batch_work import FLOW_NAME, BatchWork, batch_plan
from flows.customer_files import customer_files
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.parking import poll_policy
from flows.requests import BATCH_POLLING, AddressBatchRequest, OutputOptions, PollingOptions
from flows.runs import FLOW_APIS, RunSummary, begin_run, recorded_run
from history import file_digest
from history.identity import derive_key
from history.jobs import BatchJobData, FileJobData, JobSnapshot
from history.models import JobState
from history.recorder import RunRecorder
from history.remote_jobs import RemoteReport
from runtime.run import Run
from runtime.wiring import (
    ConfigurationError,
    upload_refusal,
)
from tasks.address_service.batch import (
    API,
    DownloadLimits,
    create_output_file,
    download_output,
    named_by_content,
    start_batch,
    upload_input_file,
    wait_for_batch,
)
from tasks.address_service.batch_record import (
    batch_downloaded,
    batch_files,
    batch_is_resumable,
    batch_result_missing,
    recorded_download,
    recorded_extras,
)
from tasks.address_service.billing import Billing
from tasks.address_service.cleanup import created_file, delete_key_files
from tasks.address_service.ping import ping_service
from tasks.address_service.steps import (
    AddressResults,
    PreparedInput,
    ResultOptions,
    UploadLayout,
    build_results,
    prepare_input,
)
from tasks.job_waits import JobParked, recording_wait, waited_before
from tasks.polling import PollPolicy
from tasks.retrying import run_step
from tasks.submission import SubmissionJob, SubmitContext, submit_once

MAIN_OUTPUT = "output"


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
) -> dict[str, Any]:
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
        The run summary: run id, row counts, QSTAT counts and the files written.
    """
    run = begin_run(FLOW_NAME)
    settings = run.settings
    logger = get_run_logger()
    input_path, output_dir = Path(request.input_path), Path(output.output_dir)
    if not input_path.is_file():
        raise InputError("input file not found", path=input_path)
    work = BatchWork.of(request, settings)
    key = request.idempotency_key or derive_key(
        FLOW_NAME, endpoint=run.endpoint("address-service"), files=(input_path,), parameters=work.identity
    )
    parameters = {"input_path": input_path, "output_dir": output_dir, "resubmit": request.resubmit}
    async with recorded_run(run, idempotency_key=key, parameters={**parameters, **work.identity}) as (
        recorder,
        summary,
    ):
        prepared, upload = await _prepare(run, recorder, summary, work, input_path, output_dir)
        if request.idempotency_key is None:
            await recorder.rekey(work.key_of(run.endpoint("address-service"), upload))
            key = recorder.idempotency_key or key
        summary.update(idempotency_key=key)
        unmergeable = None
        if work.alignment is not None:
            summary.update(record_id_returned_in=work.alignment.result_record_id)
            unmergeable = upload_refusal(settings, work.alignment, work.batch_key, upload)
        if request.dry_run:
            return await _dry_run(recorder, summary, prepared, work, key, output_dir, problem=unmergeable)
        if unmergeable is not None:
            raise ConfigurationError(unmergeable)
        try:
            async with run.address_service(recorder.request_log) as client:
                results = await _run_batch(
                    run,
                    client,
                    recorder,
                    prepared,
                    output_dir,
                    key=work.batch_key,
                    billing=work.billing,
                    policy=poll_policy(polling, settings),
                    resubmit=request.resubmit,
                    limits=DownloadLimits(
                        settings.download_max_bytes, settings.zip_max_ratio, settings.table_limits
                    ),
                    csv_style=settings.csv_style,
                    profile=work.alignment,
                )
        except JobParked as parked:
            return await summary.park(parked)  # a follow-up run continues the wait
        await _report(run, recorder, summary, prepared, results, output_dir, request.apply)
        logger.info("address batch done: %d rows, results in %s", results.rows, output_dir)
        return dict(summary)


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
    for path in results.files:
        await recorder.document(path.stem, path)
    summary.update(
        result_rows=results.rows,
        moves=results.moves,
        qstat=results.qstat_counts(),
        **results.correction_counts(),
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
) -> dict[str, Any]:
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
    return dict(summary)


async def _run_batch(
    run: Run,
    client: AddressServiceClient,
    recorder: RunRecorder,
    prepared: PreparedInput,
    output_dir: Path,
    *,
    key: str,
    billing: tuple[str | None, str | None, str | None],
    policy: PollPolicy,
    resubmit: bool,
    limits: DownloadLimits,
    csv_style: CsvStyle,
    profile: AlignmentProfile | None,
) -> AddressResults:
    """Start (or resume) the job, wait for it, download; delete remote files whose job is over."""
    await ping_service(client)  # before anything is uploaded or resumed
    assert prepared.upload_path is not None
    upload_sha256 = file_digest(prepared.upload_path)[1]
    try:
        job = await _submit(
            client,
            recorder,
            prepared.upload_path,
            upload_sha256,
            key=key,
            billing=billing,
            resubmit=resubmit,
            outputs=profile.outputs if profile is not None else {},
        )
        if job.state is not JobState.COMPLETED:
            job = await _follow(client, recorder, job, output_dir, policy=policy, limits=limits)
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
        if refused and _still_refused(refused, limits.tables):
            raise ResultUnreadable.recorded(
                refused,
                note=f" (found by run {job.run_id}); {_kept(download, str(refused['setting']))}",
            )
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
                f"{error.problem}; {_kept(download, error.setting)}",
                path=error.path,
                setting=error.setting,
                limit=error.limit,
            ) from error
        if refused:
            await recorder.update_job(job, data=BatchJobData(unreadable=None))
        results.files.extend(extras.values())
        return results
    finally:
        left = (await delete_key_files(client, recorder)).still_on_service()
        if left is not None:
            get_run_logger().warning("%s", left)


def _still_refused(refused: Mapping[str, Any], limits: TableLimits) -> bool:
    """Whether a download found over a limit (as :meth:`ResultUnreadable.record` keeps it) is still over it:
    the limit it passed has not been raised since."""
    current = limits.value_of(str(refused.get("setting")))
    return current is not None and current <= int(refused.get("limit", 0))


def _kept(download: Path, setting: str) -> str:
    return (
        f"the download is kept as it came in {download}: raise {setting} and run the same command again "
        "to read it"
    )


RUNBATCH_HINT = (
    "ask the service's support whether a batch ran on the uploaded file recorded in `postflows history`; its "
    "files are deleted by `postflows cleanup --force` or by the --resubmit run"
)
"""What a user checks before ``--resubmit`` when a runbatch's outcome is unknown."""


async def _submit(
    client: AddressServiceClient,
    recorder: RunRecorder,
    upload_path: Path,
    upload_sha256: str,
    *,
    key: str,
    billing: tuple[str | None, str | None, str | None],
    resubmit: bool,
    outputs: Mapping[str, str],
) -> JobSnapshot:
    """The batch job for this work: the recorded one, or a new one (upload, createfile for the output and
    each extra output of the alignment, runbatch once). A recorded job whose result never arrived is
    replaced only with ``resubmit``."""
    created: list[BatchJobData] = []

    async def upload_and_create() -> dict[str, Any]:
        upload = await created_file(
            recorder, kind="upload-file", create=lambda: upload_input_file(client, upload_path)
        )
        output = await created_file(recorder, kind="output-file", create=lambda: create_output_file(client))
        extra: dict[str, str] = {}
        for name in outputs:
            made = await created_file(
                recorder,
                kind="output-file",
                create=lambda: create_output_file(client),
                data=FileJobData(output=name),
            )
            extra[name] = made.remote_id
        created.append(batch_files(upload.remote_id, output.remote_id, extra))
        return created[-1].changes()

    billing_reference, client_identifier, client_name = billing

    async def run_batch() -> BatchJob:
        [files] = created
        return await start_batch(
            client,
            key=key,
            input_token=str(files.input_token),
            output_token=str(files.output_token),
            billing=Billing(billing_reference, client_identifier, client_name),
            extra_items={outputs[name]: token for name, token in (files.extra_outputs or {}).items()},
        )

    submission = await submit_once(
        SubmitContext(recorder, API, resubmit=resubmit),
        SubmissionJob(
            "batch",
            "address batch",
            hint=RUNBATCH_HINT,
            fingerprint=upload_sha256,
            resumable=batch_is_resumable,
            replaceable=batch_result_missing,
        ),
        run_batch,
        lambda started: started.batch_token,
        prepare=upload_and_create,
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
    if submission.answer is not None:
        job = await recorder.update_job(job, data=BatchJobData(settlement_id=submission.answer.settlement_id))
    return job


async def _follow(
    client: AddressServiceClient,
    recorder: RunRecorder,
    job: JobSnapshot,
    output_dir: Path,
    *,
    policy: PollPolicy,
    limits: DownloadLimits,
) -> JobSnapshot:
    """Wait for the job and download its output (and the alignment's extra outputs); returns the job as
    completed.

    Every way out records where the job stands: COMPLETED with the download, FAILED or CANCELLED, WAITING
    when it may still run (time-out, interruption, status checks that kept failing), FINISHED when it ran
    but its download failed. A status or a download the service cannot give now (Status 301/302 included)
    never ends the job: the same command asks again.
    """
    logger = get_run_logger()

    async def on_status(status: BatchStatus) -> None:
        await recorder.update_job(
            job,
            status=JobState.RUNNING,
            report=RemoteReport(
                remote_status=status.token_status.name,
                progress=status.progress,
                status_date=status.last_update_date_time,
            ),
        )

    async with recording_wait(recorder, job, what=f"batch job {job.remote_id}"):
        await wait_for_batch(
            client, job.remote_id, policy=policy, on_status=on_status, waited_s=waited_before(job)
        )
    await recorder.update_job(job, status=JobState.FINISHED)
    folder = own_folder(output_dir / "download")
    files = job.facts(BatchJobData)
    wanted = {MAIN_OUTPUT: (str(files.output_token), folder / "result.bin")}
    for name, token in (files.extra_outputs or {}).items():
        wanted[name] = (token, folder / f"{name}.bin")
    try:
        for name, (token, path) in wanted.items():
            batch_token = job.remote_id if name == MAIN_OUTPUT else None
            await run_step(
                download_output,
                client,
                token,
                path,
                max_bytes=limits.max_bytes,
                max_ratio=limits.zip_max_ratio,
                batch_token=batch_token,
            )
    except BaseException:
        logger.warning(
            "batch job %s finished but its download failed; the same command fetches it", job.remote_id
        )
        raise
    download = named_by_content(wanted.pop(MAIN_OUTPUT)[1])
    extras = {name: named_by_content(path) for name, (_, path) in wanted.items()}
    await recorder.document("download", download, job=job)
    for name, path in extras.items():
        await recorder.document(f"output:{name}", path, job=job)
    return await recorder.update_job(
        job,
        status=JobState.COMPLETED,
        finished=True,
        data=batch_downloaded(download, extras),
    )
