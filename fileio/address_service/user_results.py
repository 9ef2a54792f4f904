"""The results as a clerk reads them (``results.csv`` and the Results sheet of ``results.xlsx``).

Each row is named as ``rejected.csv`` names it: the file's id column first (when it is not an address column),
then ``line`` (the line of the file where the row starts) and ``row`` (the data row, sent as RecordId). Then
every column of the customer's file under its own name and in its own order, each address column followed
directly by the service's value as ``<column> (Post)`` (``Ort``, ``Ort (Post)``); then QSTAT, the ShortReport
and the rest of the service's answer, its address fields the file has no column for named ``<Field> (Post)``.
A street column that held the house number too gets the service's street and house number in one, as the
customer keeps them.

The dates of the service (``ValidFrom``, ``ValidTo``, ``Birthdate`` and, in the moves, any column named as a
date) are written as ISO dates where they are dates (``20230402`` → ``2023-04-02``). The Legend sheet says
what every column holds and which field of the specification it is; the workbook fills each ``(Post)`` cell
whose value differs from the one sent, its note saying why (the ShortReport's character of the field, or the
move).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from connectors.address_service.codes import (
    ADDRESS_FIELD_NAMES,
    ADDRESS_FIELDS,
    QSTAT,
    SHORT_REPORT_POSITIONS,
    STATUS_FIELDS,
    normalize_qstat,
    short_report_meaning,
)
from fileio.address_service.records import (
    INPUT_SUFFIX,
    PROBLEMS_COLUMN,
    RECORD_ID,
    RETURNED_COLUMN,
    AddressInput,
)
from fileio.address_service.result_codes import QSTAT_DESIGNATION, QSTAT_MEANING
from fileio.lazy import lazy_module
from fileio.rejected_rows import LINE, ROW
from fileio.reports import POST

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")

DATE_FIELDS = ("ValidFrom", "ValidTo", "Birthdate")
_DATE_NAME = re.compile("date|datum", re.IGNORECASE)
_FIRST_YEAR, _LAST_YEAR = 1800, 2200
_MOVE = "4"
LEGEND_COLUMNS = ("Column", "What it holds", "Specification field")
_MEANINGS: Mapping[str, str] = {f.name: f.meaning for f in (*STATUS_FIELDS, *ADDRESS_FIELDS)}
_OURS: Mapping[str, str] = {
    LINE: "the line of your file where the row starts (in a workbook, the sheet's row)",
    ROW: "the data row of your file, as rejected.csv and house-numbers.csv name it",
    RETURNED_COLUMN: "False when the service's answer has no row for this one",
    PROBLEMS_COLUMN: "the service's fields longer than the specification allows",
    QSTAT_DESIGNATION: "what the QSTAT code is called",
    QSTAT_MEANING: "what the QSTAT code means",
}
_POSITION = {name.casefold(): number for number, name in enumerate(SHORT_REPORT_POSITIONS)}
_STATUS_FIRST = ("QSTAT", QSTAT_DESIGNATION, QSTAT_MEANING, "ShortReport")


@dataclass(frozen=True)
class UserResults:
    """The results in the customer's words.

    Attributes:
        frame: the rows, in input order (see the module docstring).
        legend: per column of ``frame``: what it holds and the specification's field (:data:`LEGEND_COLUMNS`).
        changed: (row position, ``(Post)`` column) → the note of a cell whose value differs from the one sent.
    """

    frame: pd.DataFrame
    legend: pd.DataFrame
    changed: dict[tuple[int, str], str]


def user_results(merged: pd.DataFrame, input: AddressInput) -> UserResults:
    """The merged results (:func:`~fileio.address_service.results.merge_results`) in the customer's words."""
    ids = pd.Index(merged[RECORD_ID].astype("int64").to_numpy(), name=RECORD_ID)
    table = _Columns()
    headers = input.headers or [*input.passthrough_columns, *dict.fromkeys(input.address_columns.values())]
    fields_of: dict[str, list[str]] = {}
    for field_name, header in input.address_columns.items():
        fields_of.setdefault(header, []).append(field_name)
    leading = input.id_column if input.id_column in input.passthrough_columns else None
    if leading is not None:
        table.add(leading, _text(merged[leading]), "your column (it names the row)", "")
    lines = input.lines.reindex(ids) if len(input.lines) else pd.Series(ids.to_numpy() + 1, index=ids)
    table.add(LINE, lines.to_numpy(), _OURS[LINE], "")
    table.add(ROW, ids.to_numpy(), _OURS[ROW], RECORD_ID)
    shown: set[str] = set()
    for header in headers:
        if header == leading:
            continue
        if header not in fields_of:
            if header in merged:
                table.add(header, _text(merged[header]), "your column, passed through", "")
            continue
        fields = fields_of[header]
        table.add(
            header, _given(input, merged, ids, header, fields), "your value", _spec(fields, INPUT_SUFFIX)
        )
        post = _post_value(merged, fields, input.address_columns)
        if post is not None:
            name = table.add(header + POST, post, f"the service's {_meaning(fields)}", _spec(fields, ""))
            table.posts[name] = (header, fields)
            shown.update(_parts(fields, input.address_columns))
    first = [c for c in (*_STATUS_FIRST,) if c in merged.columns]
    for column in [*first, *(c for c in merged.columns if c not in first)]:
        name = str(column)
        if name in table.taken or name == RECORD_ID or name in input.passthrough_columns:
            continue
        if name.endswith(INPUT_SUFFIX) and name[: -len(INPUT_SUFFIX)] in ADDRESS_FIELD_NAMES:
            continue
        if name in ADDRESS_FIELD_NAMES:
            if name in shown:
                continue
            table.add(name + POST, _text(merged[name]), f"the service's {_MEANINGS[name]}", name)
            continue
        values = merged[name]
        if name in DATE_FIELDS:
            values = iso_dates(values)
        table.add(
            name, values.to_numpy(), _OURS.get(name) or _MEANINGS.get(name, "the service's answer"), name
        )
    frame = pd.DataFrame(table.columns)
    return UserResults(
        frame=frame,
        legend=pd.DataFrame(table.legend, columns=list(LEGEND_COLUMNS)),
        changed=_changed(frame, merged, table.posts, input),
    )


