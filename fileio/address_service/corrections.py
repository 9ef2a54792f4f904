"""What the service changed in each row of an address batch, and what a human has to look at.

The merged results (:func:`fileio.address_service.results.merge_results`) hold, per accepted input row, the
address as given (``<Field>_in``), the service's address (``<Field>``), QSTAT and the ShortReport. From them:

* a **correction** is an address field of a hit (QSTAT 1, 2 or 3) whose ShortReport character (§2.5) is one of
  the correction marks (by default ``2`` spelling standardized, ``3`` changed, ``4`` supplemented) and whose
  value from the service differs from the one given; it is **certain**, and written back, only when the
  row's CorrectionType (§2.3) says a correction is required
  (:func:`fileio.writeback_policy.batch_row_certain`);
* a **move** is a relocation hit (QSTAT 4): its address fields hold the new address;
* a row **needs a human** when the service could not confirm it: deceased or closed (25), moved abroad (26),
  moved with the new address unknown (27), person unknown (50), address unknown (51), a double (QSTAT or
  Double_DSTAT K or F), a move (4), an unknown QSTAT, or no result row at all. Rejected input rows need one
  too (:func:`review_reasons`).

Only the address fields of :data:`WRITEBACK_FIELDS` are compared; a service value that is empty never
replaces a given one, nor does one that starts like a formula (``=``, ``+``, ``-``, ``@``, a tab or a carriage
return: :func:`fileio.writeback_policy.formula_refusal`), which is listed instead. Every other value of the
service that differs from the one given stays as given in the write-back and is listed with the row's QSTAT
and CorrectionType (:func:`writeback_edits`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from connectors.address_service.codes import SHORT_REPORT_POSITIONS, normalize_qstat, qstat_info
from fileio.address_cells import joined_zip_town
from fileio.address_service.records import INPUT_SUFFIX, RECORD_ID, RETURNED_COLUMN
from fileio.address_service.result_charts import CORRECTION_KINDS, MOVE_KINDS, UNKNOWN_QSTAT
from fileio.lazy import lazy_module
from fileio.writeback.report import SkippedChange
from fileio.writeback_policy import (
    CORRECTION_QSTATS,
    MOVE_QSTAT,
    Policy,
    batch_answer,
    batch_row_certain,
    formula_refusal,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")

DEFAULT_MARKS = "234"
HITS = frozenset(CORRECTION_QSTATS)
MOVE = MOVE_QSTAT
DOUBLES = frozenset({"K", "F"})

# The address fields a write-back may change, and the kind of correction each counts as.
WRITEBACK_FIELDS: Mapping[str, str] = {
    "Streetname": "street",
    "HouseNo": "house number",
    "HouseNoAddition": "house number",
    "ZIPCode": "postcode",
    "ZIPAddition": "postcode",
    "TownName": "town",
    "PoBoxTerm": "P.O. box",
    "PoBoxNo": "P.O. box",
    "PoBoxZIP": "P.O. box",
    "PoBoxZIPAddition": "P.O. box",
    "PoBoxTownName": "P.O. box",
}

# Why a row needs a human, in the order the review and its chart list them.
REJECTED = "rejected before sending"
NOT_RETURNED = "not returned by the service"
DOUBLE = "double (K/F)"
HUMAN_QSTATS: Mapping[str, str] = {
    "4": "moved (QSTAT 4)",
    "25": "deceased or closed (QSTAT 25)",
    "26": "moved abroad (QSTAT 26)",
    "27": "moved, new address unknown (QSTAT 27)",
    "50": "person unknown (QSTAT 50)",
    "51": "address unknown (QSTAT 51)",
}
HUMAN_REASONS: tuple[str, ...] = (*HUMAN_QSTATS.values(), DOUBLE, UNKNOWN_QSTAT, NOT_RETURNED, REJECTED)

_POSITION = {name.casefold(): position for position, name in enumerate(SHORT_REPORT_POSITIONS)}


@dataclass(frozen=True)
class Corrections:
    """Per result row (index: RecordId) and address field: the value given, the service's value, the
    ShortReport character, and whether the value is a correction or a move's new value.

    Attributes:
        fields: the address fields compared (those of :data:`WRITEBACK_FIELDS` the results hold).
        given, corrected, marks: frames of text, one column per field.
        corrected_mask: the service's value is a correction of a hit (see the module docstring).
        moved_mask: the service's value is a move's new value that differs from the one given.
        qstat: the normalised QSTAT per row ("" when the row did not come back).
        needs_human: the reason a row needs a human, "" when it needs none.
        correction_type: the CorrectionType per row (an int, None when the row has none).
        certain: per row, whether its corrections are certain (a hit whose CorrectionType is 1).
    """

    fields: tuple[str, ...]
    given: pd.DataFrame
    corrected: pd.DataFrame
    marks: pd.DataFrame
    corrected_mask: pd.DataFrame
    moved_mask: pd.DataFrame
    qstat: pd.Series
    needs_human: pd.Series
    correction_type: pd.Series
    certain: pd.Series

    def applied(self, policy: Policy) -> pd.DataFrame:
        """The cells ``policy`` writes back (a boolean frame like :attr:`corrected_mask`): the corrections of
        the rows whose corrections are certain, the moves, both or none."""
        none = pd.DataFrame(False, index=self.given.index, columns=list(self.fields))
        certain = self.corrected_mask & self.certain.to_numpy()[:, None]
        return {
            "corrections": certain,
            "moves": self.moved_mask,
            "all": certain | self.moved_mask,
            "none": none,
        }[policy]

    def differs(self) -> pd.DataFrame:
        """The cells whose service value is not empty and differs from the one given (a boolean frame)."""
        corrected = self.corrected.apply(lambda column: column.str.strip())
        differs: pd.DataFrame = (corrected != self.given.apply(lambda column: column.str.strip())) & (
            corrected != ""
        )
        return differs

    def answer(self, record_id: int) -> str:
        """A row's QSTAT and CorrectionType as the skipped report names them ("" for a row not in the
        results)."""
        if record_id not in self.qstat.index:
            return ""
        kind = self.correction_type.at[record_id]
        return batch_answer(str(self.qstat.at[record_id]), kind if isinstance(kind, int) else None)

    def corrected_rows(self) -> int:
        return int(self.corrected_mask.any(axis=1).sum())

    def by_kind(self) -> dict[str, int]:
        """Rows with a correction of each kind (a row corrected in street and town counts in both)."""
        counts = dict.fromkeys(CORRECTION_KINDS, 0)
        for kind in CORRECTION_KINDS:
            columns = [field for field in self.fields if WRITEBACK_FIELDS[field] == kind]
            if columns:
                counts[kind] = int(self.corrected_mask[columns].any(axis=1).sum())
        return counts

    def moves(self) -> dict[str, int]:
        """Rows per kind of move (every kind listed, zero included)."""
        found = self.qstat.value_counts()
        return {label: int(found.get(code, 0)) for code, label in MOVE_KINDS.items()}

    def human_reasons(self) -> dict[str, int]:
        """Rows per reason a human is needed (every reason listed, zero included; rejected rows are not in
        the results and are counted by the caller)."""
        found = self.needs_human[self.needs_human != ""].value_counts()
        return {reason: int(found.get(reason, 0)) for reason in HUMAN_REASONS}


def classify(merged: pd.DataFrame, *, marks: str = DEFAULT_MARKS) -> Corrections:
    """The corrections and moves of the merged results, and the rows that need a human."""
    index = pd.Index(merged[RECORD_ID].astype("int64").to_numpy(), name=RECORD_ID)
    fields = tuple(f for f in WRITEBACK_FIELDS if f in merged.columns and f + INPUT_SUFFIX in merged.columns)
    returned = (
        merged[RETURNED_COLUMN].to_numpy(dtype=bool)
        if RETURNED_COLUMN in merged
        else np.ones(len(merged), dtype=bool)
    )
    qstat = pd.Series([normalize_qstat(v) for v in _text(merged, "QSTAT")], index=index, dtype=object)
    qstat[~returned] = ""
    report = pd.Series(_text(merged, "ShortReport"), index=index)
    given = pd.DataFrame({f: _text(merged, f + INPUT_SUFFIX) for f in fields}, index=index)
    corrected = pd.DataFrame({f: _text(merged, f) for f in fields}, index=index)
    mark_frame = pd.DataFrame({f: _marks(report, f) for f in fields}, index=index)
    if "HouseNo" in fields and "HouseNoAddition" not in fields:
        # The customer keeps the addition in the house number ("14a"): so does the corrected value.
        addition = _text(merged, "HouseNoAddition")
        corrected["HouseNo"] = corrected["HouseNo"] + addition
        added = pd.Series(addition != "", index=index) & _marks(report, "HouseNoAddition").isin(list(marks))
        mark_frame["HouseNo"] = mark_frame["HouseNo"].where(~added, _marks(report, "HouseNoAddition"))
    stripped = corrected.apply(lambda c: c.str.strip())
    differs = (stripped != given.apply(lambda c: c.str.strip())) & (stripped != "")
    hit = qstat.isin(HITS).to_numpy()[:, None]
    moved = (qstat == MOVE).to_numpy()[:, None]
    marked = mark_frame.isin(list(marks)) if marks else mark_frame.astype(bool) & False
    correction_type = pd.Series(
        [_whole_number(value) for value in _text(merged, "CorrectionType")], index=index, dtype=object
    )
    certain = pd.Series(
        [batch_row_certain(code, kind) for code, kind in zip(qstat, correction_type, strict=True)],
        index=index,
        dtype=bool,
    )
    return Corrections(
        fields=fields,
        given=given,
        corrected=corrected,
        marks=mark_frame,
        corrected_mask=differs & marked & hit,
        moved_mask=differs & moved,
        qstat=qstat,
        needs_human=_needs_human(qstat, pd.Series(_text(merged, "Double_DSTAT"), index=index), returned),
        correction_type=correction_type,
        certain=certain,
    )


def _whole_number(text: str) -> int | None:
    """A CorrectionType as the results hold it ("1", "1.0", 1), None for none or anything else."""
    try:
        number = float(text)
    except ValueError:
        return None
    return int(number) if number.is_integer() else None


def _needs_human(qstat: pd.Series, double: pd.Series, returned: np.ndarray) -> pd.Series:
    """The first reason of each row, "" for none."""
    reasons = qstat.map(lambda code: HUMAN_QSTATS.get(code, "")).astype(object)
    is_double = qstat.isin(DOUBLES) | double.str.strip().str.upper().isin(DOUBLES)
    reasons[is_double & (reasons == "")] = DOUBLE
    unknown = (qstat != "") & qstat.map(lambda code: qstat_info(code) is None)
    reasons[unknown & (reasons == "")] = UNKNOWN_QSTAT
    reasons[~returned] = NOT_RETURNED
    return reasons


def _text(frame: pd.DataFrame, column: str) -> np.ndarray:
    """A column as an array of str ("" for missing); all "" when the frame has no such column."""
    if column not in frame:
        return np.full(len(frame), "", dtype=object)
    values = frame[column].astype(object)
    return np.asarray(values.where(values.notna(), "").astype(str).to_numpy(), dtype=object)


def _marks(report: pd.Series, field: str) -> pd.Series:
    """The ShortReport character of ``field`` per row ("" past the report's end)."""
    position = _POSITION.get(field.casefold())
    if position is None:
        return pd.Series("", index=report.index)
    return report.str.slice(position, position + 1)


def writeback_edits(
    corrections: Corrections,
    address_columns: Mapping[str, str],
    policy: Policy,
    *,
    split_lines: Mapping[int, str] | None = None,
) -> tuple[dict[int, dict[str, str]], list[SkippedChange]]:
    """The cells to write into the customer's file: RecordId → {source column: new value}, and the cells
    that would be written but are not: those ``policy`` does not apply (:func:`kept_as_given`) and those
    the file cannot take.

    ``address_columns`` maps each address field to the customer's column (``AddressInput.address_columns``).
    ``split_lines`` are the rows whose street column held the house number too (RecordId → the line): their
    street column gets the corrected street and house number in one, as the customer keeps them, and no
    other column gets the house number. A split row whose line was a P.O. box or c/o line is left as it was.
    A column that holds postcode and town in one gets both, the corrected one and the other as given.
    """
    applied = corrections.applied(policy)
    split_lines = split_lines or {}
    edits: dict[int, dict[str, str]] = {}
    skipped: list[SkippedChange] = kept_as_given(corrections, applied, policy)
    rows = applied.index[applied.any(axis=1)]
    for record_id in rows.tolist():
        cells = [field for field in corrections.fields if applied.at[record_id, field]]
        values = {field: str(corrections.corrected.at[record_id, field]) for field in cells}
        skipped += _formulas(corrections, record_id, values)
        values = {field: value for field, value in values.items() if formula_refusal(value) is None}
        row_edits: dict[str, str] = {}
        if record_id in split_lines:
            street = _joined_street(corrections, record_id, values, address_columns)
            if street is None:
                skipped.append(
                    SkippedChange(record_id, "Streetname", "the street cell held a P.O. box or c/o line")
                )
            else:
                row_edits[address_columns["Streetname"]] = street
            values = {
                f: v for f, v in values.items() if f not in ("Streetname", "HouseNo", "HouseNoAddition")
            }
        zip_town = address_columns.get("ZIPCode")
        if zip_town is not None and zip_town == address_columns.get("TownName") and values.keys() & _ZIP_TOWN:
            row_edits[zip_town] = _joined_zip_town(corrections, record_id, values)
            values = {f: v for f, v in values.items() if f not in _ZIP_TOWN}
        for field, value in values.items():
            column = address_columns.get(field)
            if column is None:
                skipped.append(SkippedChange(record_id, field, "the file has no column for it"))
            else:
                row_edits[column] = value
        if row_edits:
            edits[record_id] = row_edits
    return edits, skipped


def _formulas(corrections: Corrections, record_id: int, values: Mapping[str, str]) -> list[SkippedChange]:
    """The values of a row that start like a formula, each left out with why
    (:func:`fileio.writeback_policy.formula_refusal`)."""
    return [
        SkippedChange(
            record_id,
            field,
            reason,
            answer=corrections.answer(record_id),
            given=str(corrections.given.at[record_id, field]),
            answered=value,
        )
        for field, value in values.items()
        if (reason := formula_refusal(value)) is not None
    ]


def kept_as_given(corrections: Corrections, applied: pd.DataFrame, policy: Policy) -> list[SkippedChange]:
    """Every service value that differs from the one given and that ``policy`` does not write (``applied``:
    :meth:`Corrections.applied`), with the row's QSTAT and CorrectionType and why, in row order."""
    kept = corrections.differs() & ~applied
    skipped: list[SkippedChange] = []
    for record_id in kept.index[kept.any(axis=1)].tolist():
        answer = corrections.answer(record_id)
        reason = _why_kept(corrections, record_id, policy)
        skipped += [
            SkippedChange(
                record_id,
                field,
                reason,
                answer=answer,
                given=str(corrections.given.at[record_id, field]),
                answered=str(corrections.corrected.at[record_id, field]),
            )
            for field in corrections.fields
            if kept.at[record_id, field]
        ]
    return skipped


def _why_kept(corrections: Corrections, record_id: int, policy: Policy) -> str:
    """Why a row's differing values are not written back under ``policy``."""
    qstat = str(corrections.qstat.at[record_id])
    if qstat == MOVE:
        return f"a move: written back only with --apply moves or all (not --apply {policy})"
    if qstat not in HITS:
        return f"QSTAT {qstat or 'none'} is no hit: the service confirmed no correction"
    if not corrections.certain.at[record_id]:
        return "the CorrectionType does not say a correction is required"
    if policy in ("moves", "none"):
        return f"corrections are written back only with --apply corrections or all (not --apply {policy})"
    return "the ShortReport does not mark this field as a correction"


def _joined_street(
    corrections: Corrections, record_id: int, values: Mapping[str, str], address_columns: Mapping[str, str]
) -> str | None:
    """The corrected street line of a row whose street column held the house number too; None when the
    split line held no street (a P.O. box or c/o line)."""
    given = str(corrections.given.at[record_id, "Streetname"]) if "Streetname" in corrections.fields else ""
    if "Streetname" not in address_columns or not given.strip():
        return None

    def value(field: str) -> str:
        if field in values:
            return values[field]
        return str(corrections.given.at[record_id, field]) if field in corrections.fields else ""

    street = value("Streetname").strip()
    if not street:
        return None
    number = (value("HouseNo").strip() + value("HouseNoAddition").strip()).strip()
    return f"{street} {number}".strip()


_ZIP_TOWN = ("ZIPCode", "TownName")


def _joined_zip_town(corrections: Corrections, record_id: int, values: Mapping[str, str]) -> str:
    """The corrected cell of a column holding postcode and town in one ("8001 Zürich")."""
    given = {f: str(corrections.given.at[record_id, f]) for f in _ZIP_TOWN if f in corrections.fields}
    return joined_zip_town(*(values.get(field, given.get(field)) for field in _ZIP_TOWN))


def review_reasons(corrections: Corrections, rejected_ids: Sequence[int], *, policy: Policy) -> pd.Series:
    """Per input row (accepted and rejected, by RecordId in order), why it needs a human ("" for none); a
    move is named with whether its new address was written back."""
    reasons = corrections.needs_human.copy()
    if policy in ("moves", "all"):
        reasons[reasons == HUMAN_QSTATS[MOVE]] = HUMAN_QSTATS[MOVE] + ": new address written back"
    rejected = pd.Series(REJECTED, index=pd.Index(list(rejected_ids), name=RECORD_ID), dtype=object)
    combined: pd.Series = pd.concat([reasons, rejected]).sort_index()
    return combined
