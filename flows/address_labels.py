"""Address labels (commerce API, barcode sub-API §4.4): every label request of a JSON file created once, the
labels written as PDF files with each answer as received, and an index of them all."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger

from flows.body_submissions import body_run
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.requests import AddressLabelsRequest, OutputOptions
from flows.runs import begin_run
from runtime.wiring import describe_commerce
from tasks.commerce.address_labels import (
    LABELS,
    NO_PDF,
    LabelsWithoutPdf,
    label_counts,
    labels_summary,
    write_labels,
)

FLOW_NAME = "address-labels"


@flow(on_failure=ON_FAILURE, name=FLOW_NAME, flow_run_name=run_name(FLOW_NAME, "request.input_path"))
async def address_labels(
    request: Annotated[
        AddressLabelsRequest,
        form("Label requests", "The file of label requests and how many at once."),
    ],
    output: Annotated[OutputOptions, form("Output", "Where the labels go on the worker.")],
) -> dict[str, Any]:
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
        The run summary: requests read, labels per status, the files written.
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
    async with body_run(run, LABELS, parameters=parameters) as posting:
        bodies, outcomes = await posting.post(
            input_path,
            lambda client: client.create_address_label_as_received,
            resubmit=request.resubmit,
            concurrency=request.concurrency,
        )
        pdf_field = settings.commerce.label_pdf_field
        setting = next(v.name for v in settings.variables() if v.path == ("commerce", "label_pdf_field"))
        index, files = write_labels(
            outcomes,
            bodies,
            output_dir,
            pdf_field=pdf_field,
            setting=setting,
            kept=posting.kept,
            csv_style=settings.csv_style,
        )
        counts = label_counts(index)
        get_run_logger().info("address labels: %s", counts)
        report = labels_summary(
            input_path.name, index, service=describe_commerce(settings), pdf_field=pdf_field
        )
        summary = await posting.end(
            outcomes, files, counts=counts, report=report, output_dir=output_dir, description="Address labels"
        )
        # An answer kept without a PDF where the setting says: the guess did not hold for this service.
        unread = int(((index["status"] == NO_PDF) & (index["answer"].fillna("") != "")).sum())
        if unread:
            raise LabelsWithoutPdf(unread, pdf_field, setting, str(files[0]))
        return summary