class _Columns:
    """The columns gathered in order, their legend, and which column shows the service's value of which."""

    def __init__(self) -> None:
        self.columns: dict[str, object] = {}
        self.legend: list[tuple[str, str, str]] = []
        self.taken: set[str] = set()
        self.posts: dict[str, tuple[str, list[str]]] = {}

    def add(self, name: str, values: object, holds: str, spec: str) -> str:
        """Add a column; a name the table has already (a customer column named ``line``) is suffixed."""
        unique = name
        while unique.casefold() in {taken.casefold() for taken in self.taken}:
            unique += " (report)"
        self.taken.add(unique)
        self.columns[unique] = values
        self.legend.append((unique, holds, spec))
        return unique


def _text(values: pd.Series) -> np.ndarray:
    """A column as text, a missing value as ``""``."""
    objects = values.astype(object)
    text: np.ndarray = objects.where(objects.notna(), "").astype(str).to_numpy(dtype=object)
    return text


def _given(
    input: AddressInput, merged: pd.DataFrame, ids: pd.Index, header: str, fields: Sequence[str]
) -> np.ndarray:
    """The customer's cell as the file has it; without the file's cells, the value as sent."""
    if header in input.given:
        return _text(input.given[header].reindex(ids))
    sent = [merged[f + INPUT_SUFFIX] for f in fields if f + INPUT_SUFFIX in merged]
    if not sent:
        return np.full(len(ids), "", dtype=object)
    return _joined([_text(column) for column in sent])


def _post_value(
    merged: pd.DataFrame, fields: Sequence[str], address_columns: Mapping[str, str]
) -> np.ndarray | None:
    """The service's value of a customer's column (None when the answer has none of its fields)."""
    if not any(f in merged for f in fields):
        return None
    return _in_shape(lambda name: _column(merged, name), fields, address_columns)


