"""The address service's decoded results joined onto the input, one row per accepted input row in input
order, and written out (``results.csv``, ``results.xlsx``, ``moves.csv``).

The download is unpacked by :mod:`fileio.address_service.downloads`, the result file read by
:mod:`fileio.address_service.result_file` and decoded by :mod:`fileio.address_service.result_codes`, the
moves file read by :mod:`fileio.address_service.moves_file`.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from connectors.address_service.codes import (
    ADDRESS_FIELD_NAMES,
)
from fileio.address_service.records import INPUT_SUFFIX, RECORD_ID, RETURNED_COLUMN, AddressInput
from fileio.address_service.result_charts import result_chart_sheets
from fileio.address_service.result_codes import LARGEST_RECORD_ID, QSTAT_DESIGNATION, QSTAT_MEANING
from fileio.address_service.result_file import UPLOADED_SUFFIX
from fileio.address_service.user_results import UserResults
from fileio.annotated_workbooks import CELL_COLUMNS, AnnotatedSheet, write_annotated_xlsx
from fileio.errors import DuplicateRecordIds, ResultFileError
from fileio.lazy import lazy_module
from fileio.reports import DEFAULT_CSV_STYLE, POST, CsvStyle, write_csv
from fileio.sandbox_marks import with_banner
from fileio.workbooks import write_xlsx
from fileio.worksheet_parts import EXCEL_MAX_ROWS

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")

RESULTS_SHEET, LEGEND_SHEET = "Results", "Legend"
CHANGED_FILL, CHANGED_COLOUR = "changed", "#FFEB9C"  # the fill review.xlsx gives a changed cell
NOT_RETURNED = "not returned"
NOT_RETURNED_MEANING = "the service's result has no row with this record id"
logger = logging.getLogger("postflows.address_service.results")


def merge_results(
    input: AddressInput,
    decoded: pd.DataFrame,
    *,
    source: Path | None = None,
    record_id: str = RECORD_ID,
    uploaded_columns: Collection[str] = (),
) -> pd.DataFrame:
    """One row per accepted input row, in input order: RecordId and the pass-through columns (from the input),
    ``ReturnedByService``, the service's status, §2.3 and decoded columns, then the input address as
    ``<Field>_in``. A row the service did not return has ``ReturnedByService`` False and an empty QSTAT.
    Result rows whose RecordId no input row has are logged and left out; a RecordId on several rows is
    refused.

    Args:
        input: the accepted input records.
        decoded: the decoded result rows.
        source: the result file, named in errors (the input file when not given).
        record_id: how the result file names the id column (an agreed alignment's own name).
        uploaded_columns: the upload's columns, echoed by the result; not merged (the input's are kept).

    Raises:
        ResultFileError: the result has no record id column, or not one of its rows matches an input row
            (it cannot be the answer to this upload).
        DuplicateRecordIds: a record id has more than one result row.
    """
    source = source or input.source
    left = input.records[[RECORD_ID, *input.passthrough_columns]]
    id_column = next((c for c in decoded.columns if str(c).casefold() == record_id.casefold()), None)
    if id_column is None:
        raise ResultFileError(f"result has no {record_id} column", path=source)
    uploaded = (
        set(input.passthrough_columns)
        | {c for c in decoded.columns if str(c).endswith(UPLOADED_SUFFIX)}
        | (set(uploaded_columns) & set(decoded.columns))
    )
    kept = decoded.drop(columns=[c for c in decoded.columns if c in uploaded or c == id_column])
    right = _returned_rows(kept, decoded[id_column], source)
    _check_matches(left, right, len(decoded), source)
    merged = left.merge(right, on=RECORD_ID, how="left", sort=False, validate="one_to_one")
    _mark_not_returned(merged)
    for field in ADDRESS_FIELD_NAMES:
        if field in input.records:
            merged[field + INPUT_SUFFIX] = input.records[field].to_numpy()
    return merged


def _returned_rows(results: pd.DataFrame, ids: pd.Series, source: Path) -> pd.DataFrame:
    """The result rows (``results``, their record ids ``ids`` as the file has them) that have a record id,
    keyed by ``RecordId`` (int64) and marked ``ReturnedByService``.

    Raises:
        DuplicateRecordIds: a record id has more than one result row.
    """
    right = results.copy(deep=False)
    right.insert(0, RECORD_ID, _record_ids(ids))
    right = right[right[RECORD_ID].notna()]
    repeated = right[RECORD_ID].duplicated(keep=False)
    if repeated.any():
        raise DuplicateRecordIds(sorted(int(i) for i in right.loc[repeated, RECORD_ID].unique()), path=source)
    right.insert(1, RETURNED_COLUMN, True)
    right[RECORD_ID] = right[RECORD_ID].astype("int64")
    return right


def _check_matches(left: pd.DataFrame, right: pd.DataFrame, result_rows: int, source: Path) -> None:
    """Refuse a result of which not one row matches an uploaded row; log the rows that match none.

    Raises:
        ResultFileError: input rows were uploaded and no result row carries one of their record ids.
    """
    matches = right[RECORD_ID].isin(left[RECORD_ID])
    if len(left) and not matches.any():
        raise ResultFileError(
            f"no result row matches the uploaded record ids ({result_rows} result rows, "
            f"{len(right)} of them with a {RECORD_ID}; {len(left)} rows uploaded)",
            path=source,
        )
    unmatched = int((~matches).sum())
    if unmatched:
        logger.warning(
            "%d result rows carry a RecordId that no accepted input row has; not merged", unmatched
        )


def _mark_not_returned(merged: pd.DataFrame) -> None:
    """Complete the merged rows in place: ``ReturnedByService`` False, an empty QSTAT and the designation
    and meaning ``not returned`` on the rows the service did not return."""
    merged[RETURNED_COLUMN] = merged[RETURNED_COLUMN].astype("boolean").fillna(False).astype(bool)
    if "QSTAT" in merged:
        merged["QSTAT"] = merged["QSTAT"].fillna("")
    else:
        merged["QSTAT"] = ""
    missing = ~merged[RETURNED_COLUMN]
    if missing.any():
        for column, text in ((QSTAT_DESIGNATION, NOT_RETURNED), (QSTAT_MEANING, NOT_RETURNED_MEANING)):
            if column in merged:
                merged[column] = merged[column].astype(object).where(~missing, text)
        logger.warning(
            "%d uploaded rows did not come back from the service (%s)", int(missing.sum()), NOT_RETURNED
        )


def _record_ids(values: pd.Series) -> pd.Series:
    """Record ids as ``Int64``: a whole number an upload can have (``"7"``, ``"7.0"``), else missing — a
    fraction, a number past any row count or not a number at all is the id of no uploaded row."""
    numbers = pd.to_numeric(values, errors="coerce").astype("float64")
    whole = np.isfinite(numbers) & (numbers == np.floor(numbers)) & (numbers.abs() < LARGEST_RECORD_ID)
    return numbers.where(whole).astype("Int64")


def write_address_results(
    shown: UserResults,
    summary: pd.DataFrame,
    out_dir: Path,
    *,
    moves: pd.DataFrame | None = None,
    csv_style: CsvStyle = DEFAULT_CSV_STYLE,
    corrections: Mapping[str, int] | None = None,
    sandbox: bool = False,
) -> list[Path]:
    """Write ``results.csv``, ``results.xlsx`` and, when moves are given, ``moves.csv``; returns the paths
    written.

    ``shown`` are the results in the customer's words and ``moves`` the moves named the same way
    (:func:`~fileio.address_service.user_results.user_results`, :func:`~fileio.address_service.user_results.
    user_moves`). The workbook's sheets: Results (the cells the service changed filled, with their reason in a
    note), Legend (what each column holds, its field in the specification), QSTAT summary and, with a moves
    file, Moves, then the chart sheets; after a ``sandbox`` run, the banner sheet first.

    The chart sheets hold a table and its native chart each (:mod:`fileio.address_service.result_charts`):
    rows by QSTAT class, corrections by kind (``corrections``: rows per kind of correction; none counted
    when None) and moves by kind, every category listed, zero included.

    The CSV files are written in ``csv_style``'s dialect; with its guard a text cell that a spreadsheet
    would run as a formula gets a leading ``'`` (:func:`fileio.reports.neutralise_formulas`), a code too;
    the workbook never needs it (its cells are written as text, never as formulas).
    """
    paths = [write_csv(shown.frame, out_dir / "results.csv", style=csv_style)]
    sheets = {LEGEND_SHEET: shown.legend, "QSTAT summary": summary}
    if moves is not None:
        sheets["Moves"] = moves
        paths.append(write_csv(moves, out_dir / "moves.csv", style=csv_style))
    chart_sheets, charts = result_chart_sheets(
        summary, corrections=corrections, moves_file_rows=None if moves is None else len(moves)
    )
    workbook = {**sheets, **chart_sheets}
    lead = with_banner({}, sandbox=sandbox)
    path = out_dir / "results.xlsx"
    if len(shown.frame) < EXCEL_MAX_ROWS:
        write_annotated_xlsx(path, _results_sheet(shown), sheets=workbook, charts=charts, lead=lead)
    else:  # more rows than a sheet holds: the sheet continues on "Results (2)", unmarked
        write_xlsx(path, {**lead, RESULTS_SHEET: shown.frame, **workbook}, charts=charts)
    paths.insert(1, path)
    return paths


def _results_sheet(shown: UserResults) -> AnnotatedSheet:
    """The Results sheet: the cells the service changed filled, their reason in a note."""
    cells = pd.DataFrame(
        [(row, column, CHANGED_FILL, note) for (row, column), note in shown.changed.items()],
        columns=list(CELL_COLUMNS),
    )
    notes = {
        str(column): "The service's value; filled where it differs from the one sent, the reason in a note."
        for column in shown.frame.columns
        if str(column).endswith(POST)
    }
    return AnnotatedSheet(
        title=RESULTS_SHEET,
        frame=shown.frame,
        fills={CHANGED_FILL: CHANGED_COLOUR},
        cells=cells,
        header_notes=notes
        or {str(shown.frame.columns[0]): "See the Legend sheet for what each column holds."},
    )
