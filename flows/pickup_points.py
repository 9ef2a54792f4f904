from __future__ import annotations

import datetime as dt
from functools import partial
from typing import Annotated

from prefect import flow, get_run_logger

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from core.swiss_time import swiss_today
from fileio.commerce.pickup_input import PickupInput, read_pickup_locations
from flows.commerce_results import KeepsNone, RowQueries
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.pickup_input import read_pickup_file
from flows.requests import OutputOptions, PickupPointsRequest
from flows.row_queries import RowRun, RowWork, row_run
from flows.runs import begin_run
from runtime.endpoints import describe_commerce
from runtime.task_runners import fan_out_task_runner
from tasks.commerce.per_row import RowOutcome
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

FLOW_NAME = "pickup-points"


class PickupPointsResult(RowQueries, KeepsNone):
    """What a pickup points run found: the locations per outcome (``ok``, ``refused``, ``failed`` …), the
    points found, and the folder of the answers as received (none when no answer was written)."""

    locations: dict[str, int]
    points: int
    answers: str | None


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
) -> PickupPointsResult:
    """Find the pickup points near every location of a file.

    Rows without a zip, with a postcode that is not one of their country or a country code that is not two
    letters go to rejected.csv before anything is sent; every other location is asked about with bounded
    concurrency (a read: transient failures are retried). A location the service refuses or that fails keeps
    its row with the reason, and the rest goes on. A 404 or 405 says that the method or path (settings: the
    spec shows neither) is wrong: the run fails naming the setting. A re-run of an interrupted run (same
    file, same day, same service) asks only for the locations not answered yet.

    Args:
        request: the locations (.csv or .xlsx: zip, street, houseNumber, city, countryCode; the pickup
            user's fields when given), whether street lines are split, and the queries in flight at once.
        output: where points.csv, points.xlsx, answers/row-<n>.json, rejected.csv and summary.md go.

    Returns:
        The run's result: row counts, locations per outcome, points found and the files written.
    """
    run = begin_run(FLOW_NAME)
    today = swiss_today()
    # The calendar starts today: answers of another day are not taken up.
    identity: dict[str, object] = {"day": today.isoformat()}
    if not request.split_house_numbers:  # named only when left out, as the commerce flows' keys do
        identity["split_house_numbers"] = False
    work = RowWork.of(request, output, identity)
    async with row_run(run, work, with_identity=False) as rows:
        locations = await read_pickup_file(
            rows.recorder,
            rows.summary,
            partial(
                read_pickup_locations,
                limits=run.settings.table_limits,
                split_house_numbers=request.split_house_numbers,
            ),
            work.input_path,
            work.output_dir,
            csv_style=run.settings.csv_style,
        )
        outcomes = await find_pickup_points(
            run.commerce,
            location_records(locations),
            concurrency=work.concurrency,
            checkpoint=rows.checkpoint,
            sends=rows.sends,
        )
        await rows.record("pickup points", outcomes)
        failed = await _report(rows, locations, outcomes, today)
        rows.end(outcomes, failed=failed)
        get_run_logger().info("pickup points: %s", rows.summary["locations"])
        return rows.summary.result(PickupPointsResult)


async def _report(
    rows: RowRun, locations: PickupInput, outcomes: list[RowOutcome[ReceivedPoints]], today: dt.date
) -> int:
    """Write the points (CSV, workbook), the answers and summary.md, and count the outcomes into the
    summary; the locations whose query failed."""
    settings, recorder, output_dir = rows.run.settings, rows.recorder, rows.work.output_dir
    table = points_table(locations, outcomes, today=today)
    files = write_points(
        table,
        outcomes,
        locations.rejected_report,
        output_dir,
        csv_style=settings.csv_style,
        sandbox=recorder.outputs.sandbox,
    )
    # the answers (one file per location) are named by their folder
    await recorder.documents((path.name, path) for path in files[:2])
    statuses = table.drop_duplicates("row")["status"].value_counts()
    failed = failed_locations(outcomes)
    rows.summary.update(
        locations={str(status): int(count) for status, count in statuses.items()},
        points=int(table["ppNumber"].notna().sum()),
        failed=failed,
        answers=str((output_dir / ANSWERS_FOLDER).resolve()) if len(files) > 2 else None,
    )
    report = points_summary(
        rows.work.input_path.name,
        table,
        locations=len(outcomes),
        rejected_rows=locations.rejected_rows,
        service=describe_commerce(settings),
    )
    await rows.summary.publish(report, output_dir, description="Pickup points")
    return failed