def _column(merged: pd.DataFrame, name: str) -> np.ndarray:
    if name not in merged:
        return np.full(len(merged), "", dtype=object)
    return _text(merged[name])


def _in_shape(
    value: Callable[[str], np.ndarray], fields: Sequence[str], address_columns: Mapping[str, str]
) -> np.ndarray:
    """A customer's column made of the fields' ``value``s, in the shape the customer keeps it: a street
    column that is the file's only street column holds street and house number in one (a P.O. box line the
    P.O. box term and number), a house number column without an addition column the number and addition,
    a P.O. box number column without a term column the term and number."""
    fields = list(fields)
    if fields == ["Streetname"] and "HouseNo" not in address_columns:
        number = _joined([value("HouseNo"), value("HouseNoAddition")], separator="")
        line = _joined([value("Streetname"), number])
        if "PoBoxTerm" not in address_columns:
            line = np.where(line == "", _joined([value("PoBoxTerm"), value("PoBoxNo")]), line)
        return line
    if fields == ["HouseNo"] and "HouseNoAddition" not in address_columns:
        return _joined([value("HouseNo"), value("HouseNoAddition")], separator="")
    if fields == ["PoBoxNo"] and "PoBoxTerm" not in address_columns:
        return _joined([value("PoBoxTerm"), value("PoBoxNo")])
    return _joined([value(f) for f in fields])


def _parts(fields: Sequence[str], address_columns: Mapping[str, str]) -> set[str]:
    """The service's fields a customer's column shows (see :func:`_in_shape`)."""
    parts = set(fields)
    if list(fields) == ["Streetname"] and "HouseNo" not in address_columns:
        parts.update(("HouseNo", "HouseNoAddition"))
        if "PoBoxTerm" not in address_columns:
            parts.update(("PoBoxTerm", "PoBoxNo"))
    if list(fields) == ["HouseNo"] and "HouseNoAddition" not in address_columns:
        parts.add("HouseNoAddition")
    if list(fields) == ["PoBoxNo"] and "PoBoxTerm" not in address_columns:
        parts.add("PoBoxTerm")
    return parts


def _joined(parts: Sequence[np.ndarray], separator: str = " ") -> np.ndarray:
    """The parts of each row joined by ``separator``, empty parts left out."""
    if len(parts) == 1:
        return parts[0]
    return np.array(
        [separator.join(p.strip() for p in row if p.strip()) for row in zip(*parts, strict=True)],
        dtype=object,
    )


def _spec(fields: Sequence[str], suffix: str) -> str:
    return ", ".join(f + suffix for f in fields)


def _meaning(fields: Sequence[str]) -> str:
    return " and ".join(_MEANINGS.get(f, f) for f in fields)


def _changed(
    frame: pd.DataFrame,
    merged: pd.DataFrame,
    posts: Mapping[str, tuple[str, list[str]]],
    input: AddressInput,
) -> dict[tuple[int, str], str]:
    """The ``(Post)`` cells whose value differs from the one sent (spaces and case aside), with why: the
    move of a QSTAT 4 row, else the ShortReport's character of the field."""
    returned = merged[RETURNED_COLUMN].to_numpy(dtype=bool) if RETURNED_COLUMN in merged else None
    qstat = np.array([normalize_qstat(v) for v in _text(merged["QSTAT"])]) if "QSTAT" in merged else None
    report = _text(merged["ShortReport"]) if "ShortReport" in merged else None
    changed: dict[tuple[int, str], str] = {}
    for column, (header, fields) in posts.items():
        post = _squeezed(frame[column].to_numpy(dtype=object))
        sent = _squeezed(_sent(merged, frame[header].to_numpy(dtype=object), fields, input))
        differs = (post != "") & (post != sent)
        if returned is not None:
            differs &= returned
        for position in np.flatnonzero(differs).tolist():
            if qstat is not None and qstat[position] == _MOVE:
                changed[(position, column)] = f"QSTAT {_MOVE}: {QSTAT[_MOVE].meaning}"
            else:
                changed[(position, column)] = _report_note(report, position, fields)
    return changed


