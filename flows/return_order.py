"""Return orders (commerce API, return order sub-API v2, §4.4): the order (or orders) of a JSON file created
once each, each answer written as received, the order ids named."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from flows.body_submissions import body_run
from flows.commerce_results import PostedBodies
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.requests import OwnOutputOptions, ReturnOrderRequest
from flows.runs import begin_run
from runtime.endpoints import describe_commerce
from tasks.commerce.json_submissions import status_counts
from tasks.commerce.return_orders import (
    RETURN_ORDERS,
    orders_in_summary,
    return_orders_summary,
    write_return_orders,
)

FLOW_NAME = "return-order"
ORDERS_FOLDER = "return-orders"


class ReturnOrderResult(PostedBodies):
    """What a return order run did with the orders of its file: the orders per status, and the first
    orders (``orders``: each one's position, status and id, or its answer when that has no id)."""

    orders: list[dict[str, Any]]


@flow(on_failure=ON_FAILURE, name=FLOW_NAME, flow_run_name=run_name(FLOW_NAME, "request.order_path"))
async def return_order(
    request: Annotated[ReturnOrderRequest, form("Return order", "The return order as a JSON file.")],
    output: Annotated[
        OwnOutputOptions, form("Output", "Where the answers go on the worker.")
    ] = OwnOutputOptions(),  # noqa: B008 - an immutable part, the form's default
) -> ReturnOrderResult:
    """Create the return order of a JSON file (or each of a list of them), once.

    The order is read first (a JSON object, an array of objects or JSON lines, bounded in size, depth and
    count) and posted as it is; a file that cannot be used is refused before anything is sent. A re-run of
    the same file resumes, writing the answer kept from the first run; an order whose answer was lost is
    reported as uncertain and the run fails until it is sent again with ``resubmit``.

    Args:
        request: the return order (JSON) and whether to send an order whose earlier answer was lost again
            (check first that it was not created).
        output: where return-order.json (return-order-<n>.json for several), return-orders.csv and
            summary.md go (default: data dir/return-orders/<file name>).

    Returns:
        The run's result: orders read, orders per status, each order's id (or its answer, without one), the
        files written.
    """
    run = begin_run(FLOW_NAME)
    settings = run.settings
    order_path = Path(request.order_path)
    output_dir = output.folder_or(settings.data_dir / ORDERS_FOLDER / order_path.stem)
    parameters = {"order_path": order_path, "output_dir": output_dir, "resubmit": request.resubmit}
    async with body_run(run, RETURN_ORDERS, ReturnOrderResult, parameters=parameters) as posting:
        bodies, outcomes = await posting.post(
            order_path, lambda client: client.create_return_order_as_received, resubmit=request.resubmit
        )
        index, files = write_return_orders(
            outcomes, bodies, output_dir, kept=posting.kept, csv_style=settings.csv_style
        )
        counts = status_counts(outcomes)
        posting.summary.update(orders=orders_in_summary(outcomes, posting.kept))
        get_run_logger().info("return orders: %s", counts)
        report = return_orders_summary(order_path.name, outcomes, index, service=describe_commerce(settings))
        return await posting.end(
            outcomes, files, counts=counts, report=report, output_dir=output_dir, description="Return order"
        )
