"""The files of an address validation: ``results.csv``, ``results.xlsx`` (the changed certified cells filled,
refused and failed rows marked, a summary sheet with the quality counts) and the markdown summary."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from fileio.commerce.address_input import LEAF_FIELDS, ROW
from fileio.reports import DEFAULT_CSV_STYLE, CsvStyle, markdown_table, write_csv
from fileio.sandbox_marks import with_banner
from fileio.workbooks import write_xlsx
from tasks.commerce.validation import (
    CERTIFIED_PREFIX,
    HTTP_STATUS_COLUMN,
    STATUS_COLUMN,
    ValidationTable,
)

CHANGED = "changed"
PROBLEM = "problem"
FORMATS = {
    CHANGED: {"bg_color": "#FFEB9C", "font_color": "#9C5700"},
    PROBLEM: {"bg_color": "#FFC7CE", "font_color": "#9C0006"},
}
RESULTS_SHEET = "Results"
SUMMARY_SHEET = "Summary"


def cell_styles(table: ValidationTable) -> pd.DataFrame:
    """Per cell of the results, ``changed`` (a certified value that differs from the input), ``problem`` (the
    status of a row that was refused or failed) or None."""
    frame = table.frame
    styles = np.full(frame.shape, None, dtype=object)
    position = {column: index for index, column in enumerate(frame.columns)}
    for offset, fields in enumerate(table.changed):
        for field in fields:
            styles[offset, position[CERTIFIED_PREFIX + field]] = CHANGED
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
    rejected_rows: int,
    empty_rows: int = 0,
    csv_style: CsvStyle = DEFAULT_CSV_STYLE,
    sandbox: bool = False,
) -> list[Path]:
    """Write ``results.csv`` (in ``csv_style``) and ``results.xlsx`` (after a ``sandbox`` run, the banner
    sheet first: :mod:`fileio.sandbox_marks`); returns their paths.

    Every text cell of the CSV file gets the formula guard when the style has it (see
    :func:`fileio.reports.write_csv`): none of its columns holds a code that may start like a formula. The
    workbook never turns text into formulas.
    """
    csv_path = write_csv(table.frame, output_dir / "results.csv", style=csv_style)
    xlsx_path = write_xlsx(
        output_dir / "results.xlsx",
        with_banner(
            {
                RESULTS_SHEET: table.frame,
                SUMMARY_SHEET: summary_frame(table, rejected_rows=rejected_rows, empty_rows=empty_rows),
            },
            sandbox=sandbox,
        ),
        styles={RESULTS_SHEET: cell_styles(table)},
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
