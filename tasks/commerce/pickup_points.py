"""Pickup points near each location of a file (§4.3: a body shaped like the pickup user request, verified
null; §2.10 back): one read per location, fanned out like every per-row query (:mod:`tasks.commerce.per_row`),
its answer kept as received; then the points as a table (one row per point: where, how to find it, today's
opening hours and the calendar in short), the answers as JSON files and the markdown summary. The method and
path are settings (the spec shows neither): a 404 or 405 is no location's answer but a wrong setting, which
ends the run naming it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefect import task
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel

from connectors.commerce import CommerceClient, PickupPoint, PickupPoints, PickupUserRequest
from core.json_text import json_text
from fileio.checkpoint import RowCheckpoint
from fileio.commerce.address_input import ROW
from fileio.commerce.pickup_input import PickupInput
from fileio.files import write_received
from fileio.lazy import lazy_module
from fileio.reports import DEFAULT_CSV_STYLE, CsvStyle, markdown_table, write_csv, write_xlsx
from fileio.sandbox_marks import with_banner
from tasks.commerce.per_row import ChunkAnswers, RowAsking, RowOutcome, answer_in_chunks, ask_chunk
from tasks.fanout import ChunkPart, ClientFactory
from tasks.sending import SendCounter

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

BODY = "body"
LINE = "line"
STATUS_NAMES = {"answered": "ok", "refused": "refused", "not found": "not found", "failed": "failed"}
NO_POINTS = "no points"
POINT_COLUMNS: tuple[str, ...] = (
    "ppNumber",
    "service",
    "name",
    "street",
    "zip",
    "city",
    "hint",
    "webLink",
    "latitude",
    "longitude",
    "openingToday",
    "calendar",
)
RESULT_COLUMNS: tuple[str, ...] = (LINE, ROW, "status", "error", *POINT_COLUMNS)
ANSWERS_FOLDER = "answers"
MAX_ROWS_SHOWN = 50
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


class ReceivedPoints(BaseModel):
    """A pickup-points answer as received (a JSON object that reads as §2.10)."""

    received: dict[str, Any]

    @property
    def points(self) -> list[PickupPoint]:
        return PickupPoints.model_validate(self.received).points


def location_records(pickup_input: PickupInput) -> pd.DataFrame:
    """The accepted rows as the fan-out cuts them: ``row`` and the body sent for it (JSON)."""
    return pd.DataFrame(
        {
            ROW: pd.Series([row.row for row in pickup_input.rows], dtype="int64"),
            BODY: [row.request.model_dump_json(by_alias=True) for row in pickup_input.rows],
        }
    )


def _requests(records: pd.DataFrame) -> list[tuple[int, PickupUserRequest]]:
    return [
        (int(row), PickupUserRequest.model_validate_json(body))
        for row, body in zip(records[ROW], records[BODY], strict=True)
    ]


@task(
    name="commerce-pickup-points-rows",
    task_run_name="commerce-pickup-points-rows-{part.label}",
    cache_policy=NO_CACHE,
)
async def pickup_points_rows(
    rows: pd.DataFrame,
    *,
    part: ChunkPart,
    concurrency: int,
    connect: ClientFactory[CommerceClient],
    checkpoint: RowCheckpoint | None = None,
) -> ChunkAnswers[ReceivedPoints]:
    """Ask for the pickup points near each location of one chunk, with a client of its own; each row's
    final outcome is checkpointed.

    Raises:
        AuthFailed: the service refused our credentials.
        GuessedPathNotFound: nothing at a path that is a setting (404, 405).
    """

    async def ask(client: CommerceClient, request: PickupUserRequest) -> ReceivedPoints:
        return ReceivedPoints(received=await client.pickup_points_as_received(request))

    return await ask_chunk(
        connect, _requests(rows), ask, part=part, concurrency=concurrency, checkpoint=checkpoint
    )


async def find_pickup_points(
    connect: ClientFactory[CommerceClient],
    records: pd.DataFrame,
    *,
    concurrency: int = 4,
    checkpoint: RowCheckpoint | None = None,
    sends: SendCounter | None = None,
) -> list[RowOutcome[ReceivedPoints]]:
    """Ask for the pickup points near each location of ``records`` (:func:`location_records`): the rows an
    interrupted run did not answer (same request, in ``checkpoint``) in chunks on the flow's task runner,
    at most ``concurrency`` queries in flight.

    Returns:
        One outcome per record, in the order of ``records``.

    Raises:
        AuthFailed: the service refused our credentials.
        GuessedPathNotFound: nothing at a path that is a setting (404, 405).
    """
    return await answer_in_chunks(
        RowAsking(pickup_points_rows, ReceivedPoints, "pickup points"),
        records,
        _requests(records),
        concurrency=concurrency,
        checkpoint=checkpoint,
        sends=sends,
        connect=connect,
    )


def points_table(
    pickup_input: PickupInput, outcomes: Sequence[RowOutcome[ReceivedPoints]], *, today: dt.date
) -> pd.DataFrame:
    """One row per point found (a location without points, or not answered, has one row with its status):
    the input's id column (renamed ``<name> (input)`` when a result column has its name), its line and
    row, the status and the point's fields."""
    id_header = pickup_input.id_column
    id_name = None
    if id_header is not None:
        id_name = f"{id_header} (input)" if id_header in RESULT_COLUMNS else id_header
    rows: list[dict[str, Any]] = []
    for outcome in outcomes:
        base: dict[str, Any] = {}
        if id_header is not None and id_name is not None:
            value: Any = pickup_input.frame.at[outcome.row, id_header]
            base[id_name] = "" if value is None or pd.isna(value) else value
        base |= {LINE: pickup_input.lines.get(outcome.row), ROW: outcome.row}
        base |= {"status": STATUS_NAMES[outcome.status], "error": outcome.error or ""}
        points = outcome.answer.points if outcome.answer is not None else []
        if outcome.answer is not None and not points:
            base["status"] = NO_POINTS
        rows += [base | point_fields(point, today) for point in points] or [base]
    columns = [*([id_name] if id_name else []), *RESULT_COLUMNS]
    frame = pd.DataFrame(rows, columns=columns, dtype=object)
    frame[ROW] = frame[ROW].astype("int64")
    frame[LINE] = frame[LINE].astype("Int64")
    return frame


