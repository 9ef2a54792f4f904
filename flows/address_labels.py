"""Address labels (commerce API, barcode sub-API §4.4): every label request of a JSON file created once, the
labels written as PDF files with each answer as received, and an index of them all."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from prefect import flow, get_run_logger

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from fileio.lazy import lazy_module
from flows.body_submissions import body_run
from flows.commerce_results import PostedBodies
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.requests import AddressLabelsRequest, OutputOptions
from flows.runs import begin_run
from runtime.endpoints import describe_commerce
from runtime.settings import Settings
from tasks.commerce.address_labels import (
    LABELS,
    NO_PDF,
    LabelsWithoutPdf,
    label_counts,
    labels_summary,
    write_labels,
)

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

FLOW_NAME = "address-labels"


class AddressLabelsResult(PostedBodies):
    """What an address labels run did with the label requests of its file: the labels per status
    (``created``, ``resumed``, ``uncertain``, ``refused``, ``no pdf``) and the index, labels.csv."""


@dataclass(frozen=True)
class PdfField:
    """Where a JSON answer holds the label (``field``), and the setting that says so (``setting``)."""

    field: str
    setting: str

    @classmethod
    def of(cls, settings: Settings) -> PdfField:
        """The field the commerce settings name, with the setting's name."""
        setting = next(v.name for v in settings.variables() if v.path == ("commerce", "label_pdf_field"))
        return cls(settings.commerce.label_pdf_field, setting)

    def check(self, index: pd.DataFrame, index_path: Path) -> None:
        """Fail when an answer was kept without a PDF at the field: the guess did not hold for this service.

        Raises:
            LabelsWithoutPdf: the labels without a PDF, naming the setting.
        """
        unread = int(((index["status"] == NO_PDF) & (index["answer"].fillna("") != "")).sum())
        if unread:
            raise LabelsWithoutPdf(unread, self.field, self.setting, str(index_path))


@flow(on_failure=ON_FAILURE, name=FLOW_NAME, flow_run_name=run_name(FLOW_NAME, "request.input_path"))
async def address_labels(
    request: Annotated[
        AddressLabelsRequest,
        form("Label requests", "The file of label requests and how many at once."),
    ],
    output: Annotated[OutputOptions, form("Output", "Where the labels go on the worker.")],
) -> AddressLabelsResult:
    """Create the address labels of a file of label requests, each once, and save them as PDF files.

    The requests are read first (a JSON object, an array of objects or JSON lines, bounded in size, depth
    and count); a file that cannot be used is refused before anything is sent. Each request is posted as
    it is, at most once: a re-run of the same file resumes, writing the labels kept from the first run's
    answers; a request whose answer was lost is reported as uncertain and the run fails until it is sent
    again with ``resubmit``. A PDF answer is the label; from a JSON answer (written as received) the label
    is taken as base64 from the field the commerce settings name (``item.label`` by default).

    Args:
        request: the label requests (JSON), whether to send the requests whose earlier answer was lost
            again (check first that their labels were not created), and requests in flight at once.
        output: where label-<n>.pdf, label-<n>.json, labels.csv and summary.md go.

    Returns:
        The run's result: requests read, labels per status, the index and the files written.
    """
    run = begin_run(FLOW_NAME)
    settings = run.settings
    input_path, output_dir = Path(request.input_path), Path(output.output_dir)
    parameters = {
        "input_path": input_path,
        "output_dir": output_dir,
        "resubmit": request.resubmit,
        "concurrency": request.concurrency,
    }
    async with body_run(run, LABELS, AddressLabelsResult, parameters=parameters) as posting:
        bodies, outcomes = await posting.post(
            input_path,
            lambda client: client.create_address_label_as_received,
            resubmit=request.resubmit,
            concurrency=request.concurrency,
        )
        pdf = PdfField.of(settings)
        index, files = write_labels(
            outcomes,
            bodies,
            output_dir,
            pdf_field=pdf.field,
            setting=pdf.setting,
            kept=posting.kept,
            csv_style=settings.csv_style,
        )
        counts = label_counts(index)
        get_run_logger().info("address labels: %s", counts)
        report = labels_summary(
            input_path.name, index, service=describe_commerce(settings), pdf_field=pdf.field
        )
        result = await posting.end(
            outcomes, files, counts=counts, report=report, output_dir=output_dir, description="Address labels"
        )
        pdf.check(index, files[0])
        return result
