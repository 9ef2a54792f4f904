"""The files of an address validation: ``results.csv``, ``results.xlsx`` (the changed certified cells filled,
refused and failed rows marked, a summary sheet with the quality counts) and the markdown summary."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fileio.commerce.address_input import LEAF_FIELDS, ROW, CommerceAddresses
from fileio.lazy import lazy_module
from fileio.rejected_rows import LINE
from fileio.reports import DEFAULT_CSV_STYLE, POST, CsvStyle, markdown_table, write_csv
from fileio.sandbox_marks import with_banner
from fileio.workbooks import write_xlsx
from tasks.commerce.validation import (
    CERTIFIED_COLUMNS,
    CERTIFIED_PREFIX,
    ERROR_COLUMN,
    HTTP_STATUS_COLUMN,
    QUALITY_COLUMN,
    STATUS_COLUMN,
    ValidationTable,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")

CHANGED = "changed"
PROBLEM = "problem"
FORMATS = {
    CHANGED: {"bg_color": "#FFEB9C", "font_color": "#9C5700"},
    PROBLEM: {"bg_color": "#FFC7CE", "font_color": "#9C0006"},
}
RESULTS_SHEET = "Results"
SUMMARY_SHEET = "Summary"


@dataclass(frozen=True)
class ResultsView:
    """The results as a clerk reads them: ``frame``, and per leaf field the column that shows the service's
    value of it (``shown``: ``certified_<field>``, or ``<your column> (Post)``)."""

    frame: pd.DataFrame
    shown: dict[str, str]


def results_view(table: ValidationTable, addresses: CommerceAddresses | None = None) -> ResultsView:
    """The table in the customer's words (with ``addresses``, the file read): its rows named as rejected.csv
    names them (the id column, ``line``, ``row``), then the customer's columns in their order, each address
    column followed by the certified value as ``<column> (Post)`` (a street column that holds the house
    number too gets both), then the outcome, the quality and the rest; a certified field the file has no
    column for as ``<field> (Post)``. Without ``addresses``, the table as it is."""
    frame = table.frame
    if addresses is None:
        return ResultsView(frame, {field: CERTIFIED_PREFIX + field for field in LEAF_FIELDS})
    columns: dict[str, object] = {}
    leading = addresses.id_column if addresses.id_column in addresses.passthrough else None
    if leading is not None:
        columns[leading] = frame[leading].to_numpy()
    columns[LINE] = pd.array([addresses.lines.get(int(row)) for row in frame[ROW]], dtype="Int64")
    columns[ROW] = frame[ROW].to_numpy()
    fields_of: dict[str, list[str]] = {}
    for field, headers in addresses.columns.items():
        for header in headers:
            fields_of.setdefault(header, []).append(field)
            if field == "street" and "houseNumber" not in addresses.columns:  # the line held the number
                fields_of[header].append("houseNumber")
    shown: dict[str, str] = {}
    for header in addresses.headers:
        if header == leading or header in columns:
            continue
        if header not in fields_of:
            columns[header] = frame[header].to_numpy() if header in frame else None
            continue
        fields = fields_of[header]
        columns[header] = _joined(frame, fields)
        columns[header + POST] = _joined(frame, [CERTIFIED_PREFIX + field for field in fields])
        shown |= dict.fromkeys(fields, header + POST)
    for column in (STATUS_COLUMN, HTTP_STATUS_COLUMN, ERROR_COLUMN, QUALITY_COLUMN):
        columns[column] = frame[column].to_numpy()
    for field in LEAF_FIELDS:
        if field not in shown:
            shown[field] = field + POST
            columns[field + POST] = frame[CERTIFIED_PREFIX + field].to_numpy()
    done = {*columns, *LEAF_FIELDS, *CERTIFIED_COLUMNS, *addresses.passthrough}
    columns |= {str(c): frame[c].to_numpy() for c in frame.columns if c not in done}
    return ResultsView(pd.DataFrame(columns), shown)


def _joined(frame: pd.DataFrame, names: list[str]) -> np.ndarray:
    """The cells of ``names`` per row joined by a space, empty ones left out (None for none)."""
    parts = [frame[name].astype(object).where(frame[name].notna(), "").astype(str) for name in names]
    joined = [" ".join(p for p in row if p.strip()) or None for row in zip(*parts, strict=True)]
    return np.array(joined, dtype=object)


def cell_styles(table: ValidationTable, view: ResultsView) -> pd.DataFrame:
    """Per cell of the results, ``changed`` (a certified value that differs from the input), ``problem`` (the
    status of a row that was refused or failed) or None."""
    frame = view.frame
    styles = np.full(frame.shape, None, dtype=object)
    position = {column: index for index, column in enumerate(frame.columns)}
    for offset, fields in enumerate(table.changed):
        for field in fields:
            styles[offset, position[view.shown[field]]] = CHANGED
    problems = (frame[STATUS_COLUMN] != "validated").to_numpy()
    styles[problems, position[STATUS_COLUMN]] = PROBLEM
    return pd.DataFrame(styles, columns=frame.columns)


def summary_frame(table: ValidationTable, *, rejected_rows: int, empty_rows: int = 0) -> pd.DataFrame:
    """The counts of the summary sheet: outcomes, qualities, changed fields, rejected rows."""
    statuses = table.status_counts()
    lines: list[tuple[str, int]] = [("validated", statuses.get("validated", 0))]
    lines += [(f"quality {quality}", count) for quality, count in sorted(table.quality_counts().items())]
    lines.append(("validated with changed fields", table.rows_changed))
    per_field = Counter(field for fields in table.changed for field in fields)
    lines += [(f"changed {field}", per_field[field]) for field in LEAF_FIELDS if per_field[field]]
    lines += [
        ("refused by the service (HTTP 400)", statuses.get("refused", 0)),
        ("not found (HTTP 404)", statuses.get("not found", 0)),
        ("failed (see ValidationError; a re-run asks again)", statuses.get("failed", 0)),
        ("rejected before sending (rejected.csv)", rejected_rows),
    ]
    if empty_rows:
        lines.append(("empty rows skipped", empty_rows))
    return pd.DataFrame(lines, columns=["outcome", "rows"])


def write_validation_results(
    table: ValidationTable,
    output_dir: Path,
    *,
    addresses: CommerceAddresses | None = None,
    rejected_rows: int,
    empty_rows: int = 0,
    csv_style: CsvStyle = DEFAULT_CSV_STYLE,
    sandbox: bool = False,
) -> list[Path]:
    """Write ``results.csv`` (in ``csv_style``) and ``results.xlsx`` (after a ``sandbox`` run, the banner
    sheet first: :mod:`fileio.sandbox_marks`), in the words of the file read (``addresses``:
    :func:`results_view`); returns their paths.

    Every text cell of the CSV file gets the formula guard when the style has it (see
    :func:`fileio.reports.write_csv`): none of its columns holds a code that may start like a formula. The
    workbook never turns text into formulas.
    """
    view = results_view(table, addresses)
    csv_path = write_csv(view.frame, output_dir / "results.csv", style=csv_style)
    xlsx_path = write_xlsx(
        output_dir / "results.xlsx",
        with_banner(
            {
                RESULTS_SHEET: view.frame,
                SUMMARY_SHEET: summary_frame(table, rejected_rows=rejected_rows, empty_rows=empty_rows),
            },
            sandbox=sandbox,
        ),
        styles={RESULTS_SHEET: cell_styles(table, view)},
        formats=FORMATS,
    )
    return [csv_path, xlsx_path]


def validation_markdown(
    title: str, table: ValidationTable, *, rejected_rows: int, empty_rows: int = 0
) -> str:
    """The run's summary as markdown: the counts, then the refused and failed rows (first 50)."""
    counts = summary_frame(table, rejected_rows=rejected_rows, empty_rows=empty_rows)
    report = f"# {title}\n\n{markdown_table(counts)}\n"
    frame = table.frame
    problems = frame.loc[frame[STATUS_COLUMN] != "validated", [ROW, STATUS_COLUMN, HTTP_STATUS_COLUMN]]
    if len(problems):
        problems = problems.assign(reason=frame.loc[problems.index, "ValidationError"])
        report += f"\n## Rows not validated\n\n{markdown_table(problems)}\n"
    return report
