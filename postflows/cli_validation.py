"""CLI sub-commands of the commerce API's address validation and deliverability flows; :func:`register` adds
them to the ``postflows`` command.

Each command runs its flow and prints the run summary as JSON. Rows the service refuses are results, not
failures: the command exits 0 when every row ended in the results or in rejected.csv; 1 when the work
failed, 2 for bad usage or configuration, as every postflows command does.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer

from postflows.cli_common import OutOpt, prepare_flow_run, print_summary, run_work

InputArg = Annotated[Path, typer.Argument(help="Address file: .csv or .xlsx")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1, help="Requests in flight at once")]
SheetOpt = Annotated[
    str | None, typer.Option("--sheet", help="Worksheet of an .xlsx input (default: the first)")
]
DelimiterOpt = Annotated[
    str | None, typer.Option("--delimiter", help="Input field separator (default: detected)")
]
EncodingOpt = Annotated[str | None, typer.Option("--encoding", help="Input encoding (default: detected)")]


def _unescape(value: str | None) -> str | None:
    return value.encode().decode("unicode_escape") if value else value


def _day(value: str | None) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        raise typer.BadParameter(
            f"expected a date as YYYY-MM-DD, got {value!r}", param_hint="--from"
        ) from None


def address_validation_command(
    input_path: InputArg,
    out: OutOpt,
    concurrency: ConcurrencyOpt = 8,
    sheet: SheetOpt = None,
    delimiter: DelimiterOpt = None,
    encoding: EncodingOpt = None,
) -> None:
    """Validate every address of a file: certified address, quality, house key, changed fields."""
    from postflows import precheck

    prepare_flow_run(
        "commerce",
        out=out,
        inputs=lambda settings: precheck.commerce_addresses(
            input_path,
            limits=settings.table_limits,
            use="validation",
            delimiter=_unescape(delimiter),
            encoding=encoding,
            sheet=sheet,
        ),
    )
    from flows.address_validation import address_validation

    summary = run_work(
        lambda: address_validation(
            input_path=input_path,
            output_dir=out,
            concurrency=concurrency,
            input_sheet=sheet,
            input_delimiter=_unescape(delimiter),
            input_encoding=encoding,
        )
    )
    print_summary(summary)


def deliverability_command(
    input_path: InputArg,
    out: OutOpt,
    start: Annotated[
        str | None, typer.Option("--from", help="First day, YYYY-MM-DD (default: today)", show_default=False)
    ] = None,
    days: Annotated[int, typer.Option("--days", help="Number of days from the first (at most 60)")] = 14,
    concurrency: ConcurrencyOpt = 8,
    sheet: SheetOpt = None,
    delimiter: DelimiterOpt = None,
    encoding: EncodingOpt = None,
) -> None:
    """On which days, with which products, every address of a file can be delivered."""
    from fileio.commerce.days import MAX_DAYS
    from postflows import precheck

    if not 1 <= days <= MAX_DAYS:
        raise typer.BadParameter(f"must be between 1 and {MAX_DAYS}, got {days}", param_hint="--days")
    first = _day(start)
    prepare_flow_run(
        "commerce",
        out=out,
        inputs=lambda settings: precheck.commerce_addresses(
            input_path,
            limits=settings.table_limits,
            use="delivery",
            delimiter=_unescape(delimiter),
            encoding=encoding,
            sheet=sheet,
        ),
    )
    from flows.deliverability_check import deliverability_check

    summary = run_work(
        lambda: deliverability_check(
            input_path=input_path,
            output_dir=out,
            start=first,
            days=days,
            concurrency=concurrency,
            input_sheet=sheet,
            input_delimiter=_unescape(delimiter),
            input_encoding=encoding,
        )
    )
    print_summary(summary)


def register(app: typer.Typer) -> None:
    """Add the address validation and deliverability sub-commands to ``app``."""
    app.command("address-validation")(address_validation_command)
    app.command("deliverability")(deliverability_command)
