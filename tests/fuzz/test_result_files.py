"""Fuzzing what the address service sends back: the download (plain or ZIP), the result file with its §2.3
columns, its decoding (QSTAT, ShortReport, CorrectionType, TotalScore), the join onto the input and the
result files written from it; and the moves file. Every result line is a row, nothing but a
``ResultFileError`` ends a read, every uploaded row is in the results once, and no text of the customer's
or of the service's becomes a formula in ``results.csv``.
"""

from __future__ import annotations

import io
import random
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from connectors.address_service.codes import (
    ADDRESS_FIELD_NAMES,
    QSTAT,
    SHORT_REPORT_LENGTH,
    STATUS_FIELD_NAMES,
    qstat_info,
    short_report_char,
    short_report_column,
)
from fileio.address_service.downloads import unpack_download
from fileio.address_service.moves_file import read_moves_file
from fileio.address_service.records import RECORD_ID, AddressInput
from fileio.address_service.result_codes import (
    QSTAT_DESIGNATION,
    decode_results,
    decode_short_report,
    qstat_summary,
)
from fileio.address_service.result_file import read_result_file, read_result_file_plain
from fileio.address_service.results import (
    RETURNED_COLUMN,
    merge_results,
    write_address_results,
)
from fileio.address_service.user_results import user_results
from fileio.errors import DuplicateRecordIds, ResultFileError
from tests.fuzz.conftest import CaseCount, fuzz_settings
from tests.fuzz.generators import FORMULA_STARTS, cell, damage, randoms
from tests.outputs import output_rows

_QSTATS = (*QSTAT, "01", " 1 ", "k", "1.0", "99", "", "X", "-", "=1", "@")
_REPORT_CHARS = "-0123456789ABCHPZ  \x00é=+@😀"
_ODD_IDS = ("", "x", "0", "1.5", "2.0", " 3", "-1", "1e3", "99999999999999999999", "NaN")
_UPLOADED = ("Name", "Prename", "StreetName", "HouseNo", "ZIPCode", "TownName", "Kundennummer")
_SPELLINGS = {"Streetname": ("StreetName", "streetname"), "PoBoxTerm": ("POBoxTerm",), "QSTAT": ("qstat",)}


def _short_report(rnd: random.Random) -> str:
    length = rnd.choice((0, 1, 12, SHORT_REPORT_LENGTH, SHORT_REPORT_LENGTH, SHORT_REPORT_LENGTH + 3))
    return "".join(rnd.choice(_REPORT_CHARS) for _ in range(length))


def _status_value(rnd: random.Random, name: str) -> str:
    if name == "QSTAT":
        return rnd.choice(_QSTATS)
    if name == "ShortReport":
        return _short_report(rnd)
    if name == "CorrectionType":
        return rnd.choice(
            ("0", "1", "", "x", "1.0", "2", "-1", "1e3", "inf", "1e400", "99999999999999999999")
        )
    if name == "TotalScore":
        return rnd.choice(("100.00", "99,5", "", "abc", "1e400", "-0", " 7 "))
    return rnd.choice(("", "20300131", "12345", "x"))


@dataclass(frozen=True)
class ResultCase:
    """A result file as the service might send it: its bytes and, unless damaged, the header and lines."""

    data: bytes
    encoding: str
    header: list[str] | None = None
    lines: list[list[str]] | None = None
    zipped: bool = False
    moves: bytes | None = None

    def __repr__(self) -> str:
        shown = f"{len(self.data)} bytes, {self.encoding!r}, header={self.header!r}, lines={self.lines!r}"
        return f"ResultCase({shown})"


def _one_line(value: str) -> str:
    """A value as the service writes it: no tab, no line break (the file is not quoted)."""
    return "".join(" " if char in "\t\r\n" else char for char in value)


