"""What an address validation writes back into the customer's file: the certified values of the address
fields that changed (``street``, ``houseNumber``, ``zip``, ``city``, ``additionalAddress``) of every validated
row, each into the column it was read from.

The commerce API reports no moves: the policies ``corrections`` and ``all`` write the changed fields,
``moves`` and ``none`` nothing. A field read from two columns (a house number and its addition) is not
written (neither cell would hold what it held before) and is listed instead, as is a changed field of a row
that was not validated. A box number is never written: its cell may hold the term too (``Postfach 12``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fileio.commerce.address_input import CommerceAddresses
from fileio.errors import InputError
from fileio.limits import TABLE_LIMITS, TableLimits
from fileio.reports import DEFAULT_CSV_STYLE, CsvStyle
from fileio.sandbox_marks import writeback_name
from fileio.writeback import write_back
from fileio.writeback.report import SkippedLine, WrittenBack, written_back
from fileio.writeback_policy import Policy

WRITEBACK_FIELDS: tuple[str, ...] = ("street", "houseNumber", "zip", "city", "additionalAddress")
VALIDATED = "validated"


@dataclass(frozen=True)
class ValidatedRow:
    """One row of the results: its data row, its outcome, the leaf fields that changed, the certified
    values."""

    row: int
    status: str
    changed: Sequence[str]
    certified: Mapping[str, str | None]


@dataclass(frozen=True)
class SkippedField:
    """A changed field the write-back leaves as it was: the row, the field, why."""

    row: int
    field: str
    reason: str


def validation_edits(
    rows: Sequence[ValidatedRow], columns: Mapping[str, tuple[str, ...]], policy: Policy
) -> tuple[dict[int, dict[str, str]], list[SkippedField]]:
    """The cells to write: data row → {source column: certified value}, and the changed fields left as they
    were. ``columns``: leaf field → the source column(s) it was read from (``CommerceAddresses.columns``)."""
    edits: dict[int, dict[str, str]] = {}
    skipped: list[SkippedField] = []
    if policy not in ("corrections", "all"):
        return edits, skipped
    for row in rows:
        fields = [field for field in row.changed if field in WRITEBACK_FIELDS]
        if fields and row.status != VALIDATED:
            skipped += [SkippedField(row.row, field, f"the row was {row.status}") for field in fields]
            continue
        for field in fields:
            sources = columns.get(field, ())
            value = row.certified.get(field)
            if len(sources) != 1:
                skipped.append(SkippedField(row.row, field, _no_single_column(sources)))
            elif value is None or not value.strip():
                skipped.append(SkippedField(row.row, field, "the certified address has no value for it"))
            else:
                edits.setdefault(row.row, {})[sources[0]] = value
    return edits, skipped


def _no_single_column(sources: tuple[str, ...]) -> str:
    if not sources:
        return "the file has no column for it"
    return f"it was read from {len(sources)} columns ({', '.join(sources)})"


def write_validation_writeback(
    addresses: CommerceAddresses,
    rows: Sequence[ValidatedRow],
    output_dir: Path,
    *,
    policy: Policy,
    limits: TableLimits = TABLE_LIMITS,
    csv_style: CsvStyle = DEFAULT_CSV_STYLE,
    sandbox: bool = False,
) -> WrittenBack:
    """Write ``writeback.<ext>`` (the input's own extension; ``writeback-sandbox.<ext>`` after a
    ``sandbox`` run) with the certified values ``policy`` applies, and ``writeback-skipped.csv`` when some
    could not be applied.

    Raises:
        InputError: the input file is gone or changed since it was read (nothing is written).
    """
    if addresses.layout is None:
        raise InputError("the input's layout is unknown: it cannot be written back", path=addresses.source)
    edits, left_out = validation_edits(rows, addresses.columns, policy)
    target = output_dir / writeback_name(addresses.source.suffix, sandbox=sandbox)
    outcome = write_back(addresses.source, target, addresses.layout, edits, limits=limits)
    field_of = {header: field for field, headers in addresses.columns.items() for header in headers}
    lines: list[SkippedLine] = [
        (skip.row, skip.field, ", ".join(addresses.columns.get(skip.field, ())), skip.reason)
        for skip in left_out
    ]
    lines += [(edit.row, field_of.get(edit.column, ""), edit.column, edit.reason) for edit in outcome.skipped]
    return written_back(outcome, lines, output_dir, csv_style=csv_style)
