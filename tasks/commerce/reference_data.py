"""Prefect tasks of the delivery reference data sync: fetch holidays, additional services and delivery
instructions (§2.7), store them in the SQL tables (upsert, change log) and describe what changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prefect import task
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel

import history
from connectors.commerce import AdditionalService, CommerceClient, DeliveryInstruction, Holiday
from core.json_text import json_text
from fileio.lazy import lazy_module
from fileio.reports import markdown_table
from history import SyncCounts as SyncCounts
from history.reference.commerce import SOURCE
from tasks.retrying import idempotent_step

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

HOLIDAYS = "holidays"
ADDITIONAL_SERVICES = "additional services"
DELIVERY_INSTRUCTIONS = "delivery instructions"
TABLES = (HOLIDAYS, ADDITIONAL_SERVICES, DELIVERY_INSTRUCTIONS)
CHANGE_COLUMNS = ("entity", "key", "change", "field", "old", "new")
MAX_CHANGES_SHOWN = 50


@dataclass(frozen=True)
class ReferenceData:
    """What the service answered for the three option lists."""

    holidays: list[Holiday]
    additional_services: list[AdditionalService]
    delivery_instructions: list[DeliveryInstruction]

    def records(self) -> dict[str, list[dict[str, Any]]]:
        """Each list's records as received (the spec's field names, unknown fields kept), by table."""
        return {
            HOLIDAYS: _as_received(self.holidays),
            ADDITIONAL_SERVICES: _as_received(self.additional_services),
            DELIVERY_INSTRUCTIONS: _as_received(self.delivery_instructions),
        }


@idempotent_step("commerce-fetch-reference-data")
async def fetch_reference_data(client: CommerceClient) -> ReferenceData:
    """GET options/holidays, options/additionalservices and options/deliveryinstructions."""
    return ReferenceData(
        holidays=await client.holidays(),
        additional_services=await client.additional_services(),
        delivery_instructions=await client.delivery_instructions(),
    )


@task(name="commerce-store-reference-data", cache_policy=NO_CACHE)
def store_reference_data(database_url: str, run_id: int, data: ReferenceData) -> dict[str, SyncCounts]:
    """Upsert the three lists into their tables in one transaction; returns counts per table."""
    records = data.records()
    factory = history.session_factory(database_url)
    with factory.begin() as session:
        return {
            HOLIDAYS: history.sync_holidays(session, records[HOLIDAYS], run_id=run_id),
            ADDITIONAL_SERVICES: history.sync_additional_services(
                session, records[ADDITIONAL_SERVICES], run_id=run_id
            ),
            DELIVERY_INSTRUCTIONS: history.sync_delivery_instructions(
                session, records[DELIVERY_INSTRUCTIONS], run_id=run_id
            ),
        }


def changes_of_run(database_url: str, run_id: int) -> pd.DataFrame:
    """The change log entries one run wrote for the commerce reference data."""
    factory = history.session_factory(database_url)
    with factory() as session:
        changes = history.master_data_changes(session, source=SOURCE, run_id=run_id)
        return pd.DataFrame(
            [
                (
                    change.entity,
                    change.entity_key,
                    change.change,
                    change.field,
                    change.old_value,
                    change.new_value,
                )
                for change in changes
            ],
            columns=list(CHANGE_COLUMNS),
        )


def describe_counts(counts: SyncCounts) -> str:
    """``3 added, 1 changed, 0 removed, 12 unchanged``."""
    return (
        f"{counts.added} added, {counts.changed} changed, {counts.removed} removed, "
        f"{counts.unchanged} unchanged"
    )


def reference_summary(counts: Mapping[str, SyncCounts], changes: pd.DataFrame, *, service: str) -> str:
    """The run's markdown summary: counts per table, then this run's changes (old → new per field)."""
    lines = ["# Delivery reference data", "", f"Service: {service}", ""]
    lines += ["| table | added | changed | removed | unchanged |", "| --- | --- | --- | --- | --- |"]
    lines += [
        f"| {table} | {count.added} | {count.changed} | {count.removed} | {count.unchanged} |"
        for table, count in counts.items()
    ]
    lines += ["", "## Changes", ""]
    if changes.empty:
        lines.append("_none: the stored data already matched the service_")
    else:
        shown = changes.assign(old=changes["old"].map(_compact), new=changes["new"].map(_compact))
        lines.append(markdown_table(shown, max_rows=MAX_CHANGES_SHOWN))
    return "\n".join(lines) + "\n"


def _as_received(items: Sequence[BaseModel]) -> list[dict[str, Any]]:
    return [item.model_dump(mode="json", by_alias=True, exclude_unset=True) for item in items]


def _compact(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, Mapping | list):
        return json_text(value, compact=True)
    return str(value)
