"""The input of an address purchase run: the addresses and the purchase parameters (a file, or filled in
the form), checked before anything is posted, and the key the run's work is recorded under.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefect import get_run_logger

from core.swiss_time import swiss_today
from fileio.errors import InputError
from fileio.newspaper.purchase_input import (
    PurchaseInput,
    load_purchase_parameters,
    purchase_parameters_from_body,
    read_purchase_input,
)
from fileio.rejected_rows import write_rejected
from flows.newspaper_forms import PurchaseForm
from flows.requests import AddressPurchaseRequest, OwnOutputOptions
from flows.runs import RunSummary
from history.identity import body_key, derive_key
from history.recorder import RunRecorder
from runtime.run import Run

CLEAN_UP_FIELD = "addressCleanUp"
FORM = "purchase (form)"


@dataclass(frozen=True)
class PurchaseStart:
    """What a purchase run starts from, before it is recorded: its files, the parameters filled in the form
    (none when they come from the file), where its results go, the key it starts under (the files and the
    request's work, with the service) and the parameters it records."""

    addresses_path: Path
    parameters_path: Path | None
    form_body: dict[str, Any] | None
    output_dir: Path
    key: str
    parameters: dict[str, Any]


def purchase_start(run: Run, request: AddressPurchaseRequest, output: OwnOutputOptions) -> PurchaseStart:
    """Where the run of ``request`` starts: its files checked to exist, the form's parameters checked, its
    first key; once the purchase is read, the run goes on under the key of its body (:func:`read_input`)."""
    addresses_path = Path(request.addresses_path)
    parameters_path = None if request.parameters_path is None else Path(request.parameters_path)
    output_dir = output.folder_or(run.settings.data_dir / "address-purchases" / addresses_path.name)
    for path in (addresses_path, parameters_path):
        if path is not None and not path.is_file():
            raise InputError("file not found", path=path)
    form_body = _form_parameters(parameters_path, request.purchase)
    key = request.idempotency_key or derive_key(
        run.flow,
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
    return PurchaseStart(addresses_path, parameters_path, form_body, output_dir, key, parameters)


async def read_input(
    run: Run,
    recorder: RunRecorder,
    summary: RunSummary,
    request: AddressPurchaseRequest,
    start: PurchaseStart,
) -> tuple[PurchaseInput, list[Path], bool]:
    """Read and check the addresses and the purchase parameters (the clean-up as the request says);
    rejected rows into rejected.csv; the run goes on under the key of the purchase's body (unless the
    request names one), and the summary counts the rows. Returns the purchase, the files written and whether
    it cleans up."""
    settings = run.settings
    async with recorder.step("read purchase input"):
        purchase_parameters = _purchase_parameters(start.parameters_path, start.form_body)
        if request.address_clean_up is not None:
            purchase_parameters[CLEAN_UP_FIELD] = request.address_clean_up
        checked = read_purchase_input(
            start.addresses_path,
            purchase_parameters,
            today=swiss_today(),
            limits=settings.table_limits,
        )
    files: list[Path] = []
    rejected_path = write_rejected(
        checked.rejected_report, start.output_dir / "rejected.csv", style=settings.csv_style
    )
    if rejected_path is not None:
        files.append(rejected_path)
        await recorder.document("rejected-rows", rejected_path)
        get_run_logger().warning("%d address rows rejected, see %s", checked.rejected_rows, rejected_path)
    key = start.key
    if request.idempotency_key is None:
        body = checked.purchase.to_body()
        await recorder.rekey(body_key(run.flow, endpoint=run.endpoint("newspaper"), body=body))
        key = recorder.idempotency_key or key
    summary.update(
        idempotency_key=key,
        input_rows=checked.input_rows,
        accepted_rows=len(checked.rows),
        rejected_rows=checked.rejected_rows,
    )
    return checked, files, bool(purchase_parameters.get(CLEAN_UP_FIELD, False))


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
