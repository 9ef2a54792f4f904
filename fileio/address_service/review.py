"""The review of an address batch (``review.xlsx``): one row per input row, each address field as given and
as the service has it side by side, the cells the service changed marked with the ShortReport's reason, and
the rows a human has to look at marked with theirs (:mod:`fileio.address_service.corrections`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from connectors.address_service.codes import QSTAT, short_report_meaning
from fileio.address_service.corrections import (
    DOUBLE,
    HUMAN_REASONS,
    MOVE,
    REJECTED,
    Corrections,
    review_reasons,
)
from fileio.address_service.result_charts import result_chart_sheets
from fileio.address_service.results import CHANGED_COLOUR, CHANGED_FILL
from fileio.annotated_workbooks import CELL_COLUMNS, ROW_COLUMNS, AnnotatedSheet, write_annotated_xlsx
from fileio.lazy import lazy_module
from fileio.rejected_rows import PROBLEMS, ROW
from fileio.sandbox_marks import with_banner
from fileio.workbook_charts import Chart
from fileio.writeback_policy import Policy

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")

ROW_COLUMN = "Row"
HUMAN_COLUMN = "Needs a human"
QSTAT_COLUMN = "QSTAT"
DESIGNATION_COLUMN = "QSTAT designation"
WRITTEN_COLUMN = "Written back"
DETAILS_COLUMN = "Details"
FIELD_LABELS: Mapping[str, str] = {
    "Streetname": "Street",
    "HouseNo": "House number",
    "HouseNoAddition": "House number addition",
    "ZIPCode": "Postcode",
    "ZIPAddition": "Postcode addition",
    "TownName": "Town",
    "PoBoxTerm": "P.O. box term",
    "PoBoxNo": "P.O. box number",
    "PoBoxZIP": "P.O. box postcode",
    "PoBoxZIPAddition": "P.O. box postcode addition",
    "PoBoxTownName": "P.O. box town",
}
GIVEN, CORRECTED = " given", " corrected"
REVIEW_SHEET, HUMAN_SHEET = "Review", "Needs a human"
REASON_COLUMN, ROWS_COLUMN = "Reason", "Rows"
HUMAN_FILL, HUMAN_ROW_FILL = "human", "human row"
FILLS: Mapping[str, str] = {CHANGED_FILL: CHANGED_COLOUR, HUMAN_FILL: "#FF9C9C", HUMAN_ROW_FILL: "#FFE4E4"}
HUMAN_CHART = Chart(HUMAN_SHEET, REASON_COLUMN, (ROWS_COLUMN,))


@dataclass(frozen=True)
class ReviewSheet:
    """The review's cells and marks.

    Attributes:
        frame: the cells, as text, one row per input row in input order.
        changed: (row position, column) → the note of a cell the service changed.
        human: row position → the note of a row a human has to look at (on its :data:`HUMAN_COLUMN` cell).
    """

    frame: pd.DataFrame
    changed: dict[tuple[int, str], str]
    human: dict[int, str]


def review_sheet(
    corrections: Corrections,
    rejected_report: pd.DataFrame,
    *,
    policy: Policy,
    written: pd.DataFrame,
    ids: pd.Series | None = None,
    id_header: str | None = None,
) -> ReviewSheet:
    """The review of the result rows (``corrections``) and the rejected input rows, in input order.

    ``written``: the cells written back (a boolean frame like ``corrections.corrected_mask``); ``ids``: the
    customer's id per result row (index RecordId), shown under ``id_header``.
    """
    rejected_ids = rejected_report[ROW].astype("int64").tolist() if len(rejected_report) else []
    reasons = review_reasons(corrections, rejected_ids, policy=policy)
    order = reasons.index
    columns: dict[str, object] = {ROW_COLUMN: order.to_numpy()}
    if id_header is not None:
        columns[id_header] = (
            _ids(ids, rejected_report, id_header, rejected_ids).reindex(order).fillna("").to_numpy()
        )
    columns[HUMAN_COLUMN] = reasons.to_numpy()
    qstat = corrections.qstat.reindex(order).fillna("")
    columns[QSTAT_COLUMN] = qstat.to_numpy()
    columns[DESIGNATION_COLUMN] = np.array(
        [QSTAT[c].designation if c in QSTAT else "" for c in qstat], dtype=object
    )
    marked = corrections.corrected_mask | corrections.moved_mask
    for field in corrections.fields:
        label = FIELD_LABELS[field]
        columns[label + GIVEN] = corrections.given[field].reindex(order).fillna("").to_numpy()
        columns[label + CORRECTED] = corrections.corrected[field].reindex(order).fillna("").to_numpy()
    columns[WRITTEN_COLUMN] = _written(written, order)
    columns[DETAILS_COLUMN] = _details(rejected_report, rejected_ids, order)
    frame = pd.DataFrame(columns)
    position = pd.Series(np.arange(len(order)), index=order)
    changed: dict[tuple[int, str], str] = {}
    for field in corrections.fields:
        rows = marked.index[marked[field].to_numpy()]
        if not len(rows):
            continue
        notes = _change_notes(corrections, field, rows, written)
        label = FIELD_LABELS[field] + CORRECTED
        changed.update(zip(((p, label) for p in position[rows].tolist()), notes, strict=True))
    human = {
        int(p): _human_note(reason, code)
        for p, reason, code in zip(range(len(order)), reasons.tolist(), qstat.tolist(), strict=True)
        if reason
    }
    return ReviewSheet(frame=frame, changed=changed, human=human)


def _ids(
    ids: pd.Series | None, rejected_report: pd.DataFrame, header: str, rejected_ids: list[int]
) -> pd.Series:
    """The customer's id of every row, by RecordId ("" where unknown)."""
    given = ids if ids is not None else pd.Series(dtype=object)
    if header in rejected_report:
        rejected = pd.Series(rejected_report[header].to_numpy(), index=rejected_ids)
    else:
        rejected = pd.Series("", index=rejected_ids, dtype=object)
    both = pd.concat([given, rejected]).astype(object)
    text: pd.Series = both.where(both.notna(), "").astype(str)
    return text


