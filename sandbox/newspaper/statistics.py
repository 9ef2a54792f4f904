"""Statistics transmission of the newspaper sandbox (scope SENDINGS_NEWSPAPER_STATISTIC).

An upload whose records are all readable and name one of the customer's newspaper IDs is answered with the
plain text ``File uploaded successfully``; otherwise HTTP 400 with one ``0200`` message per problem.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from sandbox.newspaper.messages import NewspaperRejection, message
from sandbox.newspaper.order_rules import parse_delivery_date
from sandbox.newspaper.reference import is_own_newspaper_id
from sandbox.state import SandboxState

CONFIRMATION = "File uploaded successfully"


class StatisticsRecord(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    newspaper_id: int
    split: str = ""
    product: str
    house_key: int | None = None
    bbz: int | None = None
    aplz: int | None = None
    city: str = ""
    delivery_date: str
    bundle_type: str
    count: int = Field(ge=0)


class StatisticsLog:
    """Accepted uploads, kept so tests can see what arrived."""

    def __init__(self, state: SandboxState) -> None:
        self._state = state
        self._uploads = state.table("newspaper.statistics_uploads")

    def add(self, records: list[StatisticsRecord]) -> None:
        self._uploads.put(self._state.next_id("newspaper.statistics_upload", 1), records)

    def uploads(self) -> list[list[StatisticsRecord]]:
        """Every accepted upload, oldest first."""
        uploads: list[list[StatisticsRecord]] = self._uploads.values()
        return uploads


def _problems(raw: Any) -> tuple[list[StatisticsRecord], list[str]]:
    items = raw.get("statistics") if isinstance(raw, dict) else None
    if not isinstance(items, list) or not items:
        return [], ["the body holds no statistics records"]
    records, problems = [], []
    for index, item in enumerate(items, start=1):
        try:
            record = StatisticsRecord.model_validate(item)
        except ValidationError as exc:
            problems += [
                f"record {index}: {'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
                for err in exc.errors()
            ]
            continue
        if not is_own_newspaper_id(record.newspaper_id):
            problems.append(f"record {index}: newspaperId {record.newspaper_id} unknown")
        if parse_delivery_date(record.delivery_date) is None:
            problems.append(f"record {index}: deliveryDate '{record.delivery_date}' is not YYYY-MM-DD")
        records.append(record)
    return records, problems


def create_router(log: StatisticsLog) -> APIRouter:
    """POST standard/statistics."""
    router = APIRouter(prefix="/logistics/newspaper/statistic/v1")

    @router.post("/standard/statistics", response_class=PlainTextResponse)
    async def upload_statistics(request: Request) -> PlainTextResponse:
        try:
            raw = await request.json()
        except ValueError:
            raw = None
        records, problems = _problems(raw)
        if problems:
            raise NewspaperRejection(400, [message("0200", problem) for problem in problems])
        log.add(records)
        return PlainTextResponse(CONFIRMATION)

    return router
