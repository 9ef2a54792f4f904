"""The same-day acceptance points of an address (commerce API §2.8): where, for which products and until
when a shipment for a same-day delivery to the address can be handed in."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from prefect import flow, get_run_logger
from pydantic import Field

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from core.swiss_time import swiss_today
from fileio.lazy import lazy_module
from flows.commerce_results import KeepsNone
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.requests import LookupOutput, SameDayAcceptanceRequest
from flows.runs import RunSummary, begin_run, recorded_run
from history.identity import derive_key
from tasks.commerce.same_day import (
    AcceptanceAnswer,
    acceptance_markdown,
    acceptance_request,
    acceptance_table,
    fetch_acceptance_points,
    write_acceptance,
)
from tasks.retrying import run_step

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

FLOW_NAME = "same-day-acceptance"


class SameDayAcceptanceResult(KeepsNone):
    """The acceptance points found for a same-day delivery: the day, the answer's quality, the counts of
    products and drop-off points, or the service's "no results" (``no_results``) with the note that the path
    asked is a guess (``path_guess``); and, not kept with the run, the answer as received (``answer``)."""

    delivery_date: str
    quality: str | None
    products: int
    drop_off_points: int
    no_results: str | None
    path_guess: str | None
    answer: dict[str, Any] | None = Field(exclude=True)


@flow(
    on_failure=ON_FAILURE,
    name=FLOW_NAME,
    log_prints=False,
    flow_run_name=run_name(FLOW_NAME, "request.zip_code"),
)
async def same_day_acceptance(
    request: Annotated[
        SameDayAcceptanceRequest,
        form("Address and day", "The address a same-day delivery goes to, and when."),
    ],
    output: Annotated[
        LookupOutput, form("Output", "Where the acceptance points go on the worker, if anywhere.")
    ] = LookupOutput(),  # noqa: B008 - an immutable part, the form's default
) -> SameDayAcceptanceResult:
    """Find the acceptance points where a shipment for a same-day delivery to an address can be handed in:
    the products, each drop-off point and its last drop-off time.

    A 404 is the service's "no results" (no same-day service to that address on that day): the run
    completes with no points and says ``no results (404)``, noting that the path is a guess (the spec shows
    none, and a wrong path answers 404 as well) which ``postflows doctor --live`` checks. A 405 fails the run
    naming the path's setting. The answer may be long: every point goes to the files, the summary shows the
    first 50.

    Args:
        request: the address (zip required; city, street and house number as the service needs them) and the
            day of the delivery (today, Swiss time, when empty).
        output: where acceptance-points.csv, acceptance-points.xlsx (no rows after a 404) and summary.md go;
            none are written when empty.

    Returns:
        The run's result: the day, the quality, the counts of products and drop-off points (or the service's
        "no results" and ``path_guess``, the note on the guessed path) and the files; and, not kept with the
        run, the answer as received (``answer``).
    """
    run = begin_run(FLOW_NAME)
    settings = run.settings
    day, output_dir = request.delivery_date or swiss_today(), output.output_dir
    asked = acceptance_request(
        zip_code=request.zip_code,
        city=request.city,
        street=request.street,
        house_number=request.house_number,
        day=day,
    )
    body = asked.to_body()
    key = derive_key(FLOW_NAME, endpoint=run.endpoint("commerce"), parameters=body)
    async with recorded_run(
        run,
        idempotency_key=key,
        parameters={**body, "output_dir": output_dir},
    ) as (recorder, summary):
        async with run.commerce(recorder.request_log) as client:
            found = await run_step(fetch_acceptance_points, client, asked)
        table = acceptance_table(found.answer)
        if output_dir is not None:
            written = write_acceptance(
                table, Path(output_dir), csv_style=settings.csv_style, sandbox=recorder.outputs.sandbox
            )
            await recorder.documents((path.name, path) for path in written)
        await _report(summary, found, table, request, day, output_dir)
        return summary.result(SameDayAcceptanceResult, answer=found.as_received())


async def _report(
    summary: RunSummary,
    found: AcceptanceAnswer,
    table: pd.DataFrame,
    request: SameDayAcceptanceRequest,
    day: dt.date,
    output_dir: Path | None,
) -> None:
    """Count the answer into the summary and publish it (with summary.md in the output folder, if any)."""
    answer = found.answer
    summary.update(
        delivery_date=day.isoformat(),
        quality=str(answer.quality) if answer is not None and answer.quality is not None else None,
        products=len(answer.results) if answer is not None else 0,
        drop_off_points=len(table),
        no_results=found.no_results,
        path_guess=found.path_guess,
    )
    place = " ".join(filter(None, [request.zip_code, request.city]))
    title = f"Same-day acceptance points for {place} on {day.isoformat()}"
    await summary.publish(acceptance_markdown(title, found, table), output_dir, description=title)
    get_run_logger().info(
        "same-day %s: %d drop-off points%s",
        day.isoformat(),
        len(table),
        f" ({found.no_results})" if found.no_results else "",
    )
