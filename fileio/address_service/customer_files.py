"""The files of an address batch made for the customer's own systems: ``writeback.<ext>`` (the input file
with the service's corrections written into its address columns, :mod:`fileio.writeback`), the list of
corrections left out (``writeback-skipped.csv``) and the review workbook (``review.xlsx``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from fileio.address_service.corrections import Corrections, writeback_edits
from fileio.address_service.records import RECORD_ID, AddressInput
from fileio.address_service.review import review_sheet, write_review
from fileio.errors import InputError
from fileio.lazy import lazy_module
from fileio.sandbox_marks import writeback_name
from fileio.writeback import SkippedEdit, write_back
from fileio.writeback.options import DEFAULT_WRITE_BACK, WriteBackOptions
from fileio.writeback.report import SkippedChange, WrittenBack, customer_ids, written_back
from fileio.writeback_policy import Policy

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

REVIEW_FILE = "review.xlsx"
_STREET_PARTS = ("Streetname", "HouseNo", "HouseNoAddition")


@dataclass(frozen=True)
class CustomerFileOptions:
    """How the customer's files are written.

    Attributes:
        policy: which corrections are written back (:mod:`fileio.writeback_policy`).
        writing: the limits the input is read again within, the CSV dialect, and whether the run was
            against the sandbox (the files then say so).
    """

    policy: Policy
    writing: WriteBackOptions = DEFAULT_WRITE_BACK


@dataclass(frozen=True)
class WriteBack:
    """What the write-back did (:class:`~fileio.writeback.report.WrittenBack`) and the cells it wrote (a
    boolean frame like ``Corrections.corrected_mask``)."""

    written_back: WrittenBack
    written: pd.DataFrame


def write_customer_writeback(
    input: AddressInput, corrections: Corrections, output_dir: Path, options: CustomerFileOptions
) -> WriteBack:
    """Write ``writeback.<ext>`` (the input's own extension; ``writeback-sandbox.<ext>`` after a sandbox
    run) with the corrections the ``options``' policy applies, and ``writeback-skipped.csv`` when some could
    not be applied.

    Raises:
        InputError: the input file is gone, changed since it was read, or a workbook whose worksheet cannot
            be rewritten as a stream (a row without its reference, rows out of order): nothing is written.
    """
    if input.layout is None:
        raise InputError("the input's layout is unknown: it cannot be written back", path=input.source)
    policy = options.policy
    split_lines = _split_street_lines(input)
    edits, left_out = writeback_edits(corrections, input.address_columns, policy, split_lines=split_lines)
    writing = options.writing
    target = output_dir / writeback_name(input.source.suffix, sandbox=writing.sandbox)
    outcome = write_back(input.source, target, input.layout, edits, limits=writing.limits)
    written = corrections.applied(policy).copy()
    field_of = _cell_fields(input, corrections, split_lines)
    for skip in left_out:
        if skip.field in written:
            written.loc[skip.row, skip.field] = False
    for edit in outcome.skipped:
        for field in field_of(edit.row, edit.column):
            written.loc[edit.row, field] = False
    lines = _skipped_lines(left_out, outcome.skipped, input.address_columns, field_of, corrections)
    ids = customer_ids(input.rejected_report, input.records, RECORD_ID)
    return WriteBack(written_back(outcome, lines, output_dir, ids=ids, csv_style=writing.csv_style), written)


def _split_street_lines(input: AddressInput) -> dict[int, str]:
    """The rows whose street column held the house number (or a P.O. box or c/o line) too."""
    split = input.house_numbers
    if not len(split) or RECORD_ID not in split:
        return {}
    return dict(
        zip(split[RECORD_ID].astype("int64").tolist(), split["line"].astype(str).tolist(), strict=True)
    )


def _cell_fields(
    input: AddressInput, corrections: Corrections, split_lines: dict[int, str]
) -> Callable[[int, str], tuple[str, ...]]:
    """(row, customer column) → the address fields an edit of that cell writes: a split street cell holds
    street and house number, any other cell the fields of its column."""
    column_fields: dict[str, tuple[str, ...]] = {}
    for field, column in input.address_columns.items():
        if field in corrections.fields:
            column_fields[column] = (*column_fields.get(column, ()), field)
    street = input.address_columns.get("Streetname")
    street_parts = tuple(field for field in _STREET_PARTS if field in corrections.fields)

    def fields(row: int, column: str) -> tuple[str, ...]:
        if column == street and row in split_lines:
            return street_parts
        return column_fields.get(column, ())

    return fields


def _skipped_lines(
    left_out: list[SkippedChange],
    skipped: tuple[SkippedEdit, ...],
    address_columns: dict[str, str],
    field_of: Callable[[int, str], tuple[str, ...]],
    corrections: Corrections,
) -> list[SkippedChange]:
    rows = [
        replace(
            skip,
            column=address_columns.get(skip.field, ""),
            answer=skip.answer or corrections.answer(skip.row),
        )
        for skip in left_out
    ]
    rows += [
        SkippedChange(
            edit.row,
            ", ".join(field_of(edit.row, edit.column)),
            edit.reason,
            corrections.answer(edit.row),
            column=edit.column,
        )
        for edit in skipped
    ]
    return rows


def write_customer_review(
    input: AddressInput,
    corrections: Corrections,
    summary: pd.DataFrame,
    output_dir: Path,
    *,
    options: CustomerFileOptions,
    written: pd.DataFrame | None,
    moves_file_rows: int | None = None,
) -> Path:
    """Write ``review.xlsx``: every input row (rejected ones too) named by the customer's id column, the
    address as given beside the service's, the changes and the rows for a human marked (see
    :func:`~fileio.address_service.review.write_review`). ``written``: the cells the write-back wrote (None:
    none was written)."""
    ids = customer_ids(input.rejected_report, input.records, RECORD_ID)
    id_header = None if ids is None else str(ids.name)
    if written is None:
        written = corrections.applied("none")
    sheet = review_sheet(
        corrections,
        input.rejected_report,
        policy=options.policy,
        written=written,
        ids=ids,
        id_header=id_header,
    )
    return write_review(
        output_dir / REVIEW_FILE,
        sheet,
        summary,
        corrections,
        rejected_rows=input.rejected_rows,
        moves_file_rows=moves_file_rows,
        sandbox=options.writing.sandbox,
    )


@dataclass(frozen=True)
class CustomerFiles:
    """The write-back (None when it could not be made, ``not_written`` saying why) and the review."""

    write_back: WriteBack | None
    not_written: InputError | None
    review: Path


def write_customer_files(
    input: AddressInput,
    corrections: Corrections,
    summary: pd.DataFrame,
    output_dir: Path,
    options: CustomerFileOptions,
    *,
    moves_file_rows: int | None = None,
) -> CustomerFiles:
    """The write-back (:func:`write_customer_writeback`), then the review marking what it wrote
    (:func:`write_customer_review`). A write-back that cannot be made (the input is gone or changed since it
    was read, a worksheet that cannot be rewritten) is said in the outcome, not raised: the results are
    there, and so is the review. After a sandbox run, both say so (:mod:`fileio.sandbox_marks`)."""
    try:
        written: WriteBack | None = write_customer_writeback(input, corrections, output_dir, options)
        not_written = None
    except InputError as error:
        written, not_written = None, error
    review = write_customer_review(
        input,
        corrections,
        summary,
        output_dir,
        options=options,
        written=None if written is None else written.written,
        moves_file_rows=moves_file_rows,
    )
    return CustomerFiles(write_back=written, not_written=not_written, review=review)
