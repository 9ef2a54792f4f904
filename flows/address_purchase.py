"""Address validation and sorting purchase: addresses (.csv/.xlsx) + purchase parameters (JSON/YAML) →
POST once → wait for validation and sorting → output addresses (.csv/.xlsx/.json) and every document.
A re-run with the same input resumes the recorded purchase. A purchase answered with its id and errors was
taken: it is followed like any other, its errors named with its id in the log, the summary and summary.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from prefect import flow, get_run_logger

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from connectors.newspaper import ApiResult, NewspaperClient, PurchaseProgress
from connectors.newspaper.models import OutputAddresses
from fileio.files import own_folder
from fileio.lazy import lazy_module
from fileio.newspaper.outputs import records_frame, summary_markdown, write_json
from fileio.newspaper.purchase_input import PurchaseInput
from fileio.reports import write_csv, write_xlsx
from fileio.sandbox_marks import with_banner
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.parking import poll_policy
from flows.purchase_input import purchase_start, read_input
from flows.requests import AddressPurchaseRequest, OwnOutputOptions, PollingOptions
from flows.results import RunParked, RunResult
from flows.runs import RunSummary, begin_run, recorded_run
from history.jobs import JobSnapshot
from history.models import JobState
from history.recorder import RunRecorder
from history.remote_jobs import RemoteReport
from runtime.run import Run
from tasks.job_waits import JobParked, recorded_wait, waited_before
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

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

FLOW_NAME = "address-purchase"


class AddressPurchaseResult(RunResult):
    """What a purchase run did: the rows read, accepted and rejected; the purchase's id; the output
    addresses and their count per status code; the documents saved (kind → file) and those the service does
    not have (kind → its words); the API's warnings and the errors of the answer that took the purchase
    (only when it named some)."""

    input_rows: int
    accepted_rows: int
    rejected_rows: int
    purchase_id: int
    output_addresses: int
    status_codes: dict[str, int]
    documents: dict[str, str]
    documents_not_available: dict[str, str]
    warnings: list[str]
    errors: list[str] | None = None


@dataclass(frozen=True)
class _Purchase:
    """A purchase as the run posts and follows it: the run and its recorder, the checked input, where its
    files go and whether it cleans the addresses up."""

    run: Run
    recorder: RunRecorder
    checked: PurchaseInput
    output_dir: Path
    clean_up: bool

    @property
    def sorting(self) -> bool:
        """Whether the purchase sorts the addresses too."""
        return self.checked.purchase.sorting_module is not None


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
) -> AddressPurchaseResult | RunParked:
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
        The run's result: purchase id, address counts by status code, documents and files; or, when the
        wait was parked, when its follow-up run comes.
    """
    run = begin_run(FLOW_NAME)
    start = purchase_start(run, request, output)
    async with recorded_run(run, idempotency_key=start.key, parameters=start.parameters) as (
        recorder,
        summary,
    ):
        checked, files, clean_up = await read_input(run, recorder, summary, request, start)
        purchase = _Purchase(run, recorder, checked, start.output_dir, clean_up)
        bought = await _purchase(
            purchase, summary, resubmit=request.resubmit, policy=poll_policy(polling, run.settings)
        )
        if isinstance(bought, JobParked):
            return await summary.park(bought)  # a follow-up run continues the wait
        await _publish(purchase, summary, bought, files)
        return summary.result(AddressPurchaseResult)


