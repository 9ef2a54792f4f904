"""Address validation and sorting purchase: addresses (.csv/.xlsx) + purchase parameters (JSON/YAML) →
POST once → wait for validation and sorting → output addresses (.csv/.xlsx/.json) and every document.
A re-run with the same input resumes the recorded purchase.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger

from connectors.newspaper import ApiResult, PurchaseProgress
from fileio.errors import InputError
from fileio.newspaper.outputs import records_frame, summary_markdown, write_json
from fileio.newspaper.purchase_input import load_purchase_parameters, read_purchase_input
from fileio.rejected_rows import write_rejected
from fileio.reports import write_csv, write_xlsx
from flows.forms import AS_GIVEN, Blank, YesNoOrAsGiven, form
from flows.naming import run_name
from flows.newspaper_forms import PurchaseForm
from flows.parking import park_after
from flows.runs import recorded_run
from history.identity import body_key, derive_key
from history.models import JobState
from postflows.settings import get_settings
from postflows.wiring import newspaper_client, newspaper_endpoint
from tasks.newspaper.purchases import (
    OUTPUT_COLUMNS,
    describe,
    document_kinds,
    fetch_output_addresses,
    overall_percent,
    save_purchase_documents,
    submit_purchase,
    wait_for_purchase,
)
from tasks.newspaper.submissions import WarningLog, body_fingerprint, submit_newspaper
from tasks.polling import DEFAULT_MAX_INTERVAL_S, PollPolicy
from tasks.retrying import run_step
from tasks.submission import JobParked, recording_wait, waited_before

FLOW_NAME = "address-purchase"
CLEAN_UP_FIELD = "addressCleanUp"
FORM = "purchase (form)"


@flow(name=FLOW_NAME, log_prints=False, flow_run_name=run_name(FLOW_NAME, "addresses_path"))
async def address_purchase(
    addresses_path: Annotated[
        Path,
        form(
            "Address file",
            "The addresses, a .csv or .xlsx file on the worker: id, firstName, lastName, street, "
            "houseNumber, zipCode, city, isoCode (or the address batch's header names).",
        ),
    ],
    parameters_path: Annotated[
        Blank[Path],
        form(
            "Purchase parameters file",
            "The rest of the purchase (§2.7) as a JSON or YAML file on the worker. Leave empty when you "
            "fill in the purchase below.",
            blank="",
        ),
    ] = None,
    output_dir: Annotated[
        Blank[Path],
        form(
            "Output folder",
            "Folder on the worker for the output addresses, the documents, rejected.csv and summary.md. "
            "Empty: <data dir>/address-purchases/<address file name>.",
            blank="",
        ),
    ] = None,
    address_clean_up: Annotated[
        YesNoOrAsGiven,
        form(
            "Address clean-up",
            "Order the address clean-up (and fetch the non-reusable addresses document): yes, no, or as the "
            "purchase parameters say.",
            blank=AS_GIVEN,
        ),
    ] = None,
    idempotency_key: Annotated[
        Blank[str],
        form(
            "Idempotency key",
            "Identifies the purchase. Empty: a hash of the purchase sent (the JSON body of addresses and "
            "parameters) and the service. A run with the same key resumes the recorded purchase.",
            blank="",
        ),
    ] = None,
    resubmit: Annotated[
        bool,
        form(
            "Send again",
            "Post although an earlier POST of this purchase may have reached the service (check first).",
        ),
    ] = False,
    max_wait_s: Annotated[
        float,
        form(
            "Longest wait (s)",
            "Give up waiting after this many seconds; a re-run resumes.",
            exclusiveMinimum=0,
        ),
    ] = 3600.0,
    min_poll_interval_s: Annotated[
        float, form("First check interval (s)", "First wait between progress checks.", exclusiveMinimum=0)
    ] = 2.0,
    max_poll_interval_s: Annotated[
        float, form("Longest check interval (s)", "Longest wait between progress checks.", exclusiveMinimum=0)
    ] = DEFAULT_MAX_INTERVAL_S,
    purchase: Annotated[
        Blank[PurchaseForm],
        form(
            "Purchase",
            "The purchase parameters themselves, when no parameters file is given: title, deposit date, "
            "franking licence, validation and sorting.",
            blank={},
        ),
    ] = None,
) -> dict[str, Any]:
    """Order the validation, correction and sorting of an address list.

    Args:
        addresses_path: the addresses (.csv/.xlsx; §2.7 names id, firstName, lastName, street, houseNumber,
            zipCode, city, isoCode, or the header aliases of the address batch input).
        parameters_path: the rest of the §2.7 purchase as JSON or YAML; or none, with ``purchase`` filled in.
        output_dir: where output addresses, documents, rejected.csv and summary.md go (default: data
            dir/address-purchases/<address file name>).
        address_clean_up: order the address clean-up (sent as ``addressCleanUp``, a name the spec does not
            show); taken from the parameters when not given. Only then is the non-reusable document fetched.
        idempotency_key: identifies the purchase; defaults to a hash of the purchase sent (its canonical
            JSON body) and the service's address and client id.
        resubmit: post even though an earlier POST of this purchase may have reached the service.
        max_wait_s: give up waiting after this many seconds (a re-run resumes).
        min_poll_interval_s: first wait between progress checks.
        max_poll_interval_s: longest wait between progress checks.
        purchase: the purchase parameters as an object with the spec's field names, instead of
            ``parameters_path``.

    Returns:
        The run summary: purchase id, address counts by status code, documents and files.
    """
    settings = get_settings()
    logger = get_run_logger()
    addresses_path = Path(addresses_path)
    parameters_path = None if parameters_path is None else Path(parameters_path)
    output_dir = (
        Path(output_dir)
        if output_dir is not None
        else settings.data_dir / "address-purchases" / addresses_path.name
    )
    for path in (addresses_path, parameters_path):
        if path is not None and not path.is_file():
            raise InputError("file not found", path=path)
    form_body = _form_parameters(parameters_path, purchase)
    key = idempotency_key or derive_key(
        FLOW_NAME,
        endpoint=newspaper_endpoint(settings),
        files=(addresses_path,) if parameters_path is None else (addresses_path, parameters_path),
        parameters={"address_clean_up": address_clean_up}
        if form_body is None
        else {"address_clean_up": address_clean_up, "purchase": form_body},
    )
    parameters = {
        "addresses_path": addresses_path,
        "parameters_path": parameters_path,
        "purchase": form_body,
        "output_dir": output_dir,
        "address_clean_up": address_clean_up,
        "resubmit": resubmit,
    }
    async with recorded_run(settings, flow=FLOW_NAME, idempotency_key=key, parameters=parameters) as (
        recorder,
        summary,
    ):
        async with recorder.step("read purchase input"):
            purchase_parameters = _purchase_parameters(parameters_path, form_body)
            if address_clean_up is not None:
                purchase_parameters[CLEAN_UP_FIELD] = address_clean_up
            clean_up = bool(purchase_parameters.get(CLEAN_UP_FIELD, False))
            checked = read_purchase_input(
                addresses_path, purchase_parameters, today=dt.date.today(), limits=settings.table_limits
            )
        sorting = checked.purchase.sorting_module is not None
        files: list[Path] = []
        rejected_path = write_rejected(
            checked.rejected_report, output_dir / "rejected.csv", style=settings.csv_style
        )
        if rejected_path is not None:
            files.append(rejected_path)
            await recorder.document("rejected-rows", rejected_path)
            logger.warning("%d address rows rejected, see %s", checked.rejected_rows, rejected_path)
        body = checked.purchase.to_body()
        if idempotency_key is None:
            await recorder.rekey(body_key(FLOW_NAME, endpoint=newspaper_endpoint(settings), body=body))
            key = recorder.idempotency_key or key
        summary.update(
            idempotency_key=key,
            input_rows=checked.input_rows,
            accepted_rows=len(checked.rows),
            rejected_rows=checked.rejected_rows,
        )
        warnings = WarningLog(recorder)
        async with newspaper_client(settings, request_log=recorder.request_log) as client:
            submission = await submit_newspaper(
                recorder,
                warnings,
                kind="purchase",
                what="purchase",
                send=lambda: submit_purchase(client, checked.purchase),
                resubmit=resubmit,
                hint=f"check whether a purchase titled {checked.purchase.title!r} exists",
                data={"addresses": len(checked.rows), "clean_up": clean_up, "sorting": sorting},
                fingerprint=body_fingerprint(body),
            )
            job = submission.job
            purchase_id = int(job.remote_id)
            summary.update(purchase_id=purchase_id, resumed=submission.resumed)
            logger.info("%s purchase %s", "resuming" if submission.resumed else "submitted", purchase_id)

            async def on_status(result: ApiResult[PurchaseProgress]) -> None:
                await warnings.add("progress", result.warnings)
                progress = result.value
                await recorder.update_job(
                    job,
                    status=JobState.RUNNING,
                    remote_status=describe(progress),
                    progress=overall_percent(progress, sorting=sorting),
                )

            try:
                async with recording_wait(recorder, job, what=f"purchase {purchase_id}"):
                    await wait_for_purchase(
                        client,
                        purchase_id,
                        sorting=sorting,
                        policy=PollPolicy(
                            max_wait_s,
                            min_poll_interval_s,
                            max_poll_interval_s,
                            park_after_s=park_after(settings),
                        ),
                        on_status=on_status,
                        waited_s=waited_before(job),
                    )
            except JobParked as parked:
                return await summary.park(parked)  # a follow-up run continues the wait
            await recorder.update_job(job, status=JobState.FINISHED, remote_status="READY")
            output = await run_step(fetch_output_addresses, client, purchase_id)
            await warnings.add("output addresses", output.warnings)
            documents, document_warnings = await run_step(
                save_purchase_documents,
                client,
                purchase_id,
                output_dir / "documents",
                document_kinds(clean_up, sorting=sorting),
                max_bytes=settings.download_max_bytes,
                max_ratio=settings.zip_max_ratio,
            )
            await warnings.add("documents", document_warnings)
        rows = [address.model_dump(mode="json", by_alias=True) for address in output.value.output_addresses]
        frame = records_frame(rows, OUTPUT_COLUMNS)
        files.append(
            write_json(output_dir, "output-addresses", output.value, max_bytes=settings.download_max_bytes)
        )
        files.append(write_csv(frame, output_dir / "output-addresses.csv", style=settings.csv_style))
        files.append(write_xlsx(output_dir / "output-addresses.xlsx", {"output addresses": frame}))
        for kind, path in documents.items():
            await recorder.document(kind, path, job=job)
        for path in files:
            await recorder.document(path.stem, path, job=job)
        await recorder.update_job(job, status=JobState.COMPLETED, finished=True)
        by_status = frame["statusCode"].value_counts().to_dict() if len(frame) else {}
        facts: dict[str, Any] = {
            "purchase id": purchase_id,
            "resumed": submission.resumed,
            "addresses sent": len(checked.rows),
            "rejected rows": checked.rejected_rows,
            "output addresses": len(frame),
        }
        facts.update({f"status {code}": count for code, count in sorted(by_status.items())})
        facts["documents"] = ", ".join(sorted(documents))
        text = summary_markdown(f"Address purchase {purchase_id}", facts, warnings.lines)
        summary.update(
            output_addresses=len(frame),
            status_codes=by_status,
            documents={kind: str(path) for kind, path in documents.items()},
            warnings=warnings.lines,
        )
        await summary.publish(text, output_dir, description="Purchase")
        return dict(summary)


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
    body = purchase.to_body()
    if "addresses" in body:
        raise InputError("addresses come from the address file, not from the purchase", path=FORM)
    return body


def _purchase_parameters(parameters_path: Path | None, form_body: dict[str, Any] | None) -> dict[str, Any]:
    """The purchase parameters: those filled in the form, else the file's."""
    if form_body is not None:
        return dict(form_body)
    if parameters_path is None:
        raise InputError("no purchase parameters: give a parameters file or fill in the purchase", path=FORM)
    return load_purchase_parameters(parameters_path)
