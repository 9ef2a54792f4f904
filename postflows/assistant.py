"""Interactive address-assistant calls for the CLI: auto-complete and building verification, printed as
tables or JSON. They are single quick calls, so they run without a flow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from connectors.address_service import (
    AutocompleteEntry,
    AutocompleteQuery,
    AutocompleteVariant,
    BuildingVerification,
    ZipOrderMode,
)
from core.json_text import json_text
from postflows.assistant_requests import AutocompleteRequest
from postflows.console import output_console
from runtime.settings import get_settings
from runtime.wiring import address_assistant_client

AutocompleteAnswer = tuple[AutocompleteVariant, list[AutocompleteEntry]]


async def autocomplete(request: AutocompleteRequest) -> AutocompleteAnswer:
    """Ask /autocomplete{version} for towns, streets or buildings (``zip_filter_mode``: autocomplete4's)."""
    version = request.version
    if version not in (2, 3, 4):
        raise ValueError(f"--version must be 2, 3 or 4, not {version}")
    if request.zip_filter_mode and version != 4:
        raise ValueError(f"--zip-filter-mode is sent by autocomplete4 only, not by --version {version}")
    query = AutocompleteQuery(
        target=request.target,
        zip_code=request.zip_code,
        town_name=request.town_name,
        street_name=request.street_name,
        onrp=request.onrp,
        strid=request.strid,
        house_no=request.house_no,
        house_no_addition=request.house_no_addition,
        zip_order_mode=ZipOrderMode(request.zip_order_mode),
        zip_filter_mode=request.zip_filter_mode,
    )
    async with address_assistant_client(get_settings()) as client:
        return await client.autocomplete(query, version=version)  # type: ignore[arg-type]


async def verify_building(asked: BuildingQuery) -> BuildingVerification:
    """Ask /buildingverification2 whether a building exists."""
    async with address_assistant_client(get_settings()) as client:
        return await client.verify_building(
            street_name=asked.street_name,
            house_no=asked.house_no,
            house_no_addition=asked.house_no_addition,
            zip_code=asked.zip_code,
            town_name=asked.town_name,
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
            json_text({"variant": variant.value, "results": [e.model_dump(mode="json") for e in entries]})
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


@dataclass(frozen=True)
class BuildingQuery:
    """The building asked for, as the user wrote it."""

    street_name: str
    house_no: str
    zip_code: str
    town_name: str
    house_no_addition: str = ""


def building_verdict(result: BuildingVerification, asked: BuildingQuery) -> str:
    """What the answer says, read as §4.4 describes it: an accurate address comes back with its house key
    and the address in the official spelling; without a house key the building was not found as given."""
    if not result.house_key:
        return "not found as given: the service returned no house key for this address"
    official = _spelled(
        result.street_name, result.house_no, result.house_no_addition, result.zip_code, result.town_name
    )
    given = _spelled(
        asked.street_name, asked.house_no, asked.house_no_addition, asked.zip_code, asked.town_name
    )
    if official.casefold() == given.casefold() or not official.strip(" ,"):
        return f"the building exists (house key {result.house_key})"
    return f"the building exists (house key {result.house_key}); official spelling: {official}"


def pstat_text(pstat: int | None, meanings: Mapping[int, str]) -> str:
    """PSTAT with its meaning where the settings name one; the specification does not publish the values."""
    if pstat is None:
        return "not given"
    meaning = meanings.get(pstat)
    if meaning:
        return f"{pstat} ({meaning})"
    return (
        f"{pstat} (its values are not published in the service's specification; "
        "POSTFLOWS_ADDRESS_PSTAT_MEANINGS can name them)"
    )


def render_building(
    result: BuildingVerification,
    asked: BuildingQuery,
    *,
    meanings: Mapping[int, str] | None = None,
    as_json: bool = False,
    console: Console | None = None,
) -> None:
    console = console or output_console()
    verdict = building_verdict(result, asked)
    if as_json:
        console.print_json(json_text({**result.model_dump(mode="json"), "verdict": verdict}, ascii_only=True))
        return
    table = Table(title="building verification", show_header=False)
    table.add_row("verdict", verdict)
    table.add_row("PSTAT", pstat_text(result.pstat, meanings or {}))
    for name, value in result.model_dump().items():
        if name != "pstat":
            table.add_row(name.replace("_", " "), "" if value is None else str(value))
    console.print(table)


def _spelled(
    street: str | None, number: str | None, addition: str | None, zip_code: str | None, town: str | None
) -> str:
    house = f"{number or ''}{addition or ''}".strip()
    return f"{street or ''} {house}, {zip_code or ''} {town or ''}".strip()