def point_fields(point: PickupPoint, today: dt.date) -> dict[str, Any]:
    """The table's fields of one point (§2.10)."""
    address = point.address
    position = point.geographic_position
    opening = point.calendar.get(today)
    return {
        "ppNumber": point.pp_number,
        "service": point.service,
        "name": point.name,
        "street": address.street if address else None,
        "zip": address.zip if address else None,
        "city": address.city if address else None,
        "hint": point.hint,
        "webLink": point.web_link,
        "latitude": position.latitude if position else None,
        "longitude": position.longitude if position else None,
        "openingToday": _hours(opening) if opening is not None else None,
        "calendar": calendar_summary(point),
    }


def calendar_summary(point: PickupPoint) -> str:
    """The calendar in short, consecutive days with the same hours together:
    ``Wed-Fri 07:30-12:00, 13:30-18:30; Sat 08:00-12:00; Sun closed``."""
    groups: list[tuple[list[dt.date], str]] = []
    for day in sorted(point.calendar):
        hours = _hours(point.calendar[day])
        previous = groups[-1] if groups else None
        if previous is not None and previous[1] == hours and previous[0][-1] + dt.timedelta(days=1) == day:
            previous[0].append(day)
        else:
            groups.append(([day], hours))
    parts = []
    for days, hours in groups:
        first, last = _WEEKDAYS[days[0].weekday()], _WEEKDAYS[days[-1].weekday()]
        parts.append(f"{first if len(days) == 1 else f'{first}-{last}'} {hours}")
    return "; ".join(parts)


def _hours(day: Any) -> str:
    if day.closed:
        return "closed"
    return ", ".join(f"{_time(span.from_)}-{_time(span.to)}" for span in day.opening_intervals)


def _time(text: str) -> str:
    """``07:30:00`` as ``07:30``; other seconds and other forms as given."""
    return text[:-3] if len(text) == 8 and text.endswith(":00") else text


def write_points(
    table: pd.DataFrame,
    outcomes: Sequence[RowOutcome[ReceivedPoints]],
    rejected: pd.DataFrame,
    output_dir: Path,
    *,
    csv_style: CsvStyle = DEFAULT_CSV_STYLE,
    sandbox: bool = False,
) -> list[Path]:
    """``points.csv``, ``points.xlsx`` (the points and the rejected rows; after a ``sandbox`` run, the
    banner sheet first) and each answer as received, ``answers/row-<n>.json``."""
    sheets = with_banner({"points": table, "rejected": rejected}, sandbox=sandbox)
    files = [
        write_csv(table, output_dir / "points.csv", style=csv_style),
        write_xlsx(output_dir / "points.xlsx", sheets),
    ]
    for outcome in outcomes:
        if outcome.answer is not None:
            text = json_text(outcome.answer.received, indent=2) + "\n"
            path = output_dir / ANSWERS_FOLDER / f"row-{outcome.row}.json"
            write_received(path, text.encode())
            files.append(path)
    return files


def points_summary(
    source: str, table: pd.DataFrame, *, locations: int, rejected_rows: int, service: str
) -> str:
    """The run's markdown summary: counts, then the locations not answered (first 50; no personal data)."""
    by_location = table.drop_duplicates(ROW)
    statuses = by_location["status"].value_counts()
    counts = pd.DataFrame(
        [
            ("locations asked", locations),
            ("pickup points found", int(table["ppNumber"].notna().sum())),
            ("locations answered without points", int(statuses.get(NO_POINTS, 0))),
            ("refused (HTTP 400)", int(statuses.get("refused", 0))),
            ("failed", int(statuses.get("failed", 0))),
            ("rejected before sending (rejected.csv)", rejected_rows),
        ],
        columns=["what", "count"],
    )
    report = f"# Pickup points {source}\n\nService: {service}\n\n{markdown_table(counts)}\n"
    report += f"\nEach answer as received: `{ANSWERS_FOLDER}/row-<n>.json` (by data row).\n"
    problems = by_location.loc[~by_location["status"].isin(["ok", NO_POINTS]), [LINE, ROW, "status", "error"]]
    if len(problems):
        report += f"\n## Locations not answered\n\n{markdown_table(problems, max_rows=MAX_ROWS_SHOWN)}\n"
    return report


def failed_locations(outcomes: Sequence[RowOutcome[ReceivedPoints]]) -> int:
    """Locations whose query failed (a resumed run asks them again)."""
    return sum(1 for outcome in outcomes if outcome.status == "failed")