async def _publish(purchase: _Purchase, summary: RunSummary, bought: _Bought, files: list[Path]) -> None:
    """Write the output addresses, count them by status code, and publish summary.md."""
    checked = purchase.checked
    frame = await _write_outputs(purchase, bought, files)
    counted = frame["statusCode"].value_counts().to_dict() if len(frame) else {}
    by_status = {str(code): int(count) for code, count in counted.items()}
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
    await summary.publish(text, purchase.output_dir, description="Purchase")


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
    purchase: _Purchase, summary: RunSummary, *, resubmit: bool, policy: PollPolicy
) -> _Bought | JobParked:
    """Post the purchase once (or resume it), wait for it, fetch its output addresses and documents; or,
    when the wait was parked for a follow-up run, the parked job (the summary names the purchase already)."""
    warnings = WarningLog(purchase.recorder)
    async with purchase.run.newspaper(purchase.recorder.request_log) as client:
        job, resumed = await _submit(purchase, client, warnings, summary, resubmit=resubmit)
        purchase_id = int(job.remote_id)
        parked = await _wait(purchase, client, warnings, job, policy)
        if parked is not None:
            return parked
        await purchase.recorder.update_job(
            job, status=JobState.FINISHED, report=RemoteReport(remote_status="READY")
        )
        output = await run_step(fetch_output_addresses, client, purchase_id)
        await warnings.add("output addresses", output.warnings)
        settings = purchase.run.settings
        documents = await run_step(
            save_purchase_documents,
            client,
            purchase_id,
            own_folder(purchase.output_dir / "documents"),
            document_kinds(purchase.clean_up, sorting=purchase.sorting),
            max_bytes=settings.download_max_bytes,
            max_ratio=settings.zip_max_ratio,
        )
        await warnings.add("documents", documents.warnings)
    return _Bought(job, purchase_id, resumed, output.value, documents, warnings.lines, warnings.errors)


async def _submit(
    purchase: _Purchase,
    client: NewspaperClient,
    warnings: WarningLog,
    summary: RunSummary,
    *,
    resubmit: bool,
) -> tuple[JobSnapshot, bool]:
    """Post the purchase once, or find the recorded one; the summary names it. Its job, and whether it was
    resumed."""
    recorder, checked, clean_up, sorting = (
        purchase.recorder,
        purchase.checked,
        purchase.clean_up,
        purchase.sorting,
    )
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
    purchase_id = int(submission.job.remote_id)
    summary.update(purchase_id=purchase_id, resumed=submission.resumed)
    if warnings.errors:
        summary.update(errors=warnings.errors)
    get_run_logger().info("%s purchase %s", "resuming" if submission.resumed else "submitted", purchase_id)
    return submission.job, submission.resumed


async def _wait(
    purchase: _Purchase, client: NewspaperClient, warnings: WarningLog, job: JobSnapshot, policy: PollPolicy
) -> JobParked | None:
    """Wait for the purchase's validation (and sorting), recording its progress; the parked job when the
    wait was parked."""
    recorder, sorting, purchase_id = purchase.recorder, purchase.sorting, int(job.remote_id)

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

    ended = await recorded_wait(
        recorder,
        job,
        lambda: wait_for_purchase(
            client,
            PlacedPurchase(purchase_id, sorting),
            policy=policy,
            on_status=on_status,
            waited_s=waited_before(job),
        ),
        what=f"purchase {purchase_id}",
    )
    return ended if isinstance(ended, JobParked) else None


async def _write_outputs(purchase: _Purchase, bought: _Bought, files: list[Path]) -> pd.DataFrame:
    """The output addresses as JSON, CSV and workbook, every file recorded; the job completed."""
    settings, recorder, output_dir = purchase.run.settings, purchase.recorder, purchase.output_dir
    rows = [address.model_dump(mode="json", by_alias=True) for address in bought.output.output_addresses]
    frame = records_frame(rows, OUTPUT_COLUMNS)
    files.append(
        write_json(output_dir, "output-addresses", bought.output, max_bytes=settings.download_max_bytes)
    )
    files.append(write_csv(frame, output_dir / "output-addresses.csv", style=settings.csv_style))
    sheets = with_banner({"output addresses": frame}, sandbox=recorder.outputs.sandbox)
    files.append(write_xlsx(output_dir / "output-addresses.xlsx", sheets))
    await recorder.documents(
        [*bought.documents.saved.items(), *((path.stem, path) for path in files)], job=bought.job
    )
    await recorder.update_job(bought.job, status=JobState.COMPLETED, finished=True)
    return frame
