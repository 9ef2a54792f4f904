from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated

from prefect import flow, get_run_logger

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from fileio.commerce.pickup_input import PickupInput, read_pickup_input
from fileio.errors import InputError
from fileio.reports import write_csv, write_xlsx
from fileio.sandbox_marks import with_banner
from flows.commerce_results import FileRows
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.pickup_input import read_pickup_file
from flows.requests import OutputOptions, PickupRegistrationRequest
from flows.runs import RunSummary, begin_run, recorded_run
from history.identity import named_key
from history.recorder import RunRecorder
from runtime.endpoints import describe_commerce
from runtime.run import Run
from tasks.commerce.pickup import (
    PickupUncertain,
    RowOutcome,
    RowStatus,
    pickup_summary,
    register_pickup_users,
    results_frame,
    status_counts,
)

FLOW_NAME = "pickup-registration"


class PickupRegistrationResult(FileRows):
    """What a pickup registration did with the accepted rows: how many per status (``registered``,
    ``resumed`` from an earlier run, ``uncertain``, ``refused``)."""

    statuses: dict[str, int]


@flow(on_failure=ON_FAILURE, name=FLOW_NAME, flow_run_name=run_name(FLOW_NAME, "request.input_path"))
async def pickup_registration(
    request: Annotated[
        PickupRegistrationRequest, form("Pickup users", "The file of pickup users and how many at once.")
    ],
    output: Annotated[OutputOptions, form("Output", "Where the results go on the worker.")],
) -> PickupRegistrationResult:
    """Register the pickup users of a file and record their pickup ids.

    Rows failing the input checks (missing names, a bad postcode or country code, EMAIL notification
    without an e-mail address …) go to rejected.csv before anything is sent. Every other row is registered
    at most once: a re-run of the same file resumes, reporting the recorded ids; a row whose answer was
    lost is reported as uncertain and the run fails until it is sent again with ``resubmit``.

    Args:
        request: the pickup users (.csv or .xlsx), whether to send the rows whose earlier request got no
            answer again (check first that they were not registered), whether street lines are split, and
            registrations in flight at once.
        output: where results.csv, results.xlsx, rejected.csv and summary.md go.

    Returns:
        The run's result: rows accepted, rejected and empty, rows per status, the files written.
    """
    run = begin_run(FLOW_NAME)
    input_path, output_dir = Path(request.input_path), Path(output.output_dir)
    if not input_path.is_file():
        raise InputError("input file not found", path=input_path)
    parameters = {
        "input_path": input_path,
        "output_dir": output_dir,
        "resubmit": request.resubmit,
        "concurrency": request.concurrency,
        "split_house_numbers": request.split_house_numbers,
    }
    key = named_key(FLOW_NAME, endpoint=run.endpoint("commerce"))
    async with recorded_run(run, idempotency_key=key, parameters=parameters) as (recorder, summary):
        pickup_input = await read_pickup_file(
            recorder,
            summary,
            partial(
                read_pickup_input,
                limits=run.settings.table_limits,
                split_house_numbers=request.split_house_numbers,
            ),
            input_path,
            output_dir,
            csv_style=run.settings.csv_style,
        )
        outcomes = await _register(run, recorder, pickup_input, request)
        results_csv = await _write_results(
            run, recorder, summary, pickup_input, outcomes, input_path, output_dir
        )
        get_run_logger().info("pickup registration: %s", summary["statuses"])
        uncertain = [outcome for outcome in outcomes if outcome.status is RowStatus.UNCERTAIN]
        if uncertain:
            raise PickupUncertain(uncertain, str(results_csv))
        return summary.result(PickupRegistrationResult)


async def _register(
    run: Run, recorder: RunRecorder, pickup_input: PickupInput, request: PickupRegistrationRequest
) -> list[RowOutcome]:
    """Register the users of the accepted rows, each once (again after a lost answer with ``resubmit``)."""
    async with run.commerce(recorder.request_log) as client:
        return await register_pickup_users(
            client,
            recorder,
            pickup_input.rows,
            endpoint=run.endpoint("commerce"),
            resubmit=request.resubmit,
            concurrency=request.concurrency,
        )


async def _write_results(
    run: Run,
    recorder: RunRecorder,
    summary: RunSummary,
    pickup_input: PickupInput,
    outcomes: list[RowOutcome],
    input_path: Path,
    output_dir: Path,
) -> Path:
    """results.csv and results.xlsx beside the input rows, and summary.md; the path of results.csv."""
    settings = run.settings
    results = results_frame(pickup_input, outcomes)
    results_csv = write_csv(results, output_dir / "results.csv", style=settings.csv_style)
    report = pickup_summary(
        input_path.name,
        outcomes,
        rejected_rows=pickup_input.rejected_rows,
        empty_rows=pickup_input.empty_rows,
        service=describe_commerce(settings),
    )
    written = [
        results_csv,
        write_xlsx(
            output_dir / "results.xlsx",
            with_banner(
                {"results": results, "rejected": pickup_input.rejected_report}, sandbox=summary.sandbox
            ),
        ),
    ]
    await recorder.documents((path.stem, path) for path in written)
    summary.update(statuses=status_counts(outcomes))
    await summary.publish(report, output_dir, description="Pickup registration")
    return results_csv
