"""CLI sub-commands of the commerce API's address validation and deliverability flows; :func:`register` adds
them to the ``postflows`` command.

Each command runs its flow and prints the run summary as JSON. Rows the service refuses are results, not
failures: the command exits 0 when every row ended in the results or in rejected.csv; 1 when the work
failed, 2 for bad usage or configuration, as every postflows command does.
"""

from __future__ import annotations

import typer

from flows.requests import AddressValidationRequest, DeliverabilityRequest, OutputOptions
from flows.requests.commerce import MAX_DAYS
from postflows.cli_common import prepare_flow_run, print_summary, run_flow
from postflows.cli_requests import request_command


@request_command(AddressValidationRequest, OutputOptions)
def address_validation_command(request: AddressValidationRequest, output: OutputOptions) -> None:
    """Validate every address of a file: certified address, quality, house key, changed fields."""
    from postflows import precheck

    prepare_flow_run(
        "commerce",
        out=output.output_dir,
        inputs=lambda settings: precheck.commerce_request(
            request, limits=settings.table_limits, use="validation"
        ),
    )
    from flows.address_validation import address_validation

    print_summary(run_flow(lambda: address_validation(request=request, output=output)))


@request_command(DeliverabilityRequest, OutputOptions)
def deliverability_command(request: DeliverabilityRequest, output: OutputOptions) -> None:
    """On which days, with which products, every address of a file can be delivered."""
    from postflows import precheck

    if not 1 <= request.days <= MAX_DAYS:
        raise typer.BadParameter(f"must be between 1 and {MAX_DAYS}, got {request.days}", param_hint="--days")
    if request.dates and "days" in request.model_fields_set:
        raise typer.BadParameter(
            "explicit delivery dates exclude --days: give one or the other", param_hint="--days"
        )
    prepare_flow_run(
        "commerce",
        out=output.output_dir,
        inputs=lambda settings: precheck.deliverability_request(request, limits=settings.table_limits),
    )
    from flows.deliverability_check import deliverability_check

    print_summary(run_flow(lambda: deliverability_check(request=request, output=output)))


def register(app: typer.Typer) -> None:
    """Add the address validation and deliverability sub-commands to ``app``."""
    app.command("address-validation")(address_validation_command)
    app.command("deliverability")(deliverability_command)
