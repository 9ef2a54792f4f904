"""Pickup points near every location of a file (commerce API, §4.3/§2.10): one row per point with where it
is, today's opening hours and its calendar in short, and each answer as received."""

from __future__ import annotations

import datetime as dt
from functools import partial
from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger

from core.swiss_time import swiss_today
from fileio.checkpoint import RowCheckpoint
from fileio.commerce.pickup_input import PickupInput, read_pickup_locations
from fileio.errors import InputError
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.pickup_input import read_pickup_file
from flows.requests import OutputOptions, PickupPointsRequest
from flows.runs import RunSummary, begin_run, recorded_run
from history.identity import derive_key
from history.recorder import RunRecorder
from runtime.run import Run
from runtime.task_runners import fan_out_task_runner
from runtime.wiring import commerce_client, describe_commerce
from tasks.commerce.per_row import RowOutcome, record_outcomes
from tasks.commerce.pickup_points import (
    ANSWERS_FOLDER,
    ReceivedPoints,
    failed_locations,
    find_pickup_points,
    location_records,
    points_summary,
    points_table,
    write_points,
)
from tasks.sending import SendCounter

FLOW_NAME = "pickup-points"


@flow(
    on_failure=ON_FAILURE,
    name=FLOW_NAME,
    flow_run_name=run_name(FLOW_NAME, "request.input_path"),
    task_runner=fan_out_task_runner(),
)
async def pickup_points(
    request: Annotated[
        PickupPointsRequest, form("Locations", "The file of locations and how many queries at once.")
    ],
    output: Annotated[OutputOptions, form("Output", "Where the results go on the worker.")],
) -> dict[str, Any]:
    """Find the pickup points near every location of a file.

    Rows without a zip, with a postcode that is not one of their country or a country code that is not two
    letters go to rejected.csv before anything is sent; every other location is asked about with bounded
    concurrency (a read: transient failures are retried). A location the service refuses or that fails keeps
    its row with the reason, and the rest goes on. A 404 or 405 says that the method or path (settings: the
    spec shows neither) is wrong: the run fails naming the setting. A re-run of an interrupted run (same
    file, same day, same service) asks only for the locations not answered yet.

    Args:
        request: the locations (.csv or .xlsx: zip, street, houseNumber, city, countryCode; the pickup
            user's fields when given) and the queries in flight at once.
        output: where points.csv, points.xlsx, answers/row-<n>.json, rejected.csv and summary.md go.

    Returns:
        The run summary: row counts, locations per outcome, points found and the files written.
    """
    run = begin_run(FLOW_NAME)
    settings = run.settings
    input_path, output_dir = Path(request.input_path), Path(output.output_dir)
    if not input_path.is_file():
        raise InputError("input file not found", path=input_path)
    today = swiss_today()
    # The calendar starts today: answers of another day are not taken up.
    key = derive_key(
        FLOW_NAME,
        endpoint=run.endpoint("commerce"),
        files=(input_path,),
        parameters={"day": today.isoformat()},
    )
    parameters = {"input_path": input_path, "output_dir": output_dir, "concurrency": request.concurrency}
    async with recorded_run(run, idempotency_key=key, parameters=parameters) as (
        recorder,
        summary,
    ):
        locations = await read_pickup_file(
            recorder,
            summary,
            partial(read_pickup_locations, limits=settings.table_limits),
            input_path,
            output_dir,
            csv_style=settings.csv_style,
        )
        checkpoint = RowCheckpoint.for_key(settings.data_dir / "resume", key)
        sends = SendCounter()
        outcomes = await find_pickup_points(
            partial(commerce_client, settings),
            location_records(locations),
            concurrency=request.concurrency,
            checkpoint=checkpoint,
            sends=sends,
        )
        await record_outcomes(recorder, "pickup points", sends, outcomes)
        failed = await _report(run, recorder, summary, locations, outcomes, input_path, output_dir, today)
        if not failed:
            checkpoint.clear()
        summary.update(
            idempotency_key=key,
            resumed_rows=sum(1 for outcome in outcomes if outcome.resumed),
            requests_sent=sends.total,
        )
        get_run_logger().info("pickup points: %s", summary["locations"])
        return dict(summary)


async def _report(
    run: Run,
    recorder: RunRecorder,
    summary: RunSummary,
    locations: PickupInput,
    outcomes: list[RowOutcome[ReceivedPoints]],
    input_path: Path,
    output_dir: Path,
    today: dt.date,
) -> int:
    """Write the points (CSV, workbook), the answers and summary.md, and count the outcomes into the
    summary; the locations whose query failed."""
    settings = run.settings
    table = points_table(locations, outcomes, today=today)
    files = write_points(
        table,
        outcomes,
        locations.rejected_report,
        output_dir,
        csv_style=settings.csv_style,
        sandbox=recorder.outputs.sandbox,
    )
    for path in files[:2]:  # the answers (one file per location) are named by their folder
        await recorder.document(path.name, path)
    statuses = table.drop_duplicates("row")["status"].value_counts()
    failed = failed_locations(outcomes)
    summary.update(
        locations={str(status): int(count) for status, count in statuses.items()},
        points=int(table["ppNumber"].notna().sum()),
        failed=failed,
        answers=str((output_dir / ANSWERS_FOLDER).resolve()) if len(files) > 2 else None,
    )
    report = points_summary(
        input_path.name,
        table,
        locations=len(outcomes),
        rejected_rows=locations.rejected_rows,
        service=describe_commerce(settings),
    )
    await summary.publish(report, output_dir, description="Pickup points")
    return failed
