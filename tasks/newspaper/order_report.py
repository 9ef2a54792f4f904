"""The order pipeline's outputs: JSON files as received, ``report.xlsx`` and the run summary text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fileio.lazy import lazy_module
from fileio.limits import DOWNLOAD_MAX_BYTES
from fileio.newspaper.outputs import (
    item_lists,
    key_value_frame,
    records_frame,
    summary_markdown,
    warnings_frame,
    write_json,
)
from fileio.sandbox_marks import with_banner
from fileio.workbooks import write_xlsx
from tasks.newspaper.order_report_data import OrderOutcome

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")


def write_order_files(
    outcome: OrderOutcome, directory: Path, *, max_bytes: int = DOWNLOAD_MAX_BYTES, sandbox: bool = False
) -> list[Path]:
    """Write status, summary, sendings, original and corrected order as JSON (an answer as received up to
    ``max_bytes``), then ``report.xlsx`` (after a ``sandbox`` run, its banner sheet first)."""
    reports = outcome.reports
    paths: list[Path] = []
    for stem, value in (
        ("status", reports.status),
        ("summary", reports.summary),
        ("sendings", reports.sendings),
        ("original-order", reports.original),
        ("corrected-order", reports.corrected),
    ):
        if value is not None:
            paths.append(write_json(directory, stem, value, max_bytes=max_bytes))
    paths.append(write_xlsx(directory / "report.xlsx", with_banner(report_sheets(outcome), sandbox=sandbox)))
    return paths


def report_sheets(outcome: OrderOutcome) -> dict[str, pd.DataFrame]:
    """The sheets of ``report.xlsx``: order facts, status history, sendings, warnings."""
    reports = outcome.reports
    sheets = {"order": key_value_frame(order_facts(outcome))}
    sheets["status history"] = records_frame(
        outcome.status_history, ("statusValue", "statusDate", "recordedAt")
    )
    if reports.sendings is not None:
        sheets["sendings"] = records_frame(item_lists(reports.sendings.body))
    sheets["warnings"] = warnings_frame(outcome.warnings)
    return sheets


def order_facts(outcome: OrderOutcome) -> dict[str, Any]:
    """The one-line facts of an order for the report and the summary."""
    reports = outcome.reports
    facts: dict[str, Any] = {"order id": outcome.order_id, "kind": reports.kind}
    facts.update(outcome.identity)
    status = reports.status
    facts["status"] = str(status.status_value) if status and status.status_value else None
    facts["status date"] = status.status_date.isoformat() if status and status.status_date else None
    summary = reports.summary
    if summary is not None:
        facts["issue date"] = summary.issue_date.isoformat() if summary.issue_date else None
        facts["barcode number"] = summary.barcode_number
        facts["total newspapers"] = summary.total_newspaper
        facts["difference"] = summary.difference
    facts["resumed"] = outcome.resumed
    return facts


def order_summary_text(title: str, outcome: OrderOutcome, files: Sequence[Path]) -> str:
    facts = order_facts(outcome)
    facts["files"] = ", ".join(path.name for path in files)
    return summary_markdown(title, facts, outcome.warnings, outcome.reports.notes, errors=outcome.errors)


def identity_of(basis: Mapping[str, Any]) -> dict[str, Any]:
    """Newspaper number, issue number and delivery date of an order body's ``basisInformation``."""
    issue = basis.get("issueNumber") or {}
    return {
        "newspaper number": basis.get("newspaperNumber"),
        "issue number": issue.get("from") if isinstance(issue, Mapping) else issue,
        "delivery date": basis.get("deliveryDate"),
    }


def recorded_identity(data: Mapping[str, Any]) -> dict[str, Any]:
    """The identity :func:`identity_of` gave an order, read back from its job's recorded data."""
    return {key: data.get(key) for key in identity_of({})}
