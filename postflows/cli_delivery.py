"""CLI sub-commands of the commerce API's delivery reference data and pickup flows; :func:`register` adds them
to the ``postflows`` command.

Each command runs its flow and prints the run summary as JSON; a failure prints one line and exits 1
(2 for bad usage or configuration), as every postflows command does.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from postflows.cli_common import OutOpt, ResubmitOpt, prepare_flow_run, print_summary, run_work

if TYPE_CHECKING:
    from rich.table import Table


def delivery_sync_command(
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Also write the lists as received and summary.md here")
    ] = None,
    show: Annotated[bool, typer.Option("--show", help="List the holidays stored from today on")] = False,
) -> None:
    """Store holidays, additional services and delivery instructions in SQL tables (changes logged)."""
    prepare_flow_run("commerce", out=out)
    from flows.delivery_reference_sync import delivery_reference_sync

    print_summary(run_work(lambda: delivery_reference_sync(output_dir=out)))
    if show:
        from postflows.console import output_console

        output_console().print(holidays_table(dt.date.today()))


def holidays_table(since: dt.date) -> Table:
    """The stored holidays from ``since`` on, with their names in the four languages."""
    from rich.markup import escape
    from rich.table import Table

    import history
    from postflows.settings import get_settings

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


def pickup_register_command(
    input_path: Annotated[
        Path,
        typer.Argument(
            help="Pickup users: .csv or .xlsx (firstName, lastName, zip, … in any case)",
        ),
    ],
    out: OutOpt,
    resubmit: ResubmitOpt = False,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Registrations in flight")] = 4,
) -> None:
    """Register every pickup user of a file once; write the pickup ids beside the input rows."""
    from postflows import precheck

    prepare_flow_run(
        "commerce",
        out=out,
        inputs=lambda settings: precheck.pickup_users(input_path, limits=settings.table_limits),
    )
    from flows.pickup_registration import pickup_registration

    summary = run_work(
        lambda: pickup_registration(
            input_path=input_path, output_dir=out, resubmit=resubmit, concurrency=concurrency
        )
    )
    print_summary(summary)


def register(app: typer.Typer) -> None:
    """Add the delivery and pickup sub-commands to ``app``."""
    app.command("delivery-sync")(delivery_sync_command)
    app.command("pickup-register")(pickup_register_command)