@st.composite
def result_cases(draw: st.DrawFn) -> ResultCase:
    rnd: random.Random = draw(randoms)
    kind = rnd.randrange(10)  # the seeded generator spreads the kinds evenly; hypothesis favours 0
    encoding = rnd.choice(("cp1252", "cp1252", "utf-8", "utf-8-sig"))
    if kind == 0:
        return ResultCase(draw(st.binary(max_size=300)), encoding)
    uploaded = [RECORD_ID, *rnd.sample(_UPLOADED, rnd.randrange(0, 3))]
    status = rnd.sample(STATUS_FIELD_NAMES, rnd.randrange(0, 7))
    output = rnd.sample(ADDRESS_FIELD_NAMES, rnd.randrange(0, 4))
    header = [rnd.choice((name, *_SPELLINGS.get(name, ()))) for name in (*uploaded, *status, *output)]
    if rnd.random() < 0.1:
        rnd.shuffle(header)
    lines: list[list[str]] = []
    for number in range(1, rnd.choice((0, 1, 2, 4, 8, 16)) + 1):
        values = []
        for name in header:
            if name == RECORD_ID:
                values.append(rnd.choice((str(number), str(number), str(number), *_ODD_IDS, str(number + 1))))
            elif name in STATUS_FIELD_NAMES or name.lower() == "qstat":
                values.append(_status_value(rnd, "QSTAT" if name.lower() == "qstat" else name))
            else:
                values.append(_one_line(cell(rnd)))
        if rnd.random() < 0.1:
            values = values[: rnd.randrange(0, len(values) + 1)] or [""]
        elif rnd.random() < 0.05:
            values += [_one_line(cell(rnd)) for _ in range(rnd.randrange(1, 3))]
        lines.append(values)
    text = "\r\n".join("\t".join(values) for values in [header, *lines]) + rnd.choice(("", "\r\n"))
    data = text.encode(encoding, errors="replace")
    lines = [[value.encode(encoding, errors="replace").decode(encoding) for value in line] for line in lines]
    moves = "\n".join(";".join(_one_line(cell(rnd)) for _ in range(3)) for _ in range(rnd.randrange(0, 4)))
    zipped = kind >= 7
    if kind <= 2:
        return ResultCase(damage(rnd, data, rnd.randrange(1, 4)), encoding, zipped=zipped)
    return ResultCase(data, encoding, header, lines, zipped, moves.encode(encoding, errors="replace"))


def _zip(case: ResultCase, salt: bytes) -> tuple[bytes, bool]:
    """The download of a zipped case, damaged when ``salt`` says so (and whether it was)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("OUT_result.txt", case.data)
        if case.moves is not None:
            archive.writestr("OUT_moves.txt", case.moves)
    data = buffer.getvalue()
    damaged = salt[:1] < b"\x40"
    return (damage(random.Random(salt), data, 1), True) if damaged else (data, False)


@pytest.mark.long
def test_result_files_read_decode_and_join_without_losing_a_row(scratch: Path) -> None:
    files = CaseCount("read_result_file + unpack_download: result downloads")
    decoded_rows = CaseCount("decode_results + merge_results + qstat_summary: result rows")
    written = CaseCount("write_address_results: results written and checked for formulas")
    plain = CaseCount("read_result_file (Arrow) against read_result_file_plain (pandas): same frame")

    @fuzz_settings(10_000)
    @given(case=result_cases(), salt=st.binary(min_size=1, max_size=2))
    def check(case: ResultCase, salt: bytes) -> None:
        download = scratch / "download.bin"
        data, damaged = _zip(case, salt) if case.zipped else (case.data, False)
        download.write_bytes(data)
        files.add()
        try:
            unpacked = unpack_download(download, scratch)
            frame = read_result_file(unpacked.result)
        except ResultFileError as error:
            assert str(error).startswith(str(error.path)) and error.problem.strip()
            return
        if case.lines is not None and not damaged:
            _check_lines(frame, case)
        if unpacked.moves is not None:
            read_moves_file(unpacked.moves)
        if files.count % 10:
            return  # decoding and joining cost milliseconds a file: every tenth file is decoded and joined
        plain.add()
        _check_against_plain(frame, unpacked.result)
        decoded = decode_results(frame)
        decoded_rows.add(len(frame))
        _check_decoded(frame, decoded)
        merged = _merged(decoded, unpacked.result, rows=len(frame) + 2)
        if merged is None:
            return
        summary = qstat_summary(merged)  # as the flow makes it: every uploaded row has a QSTAT, maybe ""
        assert int(summary["Count"].sum()) == len(merged)
        if files.count % 100 == 0:
            written.add()
            _check_written(merged, summary, scratch / "out")

    check()
    files.require(10_000)
    decoded_rows.require(3_000)  # the decoders see 10,000 values of their own below
    written.require(20)
    plain.require(800)


def _check_against_plain(frame: pd.DataFrame, path: Path) -> None:
    """The fast reader's frame is the plain reader's, column for column and cell for cell."""
    expected = read_result_file_plain(path)
    assert list(frame.columns) == list(expected.columns)
    assert frame.astype(object).to_numpy().tolist() == expected.to_numpy().tolist()


def _check_lines(frame: pd.DataFrame, case: ResultCase) -> None:
    """One row per line after the header that is not empty; a line's values in order, padded with ""."""
    assert case.lines is not None and case.header is not None
    lines = [line for line in case.lines if "\t".join(line)]
    if len(frame) != len(lines):  # the fast parser skips lines of nothing but blanks; they hold no value
        lines = [line for line in lines if "\t".join(line).strip(" \t")]
    assert len(frame) == len(lines), "result lines lost or made up"
    if case.encoding == "cp1252" and _valid_utf8(case.data):
        return  # bytes that read as UTF-8 are read as UTF-8: the values differ, the lines do not
    values = frame.to_numpy().tolist()
    width = len(frame.columns)
    assert values == [(line + [""] * width)[:width] for line in lines]


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _check_decoded(frame: pd.DataFrame, decoded: pd.DataFrame) -> None:
    """Each row's QSTAT and ShortReport decoded as the code tables say, the numbers as numbers."""
    assert len(decoded) == len(frame)
    if "QSTAT" in frame:
        for code, designation in zip(frame["QSTAT"], decoded[QSTAT_DESIGNATION], strict=True):
            info = qstat_info(code)
            expected = info.designation if info else ("Unknown QSTAT" if str(code).strip() else "")
            assert designation == expected
    if "ShortReport" in frame:
        _check_short_reports(frame["ShortReport"], decoded)
    if "CorrectionType" in frame:
        assert str(decoded["CorrectionType"].dtype) == "Int64"
    if "TotalScore" in frame:
        assert decoded["TotalScore"].dtype == np.float64


