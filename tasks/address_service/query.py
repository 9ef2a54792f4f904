"""Individual queries (runquery2): one request per record, with bounded concurrency and a shared back-off
when the service reports its per-minute limit (Status 106).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

import pandas as pd
from prefect import task
from prefect.cache_policies import NO_CACHE

from connectors.address_service import AddressServiceClient, ThrottledStatusError
from connectors.errors import ApiError
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


def query_fields(record: Mapping[str, object]) -> dict[str, str]:
    """The FieldName/Value pairs for one record given with §2.3 column names."""
    fields: dict[str, str] = {}
    for column, field_name in QUERY_FIELD_NAMES.items():
        value = record.get(column)
        if value is None or (isinstance(value, float) and pd.isna(value)) or value == "":
            continue
        fields[field_name] = str(value)
    return fields


class _Backoff:
    """A pause shared by all workers after the service said "too many requests"."""

    def __init__(self) -> None:
        self.until = 0.0

    async def wait(self) -> None:
        delay = self.until - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)

    def trip(self, seconds: float) -> None:
        self.until = max(self.until, time.monotonic() + seconds)


@task(name="address-run-queries", cache_policy=NO_CACHE)
async def run_queries(
    client: AddressServiceClient,
    records: pd.DataFrame,
    *,
    key: str,
    concurrency: int = 8,
    timeout_ms: int = 10000,
    billing_reference: str | None = None,
    throttle_pause_s: float = 5.0,
) -> pd.DataFrame:
    """Query every record; returns one row per RecordId with the answer's fields or the error.

    A record whose query fails for good keeps its row, with the reason in ``QueryError``: nothing is lost.
    """
    semaphore = asyncio.Semaphore(max(1, concurrency))
    backoff = _Backoff()
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
            for _attempt in range(3):
                await backoff.wait()
                try:
                    result = await client.run_query(
                        key, record_id, fields, timeout_ms=timeout_ms, billing_reference=billing_reference
                    )
                except ThrottledStatusError as error:
                    # The client already retried; slow every worker down before trying again.
                    backoff.trip(throttle_pause_s)
                    answer[ERROR_COLUMN] = str(error)
                    continue
                except ApiError as error:
                    answer[ERROR_COLUMN] = str(error)
                    break
                answer.pop(ERROR_COLUMN, None)
                answer.update(result.fields)
                break
            rows.append(answer)
        done += 1
        if done == total or done % max(1, total // 100) == 0:
            await progress.update(100.0 * done / max(1, total), f"{done}/{total} records")

    await asyncio.gather(*(one({str(k): v for k, v in rec.items()}) for rec in records.to_dict("records")))
    frame = pd.DataFrame(rows, dtype=object)
    if ERROR_COLUMN not in frame.columns:
        frame[ERROR_COLUMN] = None
    return frame.sort_values("RecordId", kind="stable").reset_index(drop=True)
