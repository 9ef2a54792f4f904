"""Deliverability of a file's addresses over a range of days (§4.2 GET deliverabilities/when) or on explicit
delivery dates (POST deliverabilities/when with the dates in its body): one query per address, then an
address × date grid (product codes, or "no service"; green, red, grey for a failed address), the same in
long form, and the markdown summary."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from connectors.commerce import CommerceClient, Deliverabilities, DeliveryAddress, DeliveryDay
from fileio.checkpoint import RowCheckpoint
from fileio.commerce.address_input import ROW, address_records, field_text
from fileio.commerce.days import requested_days as requested_days  # the flow reads it here
from fileio.lazy import lazy_module
from fileio.rejected_rows import LINE
from fileio.reports import DEFAULT_CSV_STYLE, CsvStyle, markdown_table, write_csv
from fileio.sandbox_marks import with_banner
from fileio.workbooks import write_xlsx
from tasks.commerce.per_row import ChunkAnswers, RowAsking, RowOutcome, answer_in_chunks, ask_chunk
from tasks.fanout import ChunkPart, ClientFactory
from tasks.sending import SendCounter

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")

ADDRESS_FIELDS: tuple[str, ...] = ("zip", "city", "street", "houseNumber")
STATUS_COLUMN = "QueryStatus"
HTTP_STATUS_COLUMN = "HttpStatus"
ERROR_COLUMN = "QueryError"
DAY_COLUMNS: tuple[str, ...] = (
    "date",
    "activity",
    "deliverable",
    "productCodes",
    "incomingDates",
)
ANSWER_COLUMNS: tuple[str, ...] = ("quality", "deliveryToTheDoor")
# Every column the results add to the customer's: a pass-through column must not be named so.
RESULT_COLUMNS: tuple[str, ...] = (
    STATUS_COLUMN,
    HTTP_STATUS_COLUMN,
    ERROR_COLUMN,
    *DAY_COLUMNS,
    *ANSWER_COLUMNS,
)
STATUS_NAMES: Mapping[str, str] = {
    "answered": "ok",
    "refused": "refused",
    "not found": "not found",
    "failed": "failed",
}
NO_SERVICE = "no service"
DELIVERABLE, NOT_DELIVERABLE, FAILED = "deliverable", "not deliverable", "failed"
FORMATS = {
    DELIVERABLE: {"bg_color": "#C6EFCE", "font_color": "#006100"},
    NOT_DELIVERABLE: {"bg_color": "#FFC7CE", "font_color": "#9C0006"},
    FAILED: {"bg_color": "#D9D9D9", "font_color": "#595959"},
}
GRID_SHEET, DAYS_SHEET = "By date", "Days"


def delivery_address(record: Mapping[str, Any]) -> DeliveryAddress:
    """The address of one input row (zip and city; street and house number when given)."""
    return DeliveryAddress.of(
        zip_code=field_text(record, "zip") or "",
        city=field_text(record, "city") or "",
        street=field_text(record, "street"),
        house_number=field_text(record, "houseNumber"),
    )


@dataclass(frozen=True)
class DaysAsked:
    """The days each address is asked about: on ``dates`` when given (one POST per address), else ``days``
    days from ``start`` (one GET per address).

    Attributes:
        start: the first day asked.
        days: how many days are asked.
        dates: explicit delivery dates, asked instead of the days from ``start``.
    """

    start: dt.date
    days: int
    dates: tuple[dt.date, ...] = ()


@task(
    name="commerce-deliverability-rows",
    task_run_name="commerce-deliverability-rows-{part.label}",
    cache_policy=NO_CACHE,
)
async def deliverability_rows(
    rows: pd.DataFrame,
    *,
    part: ChunkPart,
    concurrency: int,
    connect: ClientFactory[CommerceClient],
    checkpoint: RowCheckpoint | None = None,
    asked: DaysAsked,
) -> ChunkAnswers[Deliverabilities]:
    """Ask when each address of one chunk can be delivered on the days ``asked``, with a client of its own;
    each row's final outcome is checkpointed.

    Raises:
        AuthFailed: the service refused our credentials.
    """

    async def ask(client: CommerceClient, address: DeliveryAddress) -> Deliverabilities:
        if asked.dates:
            return await client.deliverabilities_on(address, asked.dates)
        return await client.deliverabilities(address, start=asked.start, day_count=asked.days)

    return await ask_chunk(
        connect, _requests(rows), ask, part=part, concurrency=concurrency, checkpoint=checkpoint
    )


def _requests(records: pd.DataFrame) -> list[tuple[int, DeliveryAddress]]:
    return [(int(record[ROW]), delivery_address(record)) for record in address_records(records)]


async def check_deliverabilities(
    connect: ClientFactory[CommerceClient],
    records: pd.DataFrame,
    *,
    asked: DaysAsked,
    concurrency: int = 8,
    checkpoint: RowCheckpoint | None = None,
    sends: SendCounter | None = None,
) -> list[RowOutcome[Deliverabilities]]:
    """Ask when each address can be delivered on the days ``asked`` (explicit dates: one POST each; days
    from a start: one GET each): the addresses not answered by an interrupted run (in ``checkpoint``, same
    request) in chunks on the flow's task runner (see :mod:`tasks.fanout`), at most ``concurrency``
    requests in flight.

    Args:
        connect: builds a commerce client; each chunk task builds its own.
        records: the accepted rows (``row`` and the address fields).
        asked: the first day and how many days are asked, or the explicit delivery dates.
        concurrency: queries in flight at once.
        checkpoint: answers of an interrupted run, and where this run's answers are kept.
        sends: counts the queries sent.

    Returns:
        One outcome per record, in the order of ``records``.

    Raises:
        AuthFailed: the service refused our credentials.
    """
    return await answer_in_chunks(
        RowAsking(deliverability_rows, Deliverabilities, "deliverability"),
        records,
        _requests(records),
        concurrency=concurrency,
        checkpoint=checkpoint,
        sends=sends,
        connect=connect,
        asked=asked,
    )


@dataclass
class DeliverabilityTable:
    """The query results of every accepted row.

    Attributes:
        days: the long form: one line per address and day answered, one line (no date) per failed address.
        grid: one row per address, one column per day (cell text: product codes or "no service").
        styles: per grid cell, the name of its fill (deliverable, not deliverable, failed) or None.
    """

    days: pd.DataFrame
    grid: pd.DataFrame
    styles: pd.DataFrame

    def status_counts(self) -> dict[str, int]:
        return dict(Counter(self.grid[STATUS_COLUMN]))

    def deliverable_days(self) -> int:
        return int((self.days["deliverable"] == "yes").sum())


def day_label(day: dt.date) -> str:
    """A grid column's header: ``2025-03-03 Mon``."""
    return f"{day.isoformat()} {day:%a}"


