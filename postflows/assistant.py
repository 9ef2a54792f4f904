"""Interactive address-assistant calls for the CLI: auto-complete and building verification, printed as
tables or JSON. They are single quick calls, so they run without a flow.
"""

from __future__ import annotations

import json
from typing import Literal

from rich.console import Console
from rich.table import Table

from connectors.address_service import (
    AutocompleteEntry,
    AutocompleteQuery,
    AutocompleteVariant,
    BuildingVerification,
    ZipOrderMode,
)
from postflows.console import output_console
from postflows.settings import get_settings
from postflows.wiring import address_service_client

AutocompleteAnswer = tuple[AutocompleteVariant, list[AutocompleteEntry]]


async def autocomplete(
    *,
    target: Literal["towns", "streets", "buildings"],
    zip_code: str = "",
    town_name: str = "",
    street_name: str = "",
    onrp: int = 0,
    strid: int = 0,
    house_no: str = "",
    house_no_addition: str = "",
    zip_order_mode: int = 0,
    version: int = 4,
) -> AutocompleteAnswer:
    """Ask /autocomplete{version} for towns, streets or buildings."""
    if version not in (2, 3, 4):
        raise ValueError(f"--version must be 2, 3 or 4, not {version}")
    query = AutocompleteQuery(
        target=target,
        zip_code=zip_code,
        town_name=town_name,
        street_name=street_name,
        onrp=onrp,
        strid=strid,
        house_no=house_no,
        house_no_addition=house_no_addition,
        zip_order_mode=ZipOrderMode(zip_order_mode),
    )
    async with address_service_client(get_settings()) as client:
        return await client.autocomplete(query, version=version)  # type: ignore[arg-type]


async def verify_building(
    *, street_name: str, house_no: str, zip_code: str, town_name: str, house_no_addition: str = ""
) -> BuildingVerification:
    """Ask /buildingverification2 whether a building exists."""
    async with address_service_client(get_settings()) as client:
        return await client.verify_building(
            street_name=street_name,
            house_no=house_no,
            house_no_addition=house_no_addition,
            zip_code=zip_code,
            town_name=town_name,
        )


_COLUMNS = (
    "zip_code",
    "town_name",
    "street_name",
    "house_no",
    "house_no_addition",
    "canton",
    "onrp",
    "strid",
    "house_key",
)


def render_autocomplete(
    answer: AutocompleteAnswer, *, as_json: bool = False, console: Console | None = None
) -> None:
    variant, entries = answer
    console = console or output_console()
    if as_json:
        console.print_json(
            json.dumps({"variant": variant.value, "results": [e.model_dump(mode="json") for e in entries]})
        )
        return
    # Only the columns that carry something for this query level (towns have no STRID, etc.).
    columns = [c for c in _COLUMNS if any(getattr(e, c) not in (None, "", 0) for e in entries)]
    table = Table(title=f"{len(entries)} hits ({variant.value})")
    for column in columns:
        table.add_column(column.replace("_", " "), no_wrap=True)
    for entry in entries:
        table.add_row(*("" if getattr(entry, c) is None else str(getattr(entry, c)) for c in columns))
    console.print(table)


def render_building(
    result: BuildingVerification, *, as_json: bool = False, console: Console | None = None
) -> None:
    console = console or output_console()
    if as_json:
        console.print_json(result.model_dump_json())
        return
    table = Table(title="building verification", show_header=False)
    for name, value in result.model_dump().items():
        table.add_row(name.replace("_", " "), "" if value is None else str(value))
    console.print(table)