def _check_short_reports(reports: pd.Series, decoded: pd.DataFrame) -> None:
    """Each position of each ShortReport labelled as :func:`short_report_char` says (past the end, a
    blank or a NUL: no label; a character beyond U+FFFF reads as U+FFFF)."""
    columns = [
        decoded[short_report_column(position + 1)].astype(object).tolist()
        for position in range(SHORT_REPORT_LENGTH)
    ]
    for row, report in enumerate(reports.fillna("").astype(str)):
        for position, column in enumerate(columns):
            char = report[position] if position < len(report) else ""
            char = "" if char == " " else chr(min(ord(char), 0xFFFF)) if char else ""
            label = short_report_char(char).label
            assert column[row] == (f"{label} ({char})" if label else ""), (report, position)


def _merged(decoded: pd.DataFrame, source: Path, *, rows: int) -> pd.DataFrame | None:
    """The join onto an input of ``rows`` accepted rows: each of them once, in order, returned or not."""
    records = pd.DataFrame({RECORD_ID: np.arange(1, rows + 1, dtype="int64"), "Name": ["Muster"] * rows})
    uploaded = AddressInput(records, pd.DataFrame(), pd.DataFrame(), {"Name": "Name"}, [], source)
    try:
        merged = merge_results(uploaded, decoded, source=source)
    except DuplicateRecordIds as error:
        # Refused naming exactly the ids on more than one row; the rest is checked without the repeats.
        ids = _whole_ids(decoded)
        assert set(error.ids) == set(ids[ids.duplicated()].dropna().astype(int)) and error.ids
        return _merged(decoded[~ids.duplicated() | ids.isna()], source, rows=rows)
    except ResultFileError as error:
        assert error.problem.strip()
        return None
    assert merged[RECORD_ID].tolist() == list(range(1, rows + 1)), "an uploaded row lost or repeated"
    returned = set(pd.to_numeric(decoded.get(RECORD_ID, pd.Series(dtype=object)), errors="coerce").dropna())
    assert merged[RETURNED_COLUMN].tolist() == [number in returned for number in range(1, rows + 1)]
    return merged