def deliverability_table(
    records: pd.DataFrame,
    outcomes: Sequence[RowOutcome[Deliverabilities]],
    passthrough: Sequence[str],
    dates: Sequence[dt.date],
    *,
    id_column: str | None = None,
    lines: Mapping[int, int] | None = None,
) -> DeliverabilityTable:
    """The long form and the grid of ``records`` and their ``outcomes`` (same order); the grid has a
    column for each of ``dates`` and for any other day an answer holds. Each row is named as
    ``rejected.csv`` names it: the customer's ``id_column`` (one of ``passthrough``) first, then the line
    of the file it starts on (``lines``, by row; the column is left out without them) and ``row``."""
    answered = {day.delivery_date for o in outcomes if o.answer for day in o.answer.days}
    columns = sorted(set(dates) | answered)
    leading = [id_column] if id_column is not None and id_column in passthrough else []
    named = [*leading, *([LINE] if lines is not None else []), ROW]
    passthrough = [column for column in passthrough if column not in leading]
    grid_rows: list[dict[str, Any]] = []
    style_rows: list[list[str | None]] = []
    day_rows: list[dict[str, Any]] = []
    for record, outcome in zip(address_records(records), outcomes, strict=True):
        base: dict[str, Any] = {column: record.get(column) for column in leading}
        if lines is not None:
            base[LINE] = lines.get(int(record[ROW]))
        base[ROW] = record[ROW]
        base.update({column: record.get(column) for column in passthrough})
        base.update({field: record.get(field) for field in ADDRESS_FIELDS})
        base[STATUS_COLUMN] = STATUS_NAMES[outcome.status]
        base[HTTP_STATUS_COLUMN] = outcome.http_status
        base[ERROR_COLUMN] = outcome.error
        answer = outcome.answer
        base["quality"] = str(answer.quality) if answer and answer.quality is not None else None
        door = answer.delivery_to_the_door if answer else None
        base["deliveryToTheDoor"] = str(door) if door is not None else None
        cells: dict[dt.date, tuple[str | None, str | None]] = {}
        if answer is None:
            day_rows.append(base | dict.fromkeys(DAY_COLUMNS))
            cells = dict.fromkeys(columns, (None, FAILED))
        for day in answer.days if answer else ():
            day_rows.append(base | _day_line(day))
            text = ", ".join(day.product_codes) if day.product_codes else NO_SERVICE
            cells[day.delivery_date] = (text, DELIVERABLE if day.deliverable else NOT_DELIVERABLE)
        grid_rows.append(base | {day_label(day): cells.get(day, (None, None))[0] for day in columns})
        style_rows.append([cells.get(day, (None, None))[1] for day in columns])
    fixed = [*named, *passthrough, *ADDRESS_FIELDS, STATUS_COLUMN, HTTP_STATUS_COLUMN, ERROR_COLUMN]
    grid = _frame(grid_rows, [*fixed, *ANSWER_COLUMNS, *(day_label(day) for day in columns)])
    days = _frame(day_rows, [*fixed, *DAY_COLUMNS, *ANSWER_COLUMNS])
    styles = np.full(grid.shape, None, dtype=object)
    if style_rows and columns:
        styles[:, grid.shape[1] - len(columns) :] = np.array(style_rows, dtype=object)
    return DeliverabilityTable(days, grid, pd.DataFrame(styles, columns=grid.columns))


