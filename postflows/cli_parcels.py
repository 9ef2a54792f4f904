"""CLI sub-commands of the commerce API's parcel flows: pickup points near a file's locations, address labels
and return orders from JSON request bodies; :func:`register` adds them to the ``postflows`` command.

Each command runs its flow and prints the run summary as JSON; a failure prints one line and exits 1
(2 for bad usage, configuration or an input file that cannot be used), as every postflows command does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from flows.requests import (
    AddressLabelsRequest,
    OutputOptions,
    OwnOutputOptions,
    PickupPointsRequest,
    ReturnOrderRequest,
)
from postflows.cli_common import prepare_flow_run, print_summary, run_flow, say
from postflows.cli_requests import request_command

if TYPE_CHECKING:
    from flows.return_order import ReturnOrderResult


@request_command(PickupPointsRequest, OutputOptions)
def pickup_points_command(request: PickupPointsRequest, output: OutputOptions) -> None:
    """Find the pickup points near every location of a file: one row per point, each answer as JSON."""
    from postflows import precheck

    prepare_flow_run(
        "commerce",
        out=output.output_dir,
        inputs=lambda settings: precheck.pickup_locations(request.input_path, limits=settings.table_limits),
    )
    from flows.pickup_points import pickup_points

    print_summary(run_flow(lambda: pickup_points(request=request, output=output)))


@request_command(AddressLabelsRequest, OutputOptions)
def address_labels_command(request: AddressLabelsRequest, output: OutputOptions) -> None:
    """Create an address label for every request of a JSON file, once each; save the labels as PDF files."""
    from postflows import precheck

    prepare_flow_run(
        "commerce",
        out=output.output_dir,
        inputs=lambda settings: precheck.json_bodies(request.input_path, what="address label request"),
    )
    from flows.address_labels import address_labels

    print_summary(run_flow(lambda: address_labels(request=request, output=output)))


@request_command(ReturnOrderRequest, OwnOutputOptions)
def return_order_command(request: ReturnOrderRequest, output: OwnOutputOptions) -> None:
    """Create the return order of a JSON file (or each of a list), once; print its order id."""
    from postflows import precheck

    prepare_flow_run(
        "commerce",
        out=output.output_dir,
        inputs=lambda settings: precheck.json_bodies(request.order_path, what="return order request"),
    )
    from flows.return_order import return_order

    result = run_flow(lambda: return_order(request=request, output=output))
    print_summary(result)
    for line in order_lines(result):
        say(line)


def order_lines(result: ReturnOrderResult) -> list[str]:
    """A line per order the result names: its id, or (when the answer has none) the answer."""
    orders = result.orders
    lines = []
    for order in orders:
        name = "return order" if len(orders) == 1 else f"return order {order['position']}"
        if "id" in order:
            lines.append(f"{name}: id {order['id']} ({order['status']})")
        elif "answer" in order:
            lines.append(f"{name} ({order['status']}), the answer has no id: {order['answer']}")
    return lines


def register(app: typer.Typer) -> None:
    """Add the pickup points, address label and return order sub-commands to ``app``."""
    app.command("pickup-points")(pickup_points_command)
    app.command("address-labels")(address_labels_command)
    app.command("return-order")(return_order_command)
