"""Prefect tasks of the master data sync: fetch a newspaper's summary, distribution list and black list,
store them in the SQL tables (upsert, change log) and lay them out for the workbook.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prefect import task
from prefect.cache_policies import NO_CACHE

import history
from connectors.newspaper import (
    ApiResult,
    DistributionList,
    NewspaperClient,
    NewspaperMessage,
    NewspaperRejected,
    NewspaperSummary,
    RawResponse,
)
from fileio.lazy import lazy_module
from fileio.newspaper.outputs import key_value_frame, records_frame
from history import SyncCounts as SyncCounts
from tasks.retrying import idempotent_step

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

NO_DISTRIBUTION_LIST = "0100"


@dataclass
class MasterData:
    """What the service answered for one newspaper; lists are None when it has none (``0100``)."""

    newspaper_number: int
    summary: NewspaperSummary
    distribution: DistributionList | None = None
    black_list: RawResponse | None = None
    warnings: list[tuple[str, NewspaperMessage]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@idempotent_step("newspaper-fetch-master-data")
async def fetch_master_data(client: NewspaperClient, newspaper_number: int) -> MasterData:
    """Fetch summary, distribution list and black list; a newspaper without lists (``0100``) gets a note."""
    summary = await client.get_newspaper_summary(newspaper_number)
    data = MasterData(newspaper_number, summary.value)
    data.warnings += [("newspaper summary", warning) for warning in summary.warnings]
    distribution = await _unless_no_list(
        data, "distribution list", client.get_distribution_list(newspaper_number)
    )
    if distribution is not None:
        data.distribution = distribution.value
        data.warnings += [("distribution list", warning) for warning in distribution.warnings]
        black = await _unless_no_list(data, "black list", client.get_black_list(newspaper_number))
        if black is not None:
            data.black_list = black.value
            data.warnings += [("black list", warning) for warning in black.warnings]
    return data


async def _unless_no_list(data: MasterData, what: str, call: Any) -> ApiResult[Any] | None:
    try:
        result: ApiResult[Any] = await call
    except NewspaperRejected as error:
        if error.code != NO_DISTRIBUTION_LIST:
            raise
        data.notes.append(f"{what}: {error.remote_message}")
        return None
    return result


def black_list_entries(body: Any) -> list[Any]:
    """The entries of a black list answer (shape not in the spec): a top-level list, else the first list of
    objects in the object, else the whole body as one entry; nothing is dropped."""
    if body is None:
        return []
    if isinstance(body, list):
        return list(body)
    if isinstance(body, Mapping):
        for value in body.values():
            if isinstance(value, list) and all(isinstance(item, Mapping) for item in value):
                return list(value)
    return [body]


def distribution_parts(distribution: DistributionList) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The list-level fields and the details of a distribution list, as received."""
    body = distribution.model_dump(mode="json", by_alias=True, exclude_unset=True)
    details = body.pop("distributionListDetails", None) or []
    return body, list(details)


@task(name="newspaper-store-master-data", cache_policy=NO_CACHE)
def store_master_data(database_url: str, run_id: int, data: MasterData) -> dict[str, SyncCounts]:
    """Upsert everything fetched into the master data tables in one transaction; returns counts per table."""
    counts: dict[str, SyncCounts] = {}
    factory = history.session_factory(database_url)
    with factory.begin() as session:
        counts["newspaper summary"] = history.upsert_newspaper_summary(
            session,
            newspaper_number=data.newspaper_number,
            record=data.summary.model_dump(mode="json", by_alias=True, exclude_unset=True),
            run_id=run_id,
        )
        if data.distribution is not None:
            header, details = distribution_parts(data.distribution)
            counts["distribution list"] = history.sync_distribution_list(
                session, newspaper_number=data.newspaper_number, header=header, details=details, run_id=run_id
            )
        if data.black_list is not None:
            counts["black list"] = history.sync_black_list(
                session,
                newspaper_number=data.newspaper_number,
                entries=black_list_entries(data.black_list.body),
                run_id=run_id,
            )
    return counts


def synced_newspapers(database_url: str) -> list[int]:
    """The numbers of the newspapers whose master data was synced before (blocking: call it in a thread)."""
    factory = history.session_factory(database_url)
    with factory() as session:
        return history.synced_newspaper_numbers(session)


def changes_of_run(database_url: str, run_id: int) -> pd.DataFrame:
    """The change log entries one run wrote."""
    factory = history.session_factory(database_url)
    with factory() as session:
        changes = history.master_data_changes(session, run_id=run_id)
        return records_frame(
            [
                {
                    "entity": change.entity,
                    "key": change.entity_key,
                    "change": change.change,
                    "field": change.field,
                    "old": change.old_value,
                    "new": change.new_value,
                    "changed_at": change.changed_at.isoformat(),
                }
                for change in changes
            ],
            ("entity", "key", "change", "field", "old", "new", "changed_at"),
        )


def master_data_sheets(data: MasterData, changes: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The workbook: newspaper, distribution list, its details, black list, this run's changes."""
    sheets = {
        "newspaper": key_value_frame(data.summary.model_dump(mode="json", by_alias=True, exclude_unset=True))
    }
    if data.distribution is not None:
        header, details = distribution_parts(data.distribution)
        sheets["distribution list"] = key_value_frame(header)
        sheets["distribution details"] = records_frame(details)
    if data.black_list is not None:
        entries = black_list_entries(data.black_list.body)
        sheets["black list"] = records_frame([e if isinstance(e, Mapping) else {"value": e} for e in entries])
    sheets["changes"] = changes
    return sheets
