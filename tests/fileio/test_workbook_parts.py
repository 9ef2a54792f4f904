"""A workbook's package measured before any reader opens it: each part's unpacked size and ratio, the
shared strings, the sheets and the parts counted as a stream; the first limit passed refuses the workbook
naming its setting, before anything is allocated for it."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import xlsxwriter

from fileio import workbook_parts
from fileio.errors import InputError
from fileio.limits import (
    WORKBOOK_MAX_PART_BYTES_SETTING,
    WORKBOOK_MAX_PARTS_SETTING,
    WORKBOOK_MAX_RATIO_SETTING,
    WORKBOOK_MAX_SHARED_STRINGS_SETTING,
    WORKBOOK_MAX_SHEETS_SETTING,
    TableLimits,
)
from fileio.tables import read_table
from fileio.workbook_parts import WorkbookRefused, check_workbook_parts
from runtime.settings import Settings
from tests.peak_memory import run_measured

HEADER = ["Prename", "Name", "Street", "HouseNo", "ZipCode", "TownName"]
MIB = 1 << 20


def _workbook(path: Path, *, sheets: int = 1, strings: int = 0) -> Path:
    book = xlsxwriter.Workbook(str(path))
    for number in range(sheets):
        sheet = book.add_worksheet(f"S{number + 1}")
        sheet.write_row(0, 0, HEADER)
        sheet.write_row(1, 0, ["Hans", "Muster", "Bahnhofstrasse", "1", "3000", "Bern"])
        for row in range(strings):
            sheet.write_string(row + 2, 0, f"text {row}")
    book.close()
    return path


def _replaced(source: Path, target: Path, member: str, write: Callable[[object, bytes], None]) -> Path:
    """``source`` with ``member`` written anew by ``write(stream, old content)``, streamed and deflated."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            if info.filename != member:
                new.writestr(info, old.read(info))
                continue
            fresh = zipfile.ZipInfo(member)
            fresh.compress_type = zipfile.ZIP_DEFLATED
            with new.open(fresh, "w", force_zip64=True) as stream:
                write(stream, old.read(info))
    return target


def _one_huge_string(megabytes: int) -> Callable[[object, bytes], None]:
    def write(stream: object, old: bytes) -> None:
        stream.write(old.replace(b"</sst>", b"<si><t>"))  # type: ignore[attr-defined]
        for _ in range(megabytes):
            stream.write(b"a" * MIB)  # type: ignore[attr-defined]
        stream.write(b"</t></si></sst>")  # type: ignore[attr-defined]

    return write


def _blanks(megabytes: int) -> Callable[[object, bytes], None]:
    def write(stream: object, old: bytes) -> None:
        head, tail = old.split(b"</sheetData>")
        stream.write(head)  # type: ignore[attr-defined]
        for _ in range(megabytes):
            stream.write(b" " * MIB)  # type: ignore[attr-defined]
        stream.write(b"</sheetData>" + tail)  # type: ignore[attr-defined]

    return write


_READ = """
import sys, time
from pathlib import Path
from fileio.errors import InputError
from fileio.tables import read_table
started = time.perf_counter()
try:
    read_table(Path(sys.argv[1]))
except InputError as exc:
    print(f"{time.perf_counter() - started:.1f}", exc)
"""


@pytest.mark.parametrize(
    ("member", "write"),
    [("xl/sharedStrings.xml", _one_huge_string(300)), ("xl/worksheets/sheet1.xml", _blanks(200))],
    ids=["300 MB shared string", "200 MB of blanks in a sheet"],
)
def test_a_small_workbook_that_unpacks_to_hundreds_of_megabytes_is_refused_with_little_memory(
    tmp_path: Path, member: str, write: Callable[[object, bytes], None]
) -> None:
    path = _replaced(_workbook(tmp_path / "base.xlsx"), tmp_path / "bomb.xlsx", member, write)
    assert path.stat().st_size < MIB
    measured = run_measured(_READ, str(path))
    assert measured.code == 0, measured.stderr
    seconds, problem = measured.stdout.split(" ", 1)
    assert f"the workbook's part {member!r} unpacks to more than 100 times" in problem
    assert WORKBOOK_MAX_RATIO_SETTING in problem
    assert measured.peak_mib < 500, measured.peak_mib
    assert float(seconds) < 60  # a guard only: it took minutes and gigabytes before


