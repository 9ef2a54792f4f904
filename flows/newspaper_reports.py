"""Reports of an existing newspaper order: status, summary and sendings (never while CONTROL), original
and corrected order → JSON files, report.xlsx and summary.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from prefect import flow, get_run_logger

from flows.forms import Blank, form
from flows.naming import run_name
from flows.runs import recorded_run
from postflows.settings import get_settings
from postflows.wiring import newspaper_client, newspaper_endpoint
from tasks.idempotency import named_key
from tasks.newspaper.order_report import identity_of, order_summary_text, write_order_files
from tasks.newspaper.order_report_data import OrderOutcome
from tasks.newspaper.orders import fetch_order_reports
from tasks.newspaper.submissions import WarningLog

FLOW_NAME = "newspaper-reports"


@flow(name=FLOW_NAME, log_prints=False, flow_run_name=run_name(FLOW_NAME, "order_id"))
async def newspaper_reports(
    order_id: Annotated[
        int, form("Order id", "The order id the service returned when the order was submitted.", minimum=1)
    ],
    output_dir: Annotated[
        Path, form("Output folder", "Folder on the worker for the JSON answers, report.xlsx and summary.md.")
    ],
    kind: Annotated[
        Blank[Literal["auto", "standard", "gratis"]],
        form("Kind of order", "Standard or gratis; auto: found out from the original order.", blank="auto"),
    ] = "auto",
) -> dict[str, Any]:
    """Fetch every report of an order that exists already.

    Args:
        order_id: the order id the service returned on submission.
        output_dir: where the JSON files, report.xlsx and summary.md go.
        kind: standard or gratis; found out from the original order when not given (auto).

    Returns:
        The run summary: status, which reports were fetched, notes on those not available, files written.
    """
    settings = get_settings()
    output_dir = Path(output_dir)
    known: Literal["standard", "gratis"] | None = None if kind is None or kind == "auto" else kind
    parameters = {"order_id": order_id, "output_dir": output_dir, "kind": known}
    async with recorded_run(
        settings,
        flow=FLOW_NAME,
        idempotency_key=named_key(f"{FLOW_NAME}:{order_id}", endpoint=newspaper_endpoint(settings)),
        parameters=parameters,
    ) as (recorder, summary):
        warnings = WarningLog(recorder)
        async with newspaper_client(settings, request_log=recorder.request_log) as client:
            reports = await fetch_order_reports(client, order_id, kind=known)
        await warnings.add("reports", reports.warnings)
        for note in reports.notes:
            await recorder.message("info", "not-requested", note)
        outcome = OrderOutcome(order_id, reports=reports, warnings=warnings.lines)
        if reports.original is not None and isinstance(reports.original.body, dict):
            outcome.identity = identity_of(reports.original.body.get("basisInformation") or {})
        files = write_order_files(outcome, output_dir, max_bytes=settings.download_max_bytes)
        for path in files:
            await recorder.document(path.stem, path)
        text = order_summary_text(f"Reports of newspaper order {order_id}", outcome, files)
        status = reports.status.status_value if reports.status else None
        summary.update(
            order_id=order_id,
            kind=reports.kind,
            status=str(status) if status is not None else None,
            warnings=warnings.lines,
            notes=reports.notes,
        )
        await summary.publish(text, output_dir, description="Order reports")
        get_run_logger().info("reports of order %s written to %s", order_id, output_dir)
        return dict(summary)
