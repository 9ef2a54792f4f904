"""CLI sub-commands of the newspaper API flows; :func:`register` adds them to the ``postflows`` command.

Each command runs its flow and prints the run summary as JSON; a failure prints one line and exits 1
(2 for bad usage or configuration), as every postflows command does.
"""

from __future__ import annotations

from typing import Annotated

import typer

from flows.requests import (
    AddressPurchaseRequest,
    MasterDataRequest,
    NewspaperOrderRequest,
    OptionalOutputOptions,
    OwnOutputOptions,
    PollingOptions,
    ReportsRequest,
    StatisticsRequest,
    StructureFilesRequest,
)
from postflows.cli_common import prepare_flow_run, print_summary, run_flow
from postflows.cli_requests import request_command


@request_command(NewspaperOrderRequest, PollingOptions, OwnOutputOptions)
def newspaper_order_command(
    request: NewspaperOrderRequest, polling: PollingOptions, output: OwnOutputOptions
) -> None:
    """Submit an order, save its delivery note, wait while it is in CONTROL and write its reports."""
    from postflows import precheck

    prepare_flow_run("newspaper", out=output.output_dir, inputs=lambda settings: precheck.order_file(request))
    from flows.newspaper_order import newspaper_order

    print_summary(run_flow(lambda: newspaper_order(request=request, polling=polling, output=output)))


@request_command(ReportsRequest, OptionalOutputOptions)
def newspaper_reports_command(
    request: ReportsRequest,
    output: OptionalOutputOptions,
    gratis: Annotated[
        bool | None, typer.Option("--gratis/--standard", help="Kind of order (found out when not given)")
    ] = None,
) -> None:
    """Fetch status, summary, sendings, original and corrected order of an existing order; without an order
    id, fetch them again for each order of the last days whose reports are missing or older than its
    status, into the order's own folder."""
    if request.order_id is None and (output.output_dir is not None or gratis is not None):
        raise typer.BadParameter("--out and --gratis/--standard name one order: give its order id")
    if request.order_id is not None and "days" in request.model_fields_set:
        raise typer.BadParameter("--days is for a sweep of recent orders: leave out the order id")
    if gratis is not None:
        request = request.model_copy(update={"kind": "gratis" if gratis else "standard"})
    prepare_flow_run("newspaper", out=output.output_dir)
    from flows.newspaper_reports import newspaper_reports

    print_summary(run_flow(lambda: newspaper_reports(request=request, output=output)))


@request_command(MasterDataRequest, OwnOutputOptions)
def newspaper_sync_command(request: MasterDataRequest, output: OwnOutputOptions) -> None:
    """Store a newspaper's summary, distribution list and black list in the master data tables."""
    prepare_flow_run("newspaper", out=output.output_dir)
    from flows.newspaper_master_data import newspaper_master_data

    # One newspaper's run, or the runs over every newspaper synced before: either prints its summary.
    print_summary(run_flow(lambda: newspaper_master_data(request=request, output=output)).summary())


@request_command(StatisticsRequest, OptionalOutputOptions)
def newspaper_statistics_command(request: StatisticsRequest, output: OptionalOutputOptions) -> None:
    """Check a statistics file (rejected rows reported) and transmit it once."""
    from postflows import precheck

    prepare_flow_run(
        "newspaper",
        out=output.output_dir,
        inputs=lambda settings: precheck.statistics_files(request, limits=settings.table_limits),
    )
    from flows.newspaper_statistics import newspaper_statistics

    # One file's run, or the runs over a folder of files: either prints its summary.
    print_summary(run_flow(lambda: newspaper_statistics(request=request, output=output)).summary())


@request_command(AddressPurchaseRequest, PollingOptions, OwnOutputOptions)
def address_purchase_command(
    request: AddressPurchaseRequest, polling: PollingOptions, output: OwnOutputOptions
) -> None:
    """Order validation and sorting of an address list; write output addresses and documents."""
    from postflows import precheck

    prepare_flow_run(
        "newspaper",
        out=output.output_dir,
        inputs=lambda settings: precheck.purchase_files(request, limits=settings.table_limits),
    )
    from flows.address_purchase import address_purchase

    print_summary(run_flow(lambda: address_purchase(request=request, polling=polling, output=output)))


@request_command(StructureFilesRequest, OwnOutputOptions)
def structure_files_command(request: StructureFilesRequest, output: OwnOutputOptions) -> None:
    """Download structure files; a file is recorded as new only when its content changed."""
    if request.file_code not in (1, 2, 9):
        raise typer.BadParameter(f"CODE must be 1, 2 or 9, not {request.file_code}")
    if request.notify_email is not None:
        from connectors.validation import email_problem

        if problem := email_problem(request.notify_email):
            raise typer.BadParameter(f"{problem}; nothing was sent", param_hint="--notify")
    prepare_flow_run("newspaper", out=output.output_dir)
    from flows.structure_files import structure_files

    print_summary(run_flow(lambda: structure_files(request=request, output=output)))


def register(app: typer.Typer) -> None:
    """Add the newspaper sub-commands to ``app``."""
    app.command("newspaper-order")(newspaper_order_command)
    app.command("newspaper-reports")(newspaper_reports_command)
    app.command("newspaper-sync")(newspaper_sync_command)
    app.command("newspaper-statistics")(newspaper_statistics_command)
    app.command("address-purchase")(address_purchase_command)
    app.command("structure-files")(structure_files_command)