def _sent(merged: pd.DataFrame, given: np.ndarray, fields: Sequence[str], input: AddressInput) -> np.ndarray:
    """What was sent of a customer's column, in the column's shape (a country as its code); the cell as
    given where the merged results do not hold what was sent."""
    if not any(f + INPUT_SUFFIX in merged for f in fields):
        return given
    return _in_shape(lambda name: _column(merged, name + INPUT_SUFFIX), fields, input.address_columns)


def _squeezed(values: np.ndarray) -> np.ndarray:
    """Text compared as a person reads it: spaces collapsed, case folded."""
    return np.array([" ".join(str(v).split()).casefold() for v in values], dtype=object)


def _report_note(report: np.ndarray | None, position: int, fields: Sequence[str]) -> str:
    """Why the service's value differs: the ShortReport characters of the fields, where it has them."""
    notes = []
    for field_name in fields:
        index = _POSITION.get(field_name.casefold())
        if report is None or index is None or index >= len(report[position]):
            continue
        char = report[position][index]
        if char.strip() and char != "-":
            notes.append(f"ShortReport {char}: {short_report_meaning(char)}")
    return "; ".join(dict.fromkeys(notes)) or "the service's value differs from the one sent"


def iso_dates(values: pd.Series) -> pd.Series:
    """Dates as ISO dates: a value of eight digits that is a date ``YYYYMMDD`` (years 1800 to 2200) becomes
    ``YYYY-MM-DD``; every other value stays as it is. The day-first spelling ``DDMMYYYY`` cannot pass for a
    date read this way (its month would be the year's first two digits)."""
    text = values.astype("string")
    eight = text.str.fullmatch(r"\d{8}").fillna(False).astype(bool)
    if not eight.any():
        return values
    parsed = pd.to_datetime(text.where(eight), format="%Y%m%d", errors="coerce")
    dated = parsed.notna() & parsed.dt.year.between(_FIRST_YEAR, _LAST_YEAR)
    iso = np.where(
        dated.to_numpy(), parsed.dt.strftime("%Y-%m-%d").to_numpy(dtype=object), values.to_numpy(dtype=object)
    )
    return pd.Series(iso, index=values.index, name=values.name, dtype=object)


def user_moves(moves: pd.DataFrame, input: AddressInput, *, record_id: str = RECORD_ID) -> pd.DataFrame:
    """The moves file as a clerk reads it (``moves.csv``): each move named as the results name its row
    (the file's id column, ``line``, ``row``) where the moves file carries the uploaded record id, the
    service's own record number as ``RecordNo (Post)``, and every column named as a date written as an ISO
    date."""
    frame = moves.copy()
    for column in frame.columns:
        if _DATE_NAME.search(str(column)):
            frame[column] = iso_dates(frame[column])
    id_column = next((c for c in frame.columns if str(c).casefold() == record_id.casefold()), None)
    if "RecordNo" in frame.columns:
        frame = frame.rename(columns={"RecordNo": "RecordNo" + POST})
    if id_column is None:
        return frame
    rows = pd.to_numeric(frame[id_column], errors="coerce").astype("Int64")
    frame = frame.drop(columns=[id_column])
    named: dict[str, object] = {}
    leading = input.id_column if input.id_column in input.passthrough_columns else None
    if leading is not None:
        ids = input.records.set_index(RECORD_ID)[leading].reindex(rows)
        named[leading] = _text(ids)
        frame = frame.drop(columns=[c for c in frame.columns if c == leading])
    lines = input.lines.reindex(rows) if len(input.lines) else pd.Series(rows.to_numpy() + 1)
    named[LINE] = lines.astype("Int64").to_numpy()
    named[ROW] = rows.to_numpy()
    taken = {name.casefold() for name in named}
    frame.columns = [f"{c} (report)" if str(c).casefold() in taken else c for c in frame.columns]
    return pd.concat([pd.DataFrame(named), frame.reset_index(drop=True)], axis=1)