def _day_line(day: DeliveryDay) -> dict[str, Any]:
    """The long form's cells of one day answered."""
    incoming = ", ".join(d.incoming_date.isoformat() for d in day.deliverabilities if d.incoming_date)
    return {
        "date": day.delivery_date.isoformat(),
        "activity": str(day.activity) if day.activity is not None else None,
        "deliverable": "yes" if day.deliverable else "no",
        "productCodes": ", ".join(day.product_codes) or None,
        "incomingDates": incoming or None,
    }


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=columns, dtype=object)
    frame[ROW] = frame[ROW].astype("int64")
    if LINE in frame:
        frame[LINE] = frame[LINE].astype("Int64")
    frame[HTTP_STATUS_COLUMN] = frame[HTTP_STATUS_COLUMN].astype("Int64")
    return frame


def write_deliverability(
    table: DeliverabilityTable,
    output_dir: Path,
    *,
    csv_style: CsvStyle = DEFAULT_CSV_STYLE,
    sandbox: bool = False,
) -> list[Path]:
    """Write ``deliverability.csv`` (long form, in ``csv_style``) and ``deliverability.xlsx`` (grid and long
    form; after a ``sandbox`` run, the banner sheet first); every text cell of the CSV file gets the formula
    guard when the style has it (none of its columns holds a code that may start like one)."""
    csv_path = write_csv(table.days, output_dir / "deliverability.csv", style=csv_style)
    xlsx_path = write_xlsx(
        output_dir / "deliverability.xlsx",
        with_banner({GRID_SHEET: table.grid, DAYS_SHEET: table.days}, sandbox=sandbox),
        styles={GRID_SHEET: table.styles},
        formats=FORMATS,
    )
    return [csv_path, xlsx_path]


def deliverability_markdown(
    title: str,
    table: DeliverabilityTable,
    *,
    dates: Sequence[dt.date],
    rejected_rows: int,
    explicit: bool = False,
) -> str:
    """The run's summary as markdown: counts, then the addresses that were not answered (first 50);
    ``explicit``: ``dates`` are the delivery dates given, not a range of days."""
    statuses = table.status_counts()
    counts = pd.DataFrame(
        [
            ("days asked", _days_asked(dates, explicit=explicit)),
            ("addresses answered", statuses.get("ok", 0)),
            ("deliverable address-days", table.deliverable_days()),
            ("refused (HTTP 400)", statuses.get("refused", 0)),
            ("not found (HTTP 404)", statuses.get("not found", 0)),
            ("failed", statuses.get("failed", 0)),
            ("rejected before sending (rejected.csv)", rejected_rows),
        ],
        columns=["what", "count"],
    )
    report = f"# {title}\n\n{markdown_table(counts)}\n"
    grid = table.grid
    named = list(grid.columns[: list(grid.columns).index(ROW) + 1])  # the id column, line, row
    problems = grid.loc[grid[STATUS_COLUMN] != "ok", [*named, *ADDRESS_FIELDS, STATUS_COLUMN, ERROR_COLUMN]]
    if len(problems):
        report += f"\n## Addresses not answered\n\n{markdown_table(problems)}\n"
    return report


SHOWN_DATES = 10


def _days_asked(dates: Sequence[dt.date], *, explicit: bool) -> str:
    if not explicit:
        return f"{dates[0].isoformat()} to {dates[-1].isoformat()} ({len(dates)})"
    shown = ", ".join(day.isoformat() for day in dates[:SHOWN_DATES])
    more = f", … {len(dates) - SHOWN_DATES} more" if len(dates) > SHOWN_DATES else ""
    return f"{shown}{more} ({len(dates)} delivery dates given)"
