"""The commerce look-ups that run as flows (``postflows commerce product|same-day``): each runs its flow, so
the run is in the history and the Prefect UI, and prints the answer readably (``--json``: as received) on
stdout; where the run went and the files it wrote go to stderr. A failure prints one line and exits 1 (a
product the service does not know too, as every "not found" of the commerce commands), 2 for bad usage or
configuration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from core.json_text import json_text
from flows.requests import LogisticProductRequest, LookupOutput, SameDayAcceptanceRequest
from postflows.cli_common import prepare_flow_run, run_flow, say
from postflows.cli_requests import request_command

if TYPE_CHECKING:
    from rich.console import Console

    from flows.logistic_product import LogisticProductResult
    from flows.same_day_acceptance import SameDayAcceptanceResult

JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print the answer as received (JSON) instead of tables")
]
SHOWN_POINTS = 50


@request_command(LogisticProductRequest, LookupOutput)
def product_command(request: LogisticProductRequest, output: LookupOutput, as_json: JsonOpt = False) -> None:
    """How a logistic product is delivered: its barcode, delivery instructions and additional services."""
    prepare_flow_run("commerce", out=output.output_dir)
    from flows.logistic_product import logistic_product

    result = run_flow(lambda: logistic_product(request=request, output=output), progress=False)
    console = _answered(result, as_json=as_json)
    if console is not None:
        render_product(result.answer, result.names, console)


@request_command(SameDayAcceptanceRequest, LookupOutput)
def same_day_command(
    request: SameDayAcceptanceRequest, output: LookupOutput, as_json: JsonOpt = False
) -> None:
    """Where a shipment for a same-day delivery to an address can be handed in, and until when."""
    prepare_flow_run("commerce", out=output.output_dir)
    from flows.same_day_acceptance import same_day_acceptance

    result = run_flow(lambda: same_day_acceptance(request=request, output=output), progress=False)
    console = _answered(result, as_json=as_json)
    if console is not None:
        render_acceptance(result, console)


def _answered(result: LogisticProductResult | SameDayAcceptanceResult, *, as_json: bool) -> Console | None:
    """Say where the run went, and print the answer as received with ``as_json``; else the console to
    render it on."""
    _said_where(result)
    console = _console()
    if not as_json:
        return console
    console.print_json(json_text(result.answer))
    return None


def _console() -> Console:
    from postflows.console import output_console

    return output_console()


def _said_where(result: LogisticProductResult | SameDayAcceptanceResult) -> None:
    say(f"run {result.run_id} recorded in the history")
    for path in result.files:
        say(f"wrote {path}")


def render_product(answer: dict[str, Any], names: dict[str, dict[str, str]], console: Console) -> None:
    """A logistic product as received, readably: code and barcode, then its delivery instructions and its
    additional services (mandatory ones marked) with the stored names of their codes."""
    from rich.text import Text

    instructions = answer.get("deliveryInstructions") or []
    services = answer.get("additionalServices") or []
    mandatory = [str(item.get("code")) for item in services if item.get("mandatory")]
    lines = [f"product {answer.get('productCode')}, barcode {answer.get('barcode') or '-'}"]
    lines.append(f"delivery instructions ({len(instructions)}):")
    lines += _coded_lines(instructions, names["deliveryInstructions"], marked=None)
    lines.append(f"additional services ({len(services)}; mandatory: {', '.join(mandatory) or 'none'}):")
    lines += _coded_lines(services, names["additionalServices"], marked="mandatory")
    if not (names["deliveryInstructions"] or names["additionalServices"]):
        lines.append("(the names of the codes come from `postflows delivery-sync`, which stored none yet)")
    for line in lines:
        console.print(Text(line), soft_wrap=True)


def _coded_lines(items: list[dict[str, Any]], names: dict[str, str], *, marked: str | None) -> list[str]:
    """One line per item: its code, ``marked`` when that field of it is true, and its stored name."""
    codes = [str(item.get("code")) for item in items]
    width = max((len(code) for code in codes), default=0)
    lines = []
    for code, item in zip(codes, items, strict=True):
        mark = f"  {marked.upper()}" if marked is not None and item.get(marked) else ""
        room = len(marked) + 2 if marked is not None else 0
        lines.append(f"  {code:<{width}}{mark:<{room}}  {names.get(code, '')}".rstrip())
    return lines or ["  none"]


def render_acceptance(found: SameDayAcceptanceResult, console: Console) -> None:
    """The acceptance points of a same-day answer as a table (the first :data:`SHOWN_POINTS` rows), or the
    service's "no results" and the note that the path asked is a guess."""
    from rich.table import Table
    from rich.text import Text

    day = found.delivery_date
    if found.answer is None:
        console.print(Text(f"no acceptance points on {day}: {found.no_results}"), soft_wrap=True)
        if found.path_guess:
            console.print(Text(f"note: {found.path_guess}"), soft_wrap=True)
        return
    rows = [
        (result, drop_off)
        for result in found.answer.get("results") or []
        for drop_off in result.get("dropOffInfo") or [{}]
    ]
    table = Table(title=f"{len(rows)} acceptance points on {day}", title_justify="left")
    for column in ("products", "drop-off point", "street", "zip/city", "last drop-off"):
        table.add_column(column, no_wrap=True)
    for result, drop_off in rows[:SHOWN_POINTS]:
        point = drop_off.get("dropOffPoint") or {}
        place = point.get("zip") or {}
        street = " ".join(str(part) for part in (point.get("street"), point.get("streetNumber")) if part)
        city = " ".join(str(part) for part in (place.get("zip"), place.get("city")) if part)
        cells = (
            result.get("productCode"),
            point.get("description"),
            street,
            city,
            drop_off.get("lastDropOffTime"),
        )
        table.add_row(*(Text("" if cell is None else str(cell)) for cell in cells))
    console.print(table)
    if len(rows) > SHOWN_POINTS:
        more = len(rows) - SHOWN_POINTS
        console.print(
            Text(f"… {more} more: every point is in the files of --out, or with --json"), soft_wrap=True
        )


def register(commerce_app: typer.Typer) -> None:
    """Add the look-ups that run as flows to the ``postflows commerce`` group."""
    commerce_app.command("product")(product_command)
    commerce_app.command("same-day")(same_day_command)