def test_the_command_refuses_such_a_workbook_with_exit_2_naming_the_limit(tmp_path: Path) -> None:
    path = _replaced(
        _workbook(tmp_path / "base.xlsx"),
        tmp_path / "bomb.xlsx",
        "xl/sharedStrings.xml",
        _one_huge_string(300),
    )
    done = subprocess.run(
        [
            Path(sys.executable).parent / "postflows",
            "address-batch",
            "--dry-run",
            "-o",
            tmp_path / "out",
            path,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert WORKBOOK_MAX_RATIO_SETTING in done.stdout + done.stderr
    assert "bomb.xlsx" in done.stdout + done.stderr


def test_a_part_is_counted_as_it_unpacks_against_the_part_size_limit(tmp_path: Path) -> None:
    path = _replaced(
        _workbook(tmp_path / "base.xlsx"), tmp_path / "big.xlsx", "xl/sharedStrings.xml", _one_huge_string(12)
    )
    limits = TableLimits(max_part_bytes=8 * MIB, max_workbook_ratio=1e6)
    with pytest.raises(WorkbookRefused) as refused:
        check_workbook_parts(path, limits)
    assert refused.value.overrun is not None
    assert refused.value.overrun.setting == WORKBOOK_MAX_PART_BYTES_SETTING
    assert "'xl/sharedStrings.xml' holds more than the limit of 8,388,608 bytes" in str(refused.value)
    check_workbook_parts(path, TableLimits(max_part_bytes=16 * MIB, max_workbook_ratio=1e6))


def test_a_directory_that_understates_a_part_is_a_damaged_package_never_read_past_it(tmp_path: Path) -> None:
    path = _replaced(
        _workbook(tmp_path / "base.xlsx"),
        tmp_path / "lying.xlsx",
        "xl/sharedStrings.xml",
        _one_huge_string(4),
    )
    data = bytearray(path.read_bytes())
    entry = data.rfind(b"PK\x01\x02", 0, data.rfind(b"xl/sharedStrings.xml"))
    data[entry + 24 : entry + 28] = (1000).to_bytes(4, "little")  # its size: 1,000 bytes
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"lying\.xlsx: cannot be read as an Excel workbook"):
        read_table(path, limits=TableLimits(max_workbook_ratio=1e6))


def test_shared_strings_are_counted_across_chunk_boundaries_exactly(tmp_path: Path) -> None:
    count = 100_000  # about 2.5 MiB of shared strings: several chunks, tags cut at their ends
    path = _workbook(tmp_path / "many.xlsx", strings=count)
    total = count + len(HEADER) + 6
    with zipfile.ZipFile(path) as archive:
        assert archive.getinfo("xl/sharedStrings.xml").file_size > 2 * MIB
    check_workbook_parts(path, TableLimits(max_shared_strings=total))
    with pytest.raises(WorkbookRefused, match=f"more than {total - 1:,} shared strings") as refused:
        check_workbook_parts(path, TableLimits(max_shared_strings=total - 1))
    assert refused.value.overrun is not None
    assert refused.value.overrun.setting == WORKBOOK_MAX_SHARED_STRINGS_SETTING


def test_sheets_and_parts_are_counted(tmp_path: Path) -> None:
    path = _workbook(tmp_path / "sheets.xlsx", sheets=5)
    check_workbook_parts(path, TableLimits(max_sheets=5))
    with pytest.raises(InputError, match=rf"more than 4 sheets \({WORKBOOK_MAX_SHEETS_SETTING}\)"):
        read_table(path, limits=TableLimits(max_sheets=4))
    with zipfile.ZipFile(path) as archive:
        parts = len(archive.infolist())
    check_workbook_parts(path, TableLimits(max_parts=parts))
    with pytest.raises(
        InputError, match=rf"has {parts} parts, more than the limit of 3 \({WORKBOOK_MAX_PARTS_SETTING}\)"
    ):
        read_table(path, limits=TableLimits(max_parts=3))


def test_a_workbook_is_measured_once_while_it_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _workbook(tmp_path / "once.xlsx")
    measured: list[Path] = []
    real = workbook_parts._measure

    def counted(path: Path, size: int, limits: TableLimits) -> None:
        measured.append(path)
        real(path, size, limits)

    monkeypatch.setattr(workbook_parts, "_measure", counted)
    assert len(read_table(path).frame) == 1
    read_table(path)
    assert measured == [path]
    _workbook(path, sheets=2)  # written again: measured again
    read_table(path)
    assert measured == [path, path]


def test_the_settings_carry_the_workbook_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    fields = Settings.model_json_schema()["properties"]
    for name in ("part_bytes", "ratio", "shared_strings", "sheets", "parts"):
        assert fields[f"workbook_max_{name}"]["limit"], name
    monkeypatch.setenv(WORKBOOK_MAX_SHEETS_SETTING, "3")
    monkeypatch.setenv(WORKBOOK_MAX_RATIO_SETTING, "250")
    limits = Settings().table_limits
    assert (limits.max_sheets, limits.max_workbook_ratio) == (3, 250.0)
    assert limits.value_of(WORKBOOK_MAX_SHEETS_SETTING) == 3
