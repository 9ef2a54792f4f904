"""Delivery reference data sync: the commerce API's holidays, additional services and delivery instructions →
SQL tables (upserted, every change kept in the change log), with a markdown summary of what changed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

from prefect import flow, get_run_logger

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from core.json_text import json_text
from fileio.files import write_received
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.requests import ReferenceDataOutput
from flows.results import RunResult
from flows.runs import begin_run, recorded_run
from history.identity import named_key
from runtime.endpoints import describe_commerce
from tasks.commerce.reference_data import (
    changes_of_run,
    describe_counts,
    fetch_reference_data,
    reference_summary,
    store_reference_data,
)
from tasks.retrying import run_step

FLOW_NAME = "delivery-reference-sync"


class DeliveryReferenceSyncResult(RunResult):
    """What a sync did to the stored reference data: per table (``holidays``, ``additional services``,
    ``delivery instructions``) the records added, changed, removed and unchanged; and the changes logged."""

    counts: dict[str, dict[str, int]]
    changes: int


@flow(on_failure=ON_FAILURE, name=FLOW_NAME, log_prints=False, flow_run_name=run_name(FLOW_NAME))
async def delivery_reference_sync(
    output: Annotated[
        ReferenceDataOutput, form("Output", "Where the lists as received go on the worker, if anywhere.")
    ] = ReferenceDataOutput(),  # noqa: B008 - an immutable part, the form's default
) -> DeliveryReferenceSyncResult:
    """Synchronise the delivery reference data (holidays, additional services, delivery instructions) into
    the SQL tables.

    Records are upserted by date or code; every added, changed (field by field, old and new value) or
    removed record is kept in the change log, and removed records stay, marked. A run against unchanged
    data writes nothing.

    Args:
        output: where the lists as received (JSON) and summary.md go; none are written when empty.

    Returns:
        The run's result: counts of added, changed, removed and unchanged records per table, the number of
        changes logged and the files written.
    """
    run = begin_run(FLOW_NAME)
    settings = run.settings
    endpoint = run.endpoint("commerce")
    output_dir = output.output_dir
    parameters = {"output_dir": output_dir}
    async with recorded_run(
        run,
        idempotency_key=named_key(FLOW_NAME, endpoint=endpoint),
        parameters=parameters,
    ) as (recorder, summary):
        async with run.commerce(recorder.request_log) as client:
            data = await run_step(fetch_reference_data, client)
        async with recorder.step("store reference data"):
            counts = await asyncio.to_thread(
                store_reference_data, settings.effective_database_url, recorder.run_id, data
            )
        changes = await asyncio.to_thread(changes_of_run, settings.effective_database_url, recorder.run_id)
        report = reference_summary(counts, changes, service=describe_commerce(settings))
        files: list[Path] = []
        if output_dir is not None:
            for table, records in data.records().items():
                text = json_text(records, indent=2) + "\n"
                files.append(Path(output_dir) / f"{table.replace(' ', '-')}.json")
                write_received(files[-1], text.encode())
            await recorder.documents((path.stem, path) for path in files)
        summary.update(counts={table: vars(count) for table, count in counts.items()}, changes=len(changes))
        await summary.publish(report, output_dir, description="Delivery reference data sync")
        logger = get_run_logger()
        for table, count in counts.items():
            logger.info("%s: %s", table, describe_counts(count))
        return summary.result(DeliveryReferenceSyncResult)
