"""Address validation and sorting purchase: addresses (.csv/.xlsx) + purchase parameters (JSON/YAML) →
POST once → wait for validation and sorting → output addresses (.csv/.xlsx/.json) and every document.
A re-run with the same input resumes the recorded purchase. A purchase answered with its id and errors was
taken: it is followed like any other, its errors named with its id in the log, the summary and summary.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
from prefect import flow, get_run_logger

from connectors.newspaper import ApiResult, PurchaseProgress
from connectors.newspaper.models import OutputAddresses
from core.swiss_time import swiss_today
from fileio.errors import InputError
from fileio.files import own_folder
from fileio.newspaper.outputs import records_frame, summary_markdown, write_json
from fileio.newspaper.purchase_input import (
    PurchaseInput,
    load_purchase_parameters,
    purchase_parameters_from_body,
    read_purchase_input,
)
from fileio.rejected_rows import write_rejected
from fileio.reports import write_csv, write_xlsx
from fileio.sandbox_marks import with_banner
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.newspaper_forms import PurchaseForm
from flows.parking import poll_policy
from flows.requests import AddressPurchaseRequest, OwnOutputOptions, PollingOptions
from flows.runs import RunSummary, begin_run, recorded_run
from history.identity import body_key, derive_key
from history.jobs import JobSnapshot
from history.models import JobState
from history.recorder import RunRecorder
from history.remote_jobs import RemoteReport
from runtime.run import Run
from tasks.job_waits import JobParked, recording_wait, waited_before
from tasks.newspaper.purchases import (
    OUTPUT_COLUMNS,
    PlacedPurchase,
    PurchaseDocuments,
    PurchaseJobData,
    describe,
    document_kinds,
    fetch_output_addresses,
    overall_percent,
    save_purchase_documents,
    submit_purchase,
    wait_for_purchase,
)
from tasks.newspaper.submissions import WarningLog, body_fingerprint, newspaper_context, submit_newspaper
from tasks.polling import PollPolicy
from tasks.retrying import run_step
from tasks.submission import SubmissionJob

FLOW_NAME = "address-purchase"
CLEAN_UP_FIELD = "addressCleanUp"
FORM = "purchase (form)"


@flow(
    on_failure=ON_FAILURE,
    name=FLOW_NAME,
    log_prints=False,
    flow_run_name=run_name(FLOW_NAME, "request.addresses_path"),
)
async def address_purchase(
    request: Annotated[
        AddressPurchaseRequest,
        form("Purchase", "The addresses, and the purchase parameters as a file or filled in."),
    ],
    polling: Annotated[
        PollingOptions, form("Waiting", "How long and how often to check the purchase's progress.")
    ] = PollingOptions(),  # noqa: B008 - an immutable part, the form's default
    output: Annotated[
        OwnOutputOptions, form("Output", "Where the results go on the worker.")
    ] = OwnOutputOptions(),  # noqa: B008
) -> dict[str, Any]:
    """Order the validation, correction and sorting of an address list.

    The addresses (.csv/.xlsx; §2.7 names id, firstName, lastName, street, houseNumber, zipCode, city,
    isoCode, or the header aliases of the address batch input) and the rest of the purchase (a JSON or YAML
    file, or filled in) are posted once; the run waits for validation and sorting and writes the output
    addresses and every document. The address clean-up (sent as ``addressCleanUp``, a name the spec does
    not show) is taken from the parameters when not given; only then is the non-reusable document fetched.
    A re-run with the same purchase (its canonical JSON body, with the service) resumes it.

    Args:
        request: the addresses, the purchase parameters, the clean-up and whether to post again.
        polling: how long and how often to check the progress.
        output: where output addresses, documents, rejected.csv and summary.md go (default: data
            dir/address-purchases/<address file name>).

    Returns:
        The run summary: purchase id, address counts by status code, documents and files.
    """
    run = begin_run(FLOW_NAME)
    settings = run.settings
    addresses_path = Path(request.addresses_path)
    parameters_path = None if request.parameters_path is None else Path(request.parameters_path)
    output_dir = output.folder_or(settings.data_dir / "address-purchases" / addresses_path.name)
    for path in (addresses_path, parameters_path):
        if path is not None and not path.is_file():
            raise InputError("file not found", path=path)
    form_body = _form_parameters(parameters_path, request.purchase)
    key, parameters = _run_identity(run, request, addresses_path, parameters_path, form_body, output_dir)
    async with recorded_run(run, idempotency_key=key, parameters=parameters) as (
        recorder,
        summary,
    ):
        checked, files, clean_up = await _read_input(run, recorder, request, form_body, output_dir)
        if request.idempotency_key is None:
            body = checked.purchase.to_body()
            await recorder.rekey(body_key(FLOW_NAME, endpoint=run.endpoint("newspaper"), body=body))
            key = recorder.idempotency_key or key
        summary.update(
            idempotency_key=key,
            input_rows=checked.input_rows,
            accepted_rows=len(checked.rows),
            rejected_rows=checked.rejected_rows,
        )
        try:
            bought = await _purchase(
                run,
                recorder,
                summary,
                checked,
                output_dir,
                clean_up=clean_up,
                resubmit=request.resubmit,
                policy=poll_policy(polling, settings),
            )
        except JobParked as parked:
            return await summary.park(parked)  # a follow-up run continues the wait
        await _publish(run, recorder, summary, checked, bought, output_dir, files)
        return dict(summary)


def _run_identity(
    run: Run,
    request: AddressPurchaseRequest,
    addresses_path: Path,
    parameters_path: Path | None,
    form_body: dict[str, Any] | None,
    output_dir: Path,
) -> tuple[str, dict[str, Any]]:
    """The key a run starts under (the files and the request's work, with the service) and the parameters
    it records; once the purchase is read, the run goes on under the key of its body."""
    key = request.idempotency_key or derive_key(
        FLOW_NAME,
        endpoint=run.endpoint("newspaper"),
        files=(addresses_path,) if parameters_path is None else (addresses_path, parameters_path),
        parameters=request.identity() if form_body is None else {**request.identity(), "purchase": form_body},
    )
    parameters = {
        "addresses_path": addresses_path,
        "parameters_path": parameters_path,
        "purchase": form_body,
        "output_dir": output_dir,
        "address_clean_up": request.address_clean_up,
        "resubmit": request.resubmit,
    }
    return key, parameters


async def _read_input(
    run: Run,
    recorder: RunRecorder,
    request: AddressPurchaseRequest,
    form_body: dict[str, Any] | None,
    output_dir: Path,
) -> tuple[PurchaseInput, list[Path], bool]:
    """Read and check the addresses and the purchase parameters (the clean-up as the request says);
    rejected rows into rejected.csv. Returns the purchase, the files written and whether it cleans up."""
    settings = run.settings
    parameters_path = None if request.parameters_path is None else Path(request.parameters_path)
    async with recorder.step("read purchase input"):
        purchase_parameters = _purchase_parameters(parameters_path, form_body)
        if request.address_clean_up is not None:
            purchase_parameters[CLEAN_UP_FIELD] = request.address_clean_up
        checked = read_purchase_input(
            Path(request.addresses_path),
            purchase_parameters,
            today=swiss_today(),
            limits=settings.table_limits,
        )
    files: list[Path] = []
    rejected_path = write_rejected(
        checked.rejected_report, output_dir / "rejected.csv", style=settings.csv_style
    )
    if rejected_path is not None:
        files.append(rejected_path)
        await recorder.document("rejected-rows", rejected_path)
        get_run_logger().warning("%d address rows rejected, see %s", checked.rejected_rows, rejected_path)
    return checked, files, bool(purchase_parameters.get(CLEAN_UP_FIELD, False))


async def _publish(
    run: Run,
    recorder: RunRecorder,
    summary: RunSummary,
    checked: PurchaseInput,
    bought: _Bought,
    output_dir: Path,
    files: list[Path],
) -> None:
    """Write the output addresses, count them by status code, and publish summary.md."""
    frame = await _write_outputs(run, recorder, bought, output_dir, files)
    by_status = frame["statusCode"].value_counts().to_dict() if len(frame) else {}
    facts: dict[str, Any] = {
        "purchase id": bought.purchase_id,
        "resumed": bought.resumed,
        "addresses sent": len(checked.rows),
        "rejected rows": checked.rejected_rows,
        "output addresses": len(frame),
    }
    facts.update({f"status {code}": count for code, count in sorted(by_status.items())})
    facts["documents"] = ", ".join(sorted(bought.documents.saved))
    not_available = bought.documents.not_available
    if not_available:
        facts["documents not available"] = "; ".join(f"{kind}: {why}" for kind, why in not_available.items())
    text = summary_markdown(
        f"Address purchase {bought.purchase_id}", facts, bought.warnings, errors=bought.errors
    )
    summary.update(
        output_addresses=len(frame),
        status_codes=by_status,
        documents={kind: str(path) for kind, path in bought.documents.saved.items()},
        documents_not_available=not_available,
        warnings=bought.warnings,
    )
    await summary.publish(text, output_dir, description="Purchase")


@dataclass
class _Bought:
    """A purchase as it came back: its job, output addresses, documents, the API's warnings and the errors
    of the answer that took it."""

    job: JobSnapshot
    purchase_id: int
    resumed: bool
    output: OutputAddresses
    documents: PurchaseDocuments
    warnings: list[str]
    errors: list[str]


async def _purchase(
    run: Run,
    recorder: RunRecorder,
    summary: RunSummary,
    checked: PurchaseInput,
    output_dir: Path,
    *,
    clean_up: bool,
    resubmit: bool,
    policy: PollPolicy,
) -> _Bought:
    """Post the purchase once (or resume it), wait for it, fetch its output addresses and documents.

    Raises:
        JobParked: the wait was parked for a follow-up run (the summary names the purchase already).
    """
    settings = run.settings
    sorting = checked.purchase.sorting_module is not None
    warnings = WarningLog(recorder)
    async with run.newspaper(recorder.request_log) as client:
        submission = await submit_newspaper(
            newspaper_context(recorder, resubmit=resubmit),
            warnings,
            SubmissionJob(
                "purchase",
                "purchase",
                hint=f"check whether a purchase titled {checked.purchase.title!r} exists",
                data=PurchaseJobData(addresses=len(checked.rows), clean_up=clean_up, sorting=sorting),
                fingerprint=body_fingerprint(checked.purchase.to_body()),
            ),
            lambda: submit_purchase(client, checked.purchase),
        )
        job = submission.job
        purchase_id = int(job.remote_id)
        summary.update(purchase_id=purchase_id, resumed=submission.resumed)
        if warnings.errors:
            summary.update(errors=warnings.errors)
        get_run_logger().info(
            "%s purchase %s", "resuming" if submission.resumed else "submitted", purchase_id
        )

        async def on_status(result: ApiResult[PurchaseProgress]) -> None:
            await warnings.add("progress", result.warnings)
            progress = result.value
            await recorder.update_job(
                job,
                status=JobState.RUNNING,
                report=RemoteReport(
                    remote_status=describe(progress), progress=overall_percent(progress, sorting=sorting)
                ),
            )

        async with recording_wait(recorder, job, what=f"purchase {purchase_id}"):
            await wait_for_purchase(
                client,
                PlacedPurchase(purchase_id, sorting),
                policy=policy,
                on_status=on_status,
                waited_s=waited_before(job),
            )
        await recorder.update_job(job, status=JobState.FINISHED, report=RemoteReport(remote_status="READY"))
        output = await run_step(fetch_output_addresses, client, purchase_id)
        await warnings.add("output addresses", output.warnings)
        documents = await run_step(
            save_purchase_documents,
            client,
            purchase_id,
            own_folder(output_dir / "documents"),
            document_kinds(clean_up, sorting=sorting),
            max_bytes=settings.download_max_bytes,
            max_ratio=settings.zip_max_ratio,
        )
        await warnings.add("documents", documents.warnings)
    return _Bought(
        job, purchase_id, submission.resumed, output.value, documents, warnings.lines, warnings.errors
    )


async def _write_outputs(
    run: Run, recorder: RunRecorder, bought: _Bought, output_dir: Path, files: list[Path]
) -> pd.DataFrame:
    """The output addresses as JSON, CSV and workbook, every file recorded; the job completed."""
    settings = run.settings
    rows = [address.model_dump(mode="json", by_alias=True) for address in bought.output.output_addresses]
    frame = records_frame(rows, OUTPUT_COLUMNS)
    files.append(
        write_json(output_dir, "output-addresses", bought.output, max_bytes=settings.download_max_bytes)
    )
    files.append(write_csv(frame, output_dir / "output-addresses.csv", style=settings.csv_style))
    sheets = with_banner({"output addresses": frame}, sandbox=recorder.outputs.sandbox)
    files.append(write_xlsx(output_dir / "output-addresses.xlsx", sheets))
    for kind, path in bought.documents.saved.items():
        await recorder.document(kind, path, job=bought.job)
    for path in files:
        await recorder.document(path.stem, path, job=bought.job)
    await recorder.update_job(bought.job, status=JobState.COMPLETED, finished=True)
    return frame


def _form_parameters(parameters_path: Path | None, purchase: PurchaseForm | None) -> dict[str, Any] | None:
    """The purchase parameters filled in the form, or None when they come from the file (exactly one)."""
    filled = purchase is not None and not purchase.is_empty()
    if parameters_path is not None and filled:
        raise InputError(
            "give the purchase parameters as a file or in the form, not both", path=parameters_path
        )
    if parameters_path is not None:
        return None
    if purchase is None or not filled:
        raise InputError("no purchase parameters: give a parameters file or fill in the purchase", path=FORM)
    return purchase_parameters_from_body(purchase.to_body(), source=FORM)


def _purchase_parameters(parameters_path: Path | None, form_body: dict[str, Any] | None) -> dict[str, Any]:
    """The purchase parameters: those filled in the form, else the file's."""
    if form_body is not None:
        return dict(form_body)
    if parameters_path is None:
        raise InputError("no purchase parameters: give a parameters file or fill in the purchase", path=FORM)
    return load_purchase_parameters(parameters_path)