def _whole_ids(decoded: pd.DataFrame) -> pd.Series:
    """The result's record ids as merge_results reads them: whole numbers, anything else missing."""
    column = next(c for c in decoded.columns if str(c).casefold() == RECORD_ID.casefold())
    numbers = pd.to_numeric(decoded[column], errors="coerce").astype("float64")
    whole = np.isfinite(numbers) & (numbers == np.floor(numbers)) & (numbers.abs() < 2**53)
    return numbers.where(whole)


def _check_written(merged: pd.DataFrame, summary: pd.DataFrame, out: Path) -> None:
    """``results.csv`` runs no text as a formula (numbers aside, and the codes that match their grammar),
    and ``results.xlsx`` holds no formula at all."""
    out.mkdir(exist_ok=True)
    records = merged[[RECORD_ID]].assign(Name="Muster")
    uploaded = AddressInput(records, pd.DataFrame(), pd.DataFrame(), {"Name": "Name"}, [], out / "in.csv")
    paths = write_address_results(user_results(merged, uploaded), summary, out)
    rows = output_rows(paths[0])
    shown = user_results(merged, uploaded).frame
    names = [str(name) for name in shown.columns]
    assert len(names) == len(rows[0])
    numeric = {
        name
        for name in shown.columns
        if pd.api.types.is_numeric_dtype(shown[name]) or pd.api.types.is_bool_dtype(shown[name])
    }
    for row in rows[1:]:
        for name, value in zip(names, row, strict=True):
            if name in numeric:
                continue
            assert not value.startswith(FORMULA_STARTS), f"formula in results.csv, {name}: {value!r}"
    from openpyxl import load_workbook

    book = load_workbook(paths[1], read_only=True)
    for sheet in book.worksheets:
        for line in sheet.iter_rows():
            for item in line:
                assert item.data_type != "f", f"a formula in results.xlsx: {item.value!r}"
    book.close()


def test_short_reports_and_qstat_codes_decode_as_the_tables_say() -> None:
    values = CaseCount("decode_short_report + QSTAT decoding: values")

    @fuzz_settings(200)
    @given(rnd=randoms, odd=st.text(max_size=30), odd_code=st.text(max_size=4))
    def check(rnd: random.Random, odd: str, odd_code: str) -> None:
        reports: list[str | None] = [_short_report(rnd) for _ in range(rnd.randrange(20, 60))]
        reports += [
            odd,
            None,
            "".join(
                chr(rnd.choice((rnd.randrange(0x20, 0xD800), rnd.randrange(0xE000, 0x2FFFF))))
                for _ in range(rnd.randrange(30))
            ),
        ]
        codes = [rnd.choice(_QSTATS) for _ in range(rnd.randrange(10, 40))] + [odd_code]
        series = pd.Series(reports, dtype=object)
        decoded = decode_short_report(series)
        assert list(decoded.index) == list(series.index)
        _check_short_reports(series, decoded)
        frame = pd.DataFrame({"QSTAT": pd.Series(codes, dtype=object)})
        _check_decoded(frame, decode_results(frame))
        values.add(len(reports) + len(codes))

    check()
    values.require(10_000)


def test_moves_files_are_read_line_for_line(scratch: Path) -> None:
    cases = CaseCount("read_moves_file: moves files")

    @fuzz_settings(2_000)
    @given(rnd=randoms, data=st.binary(max_size=200))
    def check(rnd: random.Random, data: bytes) -> None:
        kind = rnd.randrange(4)
        encoding = rnd.choice(("cp1252", "utf-8"))
        lines = [
            ";".join(_one_line(cell(rnd)) for _ in range(rnd.randrange(1, 4))).encode(
                encoding, errors="replace"
            )
            for _ in range(rnd.randrange(0, 6))
        ]
        text = b"\n".join(lines)
        lines = [line.decode(encoding) for line in lines]
        path = scratch / "moves.txt"
        path.write_bytes(data if kind == 0 else text)
        cases.add()
        frame = read_moves_file(path, header=None if kind < 2 else False)
        if kind >= 2:  # no header: every line with a value is a row
            assert len(frame) == len([line for line in lines if line.strip()]), "moves lines lost or made up"

    check()
    cases.require(2_000)
