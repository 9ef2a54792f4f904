"""What an address validation writes back into the customer's file: the values of the address fields that
changed (``street``, ``houseNumber``, ``zip``, ``city``, ``additionalAddress``) of every row answered with
the quality CERTIFIED, or with a further quality the user named (``--apply DOMICILE_UNKNOWN``; the rule is
:func:`fileio.writeback_policy.quality_applied`), each into the column it was read from.

A changed field of a row answered with any other quality, or not validated, keeps its cell and is listed
with the answer, the value given and the value answered, as is a field read from two columns (a house
number and its addition: neither cell would hold what it held before). A street column that holds the
house number too (the file has no house number column) gets the answer's street and house number in one;
a column holding postcode and town ("PLZ Ort") the answer's postcode and town in one.
A box number is never written: its cell may hold the term too (``Postfach 12``). Nor is a value that starts
like a formula (``=``, ``+``, ``-``, ``@``, a tab or a carriage return,
:func:`fileio.writeback_policy.formula_refusal`): it is listed instead.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from fileio.address_cells import joined_zip_town
from fileio.commerce.address_input import CommerceAddresses
from fileio.errors import InputError
from fileio.lazy import lazy_module
from fileio.sandbox_marks import writeback_name
from fileio.writeback import write_back
from fileio.writeback.options import DEFAULT_WRITE_BACK, WriteBackOptions
from fileio.writeback.report import SkippedChange, WrittenBack, written_back
from fileio.writeback_policy import formula_refusal, quality_applied, validation_answer

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

WRITEBACK_FIELDS: tuple[str, ...] = ("street", "houseNumber", "zip", "city", "additionalAddress")
VALIDATED = "validated"


@dataclass(frozen=True)
class ValidatedRow:
    """One row of the results: its data row, its outcome, its quality, the leaf fields that changed, the
    answer's values and the values given."""

    row: int
    status: str
    changed: Sequence[str]
    certified: Mapping[str, str | None]
    quality: str | None = None
    given: Mapping[str, str | None] | None = None

    def skipped(self, field: str, reason: str) -> SkippedChange:
        """``field`` of this row left as it was, for ``reason``."""
        given = (self.given or {}).get(field)
        return SkippedChange(
            self.row,
            field,
            reason,
            answer=validation_answer(self.quality),
            given=given or "",
            answered=self.certified.get(field) or "",
        )


def validation_edits(
    rows: Sequence[ValidatedRow], columns: Mapping[str, tuple[str, ...]], further: Collection[str] = ()
) -> tuple[dict[int, dict[str, str]], list[SkippedChange]]:
    """The cells to write: data row → {source column: the answer's value}, and the changed fields left as
    they were. ``columns``: leaf field → the source column(s) it was read from
    (``CommerceAddresses.columns``); ``further``: the qualities applied besides CERTIFIED."""
    edits: dict[int, dict[str, str]] = {}
    skipped: list[SkippedChange] = []
    # A column holding two fields in one cell gets both, joined, or neither.
    combined = [
        (column, pair, joined)
        for column, pair, joined in (
            (_street_line_column(columns), ("street", "houseNumber"), _street_line),
            (_zip_town_column(columns), ("zip", "city"), _zip_town),
        )
        if column is not None
    ]
    for row in rows:
        fields = [field for field in row.changed if field in WRITEBACK_FIELDS]
        if fields and row.status != VALIDATED:
            skipped += [row.skipped(field, f"the row was {row.status}") for field in fields]
            continue
        if fields and not quality_applied(row.quality, further):
            reason = _not_applied(row.quality)
            skipped += [row.skipped(field, reason) for field in fields]
            continue
        for column, pair, joined in combined:
            if set(pair) & set(fields):
                fields = [field for field in fields if field not in pair]
                cell, refused = joined(row)
                if refused is not None:
                    skipped.append(row.skipped(pair[0], refused))
                else:
                    edits.setdefault(row.row, {})[column] = cell
        for field in fields:
            sources = columns.get(field, ())
            value = row.certified.get(field)
            if len(sources) != 1:
                skipped.append(row.skipped(field, _no_single_column(sources)))
            elif value is None or not value.strip():
                skipped.append(row.skipped(field, "the answer has no value for it"))
            elif (refused := formula_refusal(value)) is not None:
                skipped.append(row.skipped(field, refused))
            else:
                edits.setdefault(row.row, {})[sources[0]] = value
    return edits, skipped


