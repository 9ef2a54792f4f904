"""The address batch alignment, end to end: upload → createfile → runbatch → poll → download → results, and
deletefile for both tokens in every ending. A re-run with the same input and key resumes the recorded job.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.artifacts import acreate_markdown_artifact

from connectors.address_service import AddressServiceClient, BatchStatus
from flows.runs import recorded_run
from postflows.settings import get_settings
from postflows.wiring import address_service_client
from tasks.address_service.batch import (
    API,
    PollPolicy,
    create_output_file,
    delete_remote_files,
    download_output,
    start_batch,
    upload_input_file,
    wait_for_batch,
)
from tasks.address_service.steps import (
    AddressResults,
    InputFormat,
    PreparedInput,
    build_results,
    prepare_input,
)
from tasks.address_service.wire import WireFormat
from tasks.errors import InputError
from tasks.idempotency import derive_key
from tasks.run_history import JobSnapshot, RunRecorder

FLOW_NAME = "address-batch"


@flow(name=FLOW_NAME, log_prints=False)
async def address_batch(
    input_path: Path,
    output_dir: Path,
    idempotency_key: str | None = None,
    billing_reference: str | None = None,
    client_identifier: str | None = None,
    client_name: str | None = None,
    column_mapping: dict[str, str] | None = None,
    input_delimiter: str | None = None,
    input_encoding: str | None = None,
    input_sheet: str | None = None,
    fixed_widths: dict[str, int] | None = None,
    upload_delimiter: str = "\t",
    upload_encoding: str = "cp1252",
    max_wait_s: float = 3600.0,
    min_poll_interval_s: float = 1.0,
    max_poll_interval_s: float = 60.0,
) -> dict[str, Any]:
    """Align an address file with the address web service's batch alignment.

    Reads the input (.csv, .xlsx, .txt), rejects rows that fail the spec's minimum input or field lengths
    (rejected.csv), uploads the rest, runs the configured alignment, waits for it, downloads and decodes the
    output into results.csv and results.xlsx, and deletes both remote files whatever happens.

    Args:
        input_path: the address file.
        output_dir: where results, the rejected-rows report and the raw download go.
        idempotency_key: identifies this work; defaults to a hash of the input and parameters. A re-run with
            the same key resumes the recorded job instead of starting a second one.
        billing_reference: bill the alignment to this client (runbatchwithclient).
        client_identifier: the client's identifier (with a billing reference).
        client_name: the client's name (with a billing reference).
        column_mapping: explicit header → field mapping (e.g. {"Kundenname": "Name"}).
        input_delimiter: field separator of the input (detected when empty).
        input_encoding: encoding of the input (UTF-8 with or without BOM, else Windows-1252, when empty).
        input_sheet: worksheet of an .xlsx input (the first when empty).
        fixed_widths: column name → width, in order, for a fixed-width .txt input.
        upload_delimiter: field separator of the file sent to the service (agreed alignment: tab).
        upload_encoding: encoding of the file sent to the service (agreed alignment: Windows-1252).
        max_wait_s: give up waiting for the job after this many seconds.
        min_poll_interval_s: shortest wait between status checks.
        max_poll_interval_s: longest wait between status checks.

    Returns:
        The run summary: run id, row counts, QSTAT counts and the files written.
    """
    settings = get_settings()
    logger = get_run_logger()
    input_path, output_dir = Path(input_path), Path(output_dir)
    if not input_path.is_file():
        raise InputError("input file not found", path=input_path)
    identifying = {
        "key": settings.address_service_batch_key,
        "billing_reference": billing_reference,
        "client_identifier": client_identifier,
        "client_name": client_name,
        "column_mapping": column_mapping,
        "upload_delimiter": upload_delimiter,
        "upload_encoding": upload_encoding,
    }
    input_format = InputFormat.of(
        delimiter=input_delimiter, encoding=input_encoding, sheet=input_sheet, fixed_widths=fixed_widths
    )
    key = idempotency_key or derive_key(FLOW_NAME, files=(input_path,), parameters=identifying)
    parameters = {
        "input_path": input_path,
        "output_dir": output_dir,
        "input_format": input_format,
        **identifying,
    }
    async with recorded_run(settings, flow=FLOW_NAME, idempotency_key=key, parameters=parameters) as (
        recorder,
        summary,
    ):
        with recorder.step("prepare input"):
            prepared = prepare_input(
                input_path,
                output_dir,
                mode="batch",
                mapping=column_mapping,
                input_format=input_format,
                wire_format=WireFormat(delimiter=upload_delimiter, encoding=upload_encoding),
            )
        summary.update(
            idempotency_key=key, accepted_rows=prepared.accepted, rejected_rows=prepared.rejected_rows
        )
        if prepared.rejected_path is not None:
            recorder.document("rejected-rows", prepared.rejected_path)
            logger.warning("%d input rows rejected, see %s", prepared.rejected_rows, prepared.rejected_path)
        if prepared.upload_path is None:
            raise InputError(f"no row passed the input checks; see {prepared.rejected_path}", path=input_path)

        async with address_service_client(settings, request_log=recorder.request_log) as client:
            results = await _run_batch(
                client,
                recorder,
                prepared,
                output_dir,
                key=settings.address_service_batch_key,
                billing=(billing_reference, client_identifier, client_name),
                policy=PollPolicy(max_wait_s, min_poll_interval_s, max_poll_interval_s),
            )
        for path in results.files:
            recorder.document(path.stem, path)
        summary.update(
            result_rows=results.rows,
            moves=results.moves,
            qstat=results.qstat_counts(),
            files=[str(p) for p in results.files],
        )
        report = results.markdown(f"Address batch {input_path.name}", rejected_rows=prepared.rejected_rows)
        (output_dir / "summary.md").write_text(report, encoding="utf-8")
        await acreate_markdown_artifact(report, key="address-batch-summary", description="QSTAT summary")
        logger.info("address batch done: %d rows, results in %s", results.rows, output_dir)
        return dict(summary)


async def _run_batch(
    client: AddressServiceClient,
    recorder: RunRecorder,
    prepared: PreparedInput,
    output_dir: Path,
    *,
    key: str,
    billing: tuple[str | None, str | None, str | None],
    policy: PollPolicy,
) -> AddressResults:
    """Start (or resume) the job, wait for it, download, and always delete both remote files."""
    job = recorder.find_job(api=API, kind="batch")
    download = output_dir / "download" / "output.bin"
    if job is not None and job.status == "DOWNLOADED" and Path(job.data.get("download", "")).is_file():
        get_run_logger().info(
            "batch job %s was completed and downloaded before; rebuilding results", job.remote_id
        )
        return build_results(prepared, Path(job.data["download"]), output_dir)
    tokens: list[str] = []
    if job is not None and job.status not in ("FAILED", "DOWNLOADED") and not job.deleted:
        tokens = [job.data["input_token"], job.data["output_token"]]
        get_run_logger().info("resuming recorded batch job %s (last status %s)", job.remote_id, job.status)
        recorder.abandon_stale_runs()
    else:
        job = None
    try:
        if job is None:
            assert prepared.upload_path is not None
            input_token = await upload_input_file(client, prepared.upload_path)
            tokens.append(input_token)
            recorder.save_job(api=API, kind="upload-file", remote_id=input_token, status="UPLOADED")
            output_token = await create_output_file(client)
            tokens.append(output_token)
            recorder.save_job(api=API, kind="output-file", remote_id=output_token, status="CREATED")
            billing_reference, client_identifier, client_name = billing
            started = await start_batch(
                client,
                key=key,
                input_token=input_token,
                output_token=output_token,
                billing_reference=billing_reference,
                client_identifier=client_identifier,
                client_name=client_name,
            )
            job = recorder.save_job(
                api=API,
                kind="batch",
                remote_id=started.batch_token,
                status="STARTED",
                data={
                    "input_token": input_token,
                    "output_token": output_token,
                    "settlement_id": started.settlement_id,
                },
            )

        batch = job

        def on_status(status: BatchStatus) -> None:
            recorder.update_job(
                batch,
                status=status.token_status.name,
                progress=status.progress,
                status_date=status.last_update_date_time,
            )

        try:
            await wait_for_batch(client, batch.remote_id, policy=policy, on_status=on_status)
        except Exception:
            recorder.update_job(batch, status="FAILED", finished=True)
            raise
        await download_output(client, batch.data["output_token"], download)
        recorder.update_job(
            batch, status="DOWNLOADED", finished=True, data={**batch.data, "download": str(download)}
        )
        recorder.document("download", download, job=batch)
        return build_results(prepared, download, output_dir)
    finally:
        if tokens:
            outcomes = await delete_remote_files(client, tokens)
            _record_deletions(recorder, outcomes)


def _record_deletions(recorder: RunRecorder, outcomes: dict[str, str]) -> None:
    for kind in ("upload-file", "output-file"):
        file_job: JobSnapshot | None = recorder.find_job(api=API, kind=kind)
        if file_job is None or file_job.remote_id not in outcomes:
            continue
        outcome = outcomes[file_job.remote_id]
        if outcome.startswith("failed"):
            recorder.message("warning", "deletefile", f"{kind} {file_job.remote_id}: {outcome}")
        else:
            recorder.update_job(file_job, status="DELETED", deleted=True)
