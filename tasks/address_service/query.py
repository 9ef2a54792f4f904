"""Individual queries (runquery2): one request per record, with bounded concurrency. The per-minute limit
(Status 106) is waited out at the client's window gate, which every worker shares; a record whose query fails
for good keeps its row with the reason.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping

import pandas as pd
from prefect import task
from prefect.cache_policies import NO_CACHE

from connectors.address_service import AddressServiceClient
from connectors.errors import ApiError
from connectors.http import RequestRecord
from tasks.progress import Progress

# §2.3 output names → §2.2 input FieldName values.
QUERY_FIELD_NAMES: dict[str, str] = {
    "Company": "Company_in",
    "Prename": "Prename_in",
    "Prename2": "Prename2_in",
    "Name": "Name_in",
    "MaidenName": "MaidenName_in",
    "AddressAddition": "AddressAddition_in",
    "CoAddress": "coAddress_in",
    "Streetname": "Streetname_in",
    "HouseNo": "HouseNo_in",
    "HouseNoAddition": "HouseNoAddition_in",
    "Floor": "Floor_in",
    "ZIPCode": "ZipCode_in",
    "ZIPAddition": "ZIPAddition_in",
    "TownName": "TownName_in",
    "Canton": "Canton_in",
    "CountryCode": "CountryCode_in",
    "PoBoxTerm": "PoBoxTerm_in",
    "PoBoxNo": "PoBoxNo_in",
    "PoBoxZIP": "PoBoxZIP_in",
    "PoBoxZIPAddition": "PoBoxZIPAddition_in",
    "PoBoxTownName": "PoBoxTownName_in",
}

ERROR_COLUMN = "QueryError"


class SendCounter:
    """A request-log hook that counts every query sent, by outcome; a query may be sent more than once."""

    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()

    def __call__(self, record: RequestRecord) -> None:
        self.outcomes[record.outcome] += 1

    @property
    def total(self) -> int:
        return sum(self.outcomes.values())

    def describe(self) -> str:
        parts = ", ".join(f"{outcome} {count}" for outcome, count in sorted(self.outcomes.items()))
        return f"{self.total} queries sent ({parts or 'none'})"


def query_fields(record: Mapping[str, object]) -> dict[str, str]:
    """The FieldName/Value pairs for one record given with §2.3 column names."""
    fields: dict[str, str] = {}
    for column, field_name in QUERY_FIELD_NAMES.items():
        value = record.get(column)
        if value is None or (isinstance(value, float) and pd.isna(value)) or value == "":
            continue
        fields[field_name] = str(value)
    return fields


@task(name="address-run-queries", cache_policy=NO_CACHE)
async def run_queries(
    client: AddressServiceClient,
    records: pd.DataFrame,
    *,
    key: str,
    concurrency: int = 8,
    timeout_ms: int = 10000,
    billing_reference: str | None = None,
) -> pd.DataFrame:
    """Query every record; returns one row per RecordId with the answer's fields or the error.

    A record whose query fails for good keeps its row, with the reason in ``QueryError``: nothing is lost.
    """
    semaphore = asyncio.Semaphore(max(1, concurrency))
    total = len(records)
    done = 0
    progress = await Progress.start(f"address queries ({total} records)")
    rows: list[dict[str, object]] = []

    async def one(record: dict[str, object]) -> None:
        nonlocal done
        record_id = int(str(record["RecordId"]))
        fields = query_fields(record)
        async with semaphore:
            answer: dict[str, object] = {"RecordId": record_id}
            try:
                result = await client.run_query(
                    key, record_id, fields, timeout_ms=timeout_ms, billing_reference=billing_reference
                )
            except ApiError as error:
                answer[ERROR_COLUMN] = str(error)
            else:
                answer.update(result.fields)
            rows.append(answer)
        done += 1
        if done == total or done % max(1, total // 100) == 0:
            await progress.update(100.0 * done / max(1, total), f"{done}/{total} records")

    await asyncio.gather(*(one({str(k): v for k, v in rec.items()}) for rec in records.to_dict("records")))
    frame = pd.DataFrame(rows, dtype=object)
    if ERROR_COLUMN not in frame.columns:
        frame[ERROR_COLUMN] = None
    return frame.sort_values("RecordId", kind="stable").reset_index(drop=True)
