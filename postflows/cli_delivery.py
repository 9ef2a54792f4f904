"""CLI sub-commands of the commerce API's delivery reference data and pickup flows; :func:`register` adds them
to the ``postflows`` command.

Each command runs its flow and prints the run summary as JSON; a failure prints one line and exits 1
(2 for bad usage or configuration), as every postflows command does.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Annotated

import typer

from flows.requests import OutputOptions, PickupRegistrationRequest, ReferenceDataOutput
from postflows.cli_common import prepare_flow_run, print_summary, run_flow
from postflows.cli_requests import request_command

if TYPE_CHECKING:
    from rich.table import Table


@request_command(ReferenceDataOutput)
def delivery_sync_command(
    output: ReferenceDataOutput,
    show: Annotated[bool, typer.Option("--show", help="List the holidays stored from today on")] = False,
) -> None:
    """Store holidays, additional services and delivery instructions in SQL tables (changes logged)."""
    prepare_flow_run("commerce", out=output.output_dir)
    from flows.delivery_reference_sync import delivery_reference_sync

    print_summary(run_flow(lambda: delivery_reference_sync(output=output)))
    if show:
        from core.swiss_time import swiss_today
        from postflows.console import output_console

        output_console().print(holidays_table(swiss_today()))


def holidays_table(since: dt.date) -> Table:
    """The stored holidays from ``since`` on, with their names in the four languages."""
    from rich.markup import escape
    from rich.table import Table

    import history
    from runtime.settings import get_settings

    factory = history.session_factory(get_settings().effective_database_url)
    with factory() as session:
        holidays = history.current_holidays(session, since=since)
    table = Table(title=f"Holidays from {since.isoformat()}", title_justify="left")
    for column in ("date", "de", "fr", "it", "en"):
        table.add_column(column)
    for holiday in holidays:
        names = (holiday.name_de, holiday.name_fr, holiday.name_it, holiday.name_en)
        table.add_row(holiday.holiday_date.isoformat(), *(escape(name or "") for name in names))
    return table


@request_command(PickupRegistrationRequest, OutputOptions)
def pickup_register_command(request: PickupRegistrationRequest, output: OutputOptions) -> None:
    """Register every pickup user of a file once; write the pickup ids beside the input rows."""
    from postflows import precheck

    prepare_flow_run(
        "commerce",
        out=output.output_dir,
        inputs=lambda settings: precheck.pickup_users(request.input_path, limits=settings.table_limits),
    )
    from flows.pickup_registration import pickup_registration

    print_summary(run_flow(lambda: pickup_registration(request=request, output=output)))


def register(app: typer.Typer) -> None:
    """Add the delivery and pickup sub-commands to ``app``."""
    app.command("delivery-sync")(delivery_sync_command)
    app.command("pickup-register")(pickup_register_command)