def _written(written: pd.DataFrame, order: pd.Index) -> np.ndarray:
    """Per row, the fields written back ("" for none)."""
    labels = np.array([FIELD_LABELS[field] for field in written.columns], dtype=object)
    names = [", ".join(labels[row]) for row in written.to_numpy(dtype=bool)]
    return pd.Series(names, index=written.index, dtype=object).reindex(order).fillna("").to_numpy()


def _details(rejected_report: pd.DataFrame, rejected_ids: list[int], order: pd.Index) -> np.ndarray:
    """The problems of each rejected row ("" for the others)."""
    if not rejected_ids:
        return np.full(len(order), "", dtype=object)
    problems = pd.Series(rejected_report[PROBLEMS].astype(str).to_numpy(), index=rejected_ids)
    return problems.reindex(order).fillna("").to_numpy()


def _change_notes(corrections: Corrections, field: str, rows: pd.Index, written: pd.DataFrame) -> list[str]:
    marks = corrections.marks.loc[rows, field].tolist()
    moved = corrections.moved_mask.loc[rows, field].tolist()
    done = written.loc[rows, field].tolist() if field in written else [False] * len(rows)
    notes = []
    for mark, is_move, was_written in zip(marks, moved, done, strict=True):
        why = (
            f"QSTAT {MOVE}: {QSTAT[MOVE].meaning}"
            if is_move
            else f"ShortReport {mark}: {short_report_meaning(mark) or 'not delivered'}"
        )
        notes.append(f"{why}; {'written back' if was_written else 'not written back'}")
    return notes


def _human_note(reason: str, code: str) -> str:
    if reason == REJECTED:
        return "rejected before sending: see Details and rejected.csv"
    if reason == DOUBLE:
        return f"{reason}: {QSTAT['F'].meaning}"
    meaning = QSTAT[code].meaning if code in QSTAT else ""
    return f"{reason}: {meaning}" if meaning else reason


def needs_a_human(corrections: Corrections, rejected_rows: int) -> pd.DataFrame:
    """Rows per reason a human has to look at them (columns ``Reason``, ``Rows``), every reason listed."""
    counts = corrections.human_reasons()
    counts[REJECTED] = rejected_rows
    return pd.DataFrame(
        {REASON_COLUMN: list(HUMAN_REASONS), ROWS_COLUMN: [counts[reason] for reason in HUMAN_REASONS]}
    ).astype({ROWS_COLUMN: "int64"})


def write_review(
    path: Path,
    sheet: ReviewSheet,
    summary: pd.DataFrame,
    corrections: Corrections,
    *,
    rejected_rows: int,
    moves_file_rows: int | None = None,
    sandbox: bool = False,
) -> Path:
    """Write ``review.xlsx``: the review sheet (changed cells filled and noted with their reason, rows for a
    human filled, their reason noted, an autofilter to pick them), then the chart sheets of the results
    (QSTAT classes, corrections by kind, moves) and of the rows that need a human; after a ``sandbox`` run,
    the banner sheet first (:mod:`fileio.sandbox_marks`)."""
    frame = sheet.frame
    cells = pd.DataFrame(
        [(row, column, CHANGED_FILL, note) for (row, column), note in sheet.changed.items()]
        + [(row, HUMAN_COLUMN, HUMAN_FILL, note) for row, note in sheet.human.items()],
        columns=list(CELL_COLUMNS),
    )
    rows = pd.DataFrame({"row": list(sheet.human), "fill": HUMAN_ROW_FILL}, columns=list(ROW_COLUMNS))
    annotated = AnnotatedSheet(
        title=REVIEW_SHEET,
        frame=frame,
        fills=FILLS,
        cells=cells,
        rows=rows,
        header_notes=_header_notes(frame),
        widths={HUMAN_COLUMN: 34, DETAILS_COLUMN: 40},
        landscape=True,
    )
    tables, charts = result_chart_sheets(
        summary, corrections=corrections.by_kind(), moves_file_rows=moves_file_rows
    )
    tables[HUMAN_SHEET] = needs_a_human(corrections, rejected_rows)
    charts[HUMAN_SHEET] = [HUMAN_CHART]
    lead = with_banner({}, sandbox=sandbox)
    return write_annotated_xlsx(path, annotated, sheets=tables, charts=charts, lead=lead)


def _header_notes(frame: pd.DataFrame) -> dict[str, str]:
    notes = {
        HUMAN_COLUMN: "Why a person has to look at the row (empty: nobody has to). Filter on this column.",
        WRITTEN_COLUMN: "The fields whose corrected value went into writeback.<ext>.",
    }
    for column in frame.columns:
        if str(column).endswith(CORRECTED):
            notes[str(column)] = (
                "The service's value; filled where it differs, the reason in the cell's note."
            )
    return notes
