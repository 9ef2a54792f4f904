"""The trend report's files: a workbook with a sheet per table and a native chart of each (its series on
that sheet's rows), a PNG of a sensible size, and the tables in Markdown; missing shares stay empty."""

from __future__ import annotations

import re
import struct
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from python_calamine import CalamineWorkbook

from fileio.trend_report import TrendChart, TrendTable, trend_markdown, write_trend_report

MONTHS = ["2026-01", "2026-02", "2026-03"]
FACTS = [("History", "sqlite:///history.db"), ("Months", "2026-01 to 2026-03")]


def _tables() -> list[TrendTable]:
    quality = pd.DataFrame(
        {
            "Month": MONTHS,
            "Runs": [2, 0, 1],
            "Unknown %": [10.0, None, 5.0],
            "Corrected %": [None, None, 15.0],
        }
    )
    per_api = pd.DataFrame({"Month": MONTHS, "address service": [3, 0, 1], "newspaper": [0, 0, 2]})
    return [
        TrendTable(
            "Address quality",
            quality,
            TrendChart("line", "Shares", ("Unknown %", "Corrected %"), "% of result rows"),
            notes=("Corrected % is unknown for older runs.",),
        ),
        TrendTable(
            "Submissions per API",
            per_api,
            TrendChart("column", "Jobs", ("address service", "newspaper"), "jobs"),
        ),
    ]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    written = write_trend_report(out, "Run history report", _tables(), FACTS)
    assert written.files == [out / "report.xlsx", out / "report.png", out / "report.md"]
    assert written.sheets == ["Address quality", "Submissions per API", "About"]
    return out


def _charts(path: Path) -> dict[str, str]:
    """Each chart part of the workbook by the sheet its drawing belongs to."""
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        workbook = archive.read("xl/workbook.xml").decode()
        rels = archive.read("xl/_rels/workbook.xml.rels").decode()
        sheet_files = {
            name: re.search(rf'Id="{rid}"[^>]*Target="([^"]+)"|Target="([^"]+)"[^>]*Id="{rid}"', rels)
            for name, rid in re.findall(r'<sheet name="([^"]+)" sheetId="\d+" r:id="(rId\d+)"', workbook)
        }
        charts = {}
        for sheet, match in sheet_files.items():
            assert match is not None
            target = (match.group(1) or match.group(2)).removeprefix("/xl/").removeprefix("xl/")
            sheet_rels = f"xl/worksheets/_rels/{Path(target).name}.rels"
            if sheet_rels not in names:
                continue
            drawing = re.search(r'Target="\.\./drawings/([^"]+)"', archive.read(sheet_rels).decode())
            assert drawing is not None
            drawing_rels = archive.read(f"xl/drawings/_rels/{drawing.group(1)}.rels").decode()
            (chart,) = re.findall(r'Target="\.\./charts/([^"]+)"', drawing_rels)
            charts[sheet] = archive.read(f"xl/charts/{chart}").decode()
    return charts


def test_the_workbook_has_a_native_chart_per_table_on_its_own_sheet(report: Path) -> None:
    with zipfile.ZipFile(report / "report.xlsx") as archive:
        assert (
            len([name for name in archive.namelist() if re.fullmatch(r"xl/charts/chart\d+\.xml", name)]) == 2
        )
    charts = _charts(report / "report.xlsx")
    assert set(charts) == {"Address quality", "Submissions per API"}
    quality, jobs = charts["Address quality"], charts["Submissions per API"]
    assert "<c:lineChart>" in quality and "<c:barChart>" in jobs and '<c:barDir val="col"/>' in jobs
    # Series: the share columns' rows of that sheet, named by their header cells, the months as categories.
    assert re.findall(r"<c:val><c:numRef><c:f>([^<]+)</c:f>", quality) == [
        "'Address quality'!$C$2:$C$4",
        "'Address quality'!$D$2:$D$4",
    ]
    assert re.findall(r"<c:tx><c:strRef><c:f>([^<]+)</c:f>", quality) == [
        "'Address quality'!$C$1",
        "'Address quality'!$D$1",
    ]
    assert set(re.findall(r"<c:cat><c:\w+Ref><c:f>([^<]+)</c:f>", quality)) == {"'Address quality'!$A$2:$A$4"}
    assert re.findall(r"<c:val><c:numRef><c:f>([^<]+)</c:f>", jobs) == [
        "'Submissions per API'!$B$2:$B$4",
        "'Submissions per API'!$C$2:$C$4",
    ]
    assert "<a:t>Shares</a:t>" in quality and "<a:t>% of result rows</a:t>" in quality


def test_the_sheets_hold_the_months_and_leave_missing_shares_empty(report: Path) -> None:
    workbook = CalamineWorkbook.from_path(str(report / "report.xlsx"))
    assert workbook.sheet_names == ["Address quality", "Submissions per API", "About"]
    quality = workbook.get_sheet_by_name("Address quality").to_python()
    assert quality[0] == ["Month", "Runs", "Unknown %", "Corrected %"]
    assert [row[0] for row in quality[1:]] == MONTHS
    assert quality[2] == ["2026-02", 0.0, "", ""]  # an empty month: no share, not 0 %
    about = workbook.get_sheet_by_name("About").to_python()
    assert about[1:] == [
        ["History", "sqlite:///history.db"],
        ["Months", "2026-01 to 2026-03"],
        ["Address quality", "Corrected % is unknown for older runs."],
    ]


def test_the_picture_is_a_png_of_a_sensible_size(report: Path) -> None:
    data = (report / "report.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert 800 <= width <= 2000 and 600 <= height <= 3000, (width, height)
    assert 10_000 < len(data) < 2_000_000


def test_the_markdown_holds_every_table_and_note(report: Path) -> None:
    text = (report / "report.md").read_text(encoding="utf-8")
    assert text == trend_markdown("Run history report", _tables(), FACTS)
    assert text.startswith("# Run history report\n\n- History: sqlite:///history.db\n")
    assert "| Month | Runs | Unknown % | Corrected % |" in text
    assert "| 2026-02 | 0 |  |  |" in text
    assert "## Submissions per API" in text and "| 2026-03 | 1 | 2 |" in text
    assert "_Corrected % is unknown for older runs._" in text


def test_an_all_empty_report_is_still_written(tmp_path: Path) -> None:
    empty = [
        TrendTable(
            "Address quality",
            pd.DataFrame({"Month": ["2026-01"], "Unknown %": [None]}, dtype=object).astype(
                {"Unknown %": "float64"}
            ),
            TrendChart("line", "Shares", ("Unknown %",), "%"),
        )
    ]
    written = write_trend_report(tmp_path, "Empty", empty, [])
    assert all(path.stat().st_size > 0 for path in written.files)
    assert "| 2026-01 |  |" in written.markdown.read_text(encoding="utf-8")