def _street_line_column(columns: Mapping[str, tuple[str, ...]]) -> str | None:
    """The one column holding street and house number together (the file has no house number column), or
    None."""
    streets = columns.get("street", ())
    return streets[0] if len(streets) == 1 and "houseNumber" not in columns else None


def _zip_town_column(columns: Mapping[str, tuple[str, ...]]) -> str | None:
    """The one column holding postcode and town together ("PLZ Ort"), or None."""
    zips = columns.get("zip", ())
    return zips[0] if len(zips) == 1 and columns.get("city") == zips else None


def _street_line(row: ValidatedRow) -> tuple[str, str | None]:
    """The answer's street and house number as one street line, or why it cannot be written (the answer
    lacks one of them, or the line starts like a formula): a street alone would drop the number the cell
    holds."""
    street, number = (str(row.certified.get(field) or "").strip() for field in ("street", "houseNumber"))
    if not street or not number:
        return "", "the answer has no street and house number for the street line"
    line = f"{street} {number}"
    return line, formula_refusal(line)


def _zip_town(row: ValidatedRow) -> tuple[str, str | None]:
    """The answer's postcode and town as one cell ("8001 Zürich"), the given one where the answer lacks it,
    or why it cannot be written (it starts like a formula)."""
    cell = joined_zip_town(*(row.certified.get(f) or (row.given or {}).get(f) for f in ("zip", "city")))
    return cell, formula_refusal(cell)


def _not_applied(quality: str | None) -> str:
    if quality is None:
        return "the answer has no quality: only a certified answer is written back"
    return f"quality {quality} is not certified: written back only with --apply {quality}"


def _no_single_column(sources: tuple[str, ...]) -> str:
    if not sources:
        return "the file has no column for it"
    return f"it was read from {len(sources)} columns ({', '.join(sources)})"


def write_validation_writeback(
    addresses: CommerceAddresses,
    rows: Sequence[ValidatedRow],
    output_dir: Path,
    *,
    further: Collection[str] = (),
    ids: pd.Series | None = None,
    options: WriteBackOptions = DEFAULT_WRITE_BACK,
) -> WrittenBack:
    """Write ``writeback.<ext>`` (the input's own extension; ``writeback-sandbox.<ext>`` after a sandbox
    run, as ``options`` say) with the values of the certified answers and of those of the ``further``
    qualities, and ``writeback-skipped.csv`` when some changes were not applied (``ids``: the customer's id
    per data row, a column of it).

    Raises:
        InputError: the input file is gone, changed since it was read, or a workbook whose worksheet cannot
            be rewritten as a stream (a row without its reference, rows out of order): nothing is written.
    """
    if addresses.layout is None:
        raise InputError("the input's layout is unknown: it cannot be written back", path=addresses.source)
    edits, left_out = validation_edits(rows, addresses.columns, further)
    target = output_dir / writeback_name(addresses.source.suffix, sandbox=options.sandbox)
    outcome = write_back(addresses.source, target, addresses.layout, edits, limits=options.limits)
    field_of = {header: field for field, headers in addresses.columns.items() for header in headers}
    by_row = {row.row: row for row in rows}
    lines = [replace(skip, column=", ".join(addresses.columns.get(skip.field, ()))) for skip in left_out]
    for edit in outcome.skipped:
        field = field_of.get(edit.column, "")
        skip = by_row[edit.row].skipped(field, edit.reason) if edit.row in by_row else None
        lines.append(
            SkippedChange(edit.row, field, edit.reason, column=edit.column)
            if skip is None
            else replace(skip, column=edit.column)
        )
    return written_back(outcome, lines, output_dir, ids=ids, csv_style=options.csv_style)
